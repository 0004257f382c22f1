import RoomTapFuzzing
import RoomTapRTP
import RoomTapSora
import Testing

/// The reader of Sora's audio-streaming body (`audio_streaming_header = true`): frames read back
/// as written, "need more" at every cut, the refused headers named, hostile bytes never trap; and
/// the timestamp conversions the track relies on.
@Suite("Sora audio-streaming frames")
struct SoraStreamingFrameTests {
    static func body(_ frames: [(UInt64, UInt64, [UInt8])]) -> [UInt8] {
        var out: [UInt8] = []
        for (timestamp, sequence, payload) in frames {
            SoraStreamingFrame.writeHeader(
                timestamp: timestamp, sequence: sequence, payloadLength: UInt32(payload.count), into: &out)
            out += payload
        }
        return out
    }

    static func parse(_ bytes: [UInt8]) -> SoraStreamingFrame.ParseResult {
        bytes.withUnsafeBytes { SoraStreamingFrame.parse($0) }
    }

    @Test func framesReadBackAsWrittenBigEndian() {
        let bytes = Self.body([(1_700_000_000_123_456, 0x0102_0304_0506_0708, [0xF8, 0xFF, 0xFE])])
        #expect(Array(bytes[0..<8]) == [0x00, 0x06, 0x0A, 0x24, 0x18, 0x20, 0x22, 0x40])
        #expect(Array(bytes[8..<16]) == [1, 2, 3, 4, 5, 6, 7, 8])
        #expect(Array(bytes[16..<20]) == [0, 0, 0, 3])
        guard case .frame(let frame) = Self.parse(bytes) else {
            Issue.record("a whole frame")
            return
        }
        #expect(frame.timestamp == 1_700_000_000_123_456)
        #expect(frame.sequence == 0x0102_0304_0506_0708)
        #expect(frame.payloadRange == 20..<23 && frame.size == 23)
    }

    @Test func everyCutOfAFrameNeedsMoreBytes() {
        let payload = [UInt8](repeating: 0x5A, count: 200)
        let bytes = Self.body([(42, 7, payload)])
        for cut in 0..<bytes.count {
            let result = Self.parse(Array(bytes[0..<cut]))
            #expect(result == .needMore(cut < 20 ? 20 : 220), "cut at \(cut)")
        }
        #expect(Self.parse(bytes) != .needMore(220))
    }

    @Test func lengthsNoPacketHasAreRefusedByName() {
        var zero: [UInt8] = []
        SoraStreamingFrame.writeHeader(timestamp: 1, sequence: 9, payloadLength: 0, into: &zero)
        #expect(Self.parse(zero) == .invalid(.emptyPayload(sequence: 9)))
        for length: UInt32 in [1501, 65_536, .max] {
            var long: [UInt8] = []
            SoraStreamingFrame.writeHeader(timestamp: 1, sequence: 3, payloadLength: length, into: &long)
            #expect(Self.parse(long) == .invalid(.payloadTooLong(sequence: 3, length: length)))
        }
        var largest: [UInt8] = []
        SoraStreamingFrame.writeHeader(timestamp: 1, sequence: 3, payloadLength: 1500, into: &largest)
        #expect(Self.parse(largest) == .needMore(1520), "1500 bytes is a packet")
        #expect(
            SoraStreamingFrame.Failure.emptyPayload(sequence: 9).description
                == "the frame with sequence number 9 announces an empty packet (length 0)")
        #expect(
            SoraStreamingFrame.Failure.payloadTooLong(sequence: 3, length: 70_000).description.contains(
                "audio_streaming_header = true"), "a body without headers is named as the likely cause")
        #expect(
            SoraStreamingFrame.Failure.truncated(have: 10, need: 23).description
                == "the body ends inside a frame (10 of its 23 bytes)")
    }

    @Test func aBodyOfManyFramesReadsFrameByFrame() {
        let frames = (0..<100).map { i in
            (UInt64(1_000_000 + i * 20_000), UInt64(i), [UInt8](repeating: UInt8(i), count: 1 + i * 7))
        }
        let bytes = Self.body(frames)
        var offset = 0
        var read = 0
        while case .frame(let frame) = Self.parse(Array(bytes[offset...])) {
            #expect(frame.sequence == UInt64(read))
            #expect(bytes[offset + frame.payloadRange.lowerBound] == UInt8(read))
            offset += frame.size
            read += 1
        }
        #expect(read == 100 && offset == bytes.count)
    }

    /// Seeded mutations of a good body and random bytes: the fuzz entry's invariants hold (it traps
    /// otherwise), whatever the bytes.
    @Test func hostileBytesNeverTrap() {
        var generator = SplitMix(seed: 0x50_7A)
        let good = Self.body((0..<20).map { (UInt64($0) * 20_000, UInt64($0), [UInt8](repeating: 0xF8, count: 60)) })
        for _ in 0..<5_000 {
            var bytes = good
            for _ in 0..<(1 + Int(generator.next() % 8)) {
                let i = Int(generator.next() % UInt64(bytes.count))
                bytes[i] = UInt8(truncatingIfNeeded: generator.next())
            }
            if generator.next() % 4 == 0 { bytes = Array(bytes.prefix(Int(generator.next() % UInt64(bytes.count)))) }
            bytes.withUnsafeBytes { SoraStreamingFuzz.exercise($0) }
        }
        for _ in 0..<2_000 {
            let bytes = (0..<Int(generator.next() % 200)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            bytes.withUnsafeBytes { SoraStreamingFuzz.exercise($0) }
        }
    }

    /// The RTP timestamp and the sender-report NTP time of a Sora timestamp land on the same 48 kHz
    /// sample, for every microsecond of a second and at the ends of the range.
    @Test func timestampsAndNTPTimesAgreeToTheSample() {
        for micros in stride(from: UInt64(1_700_000_000_000_000), to: 1_700_000_001_000_000, by: 7) {
            let samples = SoraTimestampMapping.samples(of: micros)
            let ntp = SoraTimestampMapping.ntp(of: micros)
            #expect(UInt64(ntp.seconds) == micros / 1_000_000 + 2_208_988_800)
            let fromNTP = (UInt64(ntp.fraction) * 48_000) >> 32
            if fromNTP != samples % 48_000 {
                Issue.record("\(micros) µs: NTP gives sample \(fromNTP), the timestamp \(samples % 48_000)")
                return
            }
        }
        #expect(SoraTimestampMapping.samples(of: 20_000) == 960)
        #expect(SoraTimestampMapping.samples(of: .max) > 0)
        _ = SoraTimestampMapping.ntp(of: .max)
    }
}

/// A small seeded generator (SplitMix64) for the mutations.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
