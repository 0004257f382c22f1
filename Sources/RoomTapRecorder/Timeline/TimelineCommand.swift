import Foundation
import RoomTapAll

/// `roomtap timeline DIR [--out FILE] [--force]`: draw who spoke when in a finished recording, as
/// an SVG (default DIR/timeline.svg).
enum TimelineCommand {
    static func run(_ args: ParsedArguments, _ context: CommandContext) throws {
        let console = context.console
        let out = args.value("--out")
        let force = args.flag("--force")
        let positionals = args.positionals
        guard let directory = positionals.first else {
            throw UsageError(description: "no directory: give the directory of a recording", command: "timeline")
        }
        guard positionals.count == 1 else {
            throw UsageError(description: "unexpected argument '\(positionals[1])'", command: "timeline")
        }
        let output = out ?? (directory as NSString).appendingPathComponent("timeline.svg")
        let room = try TimelineRoom.loadRecording(directory: directory)
        var status = stat()
        if stat(output, &status) == 0 && status.st_mode & S_IFMT == S_IFDIR {
            throw RuntimeError(
                description: "--out \(output) is a directory; give a file path for the SVG, e.g. "
                    + "\((output as NSString).appendingPathComponent("timeline.svg"))")
        }
        if !force && FileManager.default.fileExists(atPath: output) {
            throw RuntimeError(description: "\(output) already exists; pass --force to overwrite it")
        }
        var lanes: [TimelineSVG.Lane] = []
        var longest = 0.0
        for track in room.speakers {
            let path = (directory as NSString).appendingPathComponent(track.file)
            let (detector, seconds) = try detect(path: path)
            lanes.append(TimelineSVG.Lane(name: track.name, spans: detector.spans, silentRuns: detector.silentRuns))
            longest = max(longest, seconds)
        }
        let name = (URL(fileURLWithPath: directory).standardizedFileURL.lastPathComponent)
        let svg = TimelineSVG(
            lanes: lanes, duration: room.durationSeconds ?? longest, controls: room.controls,
            title: "\(name): who spoke when")
        try write(svg.render(), to: output)
        let spans = lanes.map(\.spans.count).reduce(0, +)
        console.print("\(output): \(lanes.count) speaker(s), \(spans) talk span(s), \(room.controls.count) control(s)")
    }

    /// Runs the activity detector over a track's file (``LaneAudio``: WAV read, FLAC and Ogg Opus
    /// decoded), about a second at a time (hours-long files are not loaded whole). Returns the
    /// finished detector (talk spans, silent runs) and the file's length in seconds.
    private static func detect(path: String) throws -> (ActivityDetector, Double) {
        let audio = try LaneAudio(path: path)
        var detector = ActivityDetector(sampleRate: audio.sampleRate, channels: audio.channels)
        try audio.forEachChunk { detector.feed($0) }
        _ = detector.finish()
        return (detector, audio.duration)
    }

    /// Writes through a temporary file and a rename (``RoomReport/writeAtomically(_:to:overwrite:)``),
    /// so a reader never sees half a document.
    private static func write(_ text: String, to path: String) throws {
        try RoomReport.writeAtomically(Data(text.utf8), to: path, overwrite: true)
    }
}
