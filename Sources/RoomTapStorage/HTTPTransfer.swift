import CCurl
import Foundation

/// One HTTP request through a libcurl easy handle, on the calling thread (blocking). The body is
/// bytes in memory or a byte range of a file (read with pread as libcurl asks: bounded memory);
/// the answer's body goes to memory (at most 4 MiB kept) or, for a 2xx answer, to a file
/// descriptor. With `signing`, libcurl signs it with AWS Signature V4 (`CURLOPT_AWS_SIGV4`).
package struct HTTPTransfer {
    package enum Body {
        case none
        case bytes([UInt8])
        case file(fd: Int32, offset: Int64, length: Int64)
    }

    package struct Signing {
        let region: String
        let credentials: S3Credentials
    }

    package struct Response {
        package let status: Int
        /// Header names in lower case; the last value of a repeated header (every `Link`, comma-joined).
        package let headers: [String: String]
        package let body: [UInt8]

        package init(status: Int, headers: [String: String], body: [UInt8]) {
            self.status = status
            self.headers = headers
            self.body = body
        }
    }

    /// A failure below HTTP (no answer): libcurl's code and message.
    package struct TransportError: Error {
        package let code: Int32
        package let message: String
        /// Worth another try: connect, DNS, timeout, a connection lost.
        var isRetryable: Bool {
            [
                CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_CONNECT, CURLE_OPERATION_TIMEDOUT, CURLE_SEND_ERROR,
                CURLE_RECV_ERROR, CURLE_GOT_NOTHING, CURLE_PARTIAL_FILE, CURLE_SSL_CONNECT_ERROR,
            ].map { Int32($0.rawValue) }.contains(code)
        }
    }

    package var method: String
    package var url: String
    package var headers: [(String, String)] = []
    package var body: Body = .none
    /// A 2xx answer's body is written here instead of memory.
    package var output: Int32?
    package var signing: Signing?
    /// Whole-transfer limit in seconds (0: none); connects time out after 10 s.
    package var timeoutSeconds = 0
    /// A transfer slower than ``lowSpeedBytes`` per second for this long is abandoned (a stalled
    /// store, a stream that went quiet).
    package var lowSpeedSeconds = 60
    package var lowSpeedBytes = 1024
    /// Streaming: a 2xx answer's body is handed here chunk by chunk as it arrives (instead of memory
    /// or ``output``), on the calling thread inside ``perform()``; returning false aborts the
    /// transfer, and ``perform()`` throws a ``TransportError`` with code ``cancelledCode``.
    package var onBody: ((UnsafeRawBufferPointer) -> Bool)?
    /// The ``TransportError/code`` of a transfer ``onBody`` aborted.
    package static let cancelledCode: Int32 = -3

    /// A request: `method` on `url` with `headers` and `body`, at most `timeoutSeconds` (0: none).
    package init(
        method: String, url: String, headers: [(String, String)] = [], body: Body = .none, timeoutSeconds: Int = 0
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeoutSeconds = timeoutSeconds
    }

    private static let globalInit: CURLcode = roomtap_curl_global_init()

    /// Runs the request. Throws ``TransportError`` when no HTTP answer came.
    package func perform() throws(TransportError) -> Response {
        _ = Self.globalInit
        guard let curl = curl_easy_init() else { throw TransportError(code: -1, message: "curl_easy_init failed") }
        defer { curl_easy_cleanup(curl) }
        let state = TransferState(body: body, output: output)
        state.onBody = onBody
        let box = Unmanaged.passRetained(state)
        defer { box.release() }
        var list: UnsafeMutablePointer<curl_slist>?
        defer { curl_slist_free_all(list) }
        var allHeaders = headers
        // No 100-continue round trip for unsigned requests (webhooks). Not for signed ones: libcurl
        // 7.88 signs an emptied header as if it were sent (403 SignatureDoesNotMatch).
        if signing == nil { allHeaders.append(("Expect", "")) }
        for (name, value) in allHeaders {
            list = curl_slist_append(list, value.isEmpty ? "\(name):" : "\(name): \(value)")
        }
        var errorBuffer = [CChar](repeating: 0, count: Int(roomtap_curl_error_size()))
        let code: CURLcode = errorBuffer.withUnsafeMutableBufferPointer { errors in
            roomtap_curl_setopt_errorbuffer(curl, errors.baseAddress)
            roomtap_curl_setopt_string(curl, CURLOPT_URL, url)
            roomtap_curl_setopt_string(curl, CURLOPT_CUSTOMREQUEST, method)
            roomtap_curl_setopt_long(curl, CURLOPT_NOSIGNAL, 1)
            roomtap_curl_setopt_long(curl, CURLOPT_CONNECTTIMEOUT, 10)
            roomtap_curl_setopt_long(curl, CURLOPT_TIMEOUT, timeoutSeconds)
            roomtap_curl_setopt_long(curl, CURLOPT_LOW_SPEED_LIMIT, lowSpeedBytes)
            roomtap_curl_setopt_long(curl, CURLOPT_LOW_SPEED_TIME, lowSpeedSeconds)
            roomtap_curl_setopt_long(curl, CURLOPT_HTTP_VERSION, 2)  // CURL_HTTP_VERSION_1_1
            roomtap_curl_setopt_string(curl, CURLOPT_PROTOCOLS_STR, "http,https")
            roomtap_curl_setopt_headers(curl, list)
            if let signing {
                roomtap_curl_setopt_string(curl, CURLOPT_AWS_SIGV4, "aws:amz:\(signing.region):s3")
                roomtap_curl_setopt_string(curl, CURLOPT_USERNAME, signing.credentials.accessKeyID)
                roomtap_curl_setopt_string(curl, CURLOPT_PASSWORD, signing.credentials.secretAccessKey)
            }
            let opaque = box.toOpaque()
            roomtap_curl_setopt_data_callback(curl, CURLOPT_HEADERFUNCTION, headerCallback)
            roomtap_curl_setopt_pointer(curl, CURLOPT_HEADERDATA, opaque)
            roomtap_curl_setopt_data_callback(curl, CURLOPT_WRITEFUNCTION, writeCallback)
            roomtap_curl_setopt_pointer(curl, CURLOPT_WRITEDATA, opaque)
            switch body {
            case .none:
                if method == "HEAD" { roomtap_curl_setopt_long(curl, CURLOPT_NOBODY, 1) }
            case .bytes(let bytes):
                roomtap_curl_setopt_long(curl, CURLOPT_UPLOAD, 1)
                roomtap_curl_setopt_off(curl, CURLOPT_INFILESIZE_LARGE, curl_off_t(bytes.count))
                roomtap_curl_setopt_data_callback(curl, CURLOPT_READFUNCTION, readCallback)
                roomtap_curl_setopt_pointer(curl, CURLOPT_READDATA, opaque)
            case .file(_, _, let length):
                roomtap_curl_setopt_long(curl, CURLOPT_UPLOAD, 1)
                roomtap_curl_setopt_off(curl, CURLOPT_INFILESIZE_LARGE, curl_off_t(length))
                roomtap_curl_setopt_data_callback(curl, CURLOPT_READFUNCTION, readCallback)
                roomtap_curl_setopt_pointer(curl, CURLOPT_READDATA, opaque)
            }
            // CUSTOMREQUEST keeps the method for an upload (PUT by default) and for POST.
            return curl_easy_perform(curl)
        }
        if state.cancelled { throw TransportError(code: Self.cancelledCode, message: "cancelled") }
        if let failure = state.localFailure {
            throw TransportError(code: -2, message: failure)
        }
        guard code == CURLE_OK else {
            let detail = errorBuffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            let message = detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail
            throw TransportError(code: Int32(code.rawValue), message: message)
        }
        var status = 0
        roomtap_curl_getinfo_long(curl, CURLINFO_RESPONSE_CODE, &status)
        return Response(status: status, headers: state.headers, body: state.received)
    }
}

/// What the callbacks of one transfer share (libcurl calls them on the transfer's thread).
private final class TransferState {
    let body: HTTPTransfer.Body
    let output: Int32?
    var sent: Int64 = 0
    var status = 0
    var headers: [String: String] = [:]
    var received: [UInt8] = []
    var localFailure: String?
    var onBody: ((UnsafeRawBufferPointer) -> Bool)?
    var cancelled = false

    init(body: HTTPTransfer.Body, output: Int32?) {
        self.body = body
        self.output = output
    }

    static let maxKept = 4 << 20
}

private let headerCallback: roomtap_curl_data_callback = { buffer, size, count, userdata in
    let n = size * count
    guard let buffer, let userdata else { return n }
    let state = Unmanaged<TransferState>.fromOpaque(userdata).takeUnretainedValue()
    let line = String(decoding: UnsafeRawBufferPointer(start: buffer, count: n), as: UTF8.self)
        .trimmingCharacters(in: .whitespacesAndNewlines)
    if line.hasPrefix("HTTP/") {
        let parts = line.split(separator: " ")
        state.status = parts.count > 1 ? Int(parts[1]) ?? 0 : 0
        state.headers = [:]
    } else if let colon = line.firstIndex(of: ":") {
        let name = line[..<colon].lowercased()
        let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        // A repeated Link is a list (RFC 8288 §3; WHEP's ICE servers): kept whole, comma-joined.
        if name == "link", let earlier = state.headers[name] {
            state.headers[name] = earlier + ", " + value
        } else {
            state.headers[name] = value
        }
    }
    return n
}

private let writeCallback: roomtap_curl_data_callback = { buffer, size, count, userdata in
    let n = size * count
    guard let buffer, let userdata else { return n }
    let state = Unmanaged<TransferState>.fromOpaque(userdata).takeUnretainedValue()
    if let onBody = state.onBody, (200..<300).contains(state.status) {
        guard onBody(UnsafeRawBufferPointer(start: buffer, count: n)) else {
            state.cancelled = true
            return 0
        }
        return n
    }
    if let fd = state.output, (200..<300).contains(state.status) {
        var done = 0
        while done < n {
            let w = write(fd, buffer + done, n - done)
            if w < 0 && errno == EINTR { continue }
            guard w > 0 else {
                state.localFailure = "cannot write the download: \(String(cString: strerror(errno)))"
                return 0
            }
            done += w
        }
        return n
    }
    if state.received.count < TransferState.maxKept {
        state.received.append(
            contentsOf: UnsafeRawBufferPointer(
                start: buffer, count: min(n, TransferState.maxKept - state.received.count)))
    }
    return n
}

private let readCallback: roomtap_curl_data_callback = { buffer, size, count, userdata in
    let room = size * count
    guard let buffer, let userdata else { return 0 }
    let state = Unmanaged<TransferState>.fromOpaque(userdata).takeUnretainedValue()
    switch state.body {
    case .none:
        return 0
    case .bytes(let bytes):
        let n = min(room, bytes.count - Int(state.sent))
        guard n > 0 else { return 0 }
        bytes.withUnsafeBytes { raw in
            UnsafeMutableRawPointer(buffer).copyMemory(from: raw.baseAddress! + Int(state.sent), byteCount: n)
        }
        state.sent += Int64(n)
        return n
    case .file(let fd, let offset, let length):
        let want = Int(min(Int64(room), length - state.sent))
        guard want > 0 else { return 0 }
        while true {
            let n = pread(fd, buffer, want, off_t(offset + state.sent))
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                state.localFailure =
                    "cannot read the file being uploaded: "
                    + (n < 0 ? String(cString: strerror(errno)) : "it got shorter")
                return roomtap_curl_readfunc_abort()
            }
            state.sent += Int64(n)
            return n
        }
    }
}
