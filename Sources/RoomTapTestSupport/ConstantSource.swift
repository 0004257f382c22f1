/// A test source holding one value per channel (a DC level; 0 gives `.normal` frames of zeros,
/// unlike the `.silence` outside its span). See ``SyntheticSource``.
public final class ConstantSource: SyntheticSource, @unchecked Sendable {
    /// The left (or only) channel's value.
    public let left: Int16
    /// The right channel's value.
    public let right: Int16

    public init(_ value: Int16, right: Int16? = nil, channels: Int = 1, offset: Int64 = 0, length: Int64? = nil) {
        left = value
        self.right = right ?? value
        super.init(channels: channels, offset: offset, length: length)
    }

    public override func value(at n: Int64, channel: Int) -> Int16 { channel == 1 ? right : left }
}
