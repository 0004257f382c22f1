/// A fixed delay of whole frames for one track: what goes in at tick `n` comes out at tick
/// `n + delay`, with its status (silence comes out until then). Carries a source's live audio to
/// its place in the record (see ``RoomTiming``).
///
/// Thread: confined to the room clock's thread. Preallocated: `delay` frames of samples.
final class FrameDelayLine {
    let delay: Int
    private let channels: Int
    private let samples: UnsafeMutablePointer<Int16>
    private let statuses: UnsafeMutablePointer<FrameStatus>
    private var next = 0

    init(delay: Int, channels: Int) {
        precondition(delay > 0, "a delay line delays")
        self.delay = delay
        self.channels = channels
        let count = delay * AudioFrame.samplesPerChannel * channels
        samples = .allocate(capacity: count)
        samples.initialize(repeating: 0, count: count)
        statuses = .allocate(capacity: delay)
        statuses.initialize(repeating: .silence, count: delay)
    }

    deinit {
        samples.deallocate()
        statuses.deinitialize(count: delay)
        statuses.deallocate()
    }

    /// Puts `input` in and writes the frame that went in `delay` ticks ago to `output`; returns
    /// its status.
    func pass(_ input: FrameBuffer, to output: FrameBuffer) -> FrameStatus {
        let count = AudioFrame.samplesPerChannel * channels
        let slot = samples + next * count
        let out = output.samples.baseAddress!
        out.update(from: slot, count: count)
        slot.update(from: input.samples.baseAddress!, count: count)
        let status = statuses[next]
        statuses[next] = input.status
        next = (next + 1) % delay
        return status
    }
}

/// The gains a track's controls asked for, delayed like its audio (see ``RoomTiming``).
///
/// Thread: confined to the room clock's thread. Preallocated.
final class GainDelayLine {
    private let delay: Int
    private let heard: UnsafeMutablePointer<Float>
    private let recorded: UnsafeMutablePointer<Float>
    private var next = 0
    private var primed = false

    init(delay: Int) {
        precondition(delay > 0, "a delay line delays")
        self.delay = delay
        heard = .allocate(capacity: delay)
        recorded = .allocate(capacity: delay)
        heard.initialize(repeating: 1, count: delay)
        recorded.initialize(repeating: 1, count: delay)
    }

    deinit {
        heard.deallocate()
        recorded.deallocate()
    }

    /// Puts this tick's gains in; returns those of `delay` ticks ago (before the first tick's
    /// gains have come out, the first tick's: a track muted from the start is muted throughout).
    func pass(heard h: Float, recorded r: Float) -> (heard: Float, recorded: Float) {
        if !primed {
            heard.update(repeating: h, count: delay)
            recorded.update(repeating: r, count: delay)
            primed = true
        }
        let out = (heard[next], recorded[next])
        heard[next] = h
        recorded[next] = r
        next = (next + 1) % delay
        return out
    }
}
