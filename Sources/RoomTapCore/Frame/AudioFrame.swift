/// What a 10 ms frame holds, as the room clock saw it.
///
/// Like libwebrtc's `AudioFrame` muted flag, `.silence` and `.muted` mean "treat as zeros": the
/// samples are zero, and consumers that only sum (the mixer) may skip the frame.
public enum FrameStatus: UInt8, Sendable, CaseIterable, Codable {
    /// Decoded audio (possibly with some silence, e.g. where a track starts inside the frame).
    case normal
    /// At least part of the frame was synthesised by packet-loss concealment.
    case concealed
    /// The track had nothing to say at this time (before it started, after it ended, DTX).
    case silence
    /// The track is muted; samples are zero.
    case muted

    /// True when every sample of a frame with this status is zero.
    @inlinable public var isZero: Bool { self == .silence || self == .muted }
}

/// One 10 ms frame of 48 kHz signed 16-bit PCM on the room timeline, as a borrowed view.
///
/// The samples belong to whoever handed the frame over (the track's render buffer, a queue slot)
/// and are valid only for the duration of the call that received it; a sink that keeps audio copies
/// it out (see ``FrameQueue``). Samples are interleaved when `channels == 2`.
///
/// Thread: a frame is used on the thread that received it. It is not `Sendable` on purpose.
public struct AudioFrame {
    /// The room's sample rate, in Hz. Everything inside roomtap runs at this rate.
    public static let sampleRate = 48_000
    /// Samples per channel in one frame (10 ms at 48 kHz).
    public static let samplesPerChannel = 480
    /// The most channels a frame can have (stereo).
    public static let maxChannels = 2
    /// Frame duration in nanoseconds.
    public static let durationNanoseconds: UInt64 = 10_000_000

    /// Interleaved samples, `samplesPerChannel * channels` of them.
    public let samples: UnsafeBufferPointer<Int16>
    /// 1 (mono) or 2 (stereo).
    public let channels: Int
    /// Room-timeline index (in samples per channel, at 48 kHz) of the first sample of the frame.
    public let roomSample: Int64
    /// What the frame holds.
    public let status: FrameStatus

    /// Wraps existing storage; `samples.count` must be `samplesPerChannel * channels`.
    public init(samples: UnsafeBufferPointer<Int16>, channels: Int, roomSample: Int64, status: FrameStatus) {
        precondition(channels == 1 || channels == 2, "a frame has 1 or 2 channels")
        precondition(samples.count == Self.samplesPerChannel * channels, "a frame holds exactly 10 ms")
        self.samples = samples
        self.channels = channels
        self.roomSample = roomSample
        self.status = status
    }

    /// The frame's index on the room timeline (`roomSample / samplesPerChannel`).
    @inlinable public var index: Int64 { roomSample / Int64(Self.samplesPerChannel) }

    /// Copies this frame's audio into the front of `destination`, converting the channel count:
    /// stereo to mono averages the channels (rounding toward zero), mono to stereo duplicates.
    /// `destination` must hold at least `samplesPerChannel * destinationChannels` samples.
    /// Does not allocate.
    public func copy(into destination: UnsafeMutablePointer<Int16>, channels destinationChannels: Int) {
        let n = Self.samplesPerChannel
        guard let src = samples.baseAddress else { return }
        switch (channels, destinationChannels) {
        case (1, 1), (2, 2):
            destination.update(from: src, count: n * channels)
        case (2, 1):
            for i in 0..<n { destination[i] = Int16((Int32(src[2 * i]) + Int32(src[2 * i + 1])) / 2) }
        case (1, 2):
            for i in 0..<n {
                destination[2 * i] = src[i]
                destination[2 * i + 1] = src[i]
            }
        default:
            preconditionFailure("unsupported channel conversion \(channels) -> \(destinationChannels)")
        }
    }
}
