import Foundation
import Glibc

/// The one rule for outputs a command line names (`record --multichannel FILE`, `export
/// --multichannel FILE`) beside those roomtap names itself (`DIR/<track>.wav`, `room.json`, …):
///
/// - a relative FILE is relative to the output directory (`record --out DIR`, `export`'s OUT),
///   as every other output is; an absolute one is taken as it is;
/// - no two outputs of a run may be one file: they are compared by where they land (the directory
///   resolved on disk, with links followed, and the name ignoring case, as ``OutputNaming`` does),
///   so `--multichannel alice.wav` beside alice's own file, or `--multichannel room.json`, is
///   refused before anything is written;
/// - FILE's directory must exist (or be one the run creates: DIR and its missing parents) and be
///   writable, and FILE may not be a directory.
///
/// Thread: any. Reads the file system (stat, realpath), writes nothing.
enum OutputPaths {
    /// An output of a run: what it is (for messages, e.g. "alice's file") and its path.
    struct Output {
        let what: String
        let path: String
    }

    /// `path` as an output of a run writing into `directory`: absolute as given, relative below
    /// `directory`.
    static func resolve(_ path: String, in directory: String) -> String {
        path.hasPrefix("/") ? path : RecordingPlan.join(directory, path)
    }

    /// Where `path` lands: its directory resolved on disk (realpath of the longest part that
    /// exists, the rest by its spelling) and its name in lower case.
    static func place(of path: String) -> String {
        let name = lastComponent(path)
        return canonical(DirectoryPath.parent(of: path)) + "/" + name.lowercased()
    }

    /// Checks `named` (an option's file, already ``resolve(_:in:)``d), given as `option value`, against
    /// the run's other outputs and its directories: one line naming the clash and what to do.
    /// - Parameters:
    ///   - created: the directories the run creates before it writes (DIR and its missing parents).
    static func check(
        _ named: Output, given: String, against others: [Output], directory: String, created: [String]
    ) throws {
        let relativeNote = given.hasPrefix("/") ? "" : " (a relative path is relative to \(directory))"
        let place = place(of: named.path)
        if let clash = others.first(where: { Self.place(of: $0.path) == place }) {
            throw RuntimeError(
                description: "\(named.what) \(given) would be \(clash.path), \(clash.what)\(relativeNote); give it "
                    + "another name")
        }
        var info = stat()
        if stat(named.path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR {
            throw RuntimeError(description: "\(named.what) \(given) is a directory\(relativeNote); name a file")
        }
        let parent = DirectoryPath.parent(of: named.path)
        if stat(parent, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFDIR else {
                throw RuntimeError(
                    description:
                        "\(named.what) \(given): \(parent) is not a directory\(relativeNote); name a file in a "
                        + "directory")
            }
            guard access(parent, W_OK | X_OK) == 0 else {
                throw RuntimeError(
                    description: "\(named.what) \(given): the directory \(parent) is not writable "
                        + "(\(String(cString: strerror(errno))))\(relativeNote); choose another place")
            }
        } else if !created.contains(where: { canonical($0) == canonical(parent) }) {
            throw RuntimeError(
                description: "\(named.what) \(given): the directory \(parent) does not exist\(relativeNote); create it "
                    + "or choose another place")
        }
    }

    /// `path` with every part that exists resolved by realpath(3) (links followed, `.` and `..`
    /// taken), the missing rest appended by its spelling; absolute.
    static func canonical(_ path: String) -> String {
        if let resolved = realpath(path, nil) {
            defer { free(resolved) }
            return String(cString: resolved)
        }
        let parent = DirectoryPath.parent(of: path)
        let name = lastComponent(path)
        if parent == path || name.isEmpty { return path }
        let base = canonical(parent)
        switch name {
        case ".": return base
        case "..": return DirectoryPath.parent(of: base)
        default: return base == "/" ? "/" + name : base + "/" + name
        }
    }

    /// The last component of `path`'s spelling (trailing slashes ignored).
    private static func lastComponent(_ path: String) -> String {
        var bytes = Array(path.utf8)
        while bytes.count > 1 && bytes.last == UInt8(ascii: "/") { bytes.removeLast() }
        let start = bytes.lastIndex(of: UInt8(ascii: "/")).map { $0 + 1 } ?? 0
        return String(decoding: bytes[start...], as: UTF8.self)
    }
}
