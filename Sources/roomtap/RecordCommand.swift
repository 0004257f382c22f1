import Foundation
import RoomTap

/// `roomtap record`: every speaker of a room to a time-aligned WAV each, a mix, and room.json.
enum RecordCommand {
    struct Options {
        var files: [FileSpec] = []
        var out = ""
        var mix = false
        var force = false
        var channels = 1
        var allowTruncated = false
        var quiet = false
    }

    static func parse(_ arguments: [String]) throws(UsageError) -> Options? {
        var args = Arguments(arguments, command: "record")
        if args.wantsHelp() {
            print(Help.record, terminator: "")
            return nil
        }
        var options = Options()
        var files: [FileSpec] = []
        for text in try args.values("--file") { files.append(try FileSpec.parse(text)) }
        options.files = files
        options.mix = try args.flag("--mix")
        options.force = try args.flag("--force")
        options.allowTruncated = try args.flag("--allow-truncated")
        options.quiet = try args.flag("--quiet")
        if let channels = try args.value("--channels") {
            guard channels == "1" || channels == "2" else {
                throw UsageError(description: "--channels must be 1 or 2, not '\(channels)'", command: "record")
            }
            options.channels = Int(channels)!
        }
        let out = try args.value("--out")
        let extra = try args.positionals()
        guard extra.isEmpty else {
            throw UsageError(
                description: "unexpected argument '\(extra[0])'; speakers are given as --file NAME=PATH",
                command: "record")
        }
        guard !options.files.isEmpty else {
            throw UsageError(description: "no speakers: give at least one --file NAME=PATH", command: "record")
        }
        guard let out, !out.isEmpty else {
            throw UsageError(description: "no output directory: give --out DIR", command: "record")
        }
        options.out = out
        return options
    }

    static func run(_ arguments: [String]) throws {
        guard let options = try parse(arguments) else { return }
        let plan = try RecordingPlan.make(options)
        let recording = RoomRecording(plan: plan)
        let result = try recording.run()
        try result.report.write(to: plan.roomJSONPath, overwrite: options.force)
        if !options.quiet { print(result.summaryTable(), terminator: "") }
        for warning in result.warnings { CommandDispatch.printWarning(warning) }
    }
}
