import RoomTapFuzzing
import RoomTapRTP
import RoomTapTestSupport
import Testing

/// The PBX codecs' depacketizers and decoders under hostile payloads (``PBXCodecFuzz``: the same
/// entry point the libFuzzer target runs): odd lengths, empty and oversized payloads, sequence
/// and timestamp jumps both ways, every codec and channel count. None may crash, and a silent
/// frame holds only zeros.
@Suite struct PBXCodecFuzzTests {
    @Test func randomStreamsOfEveryCodecNeverCrash() {
        var rng = SplitMix64(seed: 0x5EED_0012)
        for n in 0..<160 {
            let length = n % 8 == 0 ? Int(rng.next() % 6_000) : Int(rng.next() % 1_200)
            var bytes = (0..<length).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            if !bytes.isEmpty { bytes[0] = UInt8(n % 16) }  // every codec, both channel counts
            bytes.withUnsafeBytes { PBXCodecFuzz.exercise($0) }
        }
    }

    @Test func wellFormedStreamsWithJumpsNeverCrash() {
        for selector in UInt8(0)..<16 {
            var bytes: [UInt8] = [selector]
            for step in [1, 1, 1, 0, -1, 3, 127, -128, 1, 1] as [Int8] {
                bytes += [160, UInt8(bitPattern: step), UInt8(bitPattern: step &* 8)]
                bytes += [UInt8](repeating: 0x55, count: 160)
            }
            bytes.withUnsafeBytes { PBXCodecFuzz.exercise($0) }
        }
    }
}
