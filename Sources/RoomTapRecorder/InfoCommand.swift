import Foundation
import RoomTapAll

/// `roomtap info DIR`: the summary of a recording, from its room.json alone (no audio is read):
/// its state, start time, length, format, and per track the kind, file, length, concealed and
/// silent time, where it came from and its loss; then controls, errors, the agent's transcript
/// and the upload. `--json`: the same as one JSON object. A directory that is not a recording
/// (none, a file, no room.json, a damaged one) is one line and exit 1.
///
/// Thread: the command's. Reads only; changes nothing in DIR.
enum InfoCommand {
    static let options = [OptionSpec("--json", .flag, help: "One JSON object instead of text.")]

    static let helpIntro = """
        roomtap info DIR: what the recording in DIR holds, from its room.json: state (complete,
        cut short, repaired, still recording), start time, length, format, and each track's file,
        length, concealed and silent time, source and loss; then controls, errors and upload.
        """

    static func run(_ args: ParsedArguments, _ context: CommandContext) throws {
        let console = context.console
        let positionals = args.positionals
        guard let directory = positionals.first else {
            throw UsageError(description: "no directory: give the directory of a recording", command: "info")
        }
        guard positionals.count == 1 else {
            throw UsageError(description: "unexpected argument '\(positionals[1])'", command: "info")
        }
        let room = try RoomJSONFile.readRecording(RoomReport.self, directory: directory)
        let recorder = RecorderLock.holder(of: directory)
        if args.flag("--json") {
            console.print(json(room, directory: directory, recorder: recorder).jsonText)
        } else {
            console.print(text(room, directory: directory, recorder: recorder), terminator: "")
        }
    }

    /// What `state` means for the user: a recording cut short says to repair it.
    static func stateLine(_ room: RoomReport, directory: String, recorder: Int32?) -> String {
        switch room.state ?? RoomReport.State.complete.rawValue {
        case RoomReport.State.recording.rawValue:
            recorder.map { "recording now (recorder pid \($0))" }
                ?? "cut short (the recorder stopped before it finished; roomtap repair \(directory) brings "
                + "room.json up to what the files hold)"
        case RoomReport.State.repaired.rawValue: "repaired (it had been cut short)"
        case let state: state + (room.stoppedEarly ? " (stopped early)" : "")
        }
    }

    /// A track's source as one cell: its input file, its RTP stream, or its kind.
    private static func source(_ track: RoomReport.Track) -> String {
        if let source = track.source { return source.path + (source.truncated ? " (truncated)" : "") }
        if let rtp = track.rtp {
            return (rtp.ssrc.map { SSRCTrackName.name($0) + " " } ?? "") + "port \(rtp.port) \(rtp.codec)"
        }
        return track.kind
    }

    private static func lossPercent(_ track: RoomReport.Track) -> Double? {
        guard let rtp = track.rtp else { return nil }
        let expected = rtp.packets + rtp.lost
        return expected == 0 ? 0 : (Double(rtp.lost) * 1000 / Double(expected)).rounded() / 10
    }

    private static func format(_ track: RoomReport.Track, room: RoomReport) -> String {
        "\(track.format ?? "wav") \(track.fileSampleRate ?? room.sampleRate) Hz"
            + (track.channels == 2 ? " stereo" : "")
    }

    static func text(_ room: RoomReport, directory: String, recorder: Int32?) -> String {
        var lines = [
            "directory   \(directory)",
            "state       \(stateLine(room, directory: directory, recorder: recorder))",
            "started     \(room.startTime)",
            String(
                format: "length      %.2f s (%lld samples at %d Hz)", room.durationSeconds, room.durationSamples,
                room.sampleRate),
        ]
        var rows = [["TRACK", "KIND", "LENGTH", "CONCEALED", "SILENT", "LOSS", "FORMAT", "SOURCE", "FILE"]]
        for track in room.tracks {
            rows.append([
                track.name, track.kind,
                String(format: "%.2f s", Double(track.samplesWritten) / Double(room.sampleRate)),
                "\(track.concealedMs) ms", "\(track.silentMs) ms",
                lossPercent(track).map { String(format: "%.1f%%", $0) } ?? "-", format(track, room: room),
                source(track), track.file,
            ])
        }
        var text = lines.joined(separator: "\n") + "\n\n"
        text +=
            room.tracks.isEmpty ? "no tracks: nothing was received, so no file was written\n" : TracksTable.layout(rows)
        lines = []
        if let controls = room.controls, !controls.isEmpty { lines.append("controls    \(controls.count) change(s)") }
        if let transcript = room.transcriptLines {
            lines.append("transcript  \(transcript) line(s) in transcript.jsonl")
        }
        if let multichannel = room.multichannel { lines.append("multichannel \(multichannel.file)") }
        for failure in room.errors ?? [] {
            lines.append("error       " + (failure.file.map { "\($0): " } ?? "") + failure.error)
        }
        if let upload = room.upload {
            lines.append(
                "upload      \(upload.destination): \(upload.state) (\(upload.uploaded.count) uploaded, "
                    + "\(upload.pending.count) pending, \(upload.failed.count) failed)")
        }
        return text + (lines.isEmpty ? "" : "\n" + lines.joined(separator: "\n") + "\n")
    }

    static func json(_ room: RoomReport, directory: String, recorder: Int32?) -> JSONValue {
        let tracks = room.tracks.map { track -> JSONValue in
            .object([
                "name": .string(track.name), "kind": .string(track.kind), "file": .string(track.file),
                "channels": .number(Double(track.channels)), "samples": .number(Double(track.samplesWritten)),
                "duration_seconds": .number(Double(track.samplesWritten) / Double(room.sampleRate)),
                "concealed_ms": .number(Double(track.concealedMs)), "silent_ms": .number(Double(track.silentMs)),
                "format": .string(track.format ?? "wav"),
                "sample_rate": .number(Double(track.fileSampleRate ?? room.sampleRate)),
                "source": .string(source(track)), "loss_percent": lossPercent(track).map(JSONValue.number) ?? .null,
            ])
        }
        return .object([
            "directory": .string(directory),
            "state": .string(room.state ?? RoomReport.State.complete.rawValue),
            "recorder_pid": recorder.map { .number(Double($0)) } ?? .null,
            "start_time": .string(room.startTime),
            "sample_rate": .number(Double(room.sampleRate)),
            "room_samples": .number(Double(room.durationSamples)),
            "room_seconds": .number(room.durationSeconds),
            "stopped_early": .bool(room.stoppedEarly),
            "tracks": .array(tracks),
            "controls": .number(Double(room.controls?.count ?? 0)),
            "transcript_lines": room.transcriptLines.map { .number(Double($0)) } ?? .null,
            "errors": .array(
                (room.errors ?? []).map {
                    .object(["file": $0.file.map(JSONValue.string) ?? .null, "error": .string($0.error)])
                }),
        ])
    }
}
