import Foundation
import RoomTapAll
import RoomTapMediaTestSupport
import RoomTapTestSupport
import Testing

/// `--realtime`: file tracks paced by the live clock, beside a live listener, ended by --duration.
@Suite("CLI: files at real time in a live room")
struct RealtimeFileTests {
    @Test func aFileJoinsALiveRoomAtRealTime() throws {
        let out = try temporaryDirectory()
        let port = try freeUDPPort()
        let started = Date()
        let outcome = try roomtap(
            [
                "record", "--listen", "127.0.0.1:\(port)", "--file", "carol=\(sample("carol"))", "--realtime",
                "--duration", "1.5", "--out", out.path, "--quiet",
            ], expect: 0)
        let elapsed = Date().timeIntervalSince(started)
        #expect(elapsed >= 1.4, "paced at real time: \(elapsed) s")
        #expect(!outcome.stderr.contains("error"), "stderr: \(outcome.stderr)")
        #expect(try listing(out) == ["carol.wav", "room.json"], "no live sender, so no live track")
        let (_, samples) = try WAVFile.readSamples(path: out.appendingPathComponent("carol.wav").path)
        // A room with network streams records them 2 s late (the record delay) and everything
        // else with them: carol's file is her audio (2000 − 60) ms later than she was played,
        // and the room drains the record delay after --duration.
        #expect(samples.count == 72_000 + 96_000, "--duration of room time plus the drained record delay")
        let delay = (2000 - 60) * 48
        let reference = try referenceDecode(of: sample("carol"))
        #expect(samples[..<delay].allSatisfy { $0 == 0 })
        #expect(Array(samples[delay...]) == Array(reference.prefix(samples.count - delay)))
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: out.appendingPathComponent("room.json")))
        #expect((json as? [String: Any])?["clock"] as? String == "realtime")
    }
}
