import RoomTapSync

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The server thread's state and loop. Everything here is confined to that thread. The watch
/// ticker's deadlines are on `clock` (a virtual one in tests); the pause of the listener while out
/// of descriptors is real time (``MonotonicClock``): it keeps `poll` from spinning.
final class ServerLoop: @unchecked Sendable {
    /// Bytes read from one client per loop turn at most (also the read buffer's size).
    static let readChunk = 65_536
    /// A client's input is not read while this much output waits for it (backpressure).
    static let readPauseBytes = ControlLimits.maxOutputBytes / 4
    /// Watch events are dropped for a client once its queue would pass this.
    static let eventLimitBytes = ControlLimits.maxOutputBytes / 4 * 3

    private let path: String
    private let identity: SocketIdentity
    private let listener: Int32
    private let handler: any ControlHandler
    private let shared: ServerShared
    private let clock: any DeadlineClock
    private var clients: [Client] = []
    private var pollFDs: [pollfd] = []
    /// When the watch ticker runs next, on `clock` (nil while nobody watches).
    private var nextTick: MonotonicClock.Instant?
    /// While out of descriptors, the listener is left alone until then (else `poll` would spin).
    private var acceptPausedUntil: MonotonicClock.Instant?
    private var reply: [UInt8] = []
    private let readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: readChunk, alignment: 8)

    init(
        path: String, identity: SocketIdentity, listener: Int32, handler: any ControlHandler, shared: ServerShared,
        clock: any DeadlineClock
    ) {
        self.clock = clock
        self.path = path
        self.identity = identity
        self.listener = listener
        self.handler = handler
        self.shared = shared
    }

    deinit { readBuffer.deallocate() }

    func run() {
        shared.serverThread.store(ServerShared.currentThread(), ordering: .relaxed)
        while !shared.stopping.load(ordering: .acquiring) {
            turn()
        }
        // Events published before the stop (a `stopped` event) still go out, as far as the sockets
        // take them without waiting.
        deliverPending()
        for client in clients where client.output.count > 0 && !client.failed { flush(client) }
        for client in clients { close(client) }
        clients.removeAll()
        closeDescriptor(listener)
        var info = stat()
        if lstat(path, &info) == 0 && UInt64(info.st_dev) == identity.device && UInt64(info.st_ino) == identity.inode {
            unlink(path)
        }
    }

    /// One `poll` and everything it reports.
    private func turn() {
        pollFDs.removeAll(keepingCapacity: true)
        pollFDs.append(pollfd(fd: shared.wakeRead, events: Int16(POLLIN), revents: 0))
        let acceptPaused = acceptPausedUntil.map { MonotonicClock.now < $0 } ?? false
        pollFDs.append(pollfd(fd: listener, events: acceptPaused ? 0 : Int16(POLLIN), revents: 0))
        for client in clients {
            var events: Int32 = 0
            if !client.inputClosed && client.output.count < ServerLoop.readPauseBytes { events |= Int32(POLLIN) }
            if client.output.count > 0 { events |= Int32(POLLOUT) }
            pollFDs.append(pollfd(fd: client.fd, events: Int16(events), revents: 0))
        }
        let ticker = shared.ticker.withLock { $0 }
        if let ticker, shared.watcherCount.load(ordering: .relaxed) > 0 {
            nextTick = nextTick ?? clock.now + ticker.interval
        } else {
            nextTick = nil
        }
        var timeout = Duration.pollMilliseconds(clock.blockingTime(until: nextTick, waking: shared), cap: 1000)
        if acceptPaused { timeout = timeout < 0 ? 100 : min(timeout, 100) }
        let ready = poll(&pollFDs, nfds_t(pollFDs.count), timeout)
        if ready < 0 && errno != EINTR { return }
        if pollFDs[0].revents != 0 { drainWakePipe() }
        deliverPending()
        if let ticker { tickIfDue(ticker) }
        // Clients first (by index: the accepted ones below are appended after these).
        let count = clients.count
        for index in 0..<count {
            let revents = Int32(pollFDs[index + 2].revents)
            guard revents != 0 else { continue }
            let client = clients[index]
            if revents & Int32(POLLIN | POLLHUP | POLLERR) != 0 && !client.inputClosed {
                read(client)
            } else if revents & Int32(POLLHUP | POLLERR) != 0 {
                client.failed = true
            }
        }
        if pollFDs[1].revents != 0 { acceptClients() }
        for client in clients where client.output.count > 0 && !client.failed { flush(client) }
        if clients.contains(where: { $0.isFinished }) {
            for client in clients where client.isFinished { close(client) }
            clients.removeAll { $0.isFinished }
        }
    }

    private func drainWakePipe() {
        var scratch = [UInt8](repeating: 0, count: 256)
        while readDescriptor(shared.wakeRead, &scratch, scratch.count) == scratch.count {}
    }

    // MARK: Clients

    private func acceptClients() {
        for _ in 0..<16 {
            let fd = accept(listener, nil, nil)
            guard fd >= 0 else {
                let code = errno
                if code == EMFILE || code == ENFILE || code == ENOBUFS || code == ENOMEM {
                    acceptPausedUntil = MonotonicClock.now + .milliseconds(100)
                }
                return
            }
            UnixSocket.configure(fd, nonblocking: true)
            guard clients.count < ControlLimits.maxClients else {
                shared.statistics.rejectedCount.add(1, ordering: .relaxed)
                let message = "too many control clients (\(ControlLimits.maxClients)); close one and try again"
                var line: [UInt8] = []
                ControlResponse.failure(.unavailable, message).writeReply(id: .null, to: &line)
                _ = line.withUnsafeBytes { UnixSocket.send(fd, $0) }
                closeDescriptor(fd)
                continue
            }
            shared.statistics.acceptedCount.add(1, ordering: .relaxed)
            shared.statistics.connectedCount.add(1, ordering: .relaxed)
            clients.append(Client(fd: fd))
        }
    }

    private func read(_ client: Client) {
        let n = recv(client.fd, readBuffer.baseAddress, readBuffer.count, 0)
        if n > 0 {
            client.splitter.feed(UnsafeRawBufferPointer(rebasing: readBuffer[0..<n])) { piece in
                self.handle(piece, from: client)
            }
        } else if n == 0 {
            client.splitter.finish { piece in self.handle(piece, from: client) }
            client.inputClosed = true
        } else if errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR {
            client.failed = true
        }
    }

    private func handle(_ piece: LineSplitter.Piece, from client: Client) {
        guard !client.failed else { return }
        reply.removeAll(keepingCapacity: true)
        switch piece {
        case .tooLong:
            shared.statistics.tooLongCount.add(1, ordering: .relaxed)
            let message = "request line longer than \(ControlLimits.maxLineBytes) bytes; it was discarded"
            ControlResponse.failure(.lineTooLong, message).writeReply(id: .null, to: &reply)
        case .line(var line):
            if line.last == 0x0D { line = UnsafeRawBufferPointer(rebasing: line.dropLast()) }
            if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { return }
            switch ControlRequest.parse(line) {
            case .failure(let error):
                ControlResponse.failure(error.failure).writeReply(id: error.id, to: &reply)
            case .success(let request):
                let response = handler.handle(request)
                response.writeReply(id: request.id, to: &reply)
                if case .watch = response, !client.watching {
                    client.watching = true
                    shared.watcherCount.add(1, ordering: .relaxed)
                }
            }
        }
        shared.statistics.requestCount.add(1, ordering: .relaxed)
        // A reply always goes to a client that is up to date; one that lets its queue grow past
        // the limit is too slow to keep.
        guard client.output.count == 0 || client.output.count + reply.count <= ControlLimits.maxOutputBytes else {
            shared.statistics.slowDisconnectCount.add(1, ordering: .relaxed)
            client.failed = true
            return
        }
        client.output.append(reply)
    }

    private func flush(_ client: Client) {
        if !client.output.send(to: client.fd) { client.failed = true }
    }

    private func close(_ client: Client) {
        if client.watching {
            client.watching = false
            shared.watcherCount.subtract(1, ordering: .relaxed)
        }
        closeDescriptor(client.fd)
        shared.statistics.connectedCount.subtract(1, ordering: .relaxed)
    }

    // MARK: Events

    private func deliverPending() {
        let lines = shared.pending.withLock { queue -> [[UInt8]] in
            var taken: [[UInt8]] = []
            swap(&taken, &queue)
            return taken
        }
        for line in lines { fanOut(line) }
    }

    private func fanOut(_ line: [UInt8]) {
        for client in clients where client.watching && !client.failed {
            if client.output.count + line.count > ServerLoop.eventLimitBytes {
                shared.statistics.droppedEventCount.add(1, ordering: .relaxed)
            } else {
                client.output.append(line)
            }
        }
    }

    private func tickIfDue(_ ticker: Ticker) {
        guard let due = nextTick else { return }
        let now = clock.now
        guard now >= due else { return }
        // The next deadline follows the last one; after a long stall it restarts from now.
        let next = due + ticker.interval
        nextTick = next > now ? next : now + ticker.interval
        guard let event = ticker.body() else { return }
        var line: [UInt8] = []
        event.write(to: &line)
        line.append(0x0A)
        fanOut(line)
    }
}

/// One connected client. Confined to the server thread.
private final class Client {
    let fd: Int32
    var splitter = LineSplitter()
    var output = OutputQueue()
    var watching = false
    /// The client sent end-of-file (it may still read: replies and events are still sent).
    var inputClosed = false
    /// A read or write failed, or the client was too slow: close it.
    var failed = false

    init(fd: Int32) { self.fd = fd }

    /// Done with: failed, or finished sending and everything answered (a watcher stays).
    var isFinished: Bool { failed || (inputClosed && !watching && output.count == 0) }
}

/// Bytes waiting to be sent to one client.
private struct OutputQueue {
    private var bytes: [UInt8] = []
    private var head = 0

    var count: Int { bytes.count - head }

    mutating func append(_ line: [UInt8]) { bytes.append(contentsOf: line) }

    /// Sends what the socket takes without blocking. False when the connection failed.
    mutating func send(to fd: Int32) -> Bool {
        while head < bytes.count {
            let sent = bytes.withUnsafeBytes { UnixSocket.send(fd, UnsafeRawBufferPointer(rebasing: $0[head...])) }
            if sent > 0 {
                head += sent
            } else if sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                break
            } else if sent < 0 && errno == EINTR {
                continue
            } else {
                return false
            }
        }
        if head == bytes.count {
            if bytes.capacity > 65_536 { bytes = [] } else { bytes.removeAll(keepingCapacity: true) }
            head = 0
        } else if head >= 65_536 && head * 2 >= bytes.count {
            bytes.removeFirst(head)
            head = 0
        }
        return true
    }
}

private func closeDescriptor(_ fd: Int32) {
    _ = close(fd)
}

private func readDescriptor(_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
    read(fd, buffer, count)
}
