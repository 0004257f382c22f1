/// Where a Redis server is: `redis://[:PASSWORD@]HOST[:PORT][/DB]` (port 6379, db 0 by default) or
/// `unix:///PATH[?db=N]`. The password is never part of ``description``.
///
/// Thread: a value; parsing is pure.
public struct RedisURL: Sendable, Equatable, CustomStringConvertible {
    public enum Endpoint: Sendable, Equatable {
        case tcp(host: String, port: UInt16)
        case unix(path: String)
    }

    public let endpoint: Endpoint
    public let database: Int
    /// AUTH's password, when the URL has one.
    public let password: String?

    /// Parses `text`; throws a ``RedisError`` whose message says what a URL looks like.
    public init(_ text: String) throws(RedisError) {
        let usage = "'\(Self.redacted(text))' is not a Redis URL: use redis://HOST:PORT[/DB] or unix:///PATH[?db=N]"
        guard text.utf8.count <= 1024,
            !text.contains(where: { $0.isWhitespace || $0.asciiValue.map { $0 < 32 } == true })
        else { throw RedisError(usage) }
        if text.hasPrefix("unix://") {
            var rest = Substring(text.dropFirst("unix://".count))
            var database = 0
            if let question = rest.firstIndex(of: "?") {
                let query = rest[rest.index(after: question)...]
                guard query.hasPrefix("db="), let n = Int(query.dropFirst(3)), (0...15).contains(n) else {
                    throw RedisError(usage)
                }
                database = n
                rest = rest[..<question]
            }
            guard rest.hasPrefix("/"), rest.count > 1 else { throw RedisError(usage) }
            self.init(endpoint: .unix(path: String(rest)), database: database, password: nil)
            return
        }
        guard text.hasPrefix("redis://") else { throw RedisError(usage) }
        var rest = Substring(text.dropFirst("redis://".count))
        var password: String?
        if let at = rest.lastIndex(of: "@") {
            let credentials = rest[..<at]
            rest = rest[rest.index(after: at)...]
            guard let colon = credentials.firstIndex(of: ":") else { throw RedisError(usage) }
            password = String(credentials[credentials.index(after: colon)...])
        }
        var database = 0
        if let slash = rest.firstIndex(of: "/") {
            let db = rest[rest.index(after: slash)...]
            if !db.isEmpty {
                guard db.allSatisfy(\.isASCII), let n = Int(db), (0...15).contains(n) else { throw RedisError(usage) }
                database = n
            }
            rest = rest[..<slash]
        }
        var host = rest
        var port: UInt16 = 6379
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { throw RedisError(usage) }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":"), let p = Self.port(after.dropFirst()) else { throw RedisError(usage) }
                port = p
            }
        } else if let colon = rest.lastIndex(of: ":") {
            host = rest[..<colon]
            guard let p = Self.port(rest[rest.index(after: colon)...]) else { throw RedisError(usage) }
            port = p
        }
        guard !host.isEmpty, host.allSatisfy({ $0.isLetter || $0.isNumber || "-.:_".contains($0) }) else {
            throw RedisError(usage)
        }
        self.init(endpoint: .tcp(host: String(host), port: port), database: database, password: password)
    }

    public init(endpoint: Endpoint, database: Int = 0, password: String? = nil) {
        self.endpoint = endpoint
        self.database = database
        self.password = password
    }

    /// The URL without its password.
    public var description: String {
        switch endpoint {
        case .tcp(let host, let port):
            let h = host.contains(":") ? "[\(host)]" : host
            return "redis://\(h):\(port)" + (database == 0 ? "" : "/\(database)")
        case .unix(let path): return "unix://\(path)" + (database == 0 ? "" : "?db=\(database)")
        }
    }

    private static func port(_ text: Substring) -> UInt16? {
        guard !text.isEmpty, text.allSatisfy({ $0.isASCII && $0.isNumber }), let p = UInt16(text), p > 0 else {
            return nil
        }
        return p
    }

    /// `text` with anything between `//` and `@` hidden (for messages).
    static func redacted(_ text: String) -> String {
        guard let scheme = text.range(of: "://"), let at = text[scheme.upperBound...].lastIndex(of: "@") else {
            return text
        }
        return String(text[..<scheme.upperBound]) + "***" + String(text[at...])
    }
}
