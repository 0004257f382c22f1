public import RoomTapCore

/// A sink that records a track to a file through any ``AudioFileWriter``: ``WAVWriter`` (see
/// ``WAVFileSink``), ``EncodedFileWriter`` (FLAC, Opus, WAV at any rate) and any later format
/// share this one queue and thread design.
///
/// Where the writer runs (``Delivery``): by default `onFrame` copies the frame into a bounded
/// ``QueuedSink`` queue on the room clock's thread (never blocking under `.drop`, never
/// allocating) and one worker of ``SinkWorkerPool/shared`` writes it ("roomtap.writer", at most
/// four threads for any number of files; a stalled disk under one file slows the other files on
/// that worker, never the clock). Offline rooms on a virtual clock can write on the render thread
/// itself (``Delivery/renderThread``, an ``InlineSink``): no queue, no copy, no writer thread.
/// Frames a queue drops become silence in the file (also at the end: the writer pads up to the
/// last frame offered), so the file stays on the room timeline. A write failure (disk full) stops
/// the writing, leaves a valid file of what was written, counts every later frame as dropped, and
/// comes back from ``close()``.
///
/// Thread: `onFrame` on the thread rendering the track; `close` and the counters from any other
/// thread (not a pool worker). Call ``close()`` once the sink is detached (e.g. in
/// `onTrackRemoved`): until then a writer thread keeps it alive.
public class AudioFileSink: AudioTrackSink, @unchecked Sendable {
    /// Which thread runs the writer.
    public enum Delivery: Sendable {
        /// One worker of a shared pool, behind the sink's queue (files of a live room).
        case pool(SinkWorkerPool)
        /// A thread of its own named `threadName`, behind the sink's queue.
        case dedicatedThread(threadName: String)
        /// The thread that renders the track, without a queue (``InlineSink``). Only for rooms on a
        /// ``VirtualClock``: that thread blocks on the disk. `policy` and `capacity` do not apply.
        case renderThread
    }

    /// The writer (its file, its counters; an ``EncodedFileWriter``'s loudness after close).
    public let writer: any AudioFileWriter
    /// Channels in the file.
    public let channels: Int
    private let queued: QueuedSink?
    private let inline: InlineSink?

    /// Gives `writer` to the thread `delivery` says. `capacity` is the queue length in 10 ms frames
    /// (256 = 2.56 s); `policy` `.wait` only for offline rooms on a virtual clock. Control side,
    /// not the room clock's thread. A write failure is posted to `failureBus` (once) as
    /// ``RoomBus/Event/sinkFailed``.
    public init(
        writer: any AudioFileWriter, channels: Int, policy: OverflowPolicy = .drop, capacity: Int = 256,
        delivery: Delivery = .pool(.shared), failureBus: RoomBus? = nil
    ) {
        self.writer = writer
        self.channels = channels
        switch delivery {
        case .pool(let pool):
            queued = QueuedSink(
                consumer: writer, channels: channels, capacity: max(1, capacity), policy: policy, pool: pool,
                failureBus: failureBus)
            inline = nil
        case .dedicatedThread(let threadName):
            queued = QueuedSink(
                consumer: writer, channels: channels, capacity: max(1, capacity), policy: policy,
                threadName: threadName, failureBus: failureBus)
            inline = nil
        case .renderThread:
            queued = nil
            inline = InlineSink(consumer: writer, failureBus: failureBus)
        }
    }

    /// Queues the frame for writing (or writes it, on the render thread). The thread rendering the
    /// track.
    public final func onFrame(_ frame: AudioFrame) {
        writer.noteOffered(end: frame.roomSample + Int64(AudioFrame.samplesPerChannel))
        if let inline { inline.onFrame(frame) } else { queued!.onFrame(frame) }
    }

    /// The file written.
    public final var path: String { writer.path }
    /// Frames not written: the queue was full, the writer had failed, or they came after `close`.
    public final var droppedFrames: Int { inline?.droppedFrames ?? queued!.droppedFrames }
    /// Frames handed to the writer.
    public final var consumedFrames: Int { inline?.consumedFrames ?? queued!.consumedFrames }
    /// Room samples (per channel) in the file so far.
    public final var samplesWritten: Int64 { writer.samplesWritten }
    /// The writer's error, once writing has failed.
    public final var failure: (any Error)? { if let inline { inline.failure } else { queued!.failure } }

    /// Writes what is queued, finishes the file (exact sizes; fsync for WAV) and stops the
    /// dedicated thread or leaves the pool worker. Idempotent, also from several threads at once:
    /// later calls return the same outcome. Not on the room clock's thread or a pool worker.
    /// Throws the writer's error that stopped the writing, if any.
    public final func close() throws {
        if let inline { try inline.close() } else { try queued!.close() }
    }
}
