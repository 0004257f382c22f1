/// The opening handshake of RFC 6455 section 4 (https://www.rfc-editor.org/rfc/rfc6455#section-4):
/// the client's upgrade request and the checks on the server's response. Pure functions; any thread.
package enum WebSocketHandshake {
    /// The GUID every accept value is derived with (RFC 6455 section 1.3).
    static let guid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    /// The `Sec-WebSocket-Accept` value a server answers `key` with: base64(SHA-1(key + GUID)).
    public static func acceptValue(forKey key: String) -> String {
        Base64.encode(SHA1.digest(Array((key + guid).utf8)))
    }

    /// A fresh `Sec-WebSocket-Key`: 16 random bytes, base64.
    static func makeKey() -> String {
        var bytes = [UInt8](repeating: 0, count: 16)
        SecureRandom.fill(&bytes)
        return Base64.encode(bytes)
    }

    /// The HTTP/1.1 upgrade request for `url`, with `headers` after the handshake's own.
    static func request(url: WebSocketURL, key: String, headers: [WebSocketHeader]) -> [UInt8] {
        var text = "GET \(url.target) HTTP/1.1\r\n"
        text += "Host: \(url.hostHeader)\r\n"
        text += "Upgrade: websocket\r\n"
        text += "Connection: Upgrade\r\n"
        text += "Sec-WebSocket-Key: \(key)\r\n"
        text += "Sec-WebSocket-Version: 13\r\n"
        for header in headers { text += "\(header.name): \(header.value)\r\n" }
        text += "\r\n"
        return Array(text.utf8)
    }

    /// A parsed HTTP response head.
    struct Response {
        var status: Int
        /// The reason phrase of the status line ("Forbidden").
        var reason: String
        var headers: [(name: String, value: String)]

        /// The value of the first header named `name` (case-insensitive), trimmed.
        func value(_ name: String) -> String? {
            headers.first { $0.name.lowercased() == name.lowercased() }?.value
        }
    }

    /// Parses a response head (the bytes before the blank line, without it); nil if malformed.
    static func parseResponse(_ head: ArraySlice<UInt8>) -> Response? {
        let text = String(decoding: head, as: UTF8.self)
        var lines = text.split(separator: "\r\n", omittingEmptySubsequences: false).map(String.init)
        guard !lines.isEmpty else { return nil }
        let statusLine = lines.removeFirst()
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let status = Int(parts[1]) else { return nil }
        var headers: [(name: String, value: String)] = []
        for line in lines where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else { return nil }
            let name = line[..<colon].trimmingSpaces()
            let value = line[line.index(after: colon)...].trimmingSpaces()
            headers.append((name, value))
        }
        return Response(status: status, reason: parts.count > 2 ? String(parts[2]) : "", headers: headers)
    }

    /// Checks a 101 response against RFC 6455 section 4.1 (client requirements 2-4); the failure
    /// as a one-line reason, or nil when it is valid.
    static func problem(with response: Response, key: String) -> String? {
        guard response.value("Upgrade")?.lowercased() == "websocket" else {
            return "the server's 101 response lacks 'Upgrade: websocket'"
        }
        let connection = response.value("Connection")?.lowercased() ?? ""
        guard connection.split(separator: ",").contains(where: { $0.trimmingSpaces() == "upgrade" }) else {
            return "the server's 101 response lacks 'Connection: Upgrade'"
        }
        guard let accept = response.value("Sec-WebSocket-Accept") else {
            return "the server's 101 response lacks Sec-WebSocket-Accept"
        }
        guard accept == acceptValue(forKey: key) else {
            return "the server's Sec-WebSocket-Accept does not match the key (not a WebSocket server?)"
        }
        if let extensions = response.value("Sec-WebSocket-Extensions"), !extensions.isEmpty {
            return "the server chose extensions the client did not offer"
        }
        return nil
    }
}

extension StringProtocol {
    /// The string without leading and trailing spaces and tabs.
    func trimmingSpaces() -> String {
        var slice = Substring(self)
        while let first = slice.first, first == " " || first == "\t" { slice.removeFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice.removeLast() }
        return String(slice)
    }
}
