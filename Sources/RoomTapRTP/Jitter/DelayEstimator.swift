/// Estimates the playout delay a stream needs from how late its packets arrive.
///
/// For every packet the jitter buffer computes its *relative arrival* `r`: the room sample at
/// which it arrived minus the room sample its RTP timestamp places it at, without the playout
/// delay (so `r` does not depend on the delay being estimated; the first packet has `r = 0`). A
/// packet is played if it arrives at least ``guardSamples`` before its playout point, i.e. if
/// `r ≤ delay − guard`. The estimate is the largest `r` of the last ``windows`` windows of
/// ``window`` samples of arrival time plus the guard, rounded up to whole 10 ms frames (the step
/// in which the delay changes): the 100th percentile of the recent slack shortfall. It rises at
/// once when a packet arrives later than any before (raise quickly), and falls only once the
/// late arrivals have left the history (lower slowly: after `windows × window` of calm).
///
/// Thread: confined to the producer (receive) thread. A value type; nothing allocates.
struct DelayEstimator {
    /// Window length, in room samples of arrival time (1 s).
    static let window: Int64 = 48_000
    /// Windows of history (the current one included).
    static let windows = 5
    /// Margin between a packet's arrival and its playout point (15 ms: the 10 ms frame that is
    /// filled ahead plus 5 ms for the clock's wake-up and the decoder).
    static let guardSamples: Int64 = 720

    private var maxima: (Int64, Int64, Int64, Int64, Int64) = (.min, .min, .min, .min, .min)
    private var current = 0
    private var windowEnd: Int64?

    /// Records one packet's relative arrival `r` (samples) that arrived at room sample `arrival`;
    /// returns the delay it calls for (samples, a multiple of 480, at least 0).
    mutating func observe(relativeArrival r: Int64, arrival: Int64) -> Int64 {
        if let end = windowEnd {
            if arrival >= end {
                // Move on as many windows as passed (at most all of them), clearing each.
                let passed = min(Int((arrival - end) / Self.window) + 1, Self.windows)
                for _ in 0..<passed {
                    current = (current + 1) % Self.windows
                    set(current, .min)
                }
                windowEnd = end + Int64(Int((arrival - end) / Self.window) + 1) * Self.window
            }
        } else {
            windowEnd = arrival + Self.window
        }
        if r > get(current) { set(current, r) }
        var largest = Int64.min
        for i in 0..<Self.windows { largest = max(largest, get(i)) }
        let needed = max(0, largest + Self.guardSamples)
        return (needed + 479) / 480 * 480
    }

    private func get(_ i: Int) -> Int64 {
        switch i {
        case 0: maxima.0
        case 1: maxima.1
        case 2: maxima.2
        case 3: maxima.3
        default: maxima.4
        }
    }

    private mutating func set(_ i: Int, _ value: Int64) {
        switch i {
        case 0: maxima.0 = value
        case 1: maxima.1 = value
        case 2: maxima.2 = value
        case 3: maxima.3 = value
        default: maxima.4 = value
        }
    }
}
