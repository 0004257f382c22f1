import COpus
import RoomTapRTP
import Testing

@Suite("Wire: Opus payload (RFC 7587 §4.2, RFC 6716 §3)")
struct WireOpusPayloadTests {
    /// Frame duration of each TOC configuration in units of 2.5 ms (RFC 6716 §3.1, Table 2), written
    /// out independently of the code under test.
    static let quarterFrames: [Int] =
        [4, 8, 16, 24, 4, 8, 16, 24, 4, 8, 16, 24]  // SILK NB, MB, WB: 10, 20, 40, 60 ms
        + [4, 8, 4, 8]  // hybrid SWB, FB: 10, 20 ms
        + [1, 2, 4, 8, 1, 2, 4, 8, 1, 2, 4, 8, 1, 2, 4, 8]  // CELT NB, WB, SWB, FB: 2.5, 5, 10, 20 ms

    /// The fields of an `OpusPacketInfo`, comparable in tests.
    struct Facts: Equatable {
        var configuration: Int
        var isStereo: Bool
        var frameCountCode: Int
        var frameCount: Int
        var samples: Int
        var isDTX: Bool
        var milliseconds: Double { Double(samples) / 48 }
    }

    func inspect(_ bytes: [UInt8]) -> Facts? {
        bytes.withUnsafeBytes { OpusPayload.inspect($0) }.map {
            Facts(
                configuration: $0.configuration, isStereo: $0.isStereo, frameCountCode: $0.frameCountCode,
                frameCount: $0.frameCount, samples: $0.samples, isDTX: $0.isDTX)
        }
    }

    func duration(_ bytes: [UInt8]) -> Int? {
        bytes.withUnsafeBytes { OpusPayload.duration(of: $0) }
    }

    @Test func everyConfigurationAndFrameCountCode() {
        var checked = 0
        for config in 0..<32 {
            let frame = Self.quarterFrames[config] * 120
            for stereo in [false, true] {
                let toc = UInt8(config << 3) | (stereo ? 4 : 0)
                // Code 0: one 10-byte frame.
                let c0 = [toc] + [UInt8](repeating: 0x55, count: 10)
                #expect(inspect(c0) == info(config, stereo, code: 0, frames: 1, samples: frame))
                // Code 1: two 6-byte frames.
                let c1 = [toc | 1] + [UInt8](repeating: 0x55, count: 12)
                #expect(inspect(c1) == info(config, stereo, code: 1, frames: 2, samples: 2 * frame))
                // Code 2: a 3-byte frame (one length byte) then a 7-byte one.
                let c2 = [toc | 2, 3] + [UInt8](repeating: 0x55, count: 10)
                #expect(inspect(c2) == info(config, stereo, code: 2, frames: 2, samples: 2 * frame))
                // Code 3, CBR, every M: valid exactly while M × frame <= 120 ms.
                for m in 0...63 {
                    let c3 = [toc | 3, UInt8(m)] + [UInt8](repeating: 0x55, count: 2 * m)
                    let valid = m >= 1 && m * frame <= 5760
                    #expect(
                        inspect(c3) == (valid ? info(config, stereo, code: 3, frames: m, samples: m * frame) : nil),
                        "config \(config) M \(m)")
                    checked += 1
                }
            }
        }
        #expect(checked == 32 * 2 * 64)
    }

    func info(_ config: Int, _ stereo: Bool, code: Int, frames: Int, samples: Int) -> Facts {
        Facts(
            configuration: config, isStereo: stereo, frameCountCode: code, frameCount: frames, samples: samples,
            isDTX: false)
    }

    @Test func durationsSpanTwoAndAHalfTo120Milliseconds() {
        #expect(duration([16 << 3, 0x55]) == 120)  // CELT NB 2.5 ms
        #expect(([16 << 3, 0x55] as [UInt8]).withUnsafeBytes { OpusPayload.inspect($0)?.milliseconds } == 2.5)
        #expect(duration([(31 << 3) | 3, 6] + [UInt8](repeating: 1, count: 12)) == 5760)  // 6 × 20 ms
        #expect(duration([(3 << 3) | 3, 2, 1, 1]) == 5760)  // 2 × 60 ms SILK
        #expect(duration([(3 << 3) | 3, 3, 1, 1, 1]) == nil)  // 180 ms
        #expect(duration([(16 << 3) | 3, 48] + [UInt8](repeating: 1, count: 48)) == 5760)  // 48 × 2.5 ms
        #expect(duration([(16 << 3) | 3, 49] + [UInt8](repeating: 1, count: 49)) == nil)
    }

    @Test func malformedPayloadsAreInvalid() {
        #expect(inspect([]) == nil)  // RFC 7587: a payload is one Opus packet, at least the TOC
        #expect(inspect([(31 << 3) | 3]) == nil)  // code 3 without its frame count byte
        #expect(inspect([(31 << 3) | 3, 0]) == nil)  // M = 0
        #expect(inspect([(31 << 3) | 1, 1, 2, 3]) == nil)  // code 1 needs an even size after the TOC
        #expect(inspect([(31 << 3) | 1, 1, 2])?.frameCount == 2)
        #expect(inspect([(31 << 3) | 2]) == nil)  // code 2 without the first frame's length
        #expect(inspect([(31 << 3) | 2, 200, 1]) == nil)  // first frame longer than the packet
        #expect(inspect([(31 << 3) | 3, 0x80 | 2, 200]) == nil)  // VBR lengths past the end
        #expect(inspect([(31 << 3) | 3, 0x40 | 1, 255]) == nil)  // Opus padding past the end
    }

    @Test func oneAndTwoBytePayloadsAreDTX() {
        for config in [1, 9, 15, 31] {
            let toc = UInt8(config << 3)
            let frame = Self.quarterFrames[config] * 120
            #expect(inspect([toc])?.isDTX == true)
            #expect(inspect([toc])?.samples == frame)
            #expect(inspect([toc, 0x42])?.isDTX == true)  // a 1-byte frame: "PLC/DTX" in libopus
            #expect(inspect([toc, 0x42, 0x43])?.isDTX == false)
            #expect(inspect([toc | 1])?.isDTX == true)  // code 1, two empty frames
            #expect(inspect([toc | 1])?.samples == 2 * frame)
            #expect(inspect([toc | 3, 2])?.isDTX == (frame <= 2880 ? true : nil))  // code 3, two empty frames
        }
    }

    @Test(arguments: [120, 240, 480, 960, 1920, 2880], [1, 2])
    func packetsFromLibopusEncoder(frameSize: Int, channels: Int) throws {
        var error: Int32 = 0
        let encoder = try #require(opus_encoder_create(48_000, Int32(channels), OPUS_APPLICATION_AUDIO, &error))
        defer { opus_encoder_destroy(encoder) }
        #expect(error == OPUS_OK)
        var pcm = [Int16](repeating: 0, count: frameSize * channels)
        var out = [UInt8](repeating: 0, count: 1500)
        for n in 0..<5 {
            for i in 0..<frameSize {
                let v = Int16(8000 * sin(Double(n * frameSize + i) * 2 * .pi * 440 / 48_000))
                for c in 0..<channels { pcm[i * channels + c] = v }
            }
            let length = opus_encode(encoder, pcm, Int32(frameSize), &out, Int32(out.count))
            #expect(length > 0)
            let packet = Array(out.prefix(Int(length)))
            let info = try #require(inspect(packet))
            #expect(info.samples == frameSize)
            #expect(info.isStereo == (channels == 2))
            #expect(
                info.frameCount
                    == packet.withUnsafeBytes {
                        Int(opus_packet_get_nb_frames($0.baseAddress!.assumingMemoryBound(to: UInt8.self), length))
                    })
        }
    }
}

private func sin(_ x: Double) -> Double {
    // Taylor series around the nearest multiple of 2π, enough for a test tone (no Foundation).
    var y = x.truncatingRemainder(dividingBy: 2 * .pi)
    if y > .pi { y -= 2 * .pi }
    if y < -.pi { y += 2 * .pi }
    var term = y
    var sum = y
    for k in 1...10 {
        term *= -y * y / Double((2 * k) * (2 * k + 1))
        sum += term
    }
    return sum
}
