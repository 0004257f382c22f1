import CCurl
import RoomTapSync

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One libcurl easy handle in `CONNECT_ONLY` mode: libcurl does TCP, the proxy tunnel (HTTP
/// CONNECT) and TLS with certificate verification; the bytes on top are ours
/// (https://curl.se/libcurl/c/CURLOPT_CONNECT_ONLY.html).
///
/// Not thread-safe: one thread at a time (the connecting thread, then the loop thread).
final class CurlTransport {
    /// The result of one nonblocking send or receive.
    enum IOResult {
        /// This many bytes moved; 0 from `receive` is the peer's end of stream.
        case bytes(Int)
        case wouldBlock
        case failed(String)
    }

    private static let globalInit: CURLcode = roomtap_curl_global_init()

    /// Whether the connect should give up (the client was closed meanwhile). Checked by libcurl's
    /// progress callback while connecting and between polls of `wait`.
    final class Cancellation: @unchecked Sendable {
        let isCancelled: @Sendable () -> Bool
        init(_ isCancelled: @escaping @Sendable () -> Bool) { self.isCancelled = isCancelled }
    }

    private let handle: UnsafeMutableRawPointer
    private let errorBuffer: UnsafeMutablePointer<CChar>
    private var cancellation = Cancellation { false }
    /// The connected socket (poll it; never read or write it directly).
    private(set) var socket: Int32 = -1

    private init(handle: UnsafeMutableRawPointer) {
        self.handle = handle
        let size = Int(roomtap_curl_error_size())
        errorBuffer = .allocate(capacity: size)
        errorBuffer.initialize(repeating: 0, count: size)
    }

    deinit {
        curl_easy_cleanup(handle)
        errorBuffer.deallocate()
    }

    /// Connects to `url` (TCP, proxy, TLS), blocking until done or `configuration.connectTimeout`.
    /// `cancellation` stops a connect in progress (TCP, proxy, TLS, or the caller's waits) early.
    static func connect(
        to url: WebSocketURL, configuration: WebSocketConfiguration, cancellation: Cancellation = Cancellation { false }
    ) throws(WebSocketError) -> CurlTransport {
        _ = globalInit
        guard let handle = curl_easy_init() else { throw WebSocketError(.connect, "libcurl could not start") }
        let transport = CurlTransport(handle: handle)
        transport.cancellation = cancellation
        let timeoutMillis = max(1, configuration.connectTimeout.milliseconds)
        var ok = roomtap_curl_setopt_errorbuffer(handle, transport.errorBuffer) == CURLE_OK
        ok = ok && roomtap_curl_setopt_string(handle, CURLOPT_URL, url.curlURL) == CURLE_OK
        ok = ok && roomtap_curl_setopt_long(handle, CURLOPT_CONNECT_ONLY, 1) == CURLE_OK
        ok = ok && roomtap_curl_setopt_long(handle, CURLOPT_NOSIGNAL, 1) == CURLE_OK
        ok = ok && roomtap_curl_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, timeoutMillis) == CURLE_OK
        ok = ok && roomtap_curl_setopt_long(handle, CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_1_1)) == CURLE_OK
        ok = ok && roomtap_curl_setopt_long(handle, CURLOPT_HTTPPROXYTUNNEL, 1) == CURLE_OK
        ok =
            ok && roomtap_curl_setopt_long(handle, CURLOPT_SSL_VERIFYPEER, configuration.verifyPeer ? 1 : 0) == CURLE_OK
        ok =
            ok && roomtap_curl_setopt_long(handle, CURLOPT_SSL_VERIFYHOST, configuration.verifyPeer ? 2 : 0) == CURLE_OK
        if let caFile = configuration.caFile {
            ok = ok && roomtap_curl_setopt_string(handle, CURLOPT_CAINFO, caFile) == CURLE_OK
        }
        if let proxy = configuration.proxy {
            ok = ok && roomtap_curl_setopt_string(handle, CURLOPT_PROXY, proxy) == CURLE_OK
            if !proxy.isEmpty { ok = ok && roomtap_curl_setopt_string(handle, CURLOPT_NOPROXY, "") == CURLE_OK }
        }
        ok =
            ok
            && roomtap_curl_setopt_xferinfo(
                handle,
                { clientp, _, _, _, _ in
                    guard let clientp else { return 0 }
                    return Unmanaged<Cancellation>.fromOpaque(clientp).takeUnretainedValue().isCancelled() ? 1 : 0
                }, Unmanaged.passUnretained(cancellation).toOpaque()) == CURLE_OK
        guard ok else { throw WebSocketError(.connect, "libcurl rejected an option (is libcurl too old?)") }

        let code = curl_easy_perform(handle)
        if cancellation.isCancelled() {
            throw WebSocketError(.state, "the WebSocket client was closed while connecting")
        }
        guard code == CURLE_OK else {
            throw transport.connectError(code, url: url, configuration: configuration)
        }
        var socket: curl_socket_t = -1
        guard roomtap_curl_active_socket(handle, &socket) == CURLE_OK, socket >= 0 else {
            throw WebSocketError(.connect, "libcurl connected to \(url.display) but has no socket")
        }
        transport.socket = socket
        return transport
    }

    /// Sends from `bytes` without blocking.
    func send(_ bytes: UnsafeRawBufferPointer) -> IOResult {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return .bytes(0) }
        var sent = 0
        let code = curl_easy_send(handle, base, bytes.count, &sent)
        if code == CURLE_OK { return .bytes(sent) }
        if code == CURLE_AGAIN { return .wouldBlock }
        return .failed(describe(code))
    }

    /// Receives into `buffer` without blocking; `.bytes(0)` is the end of the stream.
    func receive(into buffer: UnsafeMutableRawBufferPointer) -> IOResult {
        guard let base = buffer.baseAddress, !buffer.isEmpty else { return .bytes(0) }
        var received = 0
        let code = curl_easy_recv(handle, base, buffer.count, &received)
        if code == CURLE_OK { return .bytes(received) }
        if code == CURLE_AGAIN { return .wouldBlock }
        return .failed(describe(code))
    }

    /// Waits until the socket is readable (or writable with `forWriting`) or `deadline` passed;
    /// false on timeout or when the connect was cancelled (checked every 50 ms).
    func wait(forWriting: Bool = false, until deadline: MonotonicClock.Instant) -> Bool {
        while true {
            let remaining = MonotonicClock.now.duration(to: deadline)
            if remaining <= .zero { return false }
            var entry = pollfd(fd: socket, events: Int16(forWriting ? POLLOUT : POLLIN), revents: 0)
            if cancellation.isCancelled() { return false }
            let n = poll(&entry, 1, Int32(clamping: max(1, min(50, remaining.milliseconds))))
            if n > 0 { return true }
            if n < 0 && errno != EINTR { return true }  // let the next send/receive report the error
        }
    }

    /// libcurl's message for `code`: the error buffer when it has one, else the generic text.
    private func describe(_ code: CURLcode) -> String {
        let detail = String(cString: errorBuffer)
        errorBuffer[0] = 0
        return detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail
    }

    private func connectError(
        _ code: CURLcode, url: WebSocketURL, configuration: WebSocketConfiguration
    ) -> WebSocketError {
        let detail = describe(code)
        let target = url.display
        switch code {
        case CURLE_URL_MALFORMAT, CURLE_UNSUPPORTED_PROTOCOL:
            return WebSocketError(.badURL, "bad WebSocket URL \(target): \(detail)")
        case CURLE_OPERATION_TIMEDOUT:
            return WebSocketError(.timeout, "connecting to \(target) timed out: \(detail)")
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_CONNECT_ERROR,
            CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH,
            CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_CRL_BADFILE, CURLE_SSL_ENGINE_INITFAILED,
            CURLE_SSL_ENGINE_NOTFOUND, CURLE_SSL_ENGINE_SETFAILED, CURLE_SSL_SHUTDOWN_FAILED,
            CURLE_USE_SSL_FAILED:
            let hint = configuration.caFile == nil ? " (a private CA? pass its PEM file as the CA file)" : ""
            return WebSocketError(.tls, "TLS with \(target) failed: \(detail)\(hint)")
        case CURLE_COULDNT_RESOLVE_PROXY, CURLE_PROXY:
            return WebSocketError(.proxy, "the proxy for \(target) failed: \(detail)")
        case CURLE_COULDNT_RESOLVE_HOST:
            return WebSocketError(.connect, "cannot find host of \(target): \(detail)")
        default:
            if detail.contains("CONNECT") || detail.lowercased().contains("proxy") {
                return WebSocketError(.proxy, "the proxy for \(target) failed: \(detail)")
            }
            return WebSocketError(
                .connect, "cannot connect to \(target): \(detail)\(proxyNote(url: url, configuration: configuration))")
        }
    }

    /// " (through the proxy ...)" when one may be in use, naming no credentials, so a refused
    /// proxy is not mistaken for a refused server.
    private func proxyNote(url: WebSocketURL, configuration: WebSocketConfiguration) -> String {
        if let proxy = configuration.proxy {
            guard !proxy.isEmpty else { return "; is the server running?" }
            let host = proxy.split(separator: "@").last.map(String.init) ?? proxy
            return " (through the proxy \(host))"
        }
        let names =
            url.secure
            ? ["https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"] : ["http_proxy", "all_proxy", "ALL_PROXY"]
        if let name = names.first(where: { getenv($0).map { $0.pointee != 0 } ?? false }) {
            return " (\(name) is set: the proxy may be the problem)"
        }
        return "; is the server running?"
    }
}

extension Duration {
    /// Whole milliseconds, rounded up (a timeout never becomes shorter).
    var milliseconds: Int {
        let (seconds, attoseconds) = components
        let millis = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int(clamping: millis)
    }
}
