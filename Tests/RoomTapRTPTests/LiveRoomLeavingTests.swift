import Foundation
import RoomTapCore
import RoomTapRTP
import RoomTapRTPTestSupport
import RoomTapTestSupport
import Testing

/// LiveRoom's participant lifecycle over real sockets: described tracks exist before any packet,
/// a silent sender is marked as left after `leaveAfter`, an RTCP BYE marks it at once, and a
/// sender who comes back continues the same track.
@Suite("Live: participants leave and come back", .serialized)
struct LiveRoomLeavingTests {
    static let packets = RTPTestSender.encode(TestSignal.speechLike(samples: 40 * 960)).packets

    func sendPackets(_ range: Range<Int>, ssrc: UInt32, to address: ListenAddress) {
        for k in range {
            let packet = RTPPacketBuilder(
                payloadType: 111, sequenceNumber: UInt16(k), timestamp: UInt32(k * 960), ssrc: ssrc,
                payload: Self.packets[k % Self.packets.count])
            send(packet.bytes(), to: address)
            usleep(20_000)  // the test's own pacing: a packet every 20 ms
        }
    }

    /// Creates a live room with `options`, checks it with `beforeStart`, runs `body` while it runs,
    /// then stops everything.
    func withLiveRoom(
        _ options: LiveRoom.Options, beforeStart: (Room) -> Void = { _ in }, _ body: (LiveRoom) throws -> Void
    ) throws {
        let clock = RealTimeClock()
        let room = Room(clock: clock, endsWhenSourcesFinish: false)
        let live = try LiveRoom(room: room, clock: clock, options: options)
        beforeStart(room)
        room.start()
        live.start()
        defer {
            live.stop()
            room.stop()
            room.waitUntilFinished()
        }
        try body(live)
    }

    @Test func aSilentSenderLeavesAfterTheTimeoutAndComesBackOnItsTrack() throws {
        let address = try #require(ListenAddress("127.0.0.1:\(try freeUDPPort())"))
        var options = LiveRoom.Options()
        options.listen = [address]
        options.leaveAfter = 0.3
        try withLiveRoom(options) { live in
            sendPackets(0..<10, ssrc: 0xCAFE, to: address)
            #expect(waitUntil { live.participants.count == 1 })
            let participant = try #require(live.participants.first)
            #expect(participant.track.name == "ssrc-cafe")
            #expect(!participant.hasLeft)
            #expect(waitUntil { participant.hasLeft }, "marked as left once silent for 0.3 s")
            #expect(participant.leaves == 1)
            sendPackets(10..<20, ssrc: 0xCAFE, to: address)
            #expect(waitUntil { !participant.hasLeft }, "a returning sender is live again")
            #expect(live.participants.count == 1, "on the same track")
            #expect(participant.buffer.statistics.packets == 20)
        }
    }

    @Test func aByeMarksTheSenderAsLeftAtOnceAndDescribedTracksExistUpFront() throws {
        let port = try freeUDPPort()
        let address = try #require(ListenAddress("127.0.0.1:\(port)"))
        var options = LiveRoom.Options()
        options.description = RoomDescription(participants: [
            ParticipantDescription(name: "alice", port: port, address: "127.0.0.1", ssrc: 0xA11CE),
            ParticipantDescription(name: "bob", port: port, address: "127.0.0.1", ssrc: 0xB0B),
        ])
        options.leaveAfter = 60
        let describedUpFront: (Room) -> Void = { room in
            #expect(room.tracks.map(\.name) == ["alice", "bob"], "described tracks exist before any packet")
        }
        try withLiveRoom(options, beforeStart: describedUpFront) { live in
            sendPackets(0..<5, ssrc: 0xB0B, to: address)
            let bob = try #require(live.participants.first { $0.track.name == "bob" })
            #expect(waitUntil { bob.ssrc == 0xB0B })
            send(RTCPPacketBuilder.bye(ssrcs: [0xB0B]), to: address)
            #expect(
                waitUntil(timeout: .seconds(1)) { bob.hasLeft }, "BYE marks bob as left without waiting for the timeout"
            )
            let alice = try #require(live.participants.first { $0.track.name == "alice" })
            #expect(!alice.hasLeft && alice.ssrc == nil)
            #expect(live.room.tracks.count == 2)
        }
    }
}
