import Foundation

/// Reads a recording whole, with one-line errors. Control side (any thread but the clock's).
enum RecordingFile {
    /// The bytes of the regular file at `path`, refused past `maxBytes`.
    static func read(path: String, maxBytes: Int) throws(RecordingError) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let reason = String(cString: strerror(errno))
            throw RecordingError(path: path, message: "cannot open the recording (\(reason)); check the path")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            throw RecordingError(path: path, message: "not a regular file; give a recording file")
        }
        let size = Int(info.st_size)
        guard size <= maxBytes else {
            throw RecordingError(
                path: path,
                message: "the recording is \(size >> 20) MiB, more than roomtap reads (\(maxBytes >> 20) MiB)")
        }
        var bytes = [UInt8](repeating: 0, count: size)
        var done = 0
        while done < size {
            let n = bytes.withUnsafeMutableBytes { Foundation.read(fd, $0.baseAddress! + done, size - done) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                if n == 0 { break }
                let reason = String(cString: strerror(errno))
                throw RecordingError(path: path, message: "cannot read the recording (\(reason))")
            }
            done += n
        }
        if done < size { bytes.removeLast(size - done) }
        return bytes
    }
}
