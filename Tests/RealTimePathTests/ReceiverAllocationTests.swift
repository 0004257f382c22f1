import CAllocationCounter
import Foundation
import RoomTapAll
import RoomTapRTPTestSupport
import RoomTapTestSupport
import Synchronization
import Testing

extension AllocationCounting {
    /// The receive thread (epoll + recvmmsg over every socket) allocates nothing per datagram:
    /// counted on that thread from the first packet handed on to the last, through RTP, RTCP
    /// (sender reports, BYE) and invalid datagrams on four sockets.
    @Suite("Live: the receive thread does not allocate")
    struct ReceiverAllocationTests {
        /// Turns counting on for the receive thread at the first RTP packet and off at the last.
        final class Counter: RTPReceiverDelegate, Sendable {
            let packets = Atomic<Int>(0)
            let last: Int
            init(last: Int) { self.last = last }

            func receiver(
                _ receiver: RTPReceiver, didReceive packet: RTPPacket, on address: ListenAddress, arrival: UInt64
            ) {
                let n = packets.add(1, ordering: .relaxed).newValue
                if n == 1 { roomtap_count_allocations_on_this_thread(1) }
                if n == last { roomtap_count_allocations_on_this_thread(0) }
            }
            func receiver(
                _ receiver: RTPReceiver, didReceive report: RTCPSenderReport, on address: ListenAddress,
                arrival: UInt64
            ) {}
            func receiver(_ receiver: RTPReceiver, didReceiveByeFor ssrc: UInt32, on address: ListenAddress) {}
        }

        @Test func receivingAllocatesNothingPerDatagram() throws {
            let sockets = try (0..<4).map { _ in try UDPSocket(address: ListenAddress(host: "127.0.0.1", port: 0)) }
            let senders = sockets.map { DatagramSocket($0.address) }
            let rounds = 500
            let counter = Counter(last: rounds * sockets.count)
            let receiver = RTPReceiver(sockets: sockets, delegate: counter)
            roomtap_reset_counted_allocations()
            receiver.start()
            defer { receiver.stop() }
            let report = RTCPPacketBuilder.senderReport(
                ssrc: 1, ntp: 0xE000_0000_8000_0000, rtpTimestamp: 4800, packetCount: 1, octetCount: 2)
            let bye = RTCPPacketBuilder.bye(ssrcs: [1], reason: "gone")
            for i in 0..<rounds {
                for (k, sender) in senders.enumerated() {
                    let packet = RTPPacketBuilder(
                        sequenceNumber: UInt16(i), timestamp: UInt32(960 * i), ssrc: UInt32(k + 1),
                        payload: [0xF8] + [UInt8](repeating: UInt8(k), count: 60))
                    sender.send(packet.bytes())
                    if i % 50 == 0 { sender.send(i % 100 == 0 ? report : bye) }
                    if i % 70 == 0 { sender.send([0x40, 111, 0, 1]) }
                }
                if i % 100 == 99 {  // in bursts of 400, within any receive queue
                    let target = (i + 1) * sockets.count
                    _ = waitUntil { counter.packets.load(ordering: .relaxed) >= target }
                }
            }
            #expect(counter.packets.load(ordering: .relaxed) == rounds * sockets.count, "every packet arrived")
            #expect(
                !allocationCountsAsserted || roomtap_counted_allocations() == 0,
                "\(roomtap_counted_allocations()) allocations")
        }

        /// With a guard that only checks sources: datagrams from a source not allowed are dropped
        /// and counted, the others handed on, all without allocating.
        @Test func checkingSourcesAllocatesNothingPerDatagram() throws {
            let socket = try UDPSocket(address: ListenAddress(host: "127.0.0.1", port: 0))
            let guardian = ReceiveGuard(allow: SourceFilter([SourcePrefix("127.0.0.1/32")!]), srtp: nil)
            let rounds = 1_000
            let counter = Counter(last: rounds)
            let receiver = RTPReceiver(sockets: [socket], guards: [guardian], delegate: counter)
            let good = try #require(SourceBoundSocket(from: "127.0.0.1", to: socket.address))
            let stranger = try #require(SourceBoundSocket(from: "127.0.0.2", to: socket.address))
            roomtap_reset_counted_allocations()
            receiver.start()
            defer { receiver.stop() }
            for i in 0..<rounds {
                let packet = RTPPacketBuilder(
                    sequenceNumber: UInt16(i), timestamp: UInt32(960 * i), ssrc: 1,
                    payload: [0xF8] + [UInt8](repeating: 1, count: 60)
                ).bytes()
                good.send(packet)
                stranger.send(packet)
                if i % 100 == 99 { _ = waitUntil { receiver.statistics.datagrams >= 2 * (i + 1) } }
            }
            #expect(waitUntil { counter.packets.load(ordering: .relaxed) == rounds }, "every allowed packet")
            #expect(waitUntil { guardian.notAllowed == rounds }, "every other one counted")
            #expect(
                !allocationCountsAsserted || roomtap_counted_allocations() == 0,
                "\(roomtap_counted_allocations()) allocations")
        }

        /// With SRTP (AES-CM and AES-GCM streams; SRTCP; wrong keys and strangers among them): the
        /// receive thread allocates no more than libsrtp2 itself does for the same packets, measured
        /// on this thread through a fresh session. (Debian's libsrtp 2.5 does its crypto through NSS,
        /// which makes PKCS#11 contexts per packet: 14 allocations for AES-CM + HMAC-SHA1 and 5 for
        /// AES-GCM, freed before it returns (docs/ARCHITECTURE.md, "SRTP on the receive thread");
        /// roomtap's guard, its in-place unprotect and the hand-off add nothing.)
        @Test func receivingSRTPAllocatesNoMoreThanLibsrtpItself() throws {
            let suites: [SRTPSuite] = [.aesCM128HMACSHA1Tag80, .aeadAES128GCM]
            let keyings = suites.map { suite in
                SRTPKeying(suite: suite, keyAndSalt: (0..<suite.keyAndSaltLength).map { UInt8($0 + 1) })!
            }
            let streams = keyings.enumerated().map { SRTPContext.Stream(ssrc: UInt32($0 + 1), keying: $1) }
            let socket = try UDPSocket(address: ListenAddress(host: "127.0.0.1", port: 0))
            let guardian = ReceiveGuard(
                allow: SourceFilter([SourcePrefix("127.0.0.1/32")!]), srtp: try SRTPContext(streams: streams))
            let rounds = 400
            let counter = Counter(last: rounds * suites.count)
            let receiver = RTPReceiver(sockets: [socket], guards: [guardian], delegate: counter)
            let good = try #require(SourceBoundSocket(from: "127.0.0.1", to: socket.address))
            let stranger = try #require(SourceBoundSocket(from: "127.0.0.2", to: socket.address))
            let senders = try keyings.map { try #require(SRTPProtector($0)) }
            let wrong = try #require(
                SRTPProtector(SRTPKeying(suite: .aesCM128HMACSHA1Tag80, keyAndSalt: [UInt8](repeating: 7, count: 30))!))
            // Protected before counting starts (the test thread's allocations are not counted anyway).
            var datagrams: [(SourceBoundSocket, [UInt8])] = []
            for i in 0..<rounds {
                for (k, sender) in senders.enumerated() {
                    let packet = RTPPacketBuilder(
                        sequenceNumber: UInt16(i), timestamp: UInt32(960 * i), ssrc: UInt32(k + 1),
                        payload: [0xF8] + [UInt8](repeating: UInt8(k), count: 60))
                    datagrams.append((good, sender.protectRTP(packet.bytes())))
                    if i % 50 == 0 {
                        let report = RTCPPacketBuilder.senderReport(
                            ssrc: UInt32(k + 1), ntp: 0xE000_0000_8000_0000, rtpTimestamp: 4800, packetCount: 1,
                            octetCount: 2)
                        datagrams.append((good, sender.protectRTCP(report)))
                        datagrams.append((good, wrong.protectRTP(packet.bytes())))
                        datagrams.append((stranger, packet.bytes()))
                    }
                }
            }
            roomtap_reset_counted_allocations()
            receiver.start()
            defer { receiver.stop() }
            for (n, (from, bytes)) in datagrams.enumerated() {
                from.send(bytes)
                if n % 200 == 199 {  // in bursts of 200, within any receive queue
                    _ = waitUntil { receiver.statistics.datagrams >= n + 1 }
                }
            }
            #expect(waitUntil { counter.packets.load(ordering: .relaxed) == rounds * suites.count }, "every packet")
            #expect(guardian.notAllowed == rounds / 50 * suites.count)
            #expect(guardian.srtpRejected == rounds / 50 * suites.count)
            let onTheReceiveThread = roomtap_counted_allocations()

            // libsrtp alone, on this thread, over the same datagrams from the allowed source.
            let reference = try SRTPContext(streams: streams)
            // Each copy with storage of its own, so the unprotect below makes no copy-on-write.
            var copies = datagrams.filter { $0.0 === good }.map { $0.1.map { $0 } }
            roomtap_reset_counted_allocations()
            roomtap_count_allocations_on_this_thread(1)
            for index in copies.indices {
                copies[index].withUnsafeMutableBytes { raw in
                    let isRTCP = RTPDemux.isRTCP(UnsafeRawBufferPointer(raw))
                    _ =
                        isRTCP
                        ? reference.unprotectRTCP(raw.baseAddress!, length: raw.count)
                        : reference.unprotectRTP(raw.baseAddress!, length: raw.count)
                }
            }
            roomtap_count_allocations_on_this_thread(0)
            let byLibsrtp = roomtap_counted_allocations()
            #expect(
                !allocationCountsAsserted || onTheReceiveThread <= byLibsrtp,
                "the receive thread made \(onTheReceiveThread) allocations, libsrtp alone \(byLibsrtp)")
        }
    }
}
