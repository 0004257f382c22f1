import CCurl
import CWslay
import RoomTapSync

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One open connection: the curl transport, the wslay context
/// (https://tatsuhiro-t.github.io/wslay/) and the poll loop that moves bytes between them.
///
/// Created by `connect` on the caller's thread, then used only by the loop thread (`run`).
final class WebSocketLoop: @unchecked Sendable {
    /// Outgoing data handed to wslay while its queue holds less than this; the rest waits in the
    /// client's bounded outbox.
    private static let wslayQueueBytes = 1 << 20

    private let client: WebSocketClient
    private var transport: CurlTransport?
    private let url: WebSocketURL
    /// The eventfd that `send` and `close` write to wake `poll`.
    let wakeDescriptor: Int32
    private var context: OpaquePointer?
    /// Bytes that arrived with the 101 response, read before the socket.
    private var pending: [UInt8]
    private var pendingOffset = 0
    private var ioFailure: String?
    private var lastReceive = MonotonicClock.now
    private var pingSentAt: MonotonicClock.Instant?
    /// The application's close request, taken from the outbox, waiting for queued data to drain.
    private var closeWaiting: (code: UInt16, reason: String)?
    private var closeQueued = false
    private var closeDeadline: MonotonicClock.Instant?
    private var peerClose: (code: UInt16, reason: String)?

    private init(client: WebSocketClient, transport: CurlTransport, url: WebSocketURL, pending: [UInt8], wake: Int32) {
        self.client = client
        self.transport = transport
        self.url = url
        self.pending = pending
        self.wakeDescriptor = wake
    }

    /// Connects, performs the opening handshake and prepares the wslay context; blocks.
    static func open(client: WebSocketClient) throws(WebSocketError) -> WebSocketLoop {
        let configuration = client.configuration
        guard let url = WebSocketURL(configuration.url) else {
            throw WebSocketError(.badURL, "'\(configuration.url.prefix(80))' is not a ws:// or wss:// URL with a host")
        }
        for header in configuration.headers {
            let tokenCharacters = Set("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
            guard !header.name.isEmpty, header.name.allSatisfy({ tokenCharacters.contains($0) }) else {
                throw WebSocketError(
                    .handshake, "the header name '\(header.name.prefix(40))' is not a valid HTTP token")
            }
            guard !header.value.unicodeScalars.contains(where: { $0 == "\r" || $0 == "\n" || $0 == "\0" }) else {
                throw WebSocketError(
                    .handshake, "the value of header '\(header.name)' contains a line break (not sent)")
            }
        }
        let deadline = MonotonicClock.now + configuration.connectTimeout
        // close() while connecting ends the connect within 50 ms instead of at the timeout.
        let cancellation = CurlTransport.Cancellation { [client] in client.state.withLock { $0.closeRequest != nil } }
        let transport = try CurlTransport.connect(to: url, configuration: configuration, cancellation: cancellation)
        let leftover: [UInt8]
        do {
            leftover = try Self.handshake(
                transport: transport, url: url, configuration: configuration, deadline: deadline)
        } catch {
            if cancellation.isCancelled() {
                throw WebSocketError(.state, "the WebSocket client was closed while connecting")
            }
            throw error
        }
        let wake = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        guard wake >= 0 else { throw WebSocketError(.connect, "cannot create an eventfd: errno \(errno)") }
        let loop = WebSocketLoop(client: client, transport: transport, url: url, pending: leftover, wake: wake)
        guard loop.makeContext() else {
            loop.discard()
            throw WebSocketError(.connect, "libwslay could not create a context (out of memory?)")
        }
        return loop
    }

    /// Releases everything without running (the client was closed while connecting).
    func discard() {
        client.state.withLock { state in
            state.phase = .closed
            state.outbox = []
            state.outboxBytes = 0
            state.wakeDescriptor = -1
            Glibc.close(wakeDescriptor)
        }
        if let context { wslay_event_context_free(context) }
        context = nil
        transport = nil
    }

    /// The loop thread's body: runs until the connection ended, then delivers `.closed` once.
    func run() {
        let (code, reason) = runLoop()
        discard()
        client.onEvent(.closed(code: code, reason: reason))
        client.finished()
    }

    // MARK: - The opening handshake

    /// Writes the upgrade request and reads the response head; returns the bytes after it.
    private static func handshake(
        transport: CurlTransport, url: WebSocketURL, configuration: WebSocketConfiguration,
        deadline: MonotonicClock.Instant
    ) throws(WebSocketError) -> [UInt8] {
        let key = WebSocketHandshake.makeKey()
        let request = WebSocketHandshake.request(url: url, key: key, headers: configuration.headers)
        var offset = 0
        while offset < request.count {
            let result = request.withUnsafeBytes { transport.send(UnsafeRawBufferPointer(rebasing: $0[offset...])) }
            switch result {
            case .bytes(let n): offset += n
            case .wouldBlock:
                guard transport.wait(forWriting: true, until: deadline) else {
                    throw WebSocketError(.timeout, "sending the WebSocket upgrade to \(url.display) timed out")
                }
            case .failed(let detail):
                throw WebSocketError(.connect, "sending the WebSocket upgrade to \(url.display) failed: \(detail)")
            }
        }
        var buffer: [UInt8] = []
        var headEnd: Int?
        while headEnd == nil {
            switch try read(transport, into: &buffer, until: deadline, url: url) {
            case false:
                throw WebSocketError(.handshake, "\(url.display) closed the connection during the WebSocket upgrade")
            case true:
                headEnd = find(crlfcrlf, in: buffer)
                if headEnd == nil && buffer.count > 64 << 10 {
                    throw WebSocketError(.handshake, "\(url.display) sent an HTTP response head over 64 KiB")
                }
            }
        }
        let end = headEnd!
        guard let response = WebSocketHandshake.parseResponse(buffer[..<end]) else {
            throw WebSocketError(
                .handshake, "\(url.display) answered the WebSocket upgrade with something that is not HTTP")
        }
        let bodyStart = end + crlfcrlf.count
        guard response.status == 101 else {
            let body = readBody(
                transport, buffer: buffer, from: bodyStart, response: response, deadline: deadline, url: url)
            let bodyText = excerpt(of: body, hiding: configuration.headers)
            let phrase = response.reason.isEmpty ? "" : " \(excerpt(of: Array(response.reason.utf8), hiding: []))"
            throw WebSocketError(
                .httpStatus(response.status),
                "\(url.display) refused the WebSocket upgrade: HTTP \(response.status)\(phrase)"
                    + (bodyText.isEmpty ? "" : ": \(bodyText)"),
                bodyExcerpt: bodyText)
        }
        if let problem = WebSocketHandshake.problem(with: response, key: key) {
            throw WebSocketError(.handshake, "\(url.display): \(problem)")
        }
        return Array(buffer[bodyStart...])
    }

    private static let crlfcrlf: [UInt8] = [13, 10, 13, 10]

    /// Reads what is there (waiting up to `deadline`) and appends it; false at the end of stream.
    private static func read(
        _ transport: CurlTransport, into buffer: inout [UInt8], until deadline: MonotonicClock.Instant,
        url: WebSocketURL
    ) throws(WebSocketError) -> Bool {
        var chunk = [UInt8](repeating: 0, count: 16 << 10)
        while true {
            let result = chunk.withUnsafeMutableBytes { transport.receive(into: $0) }
            switch result {
            case .bytes(0): return false
            case .bytes(let n):
                buffer += chunk[..<n]
                return true
            case .wouldBlock:
                guard transport.wait(until: deadline) else {
                    throw WebSocketError(.timeout, "\(url.display) did not answer the WebSocket upgrade in time")
                }
            case .failed(let detail):
                throw WebSocketError(
                    .connect, "reading the WebSocket upgrade response from \(url.display) failed: \(detail)")
            }
        }
    }

    /// The start of a refusal's body (up to 200 bytes; waits at most 1 s more for it).
    private static func readBody(
        _ transport: CurlTransport, buffer: [UInt8], from start: Int, response: WebSocketHandshake.Response,
        deadline: MonotonicClock.Instant, url: WebSocketURL
    ) -> [UInt8] {
        var buffer = buffer
        let wanted = min(200, Int(response.value("Content-Length") ?? "") ?? 200)
        let bodyDeadline = min(deadline, MonotonicClock.now + .seconds(1))
        while buffer.count - start < wanted {
            guard (try? read(transport, into: &buffer, until: bodyDeadline, url: url)) == true else { break }
        }
        return Array(buffer[start...].prefix(wanted))
    }

    /// One printable line of at most 200 bytes, with the values of `headers` replaced.
    private static func excerpt(of bytes: [UInt8], hiding headers: [WebSocketHeader]) -> String {
        var text = String(decoding: bytes.prefix(200), as: UTF8.self)
        for header in headers where header.value.count >= 4 {
            text = text.replacingAll(header.value, with: "[hidden]")
            for word in header.value.split(separator: " ") where word.count >= 8 {
                text = text.replacingAll(String(word), with: "[hidden]")
            }
        }
        let cleaned = text.unicodeScalars.map { $0.properties.generalCategory == .control ? " " : String($0) }.joined()
        return cleaned.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for i in 0...(haystack.count - needle.count) where haystack[i] == needle[0] {
            if Array(haystack[i..<(i + needle.count)]) == needle { return i }
        }
        return nil
    }

    // MARK: - wslay

    private func makeContext() -> Bool {
        var callbacks = wslay_event_callbacks(
            recv_callback: { context, buffer, length, _, user in
                Unmanaged<WebSocketLoop>.fromOpaque(user!).takeUnretainedValue()
                    .receive(context, UnsafeMutableRawBufferPointer(start: buffer, count: length))
            },
            send_callback: { context, data, length, _, user in
                Unmanaged<WebSocketLoop>.fromOpaque(user!).takeUnretainedValue()
                    .send(context, UnsafeRawBufferPointer(start: data, count: length))
            },
            genmask_callback: { _, buffer, length, _ in
                SecureRandom.fill(UnsafeMutableRawBufferPointer(start: buffer, count: length))
                return 0
            },
            on_frame_recv_start_callback: nil, on_frame_recv_chunk_callback: nil, on_frame_recv_end_callback: nil,
            on_msg_recv_callback: { _, argument, user in
                guard let argument else { return }
                Unmanaged<WebSocketLoop>.fromOpaque(user!).takeUnretainedValue().received(argument.pointee)
            })
        var context: OpaquePointer?
        guard wslay_event_context_client_init(&context, &callbacks, Unmanaged.passUnretained(self).toOpaque()) == 0,
            let context
        else { return false }
        wslay_event_config_set_max_recv_msg_length(context, UInt64(max(0, client.configuration.maxMessageBytes)))
        self.context = context
        return true
    }

    private func receive(_ context: OpaquePointer?, _ buffer: UnsafeMutableRawBufferPointer) -> Int {
        if pendingOffset < pending.count {
            let n = min(buffer.count, pending.count - pendingOffset)
            pending.withUnsafeBytes {
                buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[pendingOffset..<(pendingOffset + n)]))
            }
            pendingOffset += n
            if pendingOffset == pending.count {
                pending = []
                pendingOffset = 0
            }
            arrived()
            return n
        }
        switch transport?.receive(into: buffer) ?? .failed("closed") {
        case .bytes(0):
            ioFailure = "the peer ended the TCP connection without a close frame"
            wslay_event_set_error(context, Int32(WSLAY_ERR_CALLBACK_FAILURE.rawValue))
            return -1
        case .bytes(let n):
            arrived()
            return n
        case .wouldBlock:
            wslay_event_set_error(context, Int32(WSLAY_ERR_WOULDBLOCK.rawValue))
            return -1
        case .failed(let detail):
            ioFailure = "receiving failed: \(detail)"
            wslay_event_set_error(context, Int32(WSLAY_ERR_CALLBACK_FAILURE.rawValue))
            return -1
        }
    }

    private func send(_ context: OpaquePointer?, _ data: UnsafeRawBufferPointer) -> Int {
        switch transport?.send(data) ?? .failed("closed") {
        case .bytes(let n): return n
        case .wouldBlock:
            wslay_event_set_error(context, Int32(WSLAY_ERR_WOULDBLOCK.rawValue))
            return -1
        case .failed(let detail):
            ioFailure = "sending failed: \(detail)"
            wslay_event_set_error(context, Int32(WSLAY_ERR_CALLBACK_FAILURE.rawValue))
            return -1
        }
    }

    private func arrived() {
        lastReceive = .now
        pingSentAt = nil
    }

    private func received(_ message: wslay_event_on_msg_recv_arg) {
        let bytes =
            message.msg.map { UnsafeBufferPointer(start: $0, count: message.msg_length) } ?? .init(start: nil, count: 0)
        switch message.opcode {
        case 0x1: client.onEvent(.text(String(decoding: bytes, as: UTF8.self)))
        case 0x2: client.onEvent(.binary(Array(bytes)))
        case 0x8:
            let code = message.status_code == 0 ? 1005 : message.status_code
            let reason = bytes.count > 2 ? String(decoding: bytes[2...], as: UTF8.self) : ""
            peerClose = (code, reason)
        default: break  // pong (liveness is any byte), ping (wslay answers)
        }
    }

    // MARK: - The loop

    private func runLoop() -> (code: UInt16, reason: String) {
        guard let context, let socket = transport?.socket else { return (1006, "no connection") }
        let configuration = client.configuration
        // Frames that came with the 101 (in `pending` or in TLS buffers) before the first poll.
        if wslay_event_recv(context) != 0 { return failure(context) }
        while true {
            takeOutgoing(context)
            let now = MonotonicClock.now
            if let closeWaiting, !closeQueued, wslay_event_get_queued_msg_count(context) == 0 {
                var reason = Array(closeWaiting.reason.utf8)
                if reason.count > 123 {
                    reason = Array(reason.prefix(123))
                    while let last = reason.last, last & 0xC0 == 0x80 { reason.removeLast() }
                    if let last = reason.last, last >= 0xC0 { reason.removeLast() }
                }
                if wslay_event_queue_close(context, closeWaiting.code, reason, reason.count) != 0 {
                    _ = wslay_event_queue_close(context, 1000, nil, 0)
                }
                closeQueued = true
                closeDeadline = now + configuration.closeTimeout
            }
            if let interval = configuration.pingInterval, closeWaiting == nil {
                if let sentAt = pingSentAt {
                    if now >= sentAt + configuration.pongTimeout {
                        return (1006, "no answer to a ping within \(configuration.pongTimeout)")
                    }
                } else if now >= lastReceive + interval {
                    var ping = wslay_event_msg(opcode: 0x9, msg: nil, msg_length: 0)
                    _ = wslay_event_queue_msg(context, &ping)
                    pingSentAt = now
                }
            }
            if wslay_event_want_write(context) != 0, wslay_event_send(context) != 0 { return failure(context) }
            if let result = finishedState(context) { return result }
            if let closeDeadline, now >= closeDeadline {
                return (1006, "the peer did not answer the close frame within \(configuration.closeTimeout)")
            }

            var wakeAt: MonotonicClock.Instant?
            if let interval = configuration.pingInterval, closeWaiting == nil {
                wakeAt = pingSentAt.map { $0 + configuration.pongTimeout } ?? lastReceive + interval
            }
            if let closeDeadline { wakeAt = wakeAt.map { min($0, closeDeadline) } ?? closeDeadline }
            var timeout =
                wakeAt.map { Int32(clamping: max(0, MonotonicClock.now.duration(to: $0).milliseconds)) } ?? -1
            if hasWorkWithoutIO(context) { timeout = 0 }
            var events: Int16 = 0
            if wslay_event_want_read(context) != 0 { events |= Int16(POLLIN) }
            if wslay_event_want_write(context) != 0 { events |= Int16(POLLOUT) }
            var descriptors = [
                pollfd(fd: socket, events: events, revents: 0),
                pollfd(fd: wakeDescriptor, events: Int16(POLLIN), revents: 0),
            ]
            let n = poll(&descriptors, 2, timeout)
            if n < 0 {
                if errno == EINTR { continue }
                return (1006, "poll failed: errno \(errno)")
            }
            if descriptors[1].revents != 0 {
                var count: UInt64 = 0
                _ = withUnsafeMutableBytes(of: &count) { Glibc.read(wakeDescriptor, $0.baseAddress, 8) }
            }
            let socketEvents = descriptors[0].revents
            if socketEvents & Int16(POLLIN | POLLHUP | POLLERR) != 0 {
                if wslay_event_want_read(context) != 0 {
                    if wslay_event_recv(context) != 0 { return failure(context) }
                } else if socketEvents & Int16(POLLHUP | POLLERR) != 0, wslay_event_want_write(context) == 0 {
                    return peerClose ?? (1006, "the connection dropped")
                }
            }
        }
    }

    /// Moves the application's messages (and its close request) from the outbox into wslay.
    private func takeOutgoing(_ context: OpaquePointer) {
        let room = Self.wslayQueueBytes - wslay_event_get_queued_msg_length(context)
        let (messages, closeRequest): ([WebSocketClient.Outgoing], (code: UInt16, reason: String)?) =
            client.state.withLock { state in
                var taken = 0
                var bytes = 0
                while taken < state.outbox.count,
                    state.closeRequest != nil || taken == 0 && room == Self.wslayQueueBytes
                        || bytes + state.outbox[taken].payload.count <= room
                {
                    bytes += state.outbox[taken].payload.count
                    taken += 1
                }
                let messages = Array(state.outbox[..<taken])
                state.outbox.removeFirst(taken)
                state.outboxBytes -= bytes
                return (messages, state.closeRequest)
            }
        for message in messages {
            message.payload.withUnsafeBufferPointer { payload in
                var frame = wslay_event_msg(opcode: message.opcode, msg: payload.baseAddress, msg_length: payload.count)
                _ = wslay_event_queue_msg(context, &frame)
            }
        }
        if closeWaiting == nil, let closeRequest { closeWaiting = closeRequest }
    }

    /// Whether the next iteration can make progress without waiting for the socket: outbox
    /// messages that fit into wslay's queue, or a close request whose queued data has gone out.
    private func hasWorkWithoutIO(_ context: OpaquePointer) -> Bool {
        if closeWaiting != nil && !closeQueued && wslay_event_get_queued_msg_count(context) == 0 { return true }
        let room = Self.wslayQueueBytes - wslay_event_get_queued_msg_length(context)
        let taken = closeWaiting != nil
        let next = client.state.withLock { state -> Int? in
            if state.closeRequest != nil && !taken { return 0 }
            return state.outbox.first?.payload.count
        }
        guard let next else { return false }
        return room == Self.wslayQueueBytes || next <= room
    }

    /// The end of the connection once the close handshake is complete, or nil while it is not.
    private func finishedState(_ context: OpaquePointer) -> (code: UInt16, reason: String)? {
        let closeReceived = wslay_event_get_close_received(context) != 0
        let closeSent = wslay_event_get_close_sent(context) != 0
        if closeReceived && closeSent { return peerClose ?? (1005, "") }
        if closeSent && !closeQueued { return protocolFailure(context) }
        if wslay_event_want_read(context) == 0 && wslay_event_want_write(context) == 0 {
            if closeReceived { return peerClose ?? (1005, "") }
            return (1006, ioFailure ?? "the connection ended")
        }
        return nil
    }

    /// The end after wslay_event_recv or wslay_event_send failed.
    private func failure(_ context: OpaquePointer) -> (code: UInt16, reason: String) {
        if wslay_event_get_close_received(context) != 0 { return peerClose ?? (1005, "") }
        if wslay_event_get_close_sent(context) != 0 && !closeQueued { return protocolFailure(context) }
        return (1006, ioFailure ?? "the connection failed")
    }

    /// wslay closed the connection itself because the peer broke the protocol.
    private func protocolFailure(_ context: OpaquePointer) -> (code: UInt16, reason: String) {
        let code = wslay_event_get_status_code_sent(context)
        switch code {
        case 1009: return (code, "a message exceeded \(client.configuration.maxMessageBytes) bytes")
        case 1007: return (code, "a text message was not valid UTF-8")
        default: return (code, "the peer broke the WebSocket protocol")
        }
    }
}

extension String {
    /// The string with every occurrence of `target` replaced.
    func replacingAll(_ target: String, with replacement: String) -> String {
        guard !target.isEmpty else { return self }
        return split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
