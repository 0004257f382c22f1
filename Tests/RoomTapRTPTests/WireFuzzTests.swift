import RoomTapFuzzing
import RoomTapRTP
import RoomTapRTPTestSupport
import RoomTapTestSupport
import Testing

@Suite("Wire: random and mutated datagrams")
struct WireFuzzTests {
    /// Checks the RTP result of `bytes`: invalid, or every range inside the buffer and in order.
    func checkRTP(_ raw: UnsafeRawBufferPointer) -> Bool {
        switch RTPPacket.parse(raw) {
        case .invalid:
            return false
        case .packet(let p):
            let header = 12 + 4 * p.csrcCount
            var ok = header <= raw.count && p.payloadRange.upperBound + p.paddingCount == raw.count
            ok = ok && p.payloadRange.lowerBound >= header && p.payloadRange.lowerBound <= p.payloadRange.upperBound
            if let e = p.extensionRange {
                ok = ok && e.lowerBound == header + 4 && e.upperBound == p.payloadRange.lowerBound
            }
            for element in p.extensionElements {
                ok = ok && element.dataRange.lowerBound >= (p.extensionRange?.lowerBound ?? .max)
                ok = ok && element.dataRange.upperBound <= (p.extensionRange?.upperBound ?? -1)
            }
            #expect(ok, "ranges of \(Array(raw))")
            return true
        }
    }

    @Test func a100kRandomDatagramsNeverCrashAndStayInBounds() {
        var rng = SplitMix64(seed: 0x5EED_0003)
        var buffer = [UInt8](repeating: 0, count: 1500)
        var valid = 0
        var rtcpWalked = 0
        for n in 0..<100_000 {
            let length = n % 10 == 0 ? Int(rng.next() % 1500) : Int(rng.next() % 96)
            for i in 0..<length { buffer[i] = UInt8(truncatingIfNeeded: rng.next()) }
            // A quarter of the datagrams get version 2, so the parsers get past the first check.
            if length > 0, n % 4 == 0 { buffer[0] = (buffer[0] & 0x3F) | 0x80 }
            buffer.withUnsafeBytes { all in
                let raw = UnsafeRawBufferPointer(rebasing: all[0..<length])
                WireFuzz.exercise(raw)
                if checkRTP(raw) { valid += 1 }
                var walk = RTCPCompoundPacket(raw).makeIterator()
                if walk.next() != nil { rtcpWalked += 1 }
            }
        }
        // Random bytes are mostly invalid, but some parse: the test exercises both paths.
        #expect(valid > 1000 && valid < 100_000)
        #expect(rtcpWalked > 0)
    }

    @Test func mutatedValidPacketsNeverCrash() {
        var rng = SplitMix64(seed: 42)
        var b = RTPPacketBuilder(
            payloadType: 111, sequenceNumber: 0xFFFF, timestamp: 0xFFFF_FFFF, payload: [0xFC, 1, 2, 3])
        b.csrcs = [1, 2]
        b.extension = .oneByte([(id: 1, data: [0x9E]), (id: 2, data: [1, 2, 3])])
        b.padding = 4
        var two = b
        two.extension = .twoByte([(id: 200, data: [1, 2, 3, 4, 5]), (id: 1, data: [])])
        let sr = RTCPPacketBuilder.senderReport(
            ssrc: 1, ntp: 2, rtpTimestamp: 3, packetCount: 4, octetCount: 5, blocks: [.init(ssrc: 9)])
        let seeds: [[UInt8]] = [
            b.bytes(), two.bytes(),
            sr + RTCPPacketBuilder.cnames([(1, "alice@host"), (2, "bob")])
                + RTCPPacketBuilder.bye(ssrcs: [1], reason: "x"),
            [(31 << 3) | 3, 0x80 | 0x40 | 3, 2, 1, 2, 9, 9, 9, 9, 9, 9],
        ]
        var survivors = 0
        for n in 0..<40_000 {
            var bytes = seeds[n % seeds.count]
            for _ in 0..<(1 + Int(rng.next() % 4)) {
                let i = Int(rng.next() % UInt64(bytes.count))
                bytes[i] ^= UInt8(truncatingIfNeeded: 1 << (rng.next() % 8))
            }
            if rng.next() % 4 == 0 { bytes.removeLast(Int(rng.next() % UInt64(bytes.count))) }
            bytes.withUnsafeBytes { raw in
                WireFuzz.exercise(raw)
                if checkRTP(raw) { survivors += 1 }
            }
        }
        #expect(survivors > 0)
    }
}
