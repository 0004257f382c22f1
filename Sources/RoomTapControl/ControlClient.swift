import RoomTapSync

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A connection to a recorder's control socket: sends requests, reads replies and events.
///
/// Thread: one thread at a time (not `Sendable`). Calls block for at most their timeout (``watch``
/// until the stream ends). The connection closes when the client goes.
public final class ControlClient {
    /// The socket's path.
    public let path: String
    /// The pid of the process that listens at ``path`` (SO_PEERCRED, set by the kernel when the
    /// connection was made: known even when that process is stopped and never answers); nil when
    /// the kernel did not say.
    public let peerPID: Int32?
    private let fd: Int32
    private var received: [UInt8] = []
    private var head = 0
    /// `received[head..<scanned]` holds no newline.
    private var scanned = 0
    private var chunk = [UInt8](repeating: 0, count: 65_536)
    private var nextID = 1

    /// Longest reply or event line accepted (16 MiB).
    static let maxReplyBytes = 16 << 20

    /// Connects to the recorder at `path`. Nothing listening there (no socket file, or a stale one)
    /// is ``ControlClientError/noRecorder(path:)``, whose message is
    /// `no recorder at PATH; start one with roomtap record`.
    public init(path: String) throws(ControlClientError) {
        self.path = path
        guard let address = UnixSocket.address(path) else {
            throw .cannotConnect(path: path, reason: "the path is longer than a Unix socket allows")
        }
        let fd = UnixSocket.makeSocket(nonblocking: false)
        guard fd >= 0 else { throw .cannotConnect(path: path, reason: UnixSocket.reason(errno)) }
        if UnixSocket.connect(fd, address) != 0 {
            let code = errno
            close(fd)
            if code == ENOENT || code == ECONNREFUSED || code == ENOTDIR { throw .noRecorder(path: path) }
            throw .cannotConnect(path: path, reason: UnixSocket.reason(code))
        }
        UnixSocket.configure(fd, nonblocking: true)
        self.fd = fd
        // struct ucred (socket(7)): pid, uid, gid, each 32 bits.
        var credentials = [Int32](repeating: 0, count: 3)
        var length = socklen_t(12)
        let status = credentials.withUnsafeMutableBytes {
            getsockopt(fd, SOL_SOCKET, SO_PEERCRED, $0.baseAddress, &length)
        }
        peerPID = status == 0 && credentials[0] > 0 ? credentials[0] : nil
    }

    deinit { close(fd) }

    /// Sends `command` with `parameters` and waits up to `timeout` for its reply. Returns the
    /// reply's `result` (`null` when absent); an `ok: false` reply throws
    /// ``ControlClientError/failure(code:message:)`` with the recorder's code and message. Event
    /// lines arriving meanwhile are skipped.
    public func request(
        _ command: String, _ parameters: [String: JSONValue] = [:], timeout: Duration = .seconds(5)
    ) throws(ControlClientError) -> JSONValue {
        let deadline = MonotonicClock.now.nanoseconds + timeout.nanosecondsClamped
        let id = JSONValue.number(Double(nextID))
        nextID += 1
        do {
            try send(ControlRequest(id: id, command: command, parameters: parameters), deadline: deadline)
        } catch .disconnected(let path) {
            // Closed on us: the recorder may have said why first (too many clients).
            try failureBeforeClose()
            throw .disconnected(path: path)
        }
        while true {
            let line = try readLine(deadline: deadline, command: command)
            guard case .object(let members) = line, members["event"] == nil || members["ok"] != nil else { continue }
            // A failure with a null id is about the connection (too many clients): ours too.
            guard members["id"] == id || (members["id"] == .null && members["ok"] == false) else { continue }
            return try ControlClient.result(of: members)
        }
    }

    /// Sends `command` (``ControlCommand/request(id:)``) and waits up to `timeout` for its reply, as
    /// ``request(_:_:timeout:)``. A recorder still setting up its room answers `starting`
    /// (``SetUpGate``): the request is then sent again every ``startingRetryInterval`` until
    /// `whileStarting` has passed since the first (zero: never again), after which that failure is
    /// thrown. Blocks the calling thread for at most `whileStarting` plus `timeout` per try.
    public func request(
        _ command: ControlCommand, timeout: Duration = .seconds(5), whileStarting: Duration = .zero
    ) throws(ControlClientError) -> JSONValue {
        let deadline = MonotonicClock.now.nanoseconds + whileStarting.nanosecondsClamped
        while true {
            do throws(ControlClientError) {
                return try request(command.name.rawValue, command.parameters, timeout: timeout)
            } catch .failure(.starting, _) where MonotonicClock.now.nanoseconds < deadline {
                usleep(UInt32(ControlClient.startingRetryInterval.nanosecondsClamped / 1000))
            }
        }
    }

    /// How often ``request(_:timeout:whileStarting:)`` asks a recorder that is still starting.
    public static let startingRetryInterval: Duration = .milliseconds(50)

    /// Sends `watch` (with `parameters`), waits up to `timeout` for its reply, then calls
    /// `onEvent` for every event line until it returns false (returns normally) or the recorder
    /// closes the connection (throws ``ControlClientError/disconnected(path:)``).
    public func watch(
        _ parameters: [String: JSONValue] = [:], timeout: Duration = .seconds(5), onEvent: (JSONValue) -> Bool
    ) throws(ControlClientError) {
        _ = try request("watch", parameters, timeout: timeout)
        try events(within: nil, onEvent: onEvent)
    }

    /// Calls `onEvent` for every event line that arrives (after a request whose reply subscribed
    /// this client, like `watch` or `stop`) until it returns false. The recorder closing the
    /// connection first throws ``ControlClientError/disconnected(path:)``; `within` passing first
    /// (nil: no limit) throws ``ControlClientError/timeout(command:)`` with command `events`.
    public func events(within: Duration?, onEvent: (JSONValue) -> Bool) throws(ControlClientError) {
        let deadline = within.map { MonotonicClock.now.nanoseconds + $0.nanosecondsClamped }
        while true {
            let line = try readLine(deadline: deadline, command: "events")
            guard line["event"] != nil else { continue }
            if !onEvent(line) { return }
        }
    }

    private static func result(of reply: [String: JSONValue]) throws(ControlClientError) -> JSONValue {
        switch reply["ok"] {
        case .bool(true)?:
            return reply["result"] ?? .null
        case .bool(false)?:
            let error = reply["error"]
            let code = error?["code"]?.stringValue.flatMap(ControlErrorCode.init(rawValue:)) ?? .internal
            let message = error?["message"]?.stringValue ?? "the recorder failed without saying why"
            throw .failure(code: code, message: message)
        default:
            throw .badReply("a reply without \"ok\"")
        }
    }

    /// Throws the connection-level failure (a failed reply with a null id) among the lines the
    /// recorder sent before closing, if there is one.
    private func failureBeforeClose() throws(ControlClientError) {
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            guard n > 0 else { break }
            received.append(contentsOf: chunk[0..<n])
        }
        while let line = try? readLine(deadline: 0, command: "") {
            if case .object(let members) = line, members["id"] == .null, members["ok"] == false {
                _ = try ControlClient.result(of: members)
            }
        }
    }

    private func send(_ request: ControlRequest, deadline: UInt64) throws(ControlClientError) {
        let line = Array((request.jsonText + "\n").utf8)
        var offset = 0
        while offset < line.count {
            let sent = line.withUnsafeBytes { UnixSocket.send(fd, UnsafeRawBufferPointer(rebasing: $0[offset...])) }
            if sent > 0 {
                offset += sent
                continue
            }
            if sent < 0 && errno == EINTR { continue }
            guard sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) else { throw .disconnected(path: path) }
            try wait(for: Int16(POLLOUT), deadline: deadline, command: request.command)
        }
    }

    /// The next line, parsed. Waits until `deadline` (nil: forever).
    private func readLine(deadline: UInt64?, command: String) throws(ControlClientError) -> JSONValue {
        while true {
            if let newline = nextNewline() {
                let result = received.withUnsafeBytes { bytes in
                    Result { () throws(JSONParseError) in
                        try JSONValue(parsing: UnsafeRawBufferPointer(rebasing: bytes[head..<newline]))
                    }
                }
                head = newline + 1
                scanned = head
                if head == received.count {
                    received.removeAll(keepingCapacity: received.capacity <= 65_536)
                    head = 0
                    scanned = 0
                }
                switch result {
                case .success(let value): return value
                case .failure(let error): throw .badReply("\(error)")
                }
            }
            if received.count - head > ControlClient.maxReplyBytes { throw .badReply("a line over 16 MiB") }
            if head > 0 {
                received.removeFirst(head)
                scanned -= head
                head = 0
            }
            try wait(for: Int16(POLLIN), deadline: deadline, command: command)
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 {
                received.append(contentsOf: chunk[0..<n])
            } else if n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                throw .disconnected(path: path)
            }
        }
    }

    /// The index of the first newline after `head`, scanning only bytes not scanned before.
    private func nextNewline() -> Int? {
        let start = scanned
        scanned = received.count
        let found = received.withUnsafeBytes { raw -> Int? in
            guard start < raw.count, let base = raw.baseAddress,
                let hit = memchr(base + start, 0x0A, raw.count - start)
            else { return nil }
            return base.distance(to: UnsafeRawPointer(hit))
        }
        return found
    }

    private func wait(for events: Int16, deadline: UInt64?, command: String) throws(ControlClientError) {
        while true {
            var timeout: Int32 = -1
            if let deadline {
                let now = MonotonicClock.now.nanoseconds
                guard now < deadline else { throw .timeout(command: command) }
                timeout = Int32(min((deadline - now + 999_999) / 1_000_000, 60_000))
            }
            var pfd = pollfd(fd: fd, events: events, revents: 0)
            let ready = poll(&pfd, 1, timeout)
            if ready > 0 { return }
            if ready < 0 && errno != EINTR { throw .disconnected(path: path) }
        }
    }
}
