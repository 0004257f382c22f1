import RoomTapWebSocket

/// The agent's one use of the WebSocket client: a connection to a Realtime endpoint with the key
/// in its header (`Authorization: Bearer`, or Azure's `api-key`), text events in, text events out.
///
/// Thread: `connect`, `send` and `close` from any thread; the callbacks on the client's thread.
package final class RealtimeConnection: Sendable {
    /// Why a connection could not be made.
    package enum ConnectError: Error, Equatable, Sendable {
        /// The server refused the credentials (HTTP 401/403 on the upgrade): do not retry.
        case unauthorized(status: Int)
        /// Another HTTP 4xx but 408 and 429 (a wrong path or model, a bad request): retrying the
        /// same request will not help; worth one more try in case it was a passing fault.
        case rejected(status: Int, message: String)
        /// Anything else (DNS, TCP, TLS, 408, 429, a 5xx): retry with backoff. The message never
        /// holds the key.
        case failed(String)
    }

    private let client: WebSocketClient

    init(
        url: String, apiKey: String, authentication: RealtimeAuthentication,
        onText: @escaping @Sendable (String) -> Void,
        onClose: @escaping @Sendable (_ code: Int, _ reason: String) -> Void
    ) {
        let header = authentication.header(key: apiKey)
        let configuration = WebSocketConfiguration(
            url: url, headers: [WebSocketHeader(name: header.name, value: header.value)])
        client = WebSocketClient(configuration: configuration) { event in
            switch event {
            case .text(let text): onText(text)
            case .binary: break
            case .closed(let code, let reason): onClose(Int(code), reason)
            }
        }
    }

    /// Opens the connection (blocks until the upgrade is done or failed).
    func connect(redacting apiKey: String) throws(ConnectError) {
        do { try client.connect() } catch {
            let message = error.message.replacingOccurrences(of: apiKey, with: "<redacted>")
            if case .httpStatus(let status) = error.kind {
                if status == 401 || status == 403 { throw .unauthorized(status: status) }
                if (400..<500).contains(status) && status != 408 && status != 429 {
                    throw .rejected(status: status, message: message)
                }
            }
            throw .failed(message)
        }
    }

    /// Queues one text message; false when the connection is closed.
    func send(_ text: String) -> Bool { client.send(text: text) }

    /// Starts the close handshake with `code`. Idempotent.
    func close(code: UInt16 = 1000) { client.close(code: code, reason: "") }
}
