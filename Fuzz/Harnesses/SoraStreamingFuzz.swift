import RoomTapSora

/// The fuzz entry of Sora's audio-streaming body (Fuzz/roomtap-fuzz): the bytes read as a body,
/// frame after frame, as ``SoraStreamRequest`` reads it, and each frame's timestamp placed as
/// ``SoraTimestampMapping`` places it. Traps when an invariant fails: every frame lies inside the
/// bytes with a payload of 1...1500 bytes, the reading ends in `needMore` or `invalid`, never loops.
///
/// Thread: any (pure).
package enum SoraStreamingFuzz {
    package static func exercise(_ bytes: UnsafeRawBufferPointer) {
        var offset = 0
        var frames = 0
        while offset <= bytes.count {
            let rest = UnsafeRawBufferPointer(rebasing: bytes[offset...])
            switch SoraStreamingFrame.parse(rest) {
            case .frame(let frame):
                precondition(frame.payloadRange.lowerBound == SoraStreamingFrame.headerSize)
                precondition(frame.payloadRange.count >= 1 && frame.payloadRange.count <= SoraStreamingFrame.maxPayload)
                precondition(frame.size <= rest.count && frame.size > SoraStreamingFrame.headerSize)
                let samples = SoraTimestampMapping.samples(of: frame.timestamp)
                precondition(samples / 48_000 == frame.timestamp / 1_000_000)
                let ntp = SoraTimestampMapping.ntp(of: frame.timestamp)
                precondition(
                    (UInt64(ntp.fraction) * 48_000) >> 32 == samples % 48_000,
                    "the NTP fraction lands on the timestamp's sample")
                offset += frame.size
                frames += 1
            case .needMore(let need):
                precondition(need > rest.count)
                return
            case .invalid:
                return
            }
        }
        preconditionFailure("the reader went past the end of the bytes")
    }
}
