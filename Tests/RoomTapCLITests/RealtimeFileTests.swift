import Foundation
import RoomTap
import RoomTapTestSupport
import Testing

/// `--realtime`: file tracks paced by the live clock, beside a live listener, ended by --duration.
@Suite("CLI: files at real time in a live room")
struct RealtimeFileTests {
    @Test func aFileJoinsALiveRoomAtRealTime() throws {
        let out = try temporaryDirectory()
        let started = Date()
        let outcome = try roomtap(
            [
                "record", "--listen", "127.0.0.1:27701", "--file", "carol=\(sample("carol"))", "--realtime",
                "--duration", "1.5", "--out", out.path, "--quiet",
            ], expect: 0)
        let elapsed = Date().timeIntervalSince(started)
        #expect(elapsed >= 1.4, "paced at real time: \(elapsed) s")
        #expect(!outcome.stderr.contains("error"), "stderr: \(outcome.stderr)")
        #expect(try listing(out) == ["carol.wav", "room.json"], "no live sender, so no live track")
        let (_, samples) = try WAVFile.readSamples(path: out.appendingPathComponent("carol.wav").path)
        #expect(samples.count == 72_000, "exactly --duration of room time")
        let reference = try referenceDecode(of: sample("carol"))
        #expect(samples == Array(reference.prefix(72_000)))
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: out.appendingPathComponent("room.json")))
        #expect((json as? [String: Any])?["clock"] as? String == "realtime")
    }
}
