import Foundation
import RoomTapCore
import RoomTapRTP
import RoomTapRTPTestSupport
import RoomTapSync
import RoomTapTestSupport
import Testing

/// LiveRoom's participant lifecycle: a silent sender is marked as left exactly `leaveAfter` after
/// its last packet and a sender who comes back continues the same track (on a virtual clock,
/// packets handed to the live room as its receive thread would); over real sockets, described
/// tracks exist before any packet and an RTCP BYE marks a sender as left at once.
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

    /// Hands packet `k` of the test signal from `ssrc` to `live` as its receive thread would, as
    /// arriving at the virtual clock's now.
    func deliver(_ k: Int, ssrc: UInt32, to live: LiveRoom, on address: ListenAddress, at clock: VirtualDeadlineClock) {
        let bytes = RTPPacketBuilder(
            payloadType: 111, sequenceNumber: UInt16(k), timestamp: UInt32(k * 960), ssrc: ssrc,
            payload: Self.packets[k % Self.packets.count]
        ).bytes()
        bytes.withUnsafeBytes { raw in
            guard let packet = RTPPacket.parse(raw).packet else { return }
            live.receiver(live.receiver, didReceive: packet, on: address, arrival: clock.now.nanoseconds)
        }
    }

    /// Moves `clock` to a nanosecond before `deadline` (the control thread, woken by any earlier
    /// deadline of its own, then waits for exactly `deadline`: `participant` has not left), then
    /// to `deadline` (it has).
    func expectLeaves(
        _ participant: LiveParticipant, exactlyAt deadline: MonotonicClock.Instant, on clock: VirtualDeadlineClock
    ) {
        let leaves = participant.leaves
        clock.advance(to: deadline - .nanoseconds(1))
        #expect(waitUntil { clock.nextDeadline == deadline }, "the control thread waits for the deadline")
        #expect(!participant.hasLeft, "not before the deadline")
        clock.advance(by: .nanoseconds(1))
        #expect(waitUntil { participant.hasLeft }, "marked as left at the deadline")
        #expect(participant.leaves == leaves + 1)
        #expect(waitUntil { clock.nextDeadline == deadline + .seconds(5) }, "and it waits again")
    }

    /// The leave deadline on virtual time: a sender silent for `leaveAfter` (5 s) is marked as left
    /// exactly when its last packet's arrival plus 5 s comes, not a nanosecond before; a sender who
    /// comes back is live again on the same track, and leaves again 5 s after its new last packet.
    /// Twenty virtual seconds, no real wait.
    @Test func aSilentSenderLeavesExactlyAtTheDeadlineAndComesBackOnItsTrack() throws {
        let clock = VirtualDeadlineClock()
        let socket = try UDPSocket(address: ListenAddress(host: "127.0.0.1", port: 0))
        let address = socket.address
        var options = LiveRoom.Options()
        options.description = RoomDescription(participants: [
            ParticipantDescription(name: "alice", port: address.port, address: "127.0.0.1", ssrc: 0xCAFE)
        ])
        options.leaveAfter = 5
        options.deadlineClock = clock
        let roomClock = RealTimeClock()
        let room = Room(clock: roomClock, endsWhenSourcesFinish: false)
        let live = try LiveRoom(room: room, clock: roomClock, options: options, sockets: [socket])
        room.start()
        live.start()
        defer {
            live.stop()
            room.stop()
            room.waitUntilFinished()
        }
        let participant = try #require(live.participants.first)
        #expect(participant.track.name == "alice")
        for k in 0..<10 {
            deliver(k, ssrc: 0xCAFE, to: live, on: address, at: clock)
            clock.advance(by: .milliseconds(20))
        }
        let lastArrival = clock.now - .milliseconds(20)
        #expect(participant.buffer.lastArrival == lastArrival.nanoseconds)
        expectLeaves(participant, exactlyAt: lastArrival + .seconds(5), on: clock)

        // Back after ten virtual seconds: live again, on the same track.
        clock.advance(by: .seconds(10))
        for k in 10..<20 {
            deliver(k, ssrc: 0xCAFE, to: live, on: address, at: clock)
            clock.advance(by: .milliseconds(20))
        }
        #expect(!participant.hasLeft, "a returning sender is live again")
        #expect(live.participants.count == 1, "on the same track")
        #expect(participant.buffer.statistics.packets == 20)
        expectLeaves(participant, exactlyAt: clock.now - .milliseconds(20) + .seconds(5), on: clock)
        #expect(participant.leaves == 2)
    }

    /// The same lifecycle on the real clock over real sockets: the kernel's arrival times, the
    /// system deadline clock, the control thread's real wait (the virtual test above pins the exact
    /// moment; this one keeps the production path covered end to end).
    @Test func onTheRealClockASilentSenderLeavesAndComesBackOnItsTrack() throws {
        let address = try #require(ListenAddress("127.0.0.1:\(try freeUDPPort())"))
        var options = LiveRoom.Options()
        options.listen = [address]
        options.leaveAfter = 0.3
        try withLiveRoom(options) { live in
            sendPackets(0..<10, ssrc: 0xCAFE, to: address)
            #expect(waitUntil { live.participants.count == 1 })
            let participant = try #require(live.participants.first)
            #expect(participant.track.name == "ssrc-cafe")
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
