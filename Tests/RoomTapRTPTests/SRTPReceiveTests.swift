import Foundation
import RoomTapFuzzing
import RoomTapRTP
import RoomTapRTPTestSupport
import RoomTapTestSupport
import Testing

/// SRTP/SRTCP through libsrtp2 and who may send, below the CLI: ``SRTPContext`` against a real
/// libsrtp sender, and ``RTPReceiver`` with ``ReceiveGuard``s over loopback UDP.
@Suite("SRTP: unprotect, reject, allow")
struct SRTPReceiveTests {
    static func keying(_ suite: SRTPSuite, seed: UInt8 = 1) -> SRTPKeying {
        SRTPKeying(suite: suite, keyAndSalt: (0..<suite.keyAndSaltLength).map { UInt8($0) &* 13 &+ seed })!
    }

    static func packet(_ i: Int, ssrc: UInt32 = 0x5EC0_0001) -> [UInt8] {
        RTPPacketBuilder(
            payloadType: 111, sequenceNumber: UInt16(truncatingIfNeeded: 65_500 + i), timestamp: UInt32(960 * i),
            ssrc: ssrc, payload: [0xF8] + (0..<40).map { UInt8(truncatingIfNeeded: $0 &+ i) }
        ).bytes()
    }

    /// Unprotects a copy in place, as the receiver does in its batch buffer.
    static func unprotect(_ context: SRTPContext, _ bytes: [UInt8], rtcp: Bool = false) -> [UInt8]? {
        var buffer = bytes
        let plain = buffer.withUnsafeMutableBytes { raw in
            rtcp
                ? context.unprotectRTCP(raw.baseAddress!, length: raw.count)
                : context.unprotectRTP(raw.baseAddress!, length: raw.count)
        }
        return plain.map { Array(buffer.prefix($0)) }
    }

    @Test(arguments: SRTPSuite.allCases)
    func everySuiteRoundTripsAndForgeriesReplaysAndWrongKeysFail(suite: SRTPSuite) throws {
        let keying = Self.keying(suite)
        let sender = try #require(SRTPProtector(keying))
        let context = try SRTPContext(streams: [.init(ssrc: nil, keying: keying)])
        let wrong = try SRTPContext(streams: [.init(ssrc: nil, keying: Self.keying(suite, seed: 2))])
        for i in 0..<20 {
            let plain = Self.packet(i)
            let protected = sender.protectRTP(plain)
            #expect(protected.count > plain.count)
            #expect(protected[12...] != plain[12...], "the payload is encrypted")
            #expect(Self.unprotect(wrong, protected) == nil, "a wrong key fails authentication")
            var forged = protected
            forged[20] ^= 0x01
            #expect(Self.unprotect(context, forged) == nil, "a changed byte fails authentication")
            #expect(Self.unprotect(context, protected) == plain, "packet \(i) comes back as sent")
            #expect(Self.unprotect(context, protected) == nil, "a replay is refused")
        }
        let report = RTCPPacketBuilder.senderReport(
            ssrc: 0x5EC0_0001, ntp: 0xE000_0000_8000_0000, rtpTimestamp: 4800, packetCount: 20, octetCount: 800)
        let protected = sender.protectRTCP(report)
        #expect(Self.unprotect(wrong, protected, rtcp: true) == nil)
        #expect(Self.unprotect(context, protected, rtcp: true) == report, "SRTCP carries the sender report")
        #expect(Self.unprotect(context, protected, rtcp: true) == nil, "an SRTCP replay is refused")
    }

    @Test func streamsWithAnSSRCTakeOnlyThatSSRC() throws {
        let alice = Self.keying(.aesCM128HMACSHA1Tag80, seed: 3)
        let bob = Self.keying(.aesCM128HMACSHA1Tag32, seed: 4)
        let context = try SRTPContext(streams: [.init(ssrc: 0xA, keying: alice), .init(ssrc: 0xB, keying: bob)])
        let fromAlice = try #require(SRTPProtector(alice)).protectRTP(Self.packet(0, ssrc: 0xA))
        let fromBob = try #require(SRTPProtector(bob)).protectRTP(Self.packet(0, ssrc: 0xB))
        let aliceAsBob = try #require(SRTPProtector(alice)).protectRTP(Self.packet(0, ssrc: 0xB))
        let stranger = try #require(SRTPProtector(alice)).protectRTP(Self.packet(0, ssrc: 0xC))
        #expect(Self.unprotect(context, fromAlice) == Self.packet(0, ssrc: 0xA))
        #expect(Self.unprotect(context, fromBob) == Self.packet(0, ssrc: 0xB))
        #expect(Self.unprotect(context, aliceAsBob) == nil, "bob's SSRC takes bob's key only")
        #expect(Self.unprotect(context, stranger) == nil, "an SSRC without a key is refused")
        // Hostile sizes never crash: shorter than a header, a bare header, a tag only.
        for size in [0, 1, 11, 12, 13, 22, 40] {
            #expect(Self.unprotect(context, [UInt8](repeating: 0x80, count: size)) == nil)
            #expect(Self.unprotect(context, [UInt8](repeating: 0x80, count: size), rtcp: true) == nil)
        }
    }

    /// A collecting delegate: the plain packets and reports the receiver handed on.
    final class Collector: RTPReceiverDelegate, @unchecked Sendable {
        let lock = NSLock()
        var packets: [[UInt8]] = []
        var reports: [UInt32] = []
        func receiver(_ receiver: RTPReceiver, didReceive packet: RTPPacket, on address: ListenAddress, arrival: UInt64)
        {
            let bytes = Array(packet.payload)
            lock.withLock { packets.append(bytes) }
        }
        func receiver(
            _ receiver: RTPReceiver, didReceive report: RTCPSenderReport, on address: ListenAddress, arrival: UInt64
        ) {
            lock.withLock { reports.append(report.ssrc) }
        }
        func receiver(_ receiver: RTPReceiver, didReceiveByeFor ssrc: UInt32, on address: ListenAddress) {}
        var count: Int { lock.withLock { packets.count } }
    }

    @Test func theReceiverDecryptsInPlaceAndCountsWhatItDrops() throws {
        let keying = Self.keying(.aesCM128HMACSHA1Tag80)
        let socket = try UDPSocket(address: ListenAddress(host: "127.0.0.1", port: 0))
        let guardian = ReceiveGuard(
            allow: SourceFilter([try #require(SourcePrefix("127.0.0.1"))]),
            srtp: try SRTPContext(streams: [.init(ssrc: nil, keying: keying)]))
        let collector = Collector()
        let receiver = RTPReceiver(sockets: [socket], guards: [guardian], delegate: collector)
        receiver.start()
        defer { receiver.stop() }
        let good = try #require(SourceBoundSocket(from: "127.0.0.1", to: socket.address))
        let stranger = try #require(SourceBoundSocket(from: "127.0.0.2", to: socket.address))
        let sender = try #require(SRTPProtector(keying))
        let wrongKey = try #require(SRTPProtector(Self.keying(.aesCM128HMACSHA1Tag80, seed: 9)))
        for i in 0..<50 {
            good.send(sender.protectRTP(Self.packet(i)))
            good.send(wrongKey.protectRTP(Self.packet(i, ssrc: 0xBAD)))
            good.send(Self.packet(i, ssrc: 0x9))  // plain RTP on an SRTP port
            stranger.send(sender.protectRTP(Self.packet(1000 + i)))  // the right key, the wrong source
        }
        good.send(
            sender.protectRTCP(
                RTCPPacketBuilder.senderReport(
                    ssrc: 0x5EC0_0001, ntp: 0xE000_0000_8000_0000, rtpTimestamp: 0, packetCount: 1, octetCount: 1)))
        #expect(waitUntil { receiver.statistics.datagrams == 201 })
        #expect(collector.count == 50, "exactly the good sender's packets")
        #expect(collector.packets == (0..<50).map { Array(Self.packet($0)[12...]) }, "decrypted in place, in order")
        #expect(collector.lock.withLock { collector.reports } == [0x5EC0_0001], "the SRTCP sender report")
        #expect(guardian.srtpRejected == 100)
        #expect(guardian.notAllowed == 50)
        #expect(receiver.statistics.invalidTotal == 0, "nothing rejected reached the parser")
    }

    /// IPv6 sources against IPv6 and IPv4 prefixes: `::1` passes `::/64`, not `::2` nor `127.0.0.1`.
    @Test(arguments: [(["::/64"], true), (["::2", "127.0.0.1"], false), (["0.0.0.0/0"], false), (["::/0"], true)])
    func ipv6SourcesMeetTheirPrefixes(allow: [String], passes: Bool) throws {
        let socket = try UDPSocket(address: ListenAddress(host: "::1", port: 0))
        let guardian = ReceiveGuard(allow: SourceFilter(allow.compactMap(SourcePrefix.init)), srtp: nil)
        let collector = Collector()
        let receiver = RTPReceiver(sockets: [socket], guards: [guardian], delegate: collector)
        receiver.start()
        defer { receiver.stop() }
        let sender = try #require(SourceBoundSocket(from: "::1", to: socket.address))
        for i in 0..<10 { sender.send(Self.packet(i)) }
        #expect(waitUntil { receiver.statistics.datagrams == 10 })
        #expect(collector.count == (passes ? 10 : 0))
        #expect(guardian.notAllowed == (passes ? 0 : 10))
    }

    /// The fuzz entry point over random bytes and mutated SRTP packets: no crash, no trap.
    @Test func theSecurityFuzzEntryPointSurvivesRandomInput() throws {
        var rng = SplitMix64(seed: 12)
        let sender = try #require(SRTPProtector(Self.keying(.aesCM128HMACSHA1Tag80)))
        for i in 0..<3_000 {
            var bytes: [UInt8]
            if i % 3 == 0 {
                bytes = sender.protectRTP(Self.packet(i))
                bytes[Int(rng.next() % UInt64(bytes.count))] ^= UInt8(truncatingIfNeeded: rng.next() | 1)
            } else {
                bytes = (0..<Int(rng.next() % 200)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            }
            bytes.withUnsafeBytes { SecurityFuzz.exercise($0) }
        }
    }
}
