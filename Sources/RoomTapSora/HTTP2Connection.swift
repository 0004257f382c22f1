import CNGHTTP2
import Glibc
import RoomTapCore
import RoomTapSync

/// One client's TCP connection to ``HTTP2Server``: a libnghttp2 server session (framing, HPACK,
/// SETTINGS, flow control; RFC 9113, https://www.rfc-editor.org/rfc/rfc9113) fed from a
/// non-blocking socket, and the requests on its streams.
///
/// Flow control is the handlers': libnghttp2's automatic WINDOW_UPDATEs are off, and body bytes
/// are given back to the client's window only when a handler says it is done with them
/// (``HTTP2ServiceResult/consumed``), so a client that sends faster than a handler takes waits,
/// and what a stream holds is bounded by ``streamWindow``. Bytes of streams nobody takes (refused,
/// answered, reset) are given back at once.
///
/// A connection that does not open with the HTTP/2 client preface (RFC 9113 §3.4; an HTTP/1
/// request) gets an HTTP/1.1 505 naming what is expected and is closed.
///
/// Thread: confined to the server's thread.
final class HTTP2Connection {
    /// The flow-control window of each stream (bytes a request may send ahead of its handler).
    static let streamWindow: Int32 = 256 * 1024
    /// The connection's window (all its streams together).
    static let connectionWindow: Int32 = 16 * 1024 * 1024
    /// Streams a client may open at once.
    static let maxConcurrentStreams: UInt32 = 128
    /// Bytes of output held for a slow reader before no more frames are produced.
    static let maxPendingOutput = 1 << 20

    private static let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)

    /// One stream's request.
    final class Stream {
        var head = HTTP2RequestHead()
        var handler: (any HTTP2RequestHandler)?
        /// The final response (the handler is done).
        var response: HTTP2Response?
        /// Whether the response's head has been submitted (a final or a first streamed part).
        var started = false
        /// Response body bytes not yet taken by libnghttp2 (from `bodySent` on).
        var body: [UInt8] = []
        var bodySent = 0
        /// libnghttp2 was told there is no more body for now (``readBody`` returned DEFERRED).
        var deferred = false
        /// Body bytes received and not yet given back to the window.
        var unconsumed = 0
        /// Body bytes nobody takes, to give back at the next service.
        var discarded = 0
        /// When a client still sending after its whole response is asked to stop (ns).
        var resetAt: UInt64?
    }

    /// How long a client may go on sending a body after its whole response went out before the
    /// stream is reset (RST_STREAM NO_ERROR): long enough for a small body in flight to end
    /// cleanly (some clients take a reset after the response as a failure), short enough that a
    /// stream nobody reads does not run on.
    static let resetGraceNanos: UInt64 = 1_000_000_000

    let fd: Int32
    let peer: String
    private(set) var isClosed = false
    private var session: OpaquePointer?
    private weak var delegate: (any HTTP2ServerDelegate)?
    private var streams: [Int32: Stream] = [:]
    private var output: [UInt8] = []
    private var outputStart = 0
    private var prefaceChecked = 0
    private var closeAfterOutput = false
    private let tls: TLSSession?
    /// An HTTP/1 client was answered: its request is read and dropped until it closes (closing
    /// with unread bytes would reset the connection and lose the answer).
    private var refusing = false
    private var lingering = false
    private var lingered = 0
    private var wakeAt: UInt64?

    /// `tls`: the connection's TLS session (an `https://` server), nil for h2c.
    init?(fd: Int32, peer: String, delegate: any HTTP2ServerDelegate, tls: TLSSession? = nil) {
        self.tls = tls
        self.fd = fd
        self.peer = peer
        self.delegate = delegate
        var callbacks: OpaquePointer?
        guard nghttp2_session_callbacks_new(&callbacks) == 0, let callbacks else { return nil }
        defer { nghttp2_session_callbacks_del(callbacks) }
        nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks, Self.onBeginHeaders)
        nghttp2_session_callbacks_set_on_header_callback(callbacks, Self.onHeader)
        nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, Self.onFrameReceived)
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, Self.onDataChunk)
        nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, Self.onStreamClose)
        nghttp2_session_callbacks_set_on_frame_send_callback(callbacks, Self.onFrameSent)
        var option: OpaquePointer?
        guard nghttp2_option_new(&option) == 0, let option else { return nil }
        defer { nghttp2_option_del(option) }
        nghttp2_option_set_no_auto_window_update(option, 1)
        let user = Unmanaged.passUnretained(self).toOpaque()
        guard nghttp2_session_server_new2(&session, callbacks, user, option) == 0, let session else { return nil }
        var settings = [
            nghttp2_settings_entry(
                settings_id: Int32(NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS.rawValue),
                value: Self.maxConcurrentStreams),
            nghttp2_settings_entry(
                settings_id: Int32(NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE.rawValue), value: UInt32(Self.streamWindow)),
        ]
        guard nghttp2_submit_settings(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), &settings, settings.count) == 0,
            nghttp2_session_set_local_window_size(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), 0, Self.connectionWindow)
                == 0
        else {
            nghttp2_session_del(session)
            self.session = nil
            return nil
        }
    }

    deinit { if let session { nghttp2_session_del(session) } }

    /// The earliest time a handler asked to be served again.
    var nextWake: UInt64? { wakeAt }

    /// Whether the socket should be polled for writing.
    var wantsWrite: Bool { outputStart < output.count }

    /// Reads what the socket has and feeds it to the session. Closes on EOF or a protocol error.
    func readAvailable() {
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        if lingering {
            while true {
                let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
                if n < 0 && errno == EINTR { continue }
                if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return }
                lingered += max(0, n)
                if n <= 0 || lingered > 1 << 20 {
                    close()
                    return
                }
            }
        }
        while !isClosed && !closeAfterOutput {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if n < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK { return }
                close()
                return
            }
            if n == 0 {
                close()
                return
            }
            var plain: [UInt8] = []
            if let tls {
                let failure = buffer.withUnsafeBytes {
                    tls.receive(UnsafeRawBufferPointer(rebasing: $0[0..<n]), into: &plain, wire: &output)
                }
                if let failure {
                    if !tls.isEstablished {
                        delegate?.protocolError(peer: peer, reason: "TLS handshake failed: \(failure)")
                    }
                    closeAfterOutput = true
                    return
                }
                if plain.isEmpty { continue }
            } else {
                plain = Array(buffer[0..<n])
            }
            let bytes = plain[...]
            if prefaceChecked < Self.preface.count && !checkPreface(bytes) { return }
            let used = bytes.withUnsafeBytes {
                nghttp2_session_mem_recv(session, $0.baseAddress!.assumingMemoryBound(to: UInt8.self), $0.count)
            }
            if used < 0 {
                delegate?.protocolError(
                    peer: peer, reason: "HTTP/2 protocol error (\(String(cString: nghttp2_strerror(Int32(used)))))")
                // A GOAWAY saying why, if libnghttp2 queued one, then the end.
                closeAfterOutput = true
                return
            }
        }
    }

    /// The start of the connection must be the client preface; an HTTP/1 request gets a 505.
    private func checkPreface(_ bytes: ArraySlice<UInt8>) -> Bool {
        for byte in bytes where prefaceChecked < Self.preface.count {
            guard byte == Self.preface[prefaceChecked] else {
                delegate?.refusedHTTP1(peer: peer)
                let body =
                    "roomtap takes Sora's audio streaming over HTTP/2 only (h2c with prior knowledge: "
                    + "audio_streaming_url = http://HOST:PORT/speech in sora.conf; curl --http2-prior-knowledge)\n"
                let text =
                    "HTTP/1.1 505 HTTP Version Not Supported\r\nContent-Type: text/plain\r\n"
                    + "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n" + body
                output.removeAll()
                outputStart = 0
                Array(text.utf8).withUnsafeBytes { emit($0) }
                closeAfterOutput = true
                refusing = true
                flush()
                return false
            }
            prefaceChecked += 1
        }
        return true
    }

    /// Serves every taken request at `now`, gives consumed bytes back, submits responses, writes.
    func service(now: UInt64) {
        guard !isClosed, session != nil else { return }
        wakeAt = nil
        for (id, stream) in streams {
            if let resetAt = stream.resetAt {
                if resetAt <= now, let session {
                    stream.resetAt = nil
                    nghttp2_submit_rst_stream(
                        session, UInt8(NGHTTP2_FLAG_NONE.rawValue), id, UInt32(NGHTTP2_NO_ERROR.rawValue))
                } else {
                    wakeAt = min(wakeAt ?? .max, resetAt)
                }
            }
            if stream.discarded > 0 {
                consume(id, stream, stream.discarded)
                stream.discarded = 0
            }
            guard let handler = stream.handler, stream.response == nil else { continue }
            let result = handler.service(now: now, unsentResponse: stream.body.count - stream.bodySent)
            if result.consumed > 0 { consume(id, stream, result.consumed) }
            if let part = result.streamed { submitPart(part, on: id, stream) }
            if let response = result.response {
                stream.handler = nil
                submit(response, on: id)
                // What the body still holds is nobody's now.
                if stream.unconsumed > 0 { consume(id, stream, stream.unconsumed) }
            } else if let wake = result.wakeAt {
                wakeAt = min(wakeAt ?? .max, wake)
            }
        }
        flush()
    }

    /// Produces frames and writes what the socket takes; closes when both sides are done.
    func flush() {
        guard !isClosed else { return }
        // Nothing of ours (our SETTINGS) before the client has shown it speaks HTTP/2: an HTTP/1
        // client gets a plain HTTP/1.1 answer.
        if let session, prefaceChecked >= Self.preface.count {
            while output.count - outputStart < Self.maxPendingOutput {
                var data: UnsafePointer<UInt8>?
                let n = nghttp2_session_mem_send(session, &data)
                if n < 0 {
                    close()
                    return
                }
                guard n > 0, let data else { break }
                emit(UnsafeRawBufferPointer(start: data, count: n))
            }
        }
        while outputStart < output.count {
            let n = output[outputStart...].withUnsafeBytes {
                send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
            }
            if n < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK { break }
                close()
                return
            }
            outputStart += n
        }
        if outputStart == output.count {
            output.removeAll(keepingCapacity: true)
            outputStart = 0
        } else if outputStart > 64 * 1024 {
            output.removeFirst(outputStart)
            outputStart = 0
        }
        guard outputStart == output.count else { return }
        if closeAfterOutput && refusing {
            if !lingering {
                lingering = true
                shutdown(fd, Int32(SHUT_WR))
            }
            return
        }
        if closeAfterOutput {
            close()
            return
        }
        if let session, nghttp2_session_want_read(session) == 0 && nghttp2_session_want_write(session) == 0 {
            close()
        }
    }

    /// Appends bytes for the client to the output, through TLS when the connection has it.
    private func emit(_ bytes: UnsafeRawBufferPointer) {
        if let tls { tls.send(bytes, into: &output) } else { output.append(contentsOf: bytes) }
    }

    /// Closes the socket; every request still open is cancelled (`serverStopping`: because the
    /// server stops, not the client). Idempotent.
    func close(serverStopping: Bool = false) {
        guard !isClosed else { return }
        isClosed = true
        for stream in streams.values where stream.response == nil {
            stream.handler?.cancel(serverStopping: serverStopping)
        }
        streams.removeAll()
        Glibc.close(fd)
    }

    // MARK: - Streams

    private func consume(_ id: Int32, _ stream: Stream, _ count: Int) {
        let n = min(count, stream.unconsumed)
        guard n > 0, let session else { return }
        stream.unconsumed -= n
        nghttp2_session_consume(session, id, n)
    }

    /// Ends the stream's response with `response` (whole, or the last part of a streamed one).
    private func submit(_ response: HTTP2Response, on id: Int32) {
        guard let stream = streams[id] else { return }
        stream.response = response
        submitPart(response, on: id, stream)
    }

    /// Submits the response's head with `part`'s status and content type, the first time; appends
    /// `part`'s body to what the stream sends and wakes a deferred body.
    private func submitPart(_ part: HTTP2Response, on id: Int32, _ stream: Stream) {
        guard let session else { return }
        stream.body += part.body
        guard !stream.started else {
            if stream.deferred {
                stream.deferred = false
                _ = nghttp2_session_resume_data(session, id)
            }
            return
        }
        stream.started = true
        let response = part
        let fields = [(":status", String(response.status)), ("content-type", response.contentType)]
        var storage = fields.map { (Array($0.0.utf8), Array($0.1.utf8)) }
        var provider = nghttp2_data_provider(source: nghttp2_data_source(ptr: nil), read_callback: Self.readBody)
        storage.withUnsafeMutableBufferPointer { pairs in
            var names: [UnsafeMutablePointer<UInt8>] = []
            defer { for p in names { p.deallocate() } }
            var nva: [nghttp2_nv] = []
            for (name, value) in pairs {
                let n = UnsafeMutablePointer<UInt8>.allocate(capacity: max(1, name.count))
                n.initialize(from: name, count: name.count)
                let v = UnsafeMutablePointer<UInt8>.allocate(capacity: max(1, value.count))
                v.initialize(from: value, count: value.count)
                names += [n, v]
                nva.append(
                    nghttp2_nv(
                        name: n, value: v, namelen: name.count, valuelen: value.count,
                        flags: UInt8(NGHTTP2_NV_FLAG_NONE.rawValue)))
            }
            _ = nghttp2_submit_response(session, id, nva, nva.count, &provider)
        }
    }

    // MARK: - libnghttp2 callbacks (on this thread, inside mem_recv / mem_send)

    private static func connection(_ user: UnsafeMutableRawPointer?) -> HTTP2Connection {
        Unmanaged<HTTP2Connection>.fromOpaque(user!).takeUnretainedValue()
    }

    private static let onBeginHeaders: nghttp2_on_begin_headers_callback = { _, frame, user in
        guard let frame else { return 0 }
        let c = connection(user)
        if frame.pointee.hd.type == UInt8(NGHTTP2_HEADERS.rawValue),
            frame.pointee.headers.cat == NGHTTP2_HCAT_REQUEST
        {
            c.streams[frame.pointee.hd.stream_id] = Stream()
        }
        return 0
    }

    private static let onHeader: nghttp2_on_header_callback = {
        _, frame, name, nameLength, value, valueLength, _, user in
        guard let frame, let name, let value else { return 0 }
        let c = connection(user)
        guard frame.pointee.hd.type == UInt8(NGHTTP2_HEADERS.rawValue),
            frame.pointee.headers.cat == NGHTTP2_HCAT_REQUEST,
            let stream = c.streams[frame.pointee.hd.stream_id]
        else { return 0 }
        let n = String(decoding: UnsafeBufferPointer(start: name, count: nameLength), as: UTF8.self)
        let v = String(decoding: UnsafeBufferPointer(start: value, count: valueLength), as: UTF8.self)
        switch n {
        case ":method": stream.head.method = v
        case ":path": stream.head.path = v
        case let other where other.hasPrefix(":"): break
        default: stream.head.fields.append((n, v))
        }
        return 0
    }

    private static let onFrameReceived: nghttp2_on_frame_recv_callback = { _, frame, user in
        guard let frame else { return 0 }
        let c = connection(user)
        let id = frame.pointee.hd.stream_id
        guard let stream = c.streams[id] else { return 0 }
        let endStream = frame.pointee.hd.flags & UInt8(NGHTTP2_FLAG_END_STREAM.rawValue) != 0
        if frame.pointee.hd.type == UInt8(NGHTTP2_HEADERS.rawValue),
            frame.pointee.headers.cat == NGHTTP2_HCAT_REQUEST
        {
            switch c.delegate?.open(stream.head, peer: c.peer) ?? .respond(HTTP2Response(status: 503)) {
            case .respond(let response): c.submit(response, on: id)
            case .handle(let handler): stream.handler = handler
            }
        }
        if endStream, stream.response == nil { stream.handler?.endOfBody() }
        return 0
    }

    private static let onDataChunk: nghttp2_on_data_chunk_recv_callback = { _, _, id, data, length, user in
        let c = connection(user)
        guard let stream = c.streams[id] else {
            // A stream already closed by us: give its bytes back to the connection's window.
            if let session = c.session { nghttp2_session_consume_connection(session, length) }
            return 0
        }
        stream.unconsumed += length
        if let handler = stream.handler, stream.response == nil, let data {
            handler.receive(UnsafeRawBufferPointer(start: data, count: length))
        } else {
            stream.discarded += length
        }
        return 0
    }

    private static let onStreamClose: nghttp2_on_stream_close_callback = { session, id, _, user in
        let c = connection(user)
        guard let stream = c.streams.removeValue(forKey: id) else { return 0 }
        if stream.response == nil { stream.handler?.cancel(serverStopping: false) }
        if stream.unconsumed > 0, let session { nghttp2_session_consume_connection(session, stream.unconsumed) }
        return 0
    }

    /// After a whole response, a client still sending its body is asked to stop without an error
    /// (RST_STREAM NO_ERROR, RFC 9113 §8.1), after ``resetGraceNanos``.
    private static let onFrameSent: nghttp2_on_frame_send_callback = { session, frame, user in
        guard let session, let frame else { return 0 }
        let id = frame.pointee.hd.stream_id
        let endStream = frame.pointee.hd.flags & UInt8(NGHTTP2_FLAG_END_STREAM.rawValue) != 0
        if id > 0, endStream, nghttp2_session_get_stream_remote_close(session, id) == 0,
            let stream = connection(user).streams[id]
        {
            stream.resetAt = MonotonicClock.now.nanoseconds + resetGraceNanos
        }
        return 0
    }

    /// The response body, from the stream's ``Stream/body``, in one or more DATA frames; the end of
    /// the stream once the final response's body is out, DEFERRED while a streamed response waits
    /// for its next part (``submitPart(_:on:_:)`` resumes it).
    private static let readBody: nghttp2_data_source_read_callback = { _, id, buffer, length, flags, _, user in
        let c = connection(user)
        guard let stream = c.streams[id], let buffer, let flags else {
            flags?.pointee |= UInt32(NGHTTP2_DATA_FLAG_EOF.rawValue)
            return 0
        }
        let n = min(length, stream.body.count - stream.bodySent)
        if n > 0 {
            stream.body.withUnsafeBufferPointer { buffer.update(from: $0.baseAddress! + stream.bodySent, count: n) }
            stream.bodySent += n
        }
        guard stream.bodySent == stream.body.count else { return n }
        stream.body.removeAll(keepingCapacity: true)
        stream.bodySent = 0
        if stream.response != nil {
            flags.pointee |= UInt32(NGHTTP2_DATA_FLAG_EOF.rawValue)
        } else if n == 0 {
            stream.deferred = true
            return Int(NGHTTP2_ERR_DEFERRED.rawValue)
        }
        return n
    }
}
