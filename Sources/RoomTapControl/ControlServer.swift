import Foundation
package import RoomTapSync
import Synchronization

/// The control socket of a running recorder: a Unix domain stream socket where clients send one
/// JSON request per line and get one JSON reply per line, in order (docs/CONTROL-PROTOCOL.md).
///
/// One thread (`roomtap.control`) serves every client with `poll()` and nonblocking sockets, and
/// calls the ``ControlHandler`` for each request. A client can never block it: input is read in
/// bounded chunks, output is queued per client (bounded by ``ControlLimits/maxOutputBytes``); a
/// watcher that does not read loses events (counted), a client whose reply does not fit is
/// disconnected (counted). Writes never raise SIGPIPE.
///
/// Thread: `init`, `stop` from a control thread (never from the handler: `stop` waits for the
/// server thread); `publish`, `setWatchTicker` and ``statistics`` from any thread.
public final class ControlServer: Sendable {
    /// The socket's path.
    public let path: String
    /// Counters, readable from any thread.
    public let statistics: Statistics
    private let shared: ServerShared

    /// Counters of the server's work. Every member is an atomic read.
    public final class Statistics: Sendable {
        let acceptedCount = Atomic<Int>(0)
        let connectedCount = Atomic<Int>(0)
        let rejectedCount = Atomic<Int>(0)
        let requestCount = Atomic<Int>(0)
        let droppedEventCount = Atomic<Int>(0)
        let slowDisconnectCount = Atomic<Int>(0)
        let tooLongCount = Atomic<Int>(0)

        /// Clients accepted since start.
        public var clientsAccepted: Int { acceptedCount.load(ordering: .relaxed) }
        /// Clients connected now.
        public var clientsConnected: Int { connectedCount.load(ordering: .relaxed) }
        /// Clients turned away because ``ControlLimits/maxClients`` were connected.
        public var clientsRejected: Int { rejectedCount.load(ordering: .relaxed) }
        /// Request lines answered (including the ones answered with an error).
        public var requests: Int { requestCount.load(ordering: .relaxed) }
        /// Events not delivered to a watcher because its output queue was full (or the publish
        /// queue was full).
        public var droppedEvents: Int { droppedEventCount.load(ordering: .relaxed) }
        /// Clients disconnected because a reply did not fit their output queue.
        public var slowClientsDisconnected: Int { slowDisconnectCount.load(ordering: .relaxed) }
        /// Lines answered with `line_too_long`.
        public var linesTooLong: Int { tooLongCount.load(ordering: .relaxed) }
    }

    /// Binds `path`, listens, and starts the server thread.
    ///
    /// The socket's directory is created (mode 0700) when missing; the per-user default directory
    /// (``ControlSocketPath/defaultDirectory(environment:)``) must be owned by this user and closed
    /// to others. The socket file is created owner-only (0600). A socket already at `path` is
    /// replaced when nothing answers on it (a stale one left by a crash); a live one is
    /// ``ControlSocketError/inUse(path:)``; anything else at `path` is refused and left alone.
    ///
    /// - Parameter environment: where the default directory is looked up (nil: the process's own).
    public convenience init(
        path: String, handler: any ControlHandler,
        environment: [String: String]? = nil
    ) throws(ControlSocketError) {
        try self.init(path: path, handler: handler, environment: environment, clock: SystemDeadlineClock())
    }

    /// ``init(path:handler:environment:)`` with the watch ticker's deadlines on `clock` (a virtual
    /// clock in tests; see ``setWatchTicker(interval:_:)``).
    package init(
        path: String, handler: any ControlHandler, environment: [String: String]? = nil,
        clock: any DeadlineClock
    ) throws(ControlSocketError) {
        let environment = environment ?? ProcessInfo.processInfo.environment
        guard let address = UnixSocket.address(path) else { throw .pathTooLong(path: path) }
        try ControlServer.prepareDirectory(of: path, environment: environment)
        try ControlServer.removeStaleSocket(at: path, address: address)
        let (listener, identity) = try ControlServer.listen(at: path, address: address)
        var pipeFDs: [Int32] = [-1, -1]
        guard pipe(&pipeFDs) == 0 else {
            let reason = UnixSocket.reason(errno)
            close(listener)
            unlink(path)
            throw .system(path: path, call: "pipe", reason: reason)
        }
        for fd in pipeFDs { UnixSocket.configure(fd, nonblocking: true) }
        self.path = path
        statistics = Statistics()
        shared = ServerShared(wakeRead: pipeFDs[0], wakeWrite: pipeFDs[1], statistics: statistics)
        let loop = ServerLoop(
            path: path, identity: identity, listener: listener, handler: handler, shared: shared, clock: clock)
        let shared = self.shared
        shared.done.enter()
        RoomThread.start("roomtap.control") {
            loop.run()
            shared.done.leave()
        }
    }

    deinit { stop() }

    /// Sends `event` (an object such as `{"event":"levels",...}`) to every watching client, as one
    /// line. Returns at once: the event is serialised here and queued for the server thread, which
    /// is woken through a pipe. With no watcher the event is discarded. Events beyond a full queue
    /// (4096 pending) or a watcher's full output queue are dropped and counted.
    ///
    /// Thread: any. Not for the room clock's thread (it allocates and takes a lock).
    public func publish(_ event: JSONValue) {
        shared.publish(event)
    }

    /// Sets (or with nil, clears) the watch ticker: while at least one client watches, the server
    /// thread calls `body` every `interval` (1 ms at least; monotonic, on the server's clock) and
    /// publishes what it returns (nil: nothing this time). The first call is `interval` after the
    /// server sees a watcher; each next one `interval` after the last deadline, or after now when
    /// the server fell behind by more than an interval (no burst). Nobody watching: no calls, and
    /// no timer. Used for the ~10 Hz `levels` event. `body` must return promptly, like the handler.
    ///
    /// Thread: any; `body` runs on the server thread.
    public func setWatchTicker(
        interval: Duration = .milliseconds(100), _ body: (@Sendable () -> JSONValue?)?
    ) {
        let interval = max(interval, .milliseconds(1))
        shared.ticker.withLock { $0 = body.map { Ticker(interval: interval, body: $0) } }
        shared.wake()
    }

    /// Stops serving: sends what was published before (as far as each client's socket takes it
    /// without waiting), closes every client and the listening socket, removes the socket file if it
    /// is still the one this server created (same device and inode), and waits for the server
    /// thread to end. Idempotent; any thread. Called from the handler (the server thread), it
    /// cannot wait for itself: it returns at once and the server stops after the current replies
    /// have been sent as far as the sockets take them.
    public func stop() {
        shared.stopping.store(true, ordering: .releasing)
        shared.wake()
        if shared.isServerThread { return }
        shared.done.wait()
    }

    // MARK: Start-up

    /// What ``init(path:handler:environment:)`` checks of the path (its length) and of the socket's
    /// directory, with nothing created or changed (for `record --dry-run`): a directory that
    /// exists must be one (the per-user default owned by this user and closed to others); a
    /// missing one passes (the server creates it).
    public static func checkDirectory(
        of path: String, environment: [String: String]? = nil
    ) throws(ControlSocketError) {
        guard UnixSocket.address(path) != nil else { throw .pathTooLong(path: path) }
        try prepareDirectory(of: path, environment: environment ?? ProcessInfo.processInfo.environment, create: false)
    }

    private static func prepareDirectory(
        of path: String, environment: [String: String], create: Bool = true
    ) throws(ControlSocketError) {
        let directory: String
        if let slash = path.lastIndex(of: "/") {
            directory = slash == path.startIndex ? "/" : String(path[..<slash])
        } else {
            directory = "."
        }
        let isPerUser = directory == ControlSocketPath.defaultDirectory(environment: environment)
        var info = stat()
        if lstat(directory, &info) != 0 {
            let code = errno
            guard code == ENOENT else { throw .directory(path: directory, reason: UnixSocket.reason(code)) }
            if !create { return }
            if mkdir(directory, 0o700) != 0 && errno != EEXIST {
                throw .directory(path: directory, reason: "cannot create it: \(UnixSocket.reason(errno))")
            }
            // Exactly 0700 whatever the umask (mkdir can only have made it narrower).
            _ = chmod(directory, 0o700)
            guard lstat(directory, &info) == 0 else {
                throw .directory(path: directory, reason: UnixSocket.reason(errno))
            }
        }
        let type = info.st_mode & S_IFMT
        if type == S_IFLNK {
            if isPerUser {
                throw .directory(path: directory, reason: "it is a symbolic link, not a private directory (remove it)")
            }
            guard stat(directory, &info) == 0 else {
                throw .directory(path: directory, reason: UnixSocket.reason(errno))
            }
        }
        guard info.st_mode & S_IFMT == S_IFDIR else { throw .directory(path: directory, reason: "not a directory") }
        guard isPerUser else { return }
        if info.st_uid != geteuid() {
            throw .directory(
                path: directory, reason: "owned by uid \(info.st_uid), not by you (uid \(geteuid())); remove it")
        }
        let mode = info.st_mode & 0o777
        if mode & 0o077 != 0 {
            throw .directory(
                path: directory,
                reason: "other users can access it (mode 0\(String(mode, radix: 8))); run chmod 700 \(directory)")
        }
    }

    private static func removeStaleSocket(at path: String, address: sockaddr_un) throws(ControlSocketError) {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            if errno == ENOENT { return }
            throw .system(path: path, call: "lstat", reason: UnixSocket.reason(errno))
        }
        guard info.st_mode & S_IFMT == S_IFSOCK else { throw .notASocket(path: path) }
        let probe = UnixSocket.makeSocket(nonblocking: true)
        guard probe >= 0 else { throw .system(path: path, call: "socket", reason: UnixSocket.reason(errno)) }
        let result = UnixSocket.connect(probe, address)
        let code = errno
        close(probe)
        if result == 0 || code == EAGAIN || code == EINPROGRESS { throw .inUse(path: path) }
        switch code {
        case ECONNREFUSED:
            if unlink(path) != 0 && errno != ENOENT {
                throw .system(path: path, call: "unlink (stale socket)", reason: UnixSocket.reason(errno))
            }
        case ENOENT:
            return
        default:
            throw .system(
                path: path, call: "connect (checking for a running recorder)", reason: UnixSocket.reason(code))
        }
    }

    private static func listen(at path: String, address: sockaddr_un) throws(ControlSocketError) -> (
        Int32, SocketIdentity
    ) {
        let fd = UnixSocket.makeSocket(nonblocking: true)
        guard fd >= 0 else { throw .system(path: path, call: "socket", reason: UnixSocket.reason(errno)) }
        // Owner-only from the first instant, without touching the process-wide umask (other
        // threads may be creating files): on Linux the socket file takes the mode of the socket's
        // inode, set here before bind. The chmod after bind covers other systems; it comes before
        // listen, and nobody can connect to a socket that does not listen yet.
        _ = fchmod(fd, 0o600)
        guard UnixSocket.bind(fd, address) == 0 else {
            let code = errno
            close(fd)
            if code == EADDRINUSE { throw .inUse(path: path) }
            throw .system(path: path, call: "bind", reason: UnixSocket.reason(code))
        }
        var info = stat()
        var failure: (call: String, reason: String)?
        if chmod(path, 0o600) != 0 || lstat(path, &info) != 0 {
            failure = ("chmod", UnixSocket.reason(errno))
        } else if info.st_mode & S_IFMT != S_IFSOCK || info.st_mode & 0o077 != 0 {
            failure = ("chmod", "the socket file could not be made owner-only")
        } else if UnixSocket.listen(fd, backlog: 64) != 0 {
            failure = ("listen", UnixSocket.reason(errno))
        }
        if let failure {
            close(fd)
            unlink(path)
            throw .system(path: path, call: failure.call, reason: failure.reason)
        }
        return (fd, SocketIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino)))
    }
}

/// The device and inode of the socket file this server created.
struct SocketIdentity {
    let device: UInt64
    let inode: UInt64
}

struct Ticker {
    let interval: Duration
    let body: @Sendable () -> JSONValue?
}

/// State shared between the server's public face (any thread) and its thread.
final class ServerShared: DeadlineWaker {
    let wakeRead: Int32
    let wakeWrite: Int32
    let statistics: ControlServer.Statistics
    let stopping = Atomic<Bool>(false)
    let done = DispatchGroup()
    let watcherCount = Atomic<Int>(0)
    /// The server thread's `pthread_t`, once it runs.
    let serverThread = Atomic<UInt>(0)
    let ticker = Locked<Ticker?>(nil)
    let pending = Locked<[[UInt8]]>([])

    /// Events queued for the server thread at most.
    static let maxPending = 4096

    init(wakeRead: Int32, wakeWrite: Int32, statistics: ControlServer.Statistics) {
        self.wakeRead = wakeRead
        self.wakeWrite = wakeWrite
        self.statistics = statistics
    }

    deinit {
        close(wakeRead)
        close(wakeWrite)
    }

    /// The calling thread's identity, comparable with ``serverThread``.
    static func currentThread() -> UInt {
        #if canImport(Darwin)
            return UInt(bitPattern: pthread_self())
        #else
            return UInt(pthread_self())
        #endif
    }

    /// True on the server thread (inside the handler or the ticker).
    var isServerThread: Bool { serverThread.load(ordering: .relaxed) == ServerShared.currentThread() }

    func publish(_ event: JSONValue) {
        guard watcherCount.load(ordering: .relaxed) > 0, !stopping.load(ordering: .relaxed) else { return }
        var line: [UInt8] = []
        event.write(to: &line)
        line.append(0x0A)
        let wasEmpty: Bool? = pending.withLock { queue in
            guard queue.count < ServerShared.maxPending else { return nil }
            queue.append(line)
            return queue.count == 1
        }
        switch wasEmpty {
        case nil: statistics.droppedEventCount.add(1, ordering: .relaxed)
        case true?: wake()
        case false?: break
        }
    }

    /// Makes the server thread's `poll` return (a byte into the pipe; a full pipe is already awake).
    func wake() {
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)
    }
}

extension Duration {
    var nanosecondsClamped: UInt64 {
        let (seconds, attoseconds) = components
        guard seconds >= 0 else { return 0 }
        guard seconds < 1_000_000_000 else { return UInt64.max / 2 }
        return UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000)
    }
}
