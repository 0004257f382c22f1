/// A test source whose every sample tells where it is: sample `n` of the signal is
/// `(n * step) mod 65535 - 32767` (so within ±32767, distinct over 65535 samples when `step` is 1),
/// the right channel its negation. Misplaced, repeated or lost samples show at once.
/// See ``SyntheticSource``.
public final class RampSource: SyntheticSource, @unchecked Sendable {
    /// Increment per sample.
    public let step: Int64

    public init(step: Int64 = 1, channels: Int = 1, offset: Int64 = 0, length: Int64? = nil) {
        self.step = step
        super.init(channels: channels, offset: offset, length: length)
    }

    public override func value(at n: Int64, channel: Int) -> Int16 {
        let v = Int16((n &* step) % 65_535 - 32_767)
        return channel == 1 ? -v : v
    }
}
