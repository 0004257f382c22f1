import Synchronization

/// A lock-free ring of interleaved Int16 samples between one producer (the capture thread) and one
/// consumer (the room clock's thread), bounded in latency: a write that would overflow drops the
/// oldest samples first.
///
/// Positions are monotonic counts of samples per channel. The producer owns `head`; `tail` is
/// advanced by the consumer (after reading) and by the producer (when dropping), both with
/// compare-and-exchange, so a read that raced a drop notices it and retries (the seqlock pattern):
/// the consumer only keeps samples whose `tail` it managed to advance itself.
///
/// Thread: `write` from the producer only, `read`/`readRemainder` from the consumer only, the
/// counters anywhere. Nothing blocks or allocates after `init`.
final class CaptureRing: @unchecked Sendable {
    /// Samples per channel the ring can hold.
    let capacity: Int
    let channels: Int
    private let storage: UnsafeMutablePointer<Int16>
    private let head = Atomic<Int>(0)
    private let tail = Atomic<Int>(0)
    /// Samples per channel dropped to keep the latency bounded.
    let dropped = Atomic<Int>(0)

    init(capacity: Int, channels: Int) {
        precondition(capacity > 0)
        self.capacity = capacity
        self.channels = channels
        storage = .allocate(capacity: capacity * channels)
        storage.initialize(repeating: 0, count: capacity * channels)
    }

    deinit { storage.deallocate() }

    /// Samples per channel waiting.
    var count: Int { head.load(ordering: .acquiring) - tail.load(ordering: .acquiring) }

    /// Appends `frames` samples per channel from `source`. When they do not fit, first drops the
    /// oldest samples down to half the capacity (one jump in the audio rather than a small drop on
    /// every write while the ring stays near full). Producer only.
    func write(_ source: UnsafePointer<Int16>, frames: Int) {
        precondition(frames <= capacity, "a write larger than the ring")
        let h = head.load(ordering: .relaxed)
        var t = tail.load(ordering: .acquiring)
        while h + frames - t > capacity {
            let newTail = h + frames - max(frames, capacity / 2)
            let (exchanged, original) = tail.compareExchange(
                expected: t, desired: newTail, ordering: .acquiringAndReleasing)
            if exchanged {
                dropped.add(newTail - t, ordering: .relaxed)
                break
            }
            t = original
        }
        copy(from: source, to: h, frames: frames)
        head.store(h + frames, ordering: .releasing)
    }

    /// Takes exactly `frames` samples per channel into `destination` if that many are waiting;
    /// returns false, taking nothing, otherwise. Consumer only.
    func read(into destination: UnsafeMutablePointer<Int16>, frames: Int) -> Bool {
        while true {
            let t = tail.load(ordering: .acquiring)
            guard head.load(ordering: .acquiring) - t >= frames else { return false }
            copy(from: t, frames: frames, to: destination)
            if tail.compareExchange(expected: t, desired: t + frames, ordering: .acquiringAndReleasing).exchanged {
                return true
            }
        }
    }

    /// Takes whatever is waiting, at most `frames` samples per channel; returns how many. Consumer
    /// only (used once the producer has ended).
    func readRemainder(into destination: UnsafeMutablePointer<Int16>, frames: Int) -> Int {
        while true {
            let t = tail.load(ordering: .acquiring)
            let n = min(frames, head.load(ordering: .acquiring) - t)
            guard n > 0 else { return 0 }
            copy(from: t, frames: n, to: destination)
            if tail.compareExchange(expected: t, desired: t + n, ordering: .acquiringAndReleasing).exchanged {
                return n
            }
        }
    }

    private func copy(from source: UnsafePointer<Int16>, to position: Int, frames: Int) {
        let start = position % capacity
        let first = min(frames, capacity - start)
        (storage + start * channels).update(from: source, count: first * channels)
        if first < frames { storage.update(from: source + first * channels, count: (frames - first) * channels) }
    }

    private func copy(from position: Int, frames: Int, to destination: UnsafeMutablePointer<Int16>) {
        let start = position % capacity
        let first = min(frames, capacity - start)
        destination.update(from: storage + start * channels, count: first * channels)
        if first < frames { (destination + first * channels).update(from: storage, count: (frames - first) * channels) }
    }
}
