import Foundation
import RoomTap

/// The table `record` prints when it ends: one row per track.
enum SummaryTable {
    static func render(outcomes: [RoomRecording.TrackOutcome], directory: String) -> String {
        var rows = [["TRACK", "DURATION", "SAMPLES", "CONCEALED", "SILENT", "FILE"]]
        for outcome in outcomes {
            let stats = outcome.track.statistics
            let samples = Int64(stats.totalFrames) * Int64(AudioFrame.samplesPerChannel)
            rows.append([
                outcome.track.name,
                String(format: "%.2f s", Double(samples) / Double(AudioFrame.sampleRate)),
                "\(samples)",
                "\(concealedMilliseconds(outcome)) ms",
                "\(stats.frames(.silence) * 10) ms",
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

    /// Concealed time: samples made by packet-loss concealment where the source counts them,
    /// otherwise concealed frames.
    static func concealedMilliseconds(_ outcome: RoomRecording.TrackOutcome) -> Int {
        if let source = outcome.source { return source.concealedSamples / 48 }
        return outcome.track.statistics.frames(.concealed) * 10
    }
}
