import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// One STUN or TURN server for libnice, read from an RTCIceServer URL: `stun:HOST[:PORT]`
/// (RFC 7064, https://www.rfc-editor.org/rfc/rfc7064), `turn:` / `turns:HOST[:PORT][?transport=udp|tcp]`
/// (RFC 7065, https://www.rfc-editor.org/rfc/rfc7065). A STUN server gives server-reflexive
/// candidates; a TURN server (with its `username` and `credential`, RFC 8656 long-term credentials)
/// gives relay candidates (libnice's `nice_agent_set_relay_info`).
///
/// The URLs come from the server (Sora's `offer.config.iceServers`, a WHEP `Link` header): hostile
/// input. ``init(url:username:credential:)`` takes only what libnice can use and is bounded; it
/// returns nil for anything else (`stuns:`, DTLS-over-UDP `turns:`, other queries, a bad host or port,
/// a TURN URL without credentials, text longer than ``maxLength``).
///
/// The credential is never in ``description`` (what logs and room.json show).
///
/// Thread: a value type, use anywhere; ``resolved()`` blocks on DNS (a control thread).
package struct ICEServer: Sendable, Equatable, CustomStringConvertible {
    /// How libnice reaches the server.
    package enum Kind: Sendable, Equatable {
        case stun
        /// TURN over UDP, TCP, or TLS over TCP (`turns:`).
        case turnUDP, turnTCP, turnTLS
    }

    package var kind: Kind
    /// A DNS name or an IP address (IPv6 without brackets); numeric after ``resolved()``.
    package var host: String
    package var port: UInt16
    /// TURN's long-term credentials (empty for STUN).
    package var username = ""
    package var credential = ""

    /// Most bytes of a URL, a username or a credential taken.
    package static let maxLength = 512

    /// The server as a URL without credentials, e.g. `turn:127.0.0.1:3478?transport=udp`.
    package var description: String {
        let address = host.contains(":") ? "[\(host)]" : host
        switch kind {
        case .stun: return "stun:\(address):\(port)"
        case .turnUDP: return "turn:\(address):\(port)?transport=udp"
        case .turnTCP: return "turn:\(address):\(port)?transport=tcp"
        case .turnTLS: return "turns:\(address):\(port)?transport=tcp"
        }
    }

    package var isTURN: Bool { kind != .stun }

    package init(kind: Kind, host: String, port: UInt16, username: String = "", credential: String = "") {
        self.kind = kind
        self.host = host
        self.port = port
        self.username = username
        self.credential = credential
    }

    /// The server of one URL, or nil when libnice cannot use it (see the type's comment).
    package init?(url: String, username: String? = nil, credential: String? = nil) {
        guard url.utf8.count <= Self.maxLength, (username?.utf8.count ?? 0) <= Self.maxLength,
            (credential?.utf8.count ?? 0) <= Self.maxLength, let colon = url.firstIndex(of: ":")
        else { return nil }
        let scheme = url[..<colon].lowercased()
        var rest = url[url.index(after: colon)...]
        var transport: Substring?
        if let question = rest.firstIndex(of: "?") {
            let query = rest[rest.index(after: question)...]
            guard query.lowercased().hasPrefix("transport="), scheme != "stun" else { return nil }
            transport = query.dropFirst("transport=".count)
            rest = rest[..<question]
        }
        switch (scheme, transport?.lowercased()) {
        case ("stun", nil): kind = .stun
        case ("turn", nil), ("turn", "udp"): kind = .turnUDP
        case ("turn", "tcp"): kind = .turnTCP
        case ("turns", nil), ("turns", "tcp"): kind = .turnTLS
        default: return nil
        }
        guard let (host, port) = Self.hostPort(rest, defaultPort: kind == .turnTLS ? 5349 : 3478) else { return nil }
        self.host = host
        self.port = port
        if kind != .stun {
            guard let username, let credential, !username.isEmpty,
                !(username + credential).unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
            else { return nil }
            self.username = username
            self.credential = credential
        }
    }

    /// Every usable server of RTCIceServer entries (`urls` with one `username`/`credential` each),
    /// in order, without repeats; `skipped`: the URLs not taken (for a warning; never credentials).
    package static func servers(
        _ entries: [(urls: [String], username: String?, credential: String?)]
    ) -> (servers: [ICEServer], skipped: [String]) {
        var servers: [ICEServer] = []
        var skipped: [String] = []
        for entry in entries {
            for url in entry.urls {
                if let server = ICEServer(url: url, username: entry.username, credential: entry.credential) {
                    if !servers.contains(server) { servers.append(server) }
                } else {
                    skipped.append(String(url.prefix(80)).filter { !$0.isNewline })
                }
            }
        }
        return (servers, skipped)
    }

    /// This server with a numeric host (libnice takes addresses, not names: its `stun-server`
    /// property and `nice_agent_set_relay_info` both say IP address); nil when the name does not
    /// resolve. IPv4 first. Blocks on DNS.
    package func resolved() -> ICEServer? {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_DGRAM.rawValue)
        hints.ai_family = AF_UNSPEC
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &list) == 0, let list else { return nil }
        defer { freeaddrinfo(list) }
        var found: [(family: Int32, text: String)] = []
        var node: UnsafeMutablePointer<addrinfo>? = list
        while let current = node {
            var buffer = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            if getnameinfo(
                current.pointee.ai_addr, current.pointee.ai_addrlen, &buffer, socklen_t(buffer.count), nil, 0,
                NI_NUMERICHOST) == 0
            {
                found.append((current.pointee.ai_family, String(cString: buffer)))
            }
            node = current.pointee.ai_next
        }
        guard let address = found.first(where: { $0.family == AF_INET }) ?? found.first else { return nil }
        var copy = self
        copy.host = address.text
        return copy
    }

    /// `HOST[:PORT]` with an IPv6 host in brackets; the host is a DNS name or an address of the
    /// characters those use.
    private static func hostPort(_ text: Substring, defaultPort: UInt16) -> (String, UInt16)? {
        var host: Substring
        var portText: Substring?
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            host = text[text.index(after: text.startIndex)..<close]
            let after = text[text.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { return nil }
                portText = after.dropFirst()
            }
            guard host.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else { return nil }
        } else {
            if let colon = text.lastIndex(of: ":") {
                host = text[..<colon]
                portText = text[text.index(after: colon)...]
            } else {
                host = text
            }
            guard host.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-") }) else {
                return nil
            }
        }
        guard !host.isEmpty, host.utf8.count <= 253 else { return nil }
        var port = defaultPort
        if let portText {
            guard portText.count <= 5, portText.allSatisfy({ $0.isASCII && $0.isNumber }), let value = UInt16(portText),
                value > 0
            else {
                return nil
            }
            port = value
        }
        return (String(host), port)
    }
}
