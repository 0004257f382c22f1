import RoomTapSync

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The recorders running for this user: the sockets in the per-user runtime directory
/// (``ControlSocketPath/defaultDirectory(environment:)``) that answer `hello`.
///
/// A socket `rec-<pid>.sock` whose process is gone and on which nothing listens was left by a
/// recorder that could not clean up (kill -9, a crash); it is removed by ``scan(environment:timeout:)``
/// and ``removeStale(environment:)``. Nothing else is ever removed: not a socket of a live
/// process, not a socket of another user, not a file of another kind.
///
/// Thread: any; each call blocks for at most `timeout` per socket.
public enum RecorderDirectory {
    /// What a scan found.
    public struct Scan: Sendable {
        /// The recorders that answered, oldest first.
        public var recorders: [RunningRecorder] = []
        /// Sockets that accepted a connection but did not answer `hello` properly, with why.
        public var unanswered: [(socket: String, reason: String)] = []
        /// Stale sockets removed.
        public var removed: [String] = []
    }

    /// Asks every socket in the runtime directory who it is; removes the stale ones.
    public static func scan(environment: [String: String], timeout: Duration = .seconds(2)) -> Scan {
        var scan = Scan()
        let directory = ControlSocketPath.defaultDirectory(environment: environment)
        // Oldest first by when each started: the instant its reply came, less its uptime then (the
        // recorders are asked one after another, so uptimes alone are read at different moments).
        let origin = MonotonicClock.now
        var answered: [(recorder: RunningRecorder, started: Double)] = []
        for name in socketNames(in: directory) {
            let path = directory + "/" + name
            do {
                let recorder = try hello(at: path, timeout: timeout)
                let at = MonotonicClock.now - origin
                let seconds = Double(at.components.seconds) + Double(at.components.attoseconds) * 1e-18
                answered.append((recorder, seconds - recorder.uptime))
            } catch .noRecorder(_) {
                if removeIfStale(path, name: name) { scan.removed.append(path) }
            } catch {
                scan.unanswered.append((path, error.description))
            }
        }
        scan.recorders = answered.sorted { ($0.started, $0.recorder.socket) < ($1.started, $1.recorder.socket) }
            .map(\.recorder)
        return scan
    }

    /// The recorder answering at `path`: connects and sends `hello`.
    public static func hello(at path: String, timeout: Duration = .seconds(2)) throws(ControlClientError)
        -> RunningRecorder
    {
        let client = try ControlClient(path: path)
        let reply = try client.request(.hello, timeout: timeout)
        guard reply["pid"]?.intValue != nil else { throw .badReply("a hello reply without \"pid\"") }
        return RunningRecorder(socket: path, hello: reply)
    }

    /// Removes the stale `rec-<pid>.sock` sockets of the runtime directory without asking the live
    /// ones anything (a recorder does this before it opens its own). Returns the removed paths.
    @discardableResult
    public static func removeStale(environment: [String: String]) -> [String] {
        let directory = ControlSocketPath.defaultDirectory(environment: environment)
        var removed: [String] = []
        for name in socketNames(in: directory) {
            guard let pid = ControlSocketPath.pid(inSocketName: name), ProcessLiveness.isGone(pid) else { continue }
            let path = directory + "/" + name
            if nothingListens(at: path), removeIfStale(path, name: name) { removed.append(path) }
        }
        return removed
    }

    // MARK: - Private

    /// The names ending in `.sock` of the sockets owned by this user in `directory`, sorted.
    private static func socketNames(in directory: String) -> [String] {
        guard let handle = opendir(directory) else { return [] }
        defer { closedir(handle) }
        var names: [String] = []
        while let entry = readdir(handle) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard name.hasSuffix(".sock"), isOwnSocket(directory + "/" + name) else { continue }
            names.append(name)
        }
        return names.sorted()
    }

    private static func isOwnSocket(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFSOCK && info.st_uid == geteuid()
    }

    /// Removes `path` when it is a recorder's socket (`rec-<pid>.sock`, this user's) whose process
    /// is gone. The caller has seen that nothing listens on it.
    private static func removeIfStale(_ path: String, name: String) -> Bool {
        guard let pid = ControlSocketPath.pid(inSocketName: name), ProcessLiveness.isGone(pid), isOwnSocket(path)
        else { return false }
        return unlink(path) == 0
    }

    /// True when connecting to `path` is refused (a socket file nobody listens on) or it is gone.
    private static func nothingListens(at path: String) -> Bool {
        guard let address = UnixSocket.address(path) else { return false }
        let fd = UnixSocket.makeSocket(nonblocking: true)
        guard fd >= 0 else { return false }
        let result = UnixSocket.connect(fd, address)
        let code = errno
        close(fd)
        return result != 0 && (code == ECONNREFUSED || code == ENOENT)
    }
}

/// Whether a process still runs, for telling a stale socket from a live one.
///
/// Thread: any; pure reads of `/proc` and `kill(pid, 0)`.
package enum ProcessLiveness {
    /// True when process `pid` has ended: no such process, or a zombie waiting for its parent.
    /// A process of another user counts as running.
    public static func isGone(_ pid: Int32) -> Bool {
        guard pid > 0 else { return false }
        if kill(pid, 0) != 0 && errno == ESRCH { return true }
        #if os(Linux)
            // kill(pid, 0) succeeds on a zombie; its state in /proc/PID/stat says it has ended.
            guard let stat = readFile("/proc/\(pid)/stat"), let close = stat.lastIndex(of: UInt8(ascii: ")")) else {
                return false
            }
            let rest = stat[stat.index(after: close)...].drop { $0 == UInt8(ascii: " ") }
            guard let state = rest.first else { return false }
            return state == UInt8(ascii: "Z") || state == UInt8(ascii: "X")
        #else
            return false
        #endif
    }

    private static func readFile(_ path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { _ = close(fd) }
        var bytes = [UInt8](repeating: 0, count: 1024)
        let n = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard n > 0 else { return nil }
        return Array(bytes[0..<n])
    }
}
