import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A lock-free single-producer single-consumer ring of interleaved Int16 samples, allocated once:
/// the hand-over of audio between a thread that produces it at its own pace (an ALSA capture
/// thread, the agent's session) and the room clock's thread that takes 10 ms per tick.
///
/// Positions are monotonic counts of samples per channel since creation: ``writePosition`` (after
/// the last sample written) and ``readPosition`` (after the last sample read, dropped as oldest or
/// discarded). The producer owns the write position; the read position is advanced by the consumer
/// and, under ``OverflowPolicy/dropOldest(keeping:)``, by the producer when it drops, both with
/// compare-and-exchange: the consumer only keeps samples whose read position it advanced itself.
///
/// No sample is ever read while it is written. The producer writes only slots behind the read
/// position, but it may move that position itself (a `.dropOldest` drop, or a ``discard(upTo:)``
/// from the producer's side: the agent voice's barge-in) and then overwrite samples the consumer
/// is copying. So the two meet as in Dekker's algorithm (sequentially consistent atomics): the
/// consumer announces the position it copies from, then checks that the read position has not
/// moved; the producer moves it, then checks for a copy in progress and waits for that copy (a few
/// hundred samples: well under a microsecond, yielding the CPU) before it goes on. At least one of
/// them sees the other, so either the consumer retries before it copies or the producer waits.
///
/// Every sample written is eventually read, discarded (``discard(upTo:)``) or counted in
/// ``droppedSamples``: `read + discarded + dropped == offered` at any quiet moment.
///
/// Thread: `write` from one producer thread; `read(exactly:into:)` and `read(upTo:into:)` from one
/// consumer thread; `discard(upTo:)` from either of the two; positions and counters from any
/// thread. Nothing allocates after `init`; the consumer never waits, and the producer waits only
/// as described above (a drop or discard that met a copy in progress).
package final class SampleRing: @unchecked Sendable {
    /// What a write does with samples that do not fit.
    package enum OverflowPolicy: Sendable, Equatable {
        /// Drops the oldest waiting samples so that, after the write, `keeping` samples per channel
        /// (or the write itself, when larger) are waiting: one jump in the audio rather than a small
        /// drop on every write while the ring stays near full. Bounds latency (capture). A single
        /// write may not exceed the capacity.
        case dropOldest(keeping: Int)
        /// Keeps what is queued and drops the part of a write that does not fit (the agent's voice:
        /// nothing already queued is lost).
        case dropNewest
    }

    /// Samples per channel the ring can hold.
    package let capacity: Int
    /// Interleaved channels per sample frame.
    package let channels: Int
    /// What a write that does not fit drops.
    package let policy: OverflowPolicy

    private let storage: UnsafeMutablePointer<Int16>
    private let head = Atomic<Int>(0)  // the write position; written by the producer
    private let tail = Atomic<Int>(0)  // the read position; consumer, and producer when dropping oldest
    private let dropped = Atomic<Int>(0)
    /// The read position the consumer is copying from, or -1 (see the type's note).
    private let copying = Atomic<Int>(-1)

    /// Allocates room for `capacity` samples per channel of `channels` interleaved channels.
    package init(capacity: Int, channels: Int = 1, policy: OverflowPolicy) {
        precondition(capacity > 0 && channels > 0, "a ring holds at least one sample of one channel")
        if case .dropOldest(let keeping) = policy {
            precondition(keeping >= 0 && keeping <= capacity, "keeping is within the capacity")
        }
        self.capacity = capacity
        self.channels = channels
        self.policy = policy
        storage = .allocate(capacity: capacity * channels)
        storage.initialize(repeating: 0, count: capacity * channels)
    }

    deinit { storage.deallocate() }

    /// Samples per channel written so far (accepted by the ring). Any thread.
    package var writePosition: Int { head.load(ordering: .acquiring) }
    /// Samples per channel read, dropped as oldest or discarded so far. Any thread.
    package var readPosition: Int { tail.load(ordering: .acquiring) }
    /// Samples per channel dropped by the overflow policy (oldest or newest). Any thread.
    package var droppedSamples: Int { dropped.load(ordering: .relaxed) }

    /// Samples per channel waiting (0 through `capacity`). Any thread; exact on the consumer's.
    package var count: Int {
        let t = tail.load(ordering: .acquiring)
        return min(capacity, max(0, head.load(ordering: .acquiring) - t))
    }

    /// Appends `frames` samples per channel from `source` (interleaved) and returns how many were
    /// written. `.dropOldest`: all of them, after dropping the oldest waiting samples if they do not
    /// fit (`frames` at most `capacity`); `.dropNewest`: what fits, the rest dropped. Drops are
    /// counted in ``droppedSamples``. Producer only; never blocks, does not allocate.
    @discardableResult
    package func write(_ source: UnsafePointer<Int16>, frames: Int) -> Int {
        guard frames > 0 else { return 0 }
        let h = head.load(ordering: .relaxed)
        var n = frames
        switch policy {
        case .dropOldest(let keeping):
            precondition(frames <= capacity, "a write larger than the ring")
            var t = tail.load(ordering: .acquiring)
            while h + frames - t > capacity {
                let newTail = h + frames - max(frames, keeping)
                let (exchanged, original) = tail.compareExchange(
                    expected: t, desired: newTail, ordering: .sequentiallyConsistent)
                if exchanged {
                    dropped.add(newTail - t, ordering: .relaxed)
                    waitForCopy()  // the dropped slots may be under the consumer's copy
                    break
                }
                t = original
            }
        case .dropNewest:
            n = min(frames, capacity - (h - tail.load(ordering: .acquiring)))
            if n < frames { dropped.add(frames - n, ordering: .relaxed) }
            guard n > 0 else { return 0 }
        }
        copy(from: source, to: h, frames: n)
        head.store(h + n, ordering: .releasing)
        return n
    }

    /// Takes exactly `frames` samples per channel into `destination` if that many are waiting;
    /// returns false, taking nothing, otherwise. Consumer only; never blocks, does not allocate.
    package func read(exactly frames: Int, into destination: UnsafeMutablePointer<Int16>) -> Bool {
        guard frames > 0 else { return true }
        while true {
            let t = tail.load(ordering: .acquiring)
            guard head.load(ordering: .acquiring) - t >= frames else { return false }
            guard copy(from: t, frames: frames, to: destination) else { continue }
            if tail.compareExchange(expected: t, desired: t + frames, ordering: .acquiringAndReleasing).exchanged {
                return true
            }
        }
    }

    /// Takes whatever is waiting, at most `frames` samples per channel, into `destination`; returns
    /// how many. Consumer only; never blocks, does not allocate.
    package func read(upTo frames: Int, into destination: UnsafeMutablePointer<Int16>) -> Int {
        take(upTo: frames, into: destination).frames
    }

    /// ``read(upTo:into:)`` that also says the read position the samples were taken from: where
    /// they sit among everything written, even when the producer moved the read position (a drop,
    /// a discard) just before. With nothing taken, `position` is the read position seen. Consumer
    /// only; never blocks, does not allocate.
    package func take(
        upTo frames: Int, into destination: UnsafeMutablePointer<Int16>
    ) -> (frames: Int, position: Int) {
        while true {
            let t = tail.load(ordering: .acquiring)
            let n = min(frames, head.load(ordering: .acquiring) - t)
            guard n > 0 else { return (0, t) }
            guard copy(from: t, frames: n, to: destination) else { continue }
            if tail.compareExchange(expected: t, desired: t + n, ordering: .acquiringAndReleasing).exchanged {
                return (n, t)
            }
        }
    }

    /// Skips every waiting sample before `position` (a read position; clamped to what has been
    /// written) without copying it, e.g. a barge-in's flush; returns how many were skipped (not
    /// counted as dropped). Idempotent for the same position. Either side: from the producer's,
    /// a read racing it keeps only what it took before, and the discard returns once no copy of
    /// the skipped samples is in progress (so the producer may overwrite them). Does not allocate.
    @discardableResult
    package func discard(upTo position: Int) -> Int {
        while true {
            let t = tail.load(ordering: .acquiring)
            let target = min(position, head.load(ordering: .acquiring))
            guard target > t else { return 0 }
            if tail.compareExchange(expected: t, desired: target, ordering: .sequentiallyConsistent).exchanged {
                waitForCopy()
                return target - t
            }
        }
    }

    /// After the producer moved the read position: waits while the consumer copies (it will find
    /// the position moved and discard its copy). Returns at once on the consumer's own thread,
    /// which is never inside a copy when it calls this.
    private func waitForCopy() {
        while copying.load(ordering: .sequentiallyConsistent) >= 0 { sched_yield() }
    }

    private func copy(from source: UnsafePointer<Int16>, to position: Int, frames: Int) {
        let start = position % capacity
        let first = min(frames, capacity - start)
        (storage + start * channels).update(from: source, count: first * channels)
        if first < frames { storage.update(from: source + first * channels, count: (frames - first) * channels) }
    }

    /// Copies `frames` samples per channel from read position `position` (the consumer's) to
    /// `destination`; false, copying nothing, when the producer has moved the read position since
    /// the consumer read it (see the type's note). Consumer only.
    private func copy(from position: Int, frames: Int, to destination: UnsafeMutablePointer<Int16>) -> Bool {
        copying.store(position, ordering: .sequentiallyConsistent)
        guard tail.load(ordering: .sequentiallyConsistent) == position else {
            copying.store(-1, ordering: .releasing)
            return false
        }
        let start = position % capacity
        let first = min(frames, capacity - start)
        destination.update(from: storage + start * channels, count: first * channels)
        if first < frames { (destination + first * channels).update(from: storage, count: (frames - first) * channels) }
        copying.store(-1, ordering: .releasing)
        return true
    }
}
