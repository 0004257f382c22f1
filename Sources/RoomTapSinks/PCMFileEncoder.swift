package import RoomTapFiles

/// One audio file format's writer: takes interleaved 16-bit PCM at its own rate and channel count
/// and makes a file of it. ``EncodedFileWriter`` puts the room's frames on the timeline, resamples
/// and meters them, and drives an encoder through this protocol, so WAV, FLAC and Ogg Opus plug in
/// without another sink.
///
/// Thread: one thread at a time (a sink's writer thread); every method may block on the disk.
/// After a throw the file is closed holding what was written, and every later call throws again.
package protocol PCMFileEncoder: AnyObject {
    /// The file written.
    var path: String { get }
    /// Channels in the file.
    var channels: Int { get }
    /// Samples per second in the file.
    var sampleRate: Int { get }
    /// Appends `frames` sample frames of interleaved `samples` (`frames × channels` values).
    func write(_ samples: UnsafePointer<Int16>, frames: Int) throws(OutputFileError)
    /// Makes what was written so far readable by a decoder if the process is killed now
    /// (rewrite a header, flush a page). Called at least once per second of wall time and of audio.
    func checkpoint() throws(OutputFileError)
    /// Writes what is buffered and the exact final header, fsyncs and closes. Idempotent.
    func finish() throws(OutputFileError)
}
