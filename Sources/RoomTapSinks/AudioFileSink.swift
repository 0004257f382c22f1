public import RoomTapCore

/// A sink that records a track to a file through any ``AudioFileWriter``: a ``QueuedSink`` whose
/// consumer is the writer, so ``WAVWriter``, ``EncodedFileWriter`` (FLAC, Opus, WAV at any rate)
/// and any later format share one queue and thread design (see ``WAVFileSink``, the same for WAV
/// alone).
///
/// Thread: `onFrame` on the room clock's thread (never blocks under `.drop`, never allocates);
/// `close` and the counters from any other thread (not a pool worker).
public final class AudioFileSink: AudioTrackSink, @unchecked Sendable {
    /// The writer (its file, its counters; an ``EncodedFileWriter``'s loudness after close).
    public let writer: any AudioFileWriter
    private let sink: QueuedSink

    /// Gives `writer` to a worker of `pool`, or with `pool` nil to a dedicated thread. `capacity` in
    /// 10 ms frames; `policy` `.wait` only for offline rooms. Control side.
    public init(
        writer: any AudioFileWriter, channels: Int, policy: OverflowPolicy = .drop, capacity: Int = 256,
        pool: SinkWorkerPool? = .shared
    ) {
        self.writer = writer
        if let pool {
            sink = QueuedSink(
                consumer: writer, channels: channels, capacity: max(1, capacity), policy: policy, pool: pool)
        } else {
            sink = QueuedSink(
                consumer: writer, channels: channels, capacity: max(1, capacity), policy: policy,
                threadName: "roomtap.file")
        }
    }

    /// Queues the frame. Room clock's thread.
    public func onFrame(_ frame: AudioFrame) {
        writer.noteOffered(end: frame.roomSample + Int64(AudioFrame.samplesPerChannel))
        sink.onFrame(frame)
    }

    /// The file written.
    public var path: String { writer.path }
    /// Frames not written (queue full, writer failed, after close).
    public var droppedFrames: Int { sink.droppedFrames }
    /// Room samples in the file so far.
    public var samplesWritten: Int64 { writer.samplesWritten }
    /// The writer's error, once writing has failed.
    public var failure: (any Error)? { sink.failure }
    /// Writes what is queued and finishes the file. Idempotent; not on the clock's thread.
    public func close() throws { try sink.close() }
}
