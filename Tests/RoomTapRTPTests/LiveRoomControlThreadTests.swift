import Foundation
import RoomTapCore
import RoomTapRTP
import RoomTapRTPTestSupport
import RoomTapSync
import RoomTapTestSupport
import Synchronization
import Testing

/// The receive thread never makes a track nor runs a handler: a new stream's track is made on the
/// live room's control thread (`roomtap.live`), where `onTrackAdded` runs, while the receive
/// thread goes on receiving; the packets that came before the track existed are held and reach
/// its jitter buffer.
@Suite("Live: handlers run on the control thread, not the receive thread")
struct LiveRoomControlThreadTests {
    /// The calling thread's name, as the kernel has it (`/proc/thread-self/comm`).
    static func threadName() -> String {
        let comm = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "?"
        return comm.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func onTrackAddedRunsOnTheControlThreadWhileTheReceiveThreadGoesOn() throws {
        let socket = try UDPSocket(address: ListenAddress(host: "127.0.0.1", port: 0))
        let sender = DatagramSocket(socket.address)
        let clock = RealTimeClock()
        let room = Room(clock: clock, endsWhenSourcesFinish: false)
        let handlerThreads = Locked<[String]>([])
        let release = DispatchSemaphore(value: 0)
        room.setEvents(
            RoomEvents(onTrackAdded: { _ in
                handlerThreads.withLock { $0.append(Self.threadName()) }
                // A slow handler (opening files, a network call): the receive thread must not wait on it.
                release.wait()
            }))
        let live = try LiveRoom(room: room, clock: clock, options: LiveRoom.Options(), sockets: [socket])
        room.start()
        live.start()
        defer {
            release.signal()
            live.stop()
            room.stop()
            room.waitUntilFinished()
        }
        let payloads = RTPTestSender.encode(TestSignal.speechLike(samples: 30 * 960)).packets
        func send(_ range: Range<Int>) {
            for k in range {
                sender.send(
                    RTPPacketBuilder(
                        payloadType: 111, sequenceNumber: UInt16(k), timestamp: UInt32(k * 960), ssrc: 0xFEED,
                        payload: payloads[k % payloads.count]
                    ).bytes())
            }
        }
        send(0..<20)
        #expect(
            waitUntil { live.receiver.statistics.datagrams == 20 },
            "the receive thread took all 20 datagrams while the handler was still running")
        #expect(waitUntil { handlerThreads.withLock { $0.count } == 1 })
        #expect(live.participants.isEmpty, "the track is not published before its handler has run")
        release.signal()
        #expect(waitUntil { live.participants.count == 1 })
        send(20..<25)
        let participant = try #require(live.participants.first)
        #expect(participant.track.name == "ssrc-feed" && participant.track.role == .speakerFromNetwork)
        #expect(
            waitUntil { participant.buffer.statistics.packets == 25 },
            "the 20 held packets and the 5 after: \(participant.buffer.statistics.packets)")
        #expect(handlerThreads.withLock { $0 } == ["roomtap.live"], "not roomtap.rx")
    }
}
