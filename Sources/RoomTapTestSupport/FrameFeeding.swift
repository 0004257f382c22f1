public import RoomTapCore

/// Builds ``AudioFrame``s from sample arrays and hands them to sinks and consumers, as the room
/// clock would.
public enum FrameFeeding {
    /// Calls `body` with a frame over `samples` (exactly `480 * channels` of them).
    public static func withFrame<R>(
        _ samples: ArraySlice<Int16>, channels: Int, roomSample: Int64, status: FrameStatus = .normal,
        _ body: (AudioFrame) throws -> R
    ) rethrows -> R {
        try Array(samples).withUnsafeBufferPointer { buffer in
            try body(AudioFrame(samples: buffer, channels: channels, roomSample: roomSample, status: status))
        }
    }

    /// Splits interleaved `samples` (padded with zeros to whole frames) into frames starting at
    /// room sample `start`, and calls `body` with each, in order.
    public static func frames(
        of samples: [Int16], channels: Int, start: Int64 = 0, _ body: (AudioFrame) throws -> Void
    ) rethrows {
        let perFrame = AudioFrame.samplesPerChannel * channels
        var padded = samples
        if padded.count % perFrame != 0 { padded += repeatElement(0, count: perFrame - padded.count % perFrame) }
        for (i, first) in stride(from: 0, to: padded.count, by: perFrame).enumerated() {
            try withFrame(
                padded[first..<(first + perFrame)], channels: channels,
                roomSample: start + Int64(i * AudioFrame.samplesPerChannel), body)
        }
    }

    /// Feeds `samples` to `consumer` frame by frame (see ``frames(of:channels:start:_:)``).
    public static func feed(
        _ samples: [Int16], channels: Int, start: Int64 = 0, to consumer: some FrameConsumer
    ) throws {
        try frames(of: samples, channels: channels, start: start) { try consumer.consume($0) }
    }

    /// Feeds `samples` to `sink` frame by frame.
    public static func feed(_ samples: [Int16], channels: Int, start: Int64 = 0, to sink: some AudioTrackSink) {
        frames(of: samples, channels: channels, start: start) { sink.onFrame($0) }
    }
}
