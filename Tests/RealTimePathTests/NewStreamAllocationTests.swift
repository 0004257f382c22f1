import CAllocationCounter
import Foundation
import RoomTapAll
import RoomTapRTP
import RoomTapRTPTestSupport
import RoomTapTestSupport
import Synchronization
import Testing

extension AllocationCounting {
    /// A new SSRC costs the receive thread no allocation: it claims a stream slot allocated with
    /// the live room, holds the first packets there and posts to the bus; the control thread makes
    /// the track. Counted on a real receive thread that hands every datagram to a real
    /// ``LiveRoom`` (as the live room's own receiver does), for 20 new streams after a first one.
    @Suite("Live: a new stream costs the receive thread no allocation")
    struct NewStreamAllocationTests {
        /// Hands every packet to `live` as arriving on `address`, counting allocations on this
        /// (the receive) thread after the first `warmUp` packets.
        final class Forward: RTPReceiverDelegate, Sendable {
            let live: LiveRoom
            let address: ListenAddress
            let warmUp: Int
            let packets = Atomic<Int>(0)
            init(live: LiveRoom, address: ListenAddress, warmUp: Int) {
                self.live = live
                self.address = address
                self.warmUp = warmUp
            }

            func receiver(
                _ receiver: RTPReceiver, didReceive packet: RTPPacket, on _: ListenAddress, arrival: UInt64
            ) {
                let counted = packets.load(ordering: .relaxed) >= warmUp
                if counted { roomtap_count_allocations_on_this_thread(1) }
                live.receiver(receiver, didReceive: packet, on: address, arrival: arrival)
                if counted { roomtap_count_allocations_on_this_thread(0) }
                packets.add(1, ordering: .relaxed)
            }
            func receiver(
                _ receiver: RTPReceiver, didReceive report: RTCPSenderReport, on address: ListenAddress,
                arrival: UInt64
            ) {}
            func receiver(_ receiver: RTPReceiver, didReceiveByeFor ssrc: UInt32, on address: ListenAddress) {}
        }

        @Test func newStreamsAllocateNothingOnTheReceiveThread() throws {
            let liveSocket = try UDPSocket(address: ListenAddress(host: "127.0.0.1", port: 0))
            let clock = RealTimeClock()
            let room = Room(clock: clock, endsWhenSourcesFinish: false)
            let live = try LiveRoom(room: room, clock: clock, options: LiveRoom.Options(), sockets: [liveSocket])
            let socket = try UDPSocket(address: ListenAddress(host: "127.0.0.1", port: 0))
            let sender = DatagramSocket(socket.address)
            let forward = Forward(live: live, address: liveSocket.address, warmUp: 5)
            let receiver = RTPReceiver(sockets: [socket], delegate: forward)
            room.start()
            live.start()
            receiver.start()
            defer {
                receiver.stop()
                live.stop()
                room.stop()
                room.waitUntilFinished()
            }
            let payloads = RTPTestSender.encode(TestSignal.speechLike(samples: 10 * 960)).packets
            func send(ssrc: UInt32, _ range: Range<Int>) {
                for k in range {
                    sender.send(
                        RTPPacketBuilder(
                            payloadType: 111, sequenceNumber: UInt16(k), timestamp: UInt32(k * 960), ssrc: ssrc,
                            payload: payloads[k % payloads.count]
                        ).bytes())
                }
            }
            // A first stream, not counted (first-use costs of the process).
            send(ssrc: 1, 0..<5)
            #expect(waitUntil { live.participants.count == 1 && forward.packets.load(ordering: .relaxed) == 5 })
            roomtap_reset_counted_allocations()
            let streams: [UInt32] = (0..<20).map { 0x1000 + UInt32($0) }
            // Three packets of each new stream (held until its track exists), then two more each.
            for ssrc in streams { send(ssrc: ssrc, 0..<3) }
            #expect(waitUntil { live.participants.count == 21 }, "a track per stream")
            for ssrc in streams { send(ssrc: ssrc, 3..<5) }
            #expect(waitUntil { forward.packets.load(ordering: .relaxed) == 5 + 20 * 5 }, "every packet")
            let buffers = live.participants.dropFirst().map(\.buffer.statistics.packets)
            #expect(buffers == Array(repeating: 5, count: 20), "every packet reached its jitter buffer")
            #expect(
                !allocationCountsAsserted || roomtap_counted_allocations() == 0,
                "\(roomtap_counted_allocations()) allocations on the receive thread for 20 new streams")
        }
    }
}
