import Foundation
import Glibc

/// The output-safety rules of every command that writes a recording's files (`record`, `export`),
/// checked before anything is created or removed:
///
/// - the output directory is a writable directory, or can be made one (its missing parents are
///   made when the run starts, and only then);
/// - an output is never a symbolic link (roomtap never writes through a link) and never one of
///   the run's inputs (compared by device and inode, so another spelling or a hard link counts);
/// - an existing output is overwritten only with `--force` (each command says so itself).
///
/// Outputs named on the command line beside those roomtap names (`--multichannel FILE`) are
/// checked against the others by ``OutputPaths``.
///
/// Thread: any. Reads the file system (stat, lstat, access), writes nothing.
enum OutputGuard {
    /// An input of the run, by its identity on disk, and how to name it in a message
    /// (`--file alice /path`, `the recording of track alice`).
    struct Input {
        let label: String
        let device: UInt64
        let inode: UInt64

        /// The input at `path` (links followed); nil when nothing readable is there.
        init?(path: String, label: String) {
            var info = stat()
            guard stat(path, &info) == 0 else { return nil }
            self.label = label
            device = UInt64(info.st_dev)
            inode = UInt64(info.st_ino)
        }
    }

    /// Checks that `out` (given as `option`, e.g. `--out`) is a writable directory, or can be made
    /// one; creates nothing. Returns the directories that are missing, outermost first.
    static func missingDirectories(of out: String, option: String) throws -> [String] {
        var missing: [String] = []
        var path = out
        while true {
            var info = stat()
            if stat(path, &info) == 0 {
                guard info.st_mode & S_IFMT == S_IFDIR else {
                    if missing.isEmpty {
                        throw RuntimeError(
                            description: "\(option) \(out) exists and is not a directory; choose a directory")
                    }
                    throw RuntimeError(
                        description: "cannot create output directory \(out): \(path) is not a directory; "
                            + "choose another \(option)")
                }
                guard access(path, W_OK | X_OK) == 0 else {
                    let reason = String(cString: strerror(errno))
                    if missing.isEmpty {
                        throw RuntimeError(
                            description: "output directory \(out) is not writable (\(reason)); choose another \(option)"
                        )
                    }
                    throw RuntimeError(
                        description: "cannot create output directory \(out): \(path) is not writable (\(reason)); "
                            + "choose another \(option)")
                }
                return missing.reversed()
            }
            // ENOTDIR: a component is a file; the walk up reaches it and says so.
            guard errno == ENOENT || errno == ENOTDIR else {
                throw RuntimeError(
                    description: "cannot create output directory \(out): \(String(cString: strerror(errno))); "
                        + "choose another \(option)")
            }
            missing.append(path)
            let parent = DirectoryPath.parent(of: path)
            guard parent != path else {  // "." or "/" missing: the working directory was removed
                throw RuntimeError(
                    description:
                        "cannot create output directory \(out): \(path) does not exist; choose another \(option)")
            }
            path = parent
        }
    }

    /// Refuses an output (or an earlier recording's file that `--force` would replace) that is a
    /// symbolic link or is one of `inputs`. `writing` says what the run does (`recording`), `remedy`
    /// ends the line (`choose another --out`).
    static func checkReplaceable(_ path: String, inputs: [Input], writing: String, remedy: String) throws {
        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        if info.st_mode & S_IFMT == S_IFLNK {
            throw RuntimeError(
                description: "\(path) is a symbolic link; roomtap never writes through a link: remove it or \(remedy)")
        }
        if let input = inputs.first(where: { $0.device == UInt64(info.st_dev) && $0.inode == UInt64(info.st_ino) }) {
            throw RuntimeError(
                description: "\(path) is the same file as an input (\(input.label)); \(writing) there would "
                    + "overwrite it: \(remedy)")
        }
    }

    /// Whether anything is at `path` itself (lstat: a dangling link counts).
    static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }
}
