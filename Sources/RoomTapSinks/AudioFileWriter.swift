public import RoomTapCore

/// A file writer an ``AudioFileSink`` drives on its writer thread: ``WAVWriter`` (48 kHz WAV, the
/// default) or ``EncodedFileWriter`` (FLAC, Ogg Opus, WAV at any rate or channel count).
///
/// Thread: the ``FrameConsumer`` methods on the writer thread; ``samplesWritten`` and
/// ``noteOffered(end:)`` from any thread (atomics; `noteOffered` on the room clock's thread never
/// blocks or allocates).
public protocol AudioFileWriter: FrameConsumer {
    /// The file written.
    var path: String { get }
    /// Room samples (48 kHz, per channel) in the file so far.
    var samplesWritten: Int64 { get }
    /// A frame ending at room sample `end` (exclusive) was offered to the sink: ``FrameConsumer/finish()``
    /// pads silence up to it if the queue dropped the last frames.
    func noteOffered(end: Int64)
}

extension WAVWriter: AudioFileWriter {}
