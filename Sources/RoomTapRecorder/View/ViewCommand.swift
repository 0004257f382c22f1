import Foundation
import RoomTapAll
import RoomTapSync

/// `roomtap view DIR [--force] [--open]`: writes DIR/index.html, the review page of a recording
/// (``ViewPage``: lanes with levels and talk spans, controls, gaps, the transcript, playback of
/// the room's own files), and prints its path.
///
/// An index.html that roomtap did not write (no ``ViewPage/generatorMark`` in its first 4 KiB) is
/// never overwritten without --force; one it wrote is brought up to date. The page is written
/// through a temporary file and a rename, so a reader never sees half of it.
enum ViewCommand {
    static let command = "view"

    static let options: [OptionSpec] = [
        OptionSpec(
            "--force", short: "f", .flag,
            help: "Overwrite DIR/index.html even if roomtap did not write it\n"
                + "(one roomtap wrote is always brought up to date)."),
        OptionSpec(
            "--open", .flag, help: "Open the page in the desktop's browser (xdg-open), when there is one."),
    ]

    static func run(_ args: ParsedArguments, _ context: CommandContext) throws {
        let console = context.console
        guard let directory = args.positionals.first else {
            throw UsageError(description: "no directory: give the directory of a recording", command: command)
        }
        guard args.positionals.count == 1 else {
            throw UsageError(description: "unexpected argument '\(args.positionals[1])'", command: command)
        }
        let room = try TimelineRoom.loadRecording(directory: directory)
        var status = stat()
        let output = RecordingPlan.join(directory, "index.html")
        if stat(output, &status) == 0 {
            if status.st_mode & S_IFMT == S_IFDIR {
                throw RuntimeError(description: "\(output) is a directory; move it away to write the page there")
            }
            if !args.flag("--force") && !writtenByRoomtap(output) {
                throw RuntimeError(
                    description: "\(output) already exists and roomtap did not write it; pass --force to overwrite it")
            }
        }
        let started = MonotonicClock.now
        let model = ViewModel.make(directory: directory, room: room)
        let page = ViewPage.render(try model.scriptJSON(), title: model.title)
        try RoomReport.writeAtomically(Data(page.utf8), to: output, overwrite: true)
        let speakers = model.lanes.filter { $0.kind == "speaker" }.count
        let others = model.lanes.filter { $0.kind != "speaker" }.map(\.name)
        let seconds = (MonotonicClock.now - started) / .seconds(1)
        console.print(
            "\(output): \(speakers) speaker lane(s)" + others.map { ", \($0)" }.joined()
                + ", \(model.transcript.count) transcript line(s), \(page.utf8.count / 1024) KiB, "
                + String(format: "%.1f s", seconds))
        for lane in model.lanes {
            if let note = lane.note { console.error("\(lane.name): \(note)\n") }
        }
        if let note = model.transcriptNote { console.error("transcript left out: \(note)\n") }
        if args.flag("--open") { open(output, context) }
    }

    /// Whether the file at `path` starts like a page ``ViewPage`` wrote.
    static func writtenByRoomtap(_ path: String) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        let head = (try? handle.read(upToCount: 4096)) ?? Data()
        return String(decoding: head, as: UTF8.self).contains(ViewPage.generatorMark)
    }

    /// Starts the desktop's browser on the page (xdg-open from `context`'s PATH, with its
    /// environment; not waited for), or says why not on its console.
    private static func open(_ path: String, _ context: CommandContext) {
        let console = context.console
        let environment = context.environment
        let opener = (environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
            .map { "\($0)/xdg-open" }.first { FileManager.default.isExecutableFile(atPath: $0) }
        guard let opener, environment["DISPLAY"] != nil || environment["WAYLAND_DISPLAY"] != nil else {
            console.error("--open: no desktop browser here (xdg-open and a display); open \(path) in one\n")
            return
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: opener)
        process.arguments = [URL(fileURLWithPath: path).absoluteString]
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch {
            console.error("--open: cannot start \(opener): \(error.localizedDescription); open \(path)\n")
        }
    }
}
