import Foundation
import RoomTapAgent
import RoomTapTestSupport
import Testing

/// transcript.jsonl times follow the files: in a room whose record is its live audio later, an
/// utterance heard at room time t is written at t + the record lag.
@Suite("Transcript times follow the files")
struct TranscriptTimingTests {
    @Test(arguments: [Int64(0), 93_120])
    func timesAreShiftedByTheRecordLag(lag: Int64) throws {
        let dir = try TemporaryDirectory()
        let writer = try TranscriptWriter(path: dir.file("transcript.jsonl"), recordLagSamples: lag)
        writer.write(startSample: 48_000, endSample: 96_000, speaker: "alice", text: "hello")
        writer.close()
        let text = try String(contentsOfFile: dir.file("transcript.jsonl"), encoding: .utf8)
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "one JSON line: \(text)")
        #expect(object["start"] as? Double == Double(48_000 + lag) / 48_000)
        #expect(object["end"] as? Double == Double(96_000 + lag) / 48_000)
    }
}
