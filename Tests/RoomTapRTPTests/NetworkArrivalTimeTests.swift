import Foundation
import RoomTapCore
import RoomTapRTP
import RoomTapRTPTestSupport
import RoomTapSync
import RoomTapTestSupport
import Testing

/// Arrival times are when the kernel received a datagram, not when the receive thread got to it:
/// the record anchors streams on their least-delayed packets, so a late thread must not look like
/// network delay.
@Suite("Network: arrival times are the kernel's")
struct NetworkArrivalTimeTests {
    /// Holds the receive thread 100 ms on the first packet; notes every arrival.
    final class SlowCollector: RTPReceiverDelegate, @unchecked Sendable {
        let arrivals = Locked<[UInt64]>([])
        func receiver(_ receiver: RTPReceiver, didReceive packet: RTPPacket, on address: ListenAddress, arrival: UInt64)
        {
            let first = arrivals.withLock { list in
                list.append(arrival)
                return list.count == 1
            }
            if first { usleep(100_000) }  // the test's busy receive thread, on purpose
        }
        func receiver(
            _ receiver: RTPReceiver, didReceive report: RTCPSenderReport, on address: ListenAddress, arrival: UInt64
        ) {}
        func receiver(_ receiver: RTPReceiver, didReceiveByeFor ssrc: UInt32, on address: ListenAddress) {}
    }

    @Test func aPacketQueuedWhileTheThreadWasBusyKeepsItsOwnArrivalTime() throws {
        let address = try #require(ListenAddress("127.0.0.1:\(try freeUDPPort())"))
        let collector = SlowCollector()
        let receiver = RTPReceiver(sockets: [try UDPSocket(address: address)], delegate: collector)
        receiver.start()
        defer { receiver.stop() }
        let socket = DatagramSocket(address)
        defer { socket.close() }
        func packet(_ n: UInt16) -> [UInt8] {
            RTPPacketBuilder(payloadType: 111, sequenceNumber: n, timestamp: UInt32(n) * 960, ssrc: 7, payload: [0xF8])
                .bytes()
        }
        #expect(socket.send(packet(1)))
        // Wait until the thread is busy with the first packet, then send the second.
        #expect(waitUntil { !collector.arrivals.withLock { $0.isEmpty } })
        let sentAt = RealTimeClock.monotonicNow()
        #expect(socket.send(packet(2)))
        #expect(waitUntil { collector.arrivals.withLock { $0.count == 2 } })
        let arrivals = collector.arrivals.withLock { $0 }
        try #require(arrivals.count == 2)
        // Handed on ≥ 100 ms after it was sent, but stamped when it came.
        #expect(
            arrivals[1] >= sentAt && arrivals[1] - sentAt < 20_000_000, "\(Double(arrivals[1]) - Double(sentAt)) ns")
    }
}
