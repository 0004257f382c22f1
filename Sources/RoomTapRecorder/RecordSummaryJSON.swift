import Foundation
import RoomTapAll

/// `record --json`: the end-of-run summary as one JSON document (the shape is in docs/CLI.md).
/// Built on the main thread after the room has stopped.
enum RecordSummaryJSON {
    static func render(_ result: RoomRecording.Result) -> JSONValue {
        let plan = result.plan
        var tracks: [JSONValue] = []
        for (outcome, track) in zip(result.outcomes, result.report.tracks) {
            var entry: [String: JSONValue] = [
                "name": .string(track.name),
                "kind": .string(track.kind),
                "file": .string(outcome.path),
                "channels": .number(Double(track.channels)),
                "samples": .number(Double(track.samplesWritten)),
                "duration_seconds": .number(Double(track.samplesWritten) / Double(AudioFrame.sampleRate)),
                "concealed_ms": .number(Double(track.concealedMs)),
                "silent_ms": .number(Double(track.silentMs)),
                "dropped_frames": .number(Double(track.droppedFrames)),
            ]
            if let source = track.source {
                entry["source"] = .string(source.path)
                entry["offset_seconds"] = .number(source.offsetSeconds)
            }
            if let rtp = track.rtp {
                entry["packets"] = .number(Double(rtp.packets))
                entry["lost"] = .number(Double(rtp.lost))
                let expected = rtp.packets + rtp.lost
                entry["loss_percent"] = .number(
                    expected == 0 ? 0 : (Double(rtp.lost) * 1000 / Double(expected)).rounded() / 10)
            }
            tracks.append(.object(entry))
        }
        return .object([
            "out": .string(plan.outDirectory),
            "room_json": .string(plan.roomJSONPath),
            "sample_rate": .number(Double(AudioFrame.sampleRate)),
            "room_samples": .number(Double(result.roomSamples)),
            "room_seconds": .number(Double(result.roomSamples) / Double(AudioFrame.sampleRate)),
            "stopped_early": .bool(result.report.stoppedEarly),
            "tracks": .array(tracks),
            // Those printed while the room ran (nothing received), then those of its end.
            "warnings": .array((result.liveWarnings + result.warnings).map(JSONValue.string)),
            // Files that could not be written (a full disk), room.json among them when it was not.
            "errors": .array(
                result.errors.map { failure in
                    .object(["file": failure.file.map(JSONValue.string) ?? .null, "error": .string(failure.error)])
                }),
        ])
    }
}
