import Foundation
import RoomTapCore
import RoomTapRTP
import RoomTapTestSupport
import Testing

/// The PBX codecs through the jitter buffer's record playout: placed where their timestamps say
/// (the resampler's delay compensated), the audio the sender sent, loss concealed.
@Suite struct PBXCodecJitterTests {
    /// A 100 ms record delay; the stream's first packet arrives at room sample `start`.
    static let start: Int64 = 4_800
    static let lagSamples: Int64 = 4_800

    /// Feeds `packets` of `samplesPerPacket` (RTP clock units) arriving on time (`clockRate`), minus
    /// the indices in `lost`, and renders `frames` record frames from room sample 0.
    static func record(
        codec: AudioCodec, packets: [[UInt8]], samplesPerPacket: Int, lost: Set<Int> = [], channels: Int = 1,
        frames: Int
    ) throws -> (pcm: [Int16], statuses: [FrameStatus], buffer: JitterBuffer) {
        let buffer = try #require(
            JitterBuffer(
                channels: channels, codec: codec, recordDelayMilliseconds: 100, livePlayout: false,
                arrivalToRoom: fakeMapping))
        var out: [Int16] = []
        var statuses: [FrameStatus] = []
        var frame = [Int16](repeating: 0, count: 480 * channels)
        var next = 0
        for f in 0..<frames {
            let room = Int64(f * 480)
            // Everything sent before this frame's end has arrived (no jitter).
            while next < packets.count,
                start + Int64(next * samplesPerPacket * 48_000 / codec.clockRate) < room + 480
            {
                if !lost.contains(next) {
                    let arrival =
                        UInt64(start + Int64(next * samplesPerPacket * 48_000 / codec.clockRate)) * 1_000_000 / 48
                    packets[next].withUnsafeBytes { payload in
                        _ = buffer.insert(
                            sequence: UInt16(truncatingIfNeeded: 7_000 + next),
                            timestamp: UInt32(truncatingIfNeeded: 99_000 + next * samplesPerPacket), payload: payload,
                            arrival: arrival)
                    }
                }
                next += 1
            }
            let status = frame.withUnsafeMutableBufferPointer { buffer.render(into: $0, at: room) }
            statuses.append(status)
            out += frame
        }
        return (out, statuses, buffer)
    }

    /// The lag in `-range...range` at which `track` (from `at`) best matches `reference`.
    static func bestLag(_ track: [Int16], _ reference: [Int16], at: Int, range: Int) -> (lag: Int, c: Double) {
        var best = (lag: 0, c: -2.0)
        for lag in -range...range {
            let from = at + lag
            guard from >= 0, from + reference.count <= track.count else { continue }
            let c = TestSignal.correlation(Array(track[from..<(from + reference.count)]), reference)
            if c > best.c { best = (lag, c) }
        }
        return best
    }

    @Test func l16At48kHzIsTheSenderSamplesExactlyWhereTheyWereSent() throws {
        let source = TestSignal.speechLike(samples: 48_000)
        let packets = stride(from: 0, to: source.count, by: 480).map { i in
            Self.bigEndian(source[i..<(i + 480)])
        }
        let r = try Self.record(codec: .l16(rate: 48_000), packets: packets, samplesPerPacket: 480, frames: 120)
        let at = Int(Self.start + Self.lagSamples)
        #expect(Array(r.pcm[at..<(at + source.count)]) == source)
        #expect(r.pcm[0..<at].allSatisfy { $0 == 0 })
    }

    @Test(arguments: [8_000, 16_000, 44_100])
    func l16AtAnotherRateIsResampledAndPlacedWithinASample(rate: Int) throws {
        let seconds = 1
        let native = Self.sine(440, samples: rate * seconds, rate: rate)
        let perPacket = rate / 100  // 10 ms: 44.1 kHz L16 in 20 ms is more than an MTU
        let packets = stride(from: 0, to: native.count - perPacket + 1, by: perPacket).map { i in
            Self.bigEndian(native[i..<(i + perPacket)])
        }
        let r = try Self.record(
            codec: .l16(rate: rate), packets: packets, samplesPerPacket: perPacket, frames: 100 * seconds + 40)
        let reference = Array(Self.sine(440, samples: 48_000 * seconds, rate: 48_000)[960..<20_160])
        let best = Self.bestLag(r.pcm, reference, at: Int(Self.start + Self.lagSamples) + 960, range: 48)
        #expect(best.c > 0.99, "correlation \(best.c)")
        #expect(abs(best.lag) <= 1, "placed \(best.lag) samples off")
        #expect(r.buffer.statistics.invalid == 0)
    }

    @Test func stereoL16IsDownmixedToAMonoTrack() throws {
        let left = Self.sine(500, samples: 16_000, rate: 16_000)
        let packets = stride(from: 0, to: left.count, by: 320).map { i in
            // The right channel is silent.
            Self.bigEndian(left[i..<(i + 320)].flatMap { [$0, 0] }[...])
        }
        let r = try Self.record(
            codec: .l16(rate: 16_000, channels: 2), packets: packets, samplesPerPacket: 320, frames: 140)
        let at = Int(Self.start + Self.lagSamples)
        let peak = r.pcm[(at + 4_800)..<(at + 9_600)].map { abs(Int($0)) }.max() ?? 0
        // Half of 0.4 full scale: the silent right channel averaged in.
        #expect(abs(peak - 6_553) < 400, "peak \(peak)")
    }

    @Test func pcmuDecodesToTheSourceAndALostPacketIsConcealedByPLC() throws {
        let native = Self.sine(300, samples: 8_000, rate: 8_000)
        let packets = stride(from: 0, to: native.count, by: 160).map { i in native[i..<(i + 160)].map(Self.ulaw) }
        let clean = try Self.record(codec: .pcmu, packets: packets, samplesPerPacket: 160, frames: 140)
        let reference = Array(Self.sine(300, samples: 48_000, rate: 48_000)[960..<20_160])
        let best = Self.bestLag(clean.pcm, reference, at: Int(Self.start + Self.lagSamples) + 960, range: 48)
        #expect(best.c > 0.99, "correlation \(best.c)")
        #expect(abs(best.lag) <= 1, "placed \(best.lag) samples off")

        let lossy = try Self.record(codec: .pcmu, packets: packets, samplesPerPacket: 160, lost: [20], frames: 140)
        #expect(lossy.buffer.statistics.record?.lost == 1)
        #expect(lossy.statuses.contains(FrameStatus.concealed))
        // libspandsp's PLC repeats the pitch period: the lost 20 ms is not silence, and the
        // recording around it keeps the tone (a 300 Hz sine is its own best concealment).
        let at = Int(Self.start + Self.lagSamples) + 20 * 960
        let hole = lossy.pcm[at..<(at + 960)]
        #expect((hole.map { abs(Int($0)) }.max() ?? 0) > 5_000)
        #expect(lossy.pcm.count == clean.pcm.count)
    }

    @Test func l16LossFadesOutInsteadOfClicking() throws {
        let native = [Int16](repeating: 10_000, count: 16_000)
        let packets = stride(from: 0, to: native.count, by: 320).map { i in
            Self.bigEndian(native[i..<(i + 320)])
        }
        let r = try Self.record(
            codec: .l16(rate: 16_000), packets: packets, samplesPerPacket: 320, lost: [10], frames: 140)
        let at = Int(Self.start + Self.lagSamples) + 10 * 960
        // No step larger than the fade's: 10 000 over 10 ms (480 samples) is about 21 per sample
        // (the resampler smooths it a little more).
        var largest = 0
        // (Up to where the next packet resumes at full level: that step is the sender's.)
        for i in (at - 960)..<(at + 940) { largest = max(largest, abs(Int(r.pcm[i + 1]) - Int(r.pcm[i]))) }
        #expect(largest < 200, "largest step \(largest)")
        #expect(r.pcm[at + 600] == 0, "silence after the fade")
        #expect(r.statuses.contains(FrameStatus.concealed))
    }

    /// A sine of `frequency` Hz at `rate` Hz, 0.4 of full scale.
    static func sine(_ frequency: Double, samples: Int, rate: Int) -> [Int16] {
        (0..<samples).map { Int16(0.4 * 32_767 * sin(2 * .pi * frequency * Double($0) / Double(rate))) }
    }

    /// L16 bytes: each sample most significant byte first (RFC 3551 §4.5.11).
    static func bigEndian(_ samples: ArraySlice<Int16>) -> [UInt8] {
        var bytes: [UInt8] = []
        for v in samples {
            let u = UInt16(bitPattern: v)
            bytes.append(UInt8(u >> 8))
            bytes.append(UInt8(u & 0xFF))
        }
        return bytes
    }

    /// ITU-T G.711 µ-law encoding of one sample (the reference algorithm).
    static func ulaw(_ sample: Int16) -> UInt8 {
        let bias = 0x84
        var value = Int(sample)
        let sign = value < 0 ? 0x80 : 0
        if value < 0 { value = -value }
        value = min(value, 32_635) + bias
        var exponent = 7
        var mask = 0x4000
        while exponent > 0 && value & mask == 0 {
            exponent -= 1
            mask >>= 1
        }
        let mantissa = (value >> (exponent + 3)) & 0x0F
        return UInt8(~(sign | exponent << 4 | mantissa) & 0xFF)
    }
}
