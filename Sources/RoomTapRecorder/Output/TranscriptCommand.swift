import Foundation
import RoomTapAll

/// `roomtap transcript DIR|FILE [--format vtt|srt|txt|audacity] [--out FILE] [--force]`: turns an
/// agent's transcript.jsonl (docs/AGENT.md) into subtitles or labels, on stdout or into FILE.
enum TranscriptCommand {
    static let command = "transcript"

    static let options: [OptionSpec] = [
        OptionSpec(
            "--format", .value, "vtt|srt|txt|audacity",
            help: "vtt (default): WebVTT, speakers as voices (<v alice>); srt: SubRip;\n"
                + "txt: [time] speaker: text; audacity: an Audacity label track."),
        OptionSpec("--out", short: "o", .value, "FILE", help: "Write to FILE instead of standard output."),
        OptionSpec("--force", short: "f", .flag, help: "Overwrite FILE if it exists."),
    ]

    static func run(_ args: ParsedArguments, _ context: CommandContext) throws {
        let console = context.console
        guard let given = args.positionals.first else {
            throw UsageError(
                description: "no transcript: give a recording's directory or its transcript.jsonl", command: command)
        }
        guard args.positionals.count == 1 else {
            throw UsageError(description: "unexpected argument '\(args.positionals[1])'", command: command)
        }
        var format = TranscriptFormat.vtt
        if let text = args.value("--format") {
            guard let f = TranscriptFormat(rawValue: text.lowercased()) else {
                throw UsageError(description: "--format \(text): give vtt, srt, txt or audacity", command: command)
            }
            format = f
        }
        var isDirectory: ObjCBool = false
        let exists = FileManager.default.fileExists(atPath: given, isDirectory: &isDirectory)
        let path = exists && isDirectory.boolValue ? RecordingPlan.join(given, "transcript.jsonl") : given
        guard let data = try FileContents.readIfPresent(path, what: "a transcript (give DIR or DIR/transcript.jsonl)")
        else {
            throw RuntimeError(
                description: "\(path) does not exist; a recording has a transcript when it ran with --agent")
        }
        let lines: [TranscriptLine]
        do { lines = try TranscriptLine.parse(String(decoding: data, as: UTF8.self), source: path) } catch {
            throw RuntimeError(description: error.description)
        }
        let text = format.render(lines)
        guard let out = args.value("--out") else {
            console.print(text, terminator: "")
            return
        }
        let force = args.flag("--force")
        if !force && FileManager.default.fileExists(atPath: out) {
            throw RuntimeError(description: "\(out) already exists; pass --force to overwrite it")
        }
        try RoomReport.writeAtomically(Data(text.utf8), to: out, overwrite: force)
        console.error("\(out): \(lines.count) cue(s), \(format.rawValue)\n")
    }
}
