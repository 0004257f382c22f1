public import RoomTapCore

/// A sink that records a track to a 48 kHz WAV file: an ``AudioFileSink`` over a ``WAVWriter``
/// (the queue, threads, counters and `close` are the file sink's; see there).
///
/// Thread: `onFrame` on the thread rendering the track; `close` and the counters from any other
/// thread (not a pool worker).
public final class WAVFileSink: AudioFileSink, @unchecked Sendable {
    /// Creates the file (see ``WAVWriter/init(path:channels:options:)`` for the errors) and gives
    /// it to a worker of `pool`, or with `pool` nil to a dedicated thread ("roomtap.wav").
    /// `capacity` is the queue length in 10 ms frames (256 = 2.56 s); `policy` `.wait` only for
    /// offline rooms on a virtual clock. Control side, not the room clock's thread.
    public convenience init(
        path: String, channels: Int, options: WAVWriter.Options = .init(), policy: OverflowPolicy = .drop,
        capacity: Int = 256, pool: SinkWorkerPool? = .shared
    ) throws(WAVError) {
        try self.init(
            path: path, channels: channels, options: options, policy: policy, capacity: capacity,
            delivery: pool.map { .pool($0) } ?? .dedicatedThread(threadName: "roomtap.wav"))
    }

    /// Creates the file and gives it to the thread `delivery` says (``AudioFileSink/Delivery``).
    public init(
        path: String, channels: Int, options: WAVWriter.Options = .init(), policy: OverflowPolicy = .drop,
        capacity: Int = 256, delivery: Delivery
    ) throws(WAVError) {
        let writer = try WAVWriter(path: path, channels: channels, options: options)
        super.init(writer: writer, channels: channels, policy: policy, capacity: capacity, delivery: delivery)
    }
}
