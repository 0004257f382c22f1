import Foundation
import RoomTapRTP
import RoomTapRTPTestSupport
import RoomTapTestSupport
import Synchronization
import Testing

/// The receive path over real loopback sockets: RTP handed on, RTCP recognised (RFC 5761 mux) and
/// never treated as media, hostile datagrams counted by reason and dropped.
@Suite("Network: the RTP receiver", .serialized)
struct NetworkRTPReceiverTests {
    final class Collector: RTPReceiverDelegate, @unchecked Sendable {
        struct Packet: Equatable {
            let ssrc: UInt32
            let sequence: UInt16
            let timestamp: UInt32
            let payload: [UInt8]
        }
        let lock = NSLock()
        var packets: [Packet] = []
        var reports: [RTCPSenderReport] = []
        var byes: [UInt32] = []

        func receiver(_ receiver: RTPReceiver, didReceive packet: RTPPacket, on address: ListenAddress, arrival: UInt64)
        {
            let p = Packet(
                ssrc: packet.ssrc, sequence: packet.sequenceNumber, timestamp: packet.timestamp,
                payload: Array(packet.payload))
            lock.withLock { packets.append(p) }
        }
        func receiver(
            _ receiver: RTPReceiver, didReceive report: RTCPSenderReport, on address: ListenAddress, arrival: UInt64
        ) {
            lock.withLock { reports.append(report) }
        }
        func receiver(_ receiver: RTPReceiver, didReceiveByeFor ssrc: UInt32, on address: ListenAddress) {
            lock.withLock { byes.append(ssrc) }
        }
    }

    @Test func mediaRTCPAndGarbageAreToldApart() throws {
        let address = try #require(ListenAddress("127.0.0.1:\(try freeUDPPort())"))
        let collector = Collector()
        let receiver = RTPReceiver(sockets: [try UDPSocket(address: address)], delegate: collector)
        receiver.start()
        var sent: [Collector.Packet] = []
        for i in 0..<50 {
            let payload: [UInt8] = [0xF8] + (0..<(20 + i % 7)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ i) }
            let ssrc: UInt32 = i % 2 == 0 ? 0xA11CE : 0xB0B
            let builder = RTPPacketBuilder(
                payloadType: 111, sequenceNumber: UInt16(truncatingIfNeeded: 65_530 + i), timestamp: UInt32(960 * i),
                ssrc: ssrc,
                payload: payload)
            send(builder.bytes(), to: address)
            sent.append(
                Collector.Packet(
                    ssrc: ssrc, sequence: UInt16(truncatingIfNeeded: 65_530 + i), timestamp: UInt32(960 * i),
                    payload: payload))
        }
        send(
            RTCPPacketBuilder.senderReport(
                ssrc: 0xA11CE, ntp: 0xE000_0000_8000_0000, rtpTimestamp: 4800, packetCount: 25, octetCount: 600),
            to: address)
        send(RTCPPacketBuilder.bye(ssrcs: [0xB0B], reason: "left the call"), to: address)
        send([0x40, 111, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1], to: address)  // version 1
        send([0x80, 111, 0], to: address)  // too short
        var badCSRC = RTPPacketBuilder(ssrc: 7, payload: [1, 2])
        badCSRC.csrcCountOverride = 15
        send(badCSRC.bytes(), to: address)
        _ = waitUntil(timeout: .seconds(30)) { receiver.statistics.datagrams >= 55 }
        receiver.stop()

        #expect(collector.lock.withLock { collector.packets } == sent, "every media packet, in order, intact")
        #expect(collector.reports.map(\.ssrc) == [0xA11CE])
        #expect(collector.reports.first?.rtpTimestamp == 4800)
        #expect(collector.byes == [0xB0B])
        #expect(receiver.statistics.rtpPackets == 50)
        #expect(receiver.statistics.rtcpPackets == 2)
        #expect(receiver.statistics.invalid(.badVersion) == 1)
        #expect(receiver.statistics.invalid(.tooShort) == 1)
        #expect(receiver.statistics.invalid(.csrcOverflow) == 1)
    }

    /// Each socket counts what arrived on it, so a listen address nothing reaches can be told.
    @Test func eachSocketCountsItsOwnDatagrams() throws {
        let sockets = [
            try UDPSocket(address: ListenAddress(host: "127.0.0.1", port: 0)),
            try UDPSocket(address: ListenAddress(host: "127.0.0.1", port: 0)),
        ]
        let receiver = RTPReceiver(sockets: sockets, delegate: Collector())
        receiver.start()
        for i in 0..<7 {
            send(RTPPacketBuilder(sequenceNumber: UInt16(i), ssrc: 5, payload: [0xF8]).bytes(), to: sockets[0].address)
        }
        send(RTCPPacketBuilder.bye(ssrcs: [5], reason: "bye"), to: sockets[0].address)
        let arrived = waitUntil { receiver.statistics.datagrams == 8 }
        receiver.stop()
        #expect(arrived)
        #expect(sockets[0].datagramsReceived == 8, "RTP and RTCP alike")
        #expect(sockets[1].datagramsReceived == 0)
    }

    @Test func randomDatagramsNeverReachTheDelegateAsGarbage() throws {
        let address = try #require(ListenAddress("127.0.0.1:\(try freeUDPPort())"))
        let collector = Collector()
        let receiver = RTPReceiver(sockets: [try UDPSocket(address: address)], delegate: collector)
        receiver.start()
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<500 {
            let count = Int.random(in: 0...300, using: &generator)
            send((0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }, to: address)
        }
        _ = waitUntil(timeout: .seconds(30)) { receiver.statistics.datagrams >= 490 }
        receiver.stop()
        let stats = receiver.statistics
        #expect(stats.datagrams >= 490, "loopback may drop a few, not most")
        #expect(stats.rtpPackets + stats.rtcpPackets + stats.invalidTotal == stats.datagrams)
        // Whatever parsed as RTP has a payload inside its datagram (checked by the parser); nothing crashed.
        #expect(collector.packets.count == stats.rtpPackets)
    }
}
