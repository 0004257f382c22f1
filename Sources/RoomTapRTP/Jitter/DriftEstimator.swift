/// Measures how far a sender's clock has slid against the room's, from packet arrivals.
///
/// For every packet the jitter buffer computes its *skew*: the room sample at which it arrived
/// minus the room sample its RTP timestamp places it at (both 48 kHz). Network delay only ever
/// adds to the skew, so the smallest skew of a window of arrivals (``window``, 2 s by default) is
/// the least-delayed packet: a sample of the path's base delay plus the clock offset. The first
/// window's minimum is the reference; each later window publishes `minimum - reference`: how many
/// samples the sender's timeline has slid against the room since the stream started (positive:
/// the sender is slow, its audio must be played later; negative: it is fast). Random jitter moves
/// the minimum of a window of dozens of packets by a small fraction of the jitter, a ±200 ppm
/// clock moves it by ±19 samples a window.
///
/// A new sender behind the stream (``restart()``) is anchored anew, so its skews step by whatever
/// the new anchor differs from the old: that step is no slide of a clock. Its windows are
/// measured against a reference of its own, continuing from the last estimate, so the playouts
/// see no jump and correct nothing for it.
///
/// Thread: confined to the producer (receive) thread. A value type.
struct DriftEstimator {
    /// Window length, in room samples of arrival time.
    let window: Int64
    private var windowEnd: Int64?
    private var windowMinimum: Int64 = .max
    private var reference: Int64?
    /// The estimate the current sender's slides are added to: the last published before its
    /// restart (0 for the first sender).
    private var base: Int64 = 0
    private var lastPublished: Int64 = 0

    /// An estimator over windows of `window` samples (48 kHz).
    init(window: Int64 = 96_000) {
        precondition(window > 0, "a window has a length")
        self.window = window
    }

    /// Records one packet's `skew` (arrival minus timestamp position, samples) that arrived at room
    /// sample `arrival`. Returns the new estimate of the slide when this arrival closed a window.
    mutating func observe(skew: Int64, arrival: Int64) -> Int64? {
        var published: Int64?
        if let end = windowEnd, arrival >= end {
            if windowMinimum != .max {
                if let reference {
                    published = base + windowMinimum - reference
                } else {
                    reference = windowMinimum
                    published = base
                }
                lastPublished = published ?? lastPublished
            }
            windowMinimum = .max
            windowEnd = arrival + window
        } else if windowEnd == nil {
            windowEnd = arrival + window
        }
        windowMinimum = min(windowMinimum, skew)
        return published
    }

    /// A new sender starts (the jitter buffer re-anchored the stream): its first window becomes
    /// the new reference, and the estimate goes on from the last one published.
    mutating func restart() {
        base = lastPublished
        reference = nil
        windowEnd = nil
        windowMinimum = .max
    }
}
