public import RoomTapCore

/// A sink that records a track to a WAV file: a ``QueuedSink`` whose consumer is a ``WAVWriter``.
///
/// `onFrame` copies the frame into a bounded queue on the room clock's thread (never blocking under
/// `.drop`, never allocating); a writer thread writes it: by default one worker of
/// ``SinkWorkerPool/shared`` ("roomtap.writer", at most four threads for any number of files),
/// which a stalled disk under one file slows for the other files on the same worker, never for
/// the clock. Frames the queue drops become silence in the file (also at the end: ``close()``
/// pads up to the last frame offered), so the file stays on the room timeline. A write failure (disk full) stops the writing, leaves a valid
/// file of what was written, counts every later frame as dropped, and comes back from ``close()``.
///
/// Thread: `onFrame` on the room clock's thread; `close` and the counters from any other thread
/// (not a pool worker).
/// Call ``close()`` once the sink is detached (e.g. in `onTrackRemoved`): until then the writer
/// thread keeps it alive.
public final class WAVFileSink: AudioTrackSink, @unchecked Sendable {
    /// The file written.
    public let path: String
    /// Channels in the file.
    public let channels: Int
    private let writer: WAVWriter
    private let sink: QueuedSink

    /// Creates the file (see ``WAVWriter/init(path:channels:options:)`` for the errors) and gives
    /// it to a worker of `pool`, or with `pool` nil to a dedicated thread ("roomtap.wav").
    /// `capacity` is the queue length in 10 ms frames (256 = 2.56 s); `policy` `.wait` only for
    /// offline rooms on a virtual clock. Control side, not the room clock's thread.
    public init(
        path: String, channels: Int, options: WAVWriter.Options = .init(), policy: OverflowPolicy = .drop,
        capacity: Int = 256, pool: SinkWorkerPool? = .shared
    ) throws(WAVError) {
        writer = try WAVWriter(path: path, channels: channels, options: options)
        self.path = path
        self.channels = channels
        if let pool {
            sink = QueuedSink(
                consumer: writer, channels: channels, capacity: max(1, capacity), policy: policy, pool: pool)
        } else {
            sink = QueuedSink(
                consumer: writer, channels: channels, capacity: max(1, capacity), policy: policy,
                threadName: "roomtap.wav")
        }
    }

    /// Queues the frame for writing. Room clock's thread.
    public func onFrame(_ frame: AudioFrame) {
        writer.noteOffered(end: frame.roomSample + Int64(AudioFrame.samplesPerChannel))
        sink.onFrame(frame)
    }

    /// Frames not written: the queue was full, the writer had failed, or they came after `close`.
    public var droppedFrames: Int { sink.droppedFrames }

    /// Frames handed to the writer.
    public var consumedFrames: Int { sink.consumedFrames }

    /// Samples per channel in the file so far (see ``WAVWriter/samplesWritten``).
    public var samplesWritten: Int64 { writer.samplesWritten }

    /// The writer's error, once writing has failed.
    public var failure: (any Error)? { sink.failure }

    /// Writes what is queued, finishes the file (exact sizes, fsync) and stops the dedicated thread
    /// or leaves the pool worker. Idempotent, also from several threads at once: later calls return
    /// the same outcome. Not on the room clock's thread or a pool worker. Throws the ``WAVError``
    /// that stopped the writing, if any.
    public func close() throws { try sink.close() }
}
