import Foundation
import RoomTapAll

/// The table `record` prints when it ends: one row per track.
enum SummaryTable {
    /// The table, or one line when there is no track at all (a live room nothing reached).
    static func render(outcomes: [RoomRecording.TrackOutcome], roomSamples: Int64) -> String {
        guard !outcomes.isEmpty else { return "no tracks: nothing was received, so no file was written\n" }
        var rows = [["TRACK", "DURATION", "SAMPLES", "CONCEALED", "SILENT", "FILE"]]
        for outcome in outcomes {
            let samples = outcome.samplesWritten
            rows.append([
                outcome.track.name,
                String(format: "%.2f s", Double(samples) / Double(AudioFrame.sampleRate)),
                "\(samples)",
                "\(concealedMilliseconds(outcome)) ms",
                "\(silentMilliseconds(outcome, roomSamples: roomSamples)) ms",
                outcome.path,
            ])
        }
        let widths = rows[0].indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        var text = ""
        for row in rows {
            let cells = row.enumerated().map { index, cell in
                index == row.count - 1 ? cell : cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
            }
            text += cells.joined(separator: "  ") + "\n"
        }
        return text
    }

    /// Silent time on the room timeline: frames the track rendered as silence, and the frames of
    /// the room before the track appeared (a live participant who joined late).
    static func silentMilliseconds(_ outcome: RoomRecording.TrackOutcome, roomSamples: Int64) -> Int {
        let stats = outcome.track.statistics
        let roomFrames = Int(roomSamples / Int64(AudioFrame.samplesPerChannel))
        return (max(0, roomFrames - stats.totalFrames) + stats.frames(.silence)) * 10
    }

    /// Concealed time: samples made by packet-loss concealment where the source counts them,
    /// otherwise concealed frames.
    static func concealedMilliseconds(_ outcome: RoomRecording.TrackOutcome) -> Int {
        if let source = outcome.source { return source.concealedSamples / 48 }
        if let recorded = outcome.track.source as? RecordedStreamSource {
            return recorded.statistics.concealedSamples / 48
        }
        if let pieces = outcome.track.source as? SegmentedRecordingSource {
            return pieces.pieces.reduce(0) { $0 + $1.statistics.concealedSamples } / 48
        }
        if let live = outcome.live { return live.buffer.statistics.concealedSamples / 48 }
        return outcome.track.statistics.frames(.concealed) * 10
    }
}
