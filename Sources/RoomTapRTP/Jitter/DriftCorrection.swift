/// When a playout drops or repeats a sample to follow a sender's drifting clock: once the error
/// (samples between where the sender's timeline has slid and where the playout has moved it)
/// leaves the dead band, one sample per frame until the error is back to zero. Hysteresis keeps
/// jitter in the slide estimate from toggling corrections.
///
/// Thread: confined to the room clock's thread (a value owned by one playout).
struct DriftCorrection {
    /// The error (samples) beyond which correction starts.
    let deadband: Int64
    private var correcting = false

    init(deadband: Int64) { self.deadband = deadband }

    /// +1 (repeat a sample: the playout moves later), -1 (drop one) or 0 for this frame, given
    /// `error` = wanted − current lag (samples).
    mutating func adjustment(error: Int64) -> Int {
        if correcting {
            if error == 0 {
                correcting = false
                return 0
            }
        } else if abs(error) > deadband {
            correcting = true
        } else {
            return 0
        }
        return error > 0 ? 1 : -1
    }
}
