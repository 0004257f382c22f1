import RoomTapCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Decoded audio waiting to be played: a FIFO of 48 kHz PCM positioned on the stream's timeline,
/// with a kind per sample (silence, audio, concealment) so each 10 ms frame gets its status.
///
/// It covers `[start, end)` in timeline samples; the jitter buffer keeps `start` at its playout
/// cursor. Playing a frame may drop or repeat one sample (drift correction) at the quietest
/// point of the frame, where the splice is least audible.
///
/// Thread: confined to the consumer (the room clock's thread). Preallocated; nothing allocates.
final class PlayoutBuffer {
    /// What a buffered sample is.
    enum Kind: UInt8 {
        case silence = 0
        case audio = 1
        case concealed = 2
    }

    /// 1 or 2.
    let channels: Int
    /// Samples per channel the buffer holds.
    let capacity: Int
    private let samples: UnsafeMutablePointer<Int16>
    private let kinds: UnsafeMutablePointer<UInt8>
    private var head = 0
    /// Samples per channel buffered.
    private(set) var count = 0
    /// Timeline position of the first buffered sample.
    private(set) var start: Int64 = 0

    /// Timeline position just after the last buffered sample.
    var end: Int64 { start + Int64(count) }

    /// Allocates room for `capacity` samples per channel.
    init(channels: Int, capacity: Int) {
        self.channels = channels
        self.capacity = capacity
        samples = .allocate(capacity: capacity * channels)
        samples.initialize(repeating: 0, count: capacity * channels)
        kinds = .allocate(capacity: capacity)
        kinds.initialize(repeating: 0, count: capacity)
    }

    deinit {
        samples.deallocate()
        kinds.deallocate()
    }

    /// Empties the buffer and places it at `position`.
    func reset(at position: Int64) {
        head = 0
        count = 0
        start = position
    }

    /// Free space at the tail, in samples per channel.
    var space: Int { capacity - count }

    private func makeRoom(_ frames: Int) -> Int {
        if head + count + frames > capacity {
            if count > 0 { samples.update(from: samples + head * channels, count: count * channels) }
            if count > 0 { kinds.update(from: kinds + head, count: count) }
            head = 0
        }
        return min(frames, capacity - count)
    }

    /// Appends `frames` samples per channel from `pcm` (interleaved). Truncates if full.
    func append(_ pcm: UnsafePointer<Int16>, frames: Int, kind: Kind) {
        let n = makeRoom(frames)
        guard n > 0 else { return }
        (samples + (head + count) * channels).update(from: pcm, count: n * channels)
        (kinds + head + count).update(repeating: kind.rawValue, count: n)
        count += n
    }

    /// Appends `frames` samples per channel of zeros. Truncates if full.
    func appendSilence(frames: Int) {
        let n = makeRoom(frames)
        guard n > 0 else { return }
        (samples + (head + count) * channels).update(repeating: 0, count: n * channels)
        (kinds + head + count).update(repeating: Kind.silence.rawValue, count: n)
        count += n
    }

    /// Plays one 10 ms frame into `out` (480 samples per channel): takes `480 - adjust` buffered
    /// samples, dropping one (`adjust == -1`) or repeating one (`adjust == 1`) at the quietest
    /// point. Missing samples (the buffer ran short) play as silence. Returns the frame's status.
    func play(into out: UnsafeMutablePointer<Int16>, adjust: Int) -> FrameStatus {
        let frames = AudioFrame.samplesPerChannel
        let need = frames - adjust
        if count < need { appendSilence(frames: need - count) }
        let src = samples + head * channels
        let ch = channels
        switch adjust {
        case 0:
            out.update(from: src, count: frames * ch)
        default:
            // The quietest sample (sum of |x| over channels), away from the frame's edges.
            var quietest = 1
            var least = Int.max
            for i in 1..<(need - 1) {
                var e = 0
                for c in 0..<ch { e += abs(Int(src[i * ch + c])) }
                if e < least {
                    least = e
                    quietest = i
                    if e == 0 { break }
                }
            }
            if adjust < 0 {
                out.update(from: src, count: quietest * ch)
                (out + quietest * ch).update(from: src + (quietest + 1) * ch, count: (need - quietest - 1) * ch)
            } else {
                out.update(from: src, count: (quietest + 1) * ch)
                (out + (quietest + 1) * ch).update(from: src + quietest * ch, count: (need - quietest) * ch)
            }
        }
        let status = status(of: need)
        head += need
        count -= need
        start += Int64(need)
        if count == 0 { head = 0 }
        return status
    }

    /// Plays `frames` (at most 480) buffered samples per channel into `out` unchanged (missing
    /// ones as silence). Returns their status.
    func play(into out: UnsafeMutablePointer<Int16>, frames: Int) -> FrameStatus {
        guard frames > 0 else { return .silence }
        if count < frames { appendSilence(frames: frames - count) }
        out.update(from: samples + head * channels, count: frames * channels)
        let status = status(of: frames)
        discard(frames)
        return status
    }

    /// True when the first `frames` buffered samples (missing ones count as silence) are silence
    /// or stay within ±`peak` on every channel.
    func isQuiet(frames: Int, peak: Int) -> Bool {
        let n = min(frames, count)
        let src = samples + head * channels
        for i in 0..<(n * channels) where abs(Int(src[i])) > peak { return false }
        return true
    }

    private func status(of frames: Int) -> FrameStatus {
        let k = UnsafeRawPointer(kinds + head)
        if memchr(k, Int32(Kind.concealed.rawValue), frames) != nil { return .concealed }
        if memchr(k, Int32(Kind.audio.rawValue), frames) != nil { return .normal }
        return .silence
    }

    /// Drops `frames` samples per channel from the front (at most `count`).
    func discard(_ frames: Int) {
        let n = min(frames, count)
        head += n
        count -= n
        start += Int64(n)
        if count == 0 { head = 0 }
    }
}
