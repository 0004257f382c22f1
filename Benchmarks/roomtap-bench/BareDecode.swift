import COpus
import Foundation
import RoomTapMediaTestSupport

/// The limit: libopus decoding the same packets into a buffer, nothing else. The packets are read
/// from the files (with libogg) before the timed part.
enum BareDecode {
    /// How the loop walks the streams.
    enum Order {
        /// Each stream start to end, then the next (the best case for the CPU caches).
        case streamByStream
        /// One packet of every stream in turn, as a room clock does.
        case roundRobin
    }

    static func cpuSeconds(files: [String], order: Order = .streamByStream) -> Double {
        let streams = files.map { OggPacketDump(path: $0)!.audioPackets }
        let pcm = UnsafeMutablePointer<Int16>.allocate(capacity: 5760)
        defer { pcm.deallocate() }
        var error: Int32 = 0
        let decoders = streams.map { _ in opus_decoder_create(48_000, 1, &error)! }
        defer { for decoder in decoders { opus_decoder_destroy(decoder) } }
        func decode(_ stream: Int, _ index: Int) -> Int {
            let packet = streams[stream][index]
            return Int(
                packet.withUnsafeBufferPointer {
                    opus_decode(decoders[stream], $0.baseAddress, Int32($0.count), pcm, 5760, 0)
                })
        }
        let start = cpuTime()
        var total = 0
        switch order {
        case .streamByStream:
            for stream in streams.indices {
                for index in streams[stream].indices { total += decode(stream, index) }
            }
        case .roundRobin:
            let longest = streams.map(\.count).max() ?? 0
            for index in 0..<longest {
                for stream in streams.indices where index < streams[stream].count { total += decode(stream, index) }
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
