import Foundation
import RoomTap

/// `DIR/room.json`: what was recorded. The schema is documented in docs/CLI.md.
struct RoomReport: Codable {
    struct Source: Codable {
        var kind: String
        var path: String
        var offsetSamples: Int64
        var offsetSeconds: Double
        var durationSamples: Int64
        var truncated: Bool
        var corruptPages: Int
    }

    struct FrameCounts: Codable {
        var normal: Int
        var concealed: Int
        var silence: Int
        var muted: Int
    }

    struct Track: Codable {
        var id: UInt32
        var name: String
        var kind: String
        var file: String
        var channels: Int
        var samples: Int64
        var samplesWritten: Int64
        var frames: FrameCounts
        var concealedMs: Int
        var silentMs: Int
        var droppedFrames: Int
        var holes: Int?
        var decodeErrors: Int?
        var source: Source?
        var inputs: [String]?
    }

    var roomtap: String
    var startTime: String
    var clock: String
    var sampleRate: Int
    var frameSamples: Int
    var durationSamples: Int64
    var durationSeconds: Double
    var stoppedEarly: Bool
    var tracks: [Track]

    static func make(
        plan: RecordingPlan, startTime: Date, roomSamples: Int64, outcomes: [RoomRecording.TrackOutcome],
        interrupted: Bool
    ) -> RoomReport {
        let specs = Dictionary(plan.inputs.map { ($0.wavPath, $0) }, uniquingKeysWith: { a, _ in a })
        let tracks = outcomes.map { outcome -> Track in
            let stats = outcome.track.statistics
            let input = specs[outcome.path]
            let source = outcome.source
            let mixInputs = (outcome.track.source as? Mixer)?.inputs.map(\.name)
            return Track(
                id: outcome.track.id.rawValue,
                name: outcome.track.name,
                kind: outcome.track.isDerived ? "mix" : "speaker",
                file: (outcome.path as NSString).lastPathComponent,
                channels: outcome.track.channels,
                samples: Int64(stats.totalFrames) * Int64(AudioFrame.samplesPerChannel),
                samplesWritten: outcome.samplesWritten,
                frames: FrameCounts(
                    normal: stats.frames(.normal), concealed: stats.frames(.concealed),
                    silence: stats.frames(.silence), muted: stats.frames(.muted)),
                concealedMs: SummaryTable.concealedMilliseconds(outcome),
                silentMs: stats.frames(.silence) * 10,
                droppedFrames: outcome.droppedFrames,
                holes: source?.holes,
                decodeErrors: source?.decodeErrors,
                source: input.map {
                    Source(
                        kind: "ogg-opus-file", path: $0.spec.path, offsetSamples: $0.spec.offsetSamples,
                        offsetSeconds: Double($0.spec.offsetSamples) / 48_000, durationSamples: $0.info.durationSamples,
                        truncated: $0.info.isTruncated, corruptPages: $0.info.corruptPages)
                },
                inputs: mixInputs)
        }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return RoomReport(
            roomtap: CommandDispatch.version, startTime: formatter.string(from: startTime), clock: "virtual",
            sampleRate: AudioFrame.sampleRate, frameSamples: AudioFrame.samplesPerChannel,
            durationSamples: roomSamples, durationSeconds: Double(roomSamples) / 48_000, stoppedEarly: interrupted,
            tracks: tracks)
    }

    /// Writes the report through a temporary file and a rename, so a reader never sees half of it.
    func write(to path: String, overwrite: Bool) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let data = try encoder.encode(self) + Data("\n".utf8)
        if !overwrite && FileManager.default.fileExists(atPath: path) {
            throw RuntimeError(description: "\(path) already exists; pass --force to overwrite it")
        }
        let temporary = path + ".tmp-\(getpid())"
        guard FileManager.default.createFile(atPath: temporary, contents: data) else {
            throw RuntimeError(description: "cannot write \(temporary): \(String(cString: strerror(errno)))")
        }
        guard rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw RuntimeError(description: "cannot write \(path): \(reason)")
        }
    }
}
