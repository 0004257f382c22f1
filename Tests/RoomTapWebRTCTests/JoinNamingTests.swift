import RoomTapWebRTC
import Testing

/// Track names from display names, `--join` URLs and WHEP headers.
@Suite struct JoinNamingTests {
    @Test func displayNamesBecomeSafeUniqueTrackNames() {
        #expect(TrackNaming.sanitize("Alice Smith", fallback: "f") == "Alice-Smith")
        #expect(TrackNaming.sanitize("../../etc/passwd", fallback: "f") == "-..-etc-passwd")
        #expect(TrackNaming.sanitize("", fallback: "feed-7") == "feed-7")
        #expect(TrackNaming.sanitize("🎤", fallback: "feed-7") == "feed-7")
        #expect(TrackNaming.sanitize(".hidden", fallback: "f") == "hidden")
        #expect(TrackNaming.sanitize(String(repeating: "x", count: 300), fallback: "f").count == 64)
        #expect(TrackNaming.unique("bob", taken: ["bob", "bob-2"]) == "bob-3")
        #expect(TrackNaming.unique("carol", taken: ["bob"]) == "carol")
    }

    @Test func joinURLs() throws {
        let target = try #require(JanusVideoRoomTarget(url: "janus+http://127.0.0.1:8088/janus?room=1234&pin=s3cret"))
        #expect(target.base == "http://127.0.0.1:8088/janus")
        #expect(target.room == "1234")
        #expect(target.pin == "s3cret")
        #expect(!target.description.contains("s3cret"))
        #expect(JanusVideoRoomTarget(url: "janus+https://[::1]:8089?room=lobby")?.base == "https://[::1]:8089/janus")
        #expect(JanusVideoRoomTarget(url: "janus+http://host/janus") == nil)
        #expect(JanusVideoRoomTarget(url: "http://host/janus?room=1") == nil)
        #expect(JanusVideoRoomTarget(url: "janus+http:///janus?room=1") == nil)
    }

    @Test func whepLinkHeadersAndLocations() {
        let link =
            #"<stun:127.0.0.1:3478>; rel="ice-server", <turn:t.example:3478?transport=udp>; rel="ice-server"; username="u", <https://x/y>; rel="next""#
        #expect(WHEPJoin.iceServers(link) == ["stun:127.0.0.1:3478", "turn:t.example:3478?transport=udp"])
        #expect(WHEPJoin.iceServers(nil) == [])
        #expect(
            WHEPJoin.resolve("/whep/bob/42", against: "http://127.0.0.1:9/whep/bob") == "http://127.0.0.1:9/whep/bob/42"
        )
        #expect(WHEPJoin.resolve("http://other/s", against: "http://127.0.0.1:9/whep/bob") == "http://other/s")
    }

    @Test func receptionStatisticsFollowRFC3550() {
        var stats = ReceptionStatistics(ssrc: 9)
        // 100 packets 20 ms apart, every 10th lost, sequence wrapping past 65535.
        var sent = 0
        for i in 0..<100 where i % 10 != 9 {
            let sequence = UInt16(truncatingIfNeeded: 65_500 + i)
            stats.note(sequence: sequence, timestamp: UInt32(i * 960), arrival: UInt64(1_000_000_000 + i * 20_000_000))
            sent += 1
        }
        #expect(stats.received == 90)
        #expect(stats.extendedHighest == 65_500 + 98)
        #expect(stats.cumulativeLost == 9)
        #expect(stats.jitter == 0)  // perfectly paced
        var block: [UInt8] = []
        stats.writeReportBlock(to: &block, now: 3_000_000_000)
        #expect(block.count == 24)
        #expect(block[4] == UInt8((9 << 8) / 99))  // fraction lost: 9 of 99 expected
    }
}
