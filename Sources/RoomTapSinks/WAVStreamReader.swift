import Glibc

/// Reads the 16-bit samples of a WAV (or RF64) file a piece at a time, so hours-long files are
/// never loaded whole (`roomtap export`). The layout comes from ``WAVFile/inspect(path:)``;
/// a file cut short is read up to its last whole sample frame.
///
/// Thread: one thread at a time.
public final class WAVStreamReader {
    /// The file's layout.
    public let file: WAVFile
    private let fd: Int32
    private var offset: Int64
    private var remainingFrames: Int64

    /// Opens `path`. Throws ``WAVError``: the errors of ``WAVFile/inspect(path:)``, and
    /// `.unsupportedFormat` for anything but 16-bit PCM.
    public init(path: String) throws(WAVError) {
        let file = try WAVFile.inspect(path: path)
        guard file.bitsPerSample == 16 else {
            throw WAVError(
                path: path, message: "is \(file.bitsPerSample)-bit; roomtap reads the 16-bit WAVs it writes",
                kind: .unsupportedFormat)
        }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw WAVError(
                path: path, message: "cannot open: \(PosixFile.describe(errno))", kind: .cannotOpen, errno: errno)
        }
        self.file = file
        self.fd = fd
        offset = file.dataOffset
        remainingFrames = file.frameCount
    }

    deinit { _ = close(fd) }

    /// Reads up to `frames` interleaved sample frames into `destination` (room for
    /// `frames × channels`); returns how many were read, 0 at the end.
    public func read(into destination: UnsafeMutablePointer<Int16>, frames: Int) throws(WAVError) -> Int {
        let wanted = Int(min(Int64(frames), remainingFrames))
        guard wanted > 0 else { return 0 }
        let bytes = wanted * file.blockAlign
        var done = 0
        while done < bytes {
            let n = pread(fd, UnsafeMutableRawPointer(destination) + done, bytes - done, off_t(offset) + off_t(done))
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                throw WAVError(
                    path: file.path, message: "cannot read: \(n < 0 ? PosixFile.describe(errno) : "unexpected end")",
                    kind: .readFailed)
            }
            done += n
        }
        #if _endian(big)
            for i in 0..<(wanted * file.channels) { destination[i] = Int16(littleEndian: destination[i]) }
        #endif
        offset += Int64(bytes)
        remainingFrames -= Int64(wanted)
        return wanted
    }
}
