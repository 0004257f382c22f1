/// Where a receiver listens: `HOST:PORT`, `[IPV6]:PORT` or `:PORT` (all IPv4 interfaces).
///
/// Thread: a value; parsing is pure.
public struct ListenAddress: Hashable, Sendable, CustomStringConvertible {
    /// A numeric IPv4 or IPv6 address (no host names: a recorder binds what it is told).
    public let host: String
    /// UDP port, 1–65535; 0 asks the kernel for a free port (`UDPSocket.address` holds the one it chose).
    public let port: UInt16
    /// True for an IPv6 host.
    public var isIPv6: Bool { host.contains(":") }

    /// Wraps a numeric host and a port.
    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    /// Parses `127.0.0.1:25000`, `[::1]:25000`, `0.0.0.0:25000`, `:25000` or `127.0.0.1:0` (any free
    /// port). Nil when malformed.
    public init?(_ text: String) {
        let hostPart: Substring
        let portPart: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else {
                return nil
            }
            hostPart = text[text.index(after: text.startIndex)..<close]
            portPart = text[text.index(close, offsetBy: 2)...]
        } else {
            guard let colon = text.lastIndex(of: ":"), !text[..<colon].contains(":") else { return nil }
            hostPart = text[..<colon]
            portPart = text[text.index(after: colon)...]
        }
        guard portPart.allSatisfy(\.isASCII), portPart.allSatisfy(\.isNumber), let port = UInt16(portPart) else {
            return nil
        }
        let host = hostPart.isEmpty ? "0.0.0.0" : String(hostPart)
        guard Self.isNumericAddress(host) else { return nil }
        self.init(host: host, port: port)
    }

    public var description: String { isIPv6 ? "[\(host)]:\(port)" : "\(host):\(port)" }

    private static func isNumericAddress(_ host: String) -> Bool {
        if host.contains(":") { return host.allSatisfy { $0.isHexDigit || $0 == ":" || $0 == "." } }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { UInt8($0) != nil }
    }
}
