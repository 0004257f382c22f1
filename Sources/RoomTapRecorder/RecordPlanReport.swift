import Foundation
import RoomTapAll

/// `record --dry-run`: what a recording would do, from a ``RecordingPlan`` (every start-up check
/// passed, nothing created): each track with its source, offset and file, the other files, the
/// room length when the inputs fix it, and what --force would remove. Text or JSON (docs/CLI.md).
enum RecordPlanReport {
    /// One planned track.
    struct Row {
        let name: String
        let kind: String
        let source: String
        /// Start on the room timeline, seconds; nil for live tracks (placed when they start).
        let offsetSeconds: Double?
        let file: String
    }

    static func rows(_ plan: RecordingPlan) -> [Row] {
        let options = plan.options
        var rows = plan.inputs.map {
            Row(
                name: $0.spec.name, kind: $0.sora != nil ? "sora" : "file",
                source: $0.sora.map { "\($0.connectionID) in \(plan.sora?.given ?? "")" } ?? $0.spec.path,
                offsetSeconds: Double($0.offsetSamples) / Double(AudioFrame.sampleRate), file: $0.wavPath)
        }
        for participant in plan.description?.participants ?? [] {
            let name = participant.trackName
            let ssrc = participant.ssrc.map { " ssrc \(String($0, radix: 16))" } ?? ""
            let srtp = participant.srtp.map { " srtp \($0.suite.name)" } ?? ""  // the suite, never the key
            rows.append(
                Row(
                    name: name, kind: "live", source: "rtp port \(participant.port)\(ssrc)\(srtp)", offsetSeconds: nil,
                    file: plan.describedPaths[name] ?? ""))
        }
        if !options.listen.isEmpty {
            rows.append(
                Row(
                    name: "ssrc-<hex>", kind: "live",
                    source: "rtp " + options.listen.map(\.description).joined(separator: ", "), offsetSeconds: nil,
                    file: RecordingPlan.join(plan.outDirectory, "ssrc-<hex>" + options.output.dotExtension)
                        + " (each stream, as it appears)"))
        }
        if let device = options.mic {
            var naming = plan.naming
            let path = RecordingPlan.livePath(
                for: options.micName, naming: &naming, in: plan.outDirectory, force: options.force,
                dotExtension: options.output.dotExtension)
            rows.append(
                Row(name: options.micName, kind: "microphone", source: "alsa \(device)", offsetSeconds: nil, file: path)
            )
        }
        if let agent = options.agent, let path = plan.agentPath {
            rows.append(
                Row(
                    name: "agent", kind: "agent",
                    source: agent.pipeline.map { "pipeline \($0.chatModel)" } ?? "realtime \(agent.model)",
                    offsetSeconds: nil, file: path))
        }
        if let path = plan.mixPath {
            rows.append(Row(name: "mix", kind: "mix", source: "the mix of every track", offsetSeconds: 0, file: path))
        }
        return rows
    }

    /// The room's length in samples when it is known before the run: the inputs' (files only),
    /// capped by --duration; for live rooms --duration plus the record delay drained; nil when the
    /// room runs until stopped or standard input ends.
    static func roomSamples(_ plan: RecordingPlan) -> Int64? {
        let options = plan.options
        let duration = options.duration.map { Int64(($0 * Double(AudioFrame.sampleRate)).rounded()) }
        if options.isLive { return duration.map { $0 + options.drainSamples } }
        if readsStandardInput(plan) { return nil }  // as long as the stream runs
        let files = filesSamples(plan)
        return duration.map { min($0, files) } ?? files
    }

    /// Whether a track reads `--file NAME=-`, whose length is known only once it ends.
    private static func readsStandardInput(_ plan: RecordingPlan) -> Bool {
        plan.inputs.contains { $0.spec.isStandardInput }
    }

    /// The room's length that the files other than standard input fix (rounded up to a frame).
    private static func filesSamples(_ plan: RecordingPlan) -> Int64 {
        let frame = Int64(AudioFrame.samplesPerChannel)
        return (plan.expectedSamples + frame - 1) / frame * frame
    }

    /// The other files the run writes (besides the tracks').
    static func otherFiles(_ plan: RecordingPlan) -> [String] {
        [plan.transcriptPath, plan.roomJSONPath, plan.multichannelPath].compactMap { $0 }
    }

    static func text(_ plan: RecordingPlan) -> String {
        var table = [["TRACK", "KIND", "SOURCE", "OFFSET", "FILE"]]
        for row in rows(plan) {
            table.append([
                row.name, row.kind, row.source, row.offsetSeconds.map { String(format: "%.3f s", $0) } ?? "live",
                row.file,
            ])
        }
        let widths = table[0].indices.map { column in table.map { $0[column].count }.max() ?? 0 }
        var text = ""
        for line in table {
            text +=
                line.enumerated().map { index, cell in
                    index == line.count - 1 ? cell : cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
                }.joined(separator: "  ") + "\n"
        }
        text += "\n"
        for path in otherFiles(plan) { text += "file         \(path)\n" }
        let created = plan.missingDirectories.isEmpty ? "exists" : "created when the recording starts"
        text += "directory    \(plan.outDirectory) (\(created))\n"
        if let samples = roomSamples(plan) {
            text += String(format: "room length  %.3f s (%lld samples)\n", Double(samples) / 48_000, samples)
        } else if readsStandardInput(plan) {
            let files = filesSamples(plan)
            text +=
                "room length  until standard input ends"
                + (files > 0 ? String(format: " (at least %.3f s, the other files')", Double(files) / 48_000) : "")
                + (plan.options.duration.map { String(format: ", at most %.3f s (--duration)", $0) } ?? "") + "\n"
        } else {
            text += "room length  until stopped (Ctrl-C, SIGTERM)\n"
        }
        if let device = plan.options.play {
            text += "playback     \(device) (\(plan.options.playTrack.map { "track \($0)" } ?? "the mix"))\n"
        }
        for path in plan.earlierFiles { text += "--force      removes \(path)\n" }
        text += "dry run: nothing was created or removed\n"
        return text
    }

    static func json(_ plan: RecordingPlan) -> JSONValue {
        let tracks = rows(plan).map { row -> JSONValue in
            var entry: [String: JSONValue] = [
                "name": .string(row.name), "kind": .string(row.kind), "source": .string(row.source),
                "file": .string(row.file),
            ]
            entry["offset_seconds"] = row.offsetSeconds.map(JSONValue.number) ?? .null
            return .object(entry)
        }
        let samples = roomSamples(plan)
        return .object([
            "dry_run": .bool(true),
            "out": .string(plan.outDirectory),
            "creates_out": .bool(!plan.missingDirectories.isEmpty),
            "tracks": .array(tracks),
            "files": .array(otherFiles(plan).map(JSONValue.string)),
            "room_samples": samples.map { .number(Double($0)) } ?? .null,
            "room_seconds": samples.map { .number(Double($0) / 48_000) } ?? .null,
            // With standard input the length is known when it ends; the other files fix its least.
            "room_samples_at_least": readsStandardInput(plan) ? .number(Double(filesSamples(plan))) : .null,
            "force_removes": .array(plan.earlierFiles.map(JSONValue.string)),
            "play": plan.options.play.map { .string($0) } ?? .null,
            "play_track": plan.options.playTrack.map { .string($0) } ?? .null,
        ])
    }
}
