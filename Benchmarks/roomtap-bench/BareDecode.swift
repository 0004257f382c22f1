import COpus
import Foundation
import RoomTapTestSupport

/// The limit: libopus decoding the same packets into a buffer, nothing else. The packets are read
/// from the files (with libogg) before the timed part.
enum BareDecode {
    static func cpuSeconds(files: [String]) -> Double {
        let streams = files.map { OggPacketDump(path: $0)!.audioPackets }
        var pcm = [Int16](repeating: 0, count: 5760)
        var error: Int32 = 0
        let decoders = streams.map { _ in opus_decoder_create(48_000, 1, &error)! }
        defer { for decoder in decoders { opus_decoder_destroy(decoder) } }
        let start = cpuTime()
        var total = 0
        for (decoder, packets) in zip(decoders, streams) {
            for packet in packets {
                total += Int(
                    packet.withUnsafeBufferPointer { p in
                        pcm.withUnsafeMutableBufferPointer { out in
                            opus_decode(decoder, p.baseAddress, Int32(p.count), out.baseAddress!, 5760, 0)
                        }
                    })
            }
        }
        let elapsed = cpuTime() - start
        precondition(total > 0, "decoded nothing")
        return elapsed
    }
}

/// CPU time of this process, in seconds.
func cpuTime() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}
