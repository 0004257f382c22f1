/// A recording's samples read a piece at a time, whatever the file's format: 16-bit interleaved
/// frames at the file's rate, in order, until ``read(into:frames:)`` returns 0. Hours-long files
/// are never loaded whole. `roomtap export`, `timeline` and the review page read every format
/// roomtap writes through it (``WAVStreamReader``, ``FLACFileReader``, an Ogg Opus decode).
///
/// Thread: one thread at a time.
public protocol SampleReader: AnyObject {
    /// Sample frames per second of what ``read(into:frames:)`` gives.
    var sampleRate: Int { get }
    /// Channels per frame.
    var channels: Int { get }
    /// Reads up to `frames` interleaved sample frames into `destination` (room for
    /// `frames × channels`); returns how many were read, 0 at the end.
    func read(into destination: UnsafeMutablePointer<Int16>, frames: Int) throws(WAVError) -> Int
}

extension WAVStreamReader: SampleReader {
    public var sampleRate: Int { file.sampleRate }
    public var channels: Int { file.channels }
}
