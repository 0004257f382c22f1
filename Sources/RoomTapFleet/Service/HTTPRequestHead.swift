/// The head of an HTTP/1.x request (RFC 9112 §2-§5): the request line and the header fields.
///
/// ```
///  request-line   = method SP request-target SP HTTP-version CRLF     (method: A-Z only here)
///  *( field-line CRLF )                                               field-line = name ":" OWS value OWS
///  CRLF                                                               (the head ends at the first blank line)
/// ```
///
/// Strict by design, because its input comes from anyone who can reach the port: lines end with
/// CRLF (a bare LF is refused), no obsolete line folding, a field name is a token, a value holds
/// no control character but HTAB, at most ``maxFields`` fields and ``maxBytes`` bytes in all;
/// `Transfer-Encoding` is refused (a body is sized by `Content-Length` only, one value, digits,
/// repeated only with the same value), so no request can be read two ways (request smuggling).
/// Anything else malformed is nil (the server answers 400).
///
/// Thread: a value; parsing is pure.
public struct HTTPRequestHead: Sendable, Equatable {
    public let method: String
    /// The request target's path (before `?`), as sent (not percent-decoded).
    public let path: String
    /// The query (after `?`), as sent; empty without one.
    public let query: String
    /// The header fields by lower-cased name; a repeated field's values joined with `, `
    /// (RFC 9110 §5.3).
    public let fields: [String: String]
    /// The body's length in bytes (`Content-Length`; 0 without it).
    public let contentLength: Int

    /// The longest head accepted, bytes.
    public static let maxBytes = 8192
    /// The most header fields accepted.
    public static let maxFields = 64

    /// Parses the bytes up to the blank line ending the head (bytes after it, a body, are ignored);
    /// nil for anything malformed (then 400).
    public init?(_ bytes: [UInt8]) {
        guard let length = Self.headLength(bytes), length <= Self.maxBytes else { return nil }
        // The head without its final CRLF CRLF, split at CRLF; a bare CR or LF elsewhere is refused.
        let head = bytes[0..<(length - 4)]
        var lines: [ArraySlice<UInt8>] = []
        var start = head.startIndex
        var i = head.startIndex
        while i < head.endIndex {
            let byte = head[i]
            if byte == 13 {
                guard i + 1 < head.endIndex, head[i + 1] == 10 else { return nil }
                lines.append(head[start..<i])
                i += 2
                start = i
                continue
            }
            if byte == 10 { return nil }
            i += 1
        }
        lines.append(head[start..<head.endIndex])
        guard lines.count - 1 <= Self.maxFields else { return nil }

        let parts = lines[0].split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, parts[0].allSatisfy({ $0 >= 0x41 && $0 <= 0x5A }),
            parts[1].first == UInt8(ascii: "/"), parts[1].allSatisfy({ $0 > 0x20 && $0 < 0x7F }),
            parts[2].elementsEqual("HTTP/1.1".utf8) || parts[2].elementsEqual("HTTP/1.0".utf8)
        else { return nil }
        method = String(decoding: parts[0], as: UTF8.self)
        let target = parts[1].split(separator: UInt8(ascii: "?"), maxSplits: 1, omittingEmptySubsequences: false)
        path = String(decoding: target[0], as: UTF8.self)
        query = target.count > 1 ? String(decoding: target[1], as: UTF8.self) : ""

        var fields: [String: String] = [:]
        var contentLength: Int?
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > line.startIndex,
                line[line.startIndex..<colon].allSatisfy(Self.isTokenByte)
            else { return nil }
            var value = line[(colon + 1)...]
            while let first = value.first, first == 0x20 || first == 0x09 { value = value.dropFirst() }
            while let last = value.last, last == 0x20 || last == 0x09 { value = value.dropLast() }
            guard value.allSatisfy({ $0 == 0x09 || $0 >= 0x20 && $0 != 0x7F }) else { return nil }
            let name = String(decoding: line[line.startIndex..<colon], as: UTF8.self).lowercased()
            let text = String(decoding: value, as: UTF8.self)
            switch name {
            case "transfer-encoding": return nil
            case "content-length":
                guard !value.isEmpty, value.count <= 9, value.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                    let length = Int(text), contentLength == nil || contentLength == length
                else { return nil }
                contentLength = length
                fields[name] = text
            default:
                fields[name] = fields[name].map { $0 + ", " + text } ?? text
            }
        }
        self.fields = fields
        self.contentLength = contentLength ?? 0
    }

    /// The value of header field `name` (any case); nil when absent.
    public func field(_ name: String) -> String? { fields[name.lowercased()] }

    /// The value of query parameter `name`, percent-decoded (`+` is a space); the first one when
    /// repeated; nil when absent or not valid UTF-8 after decoding.
    public func queryValue(_ name: String) -> String? {
        for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard Self.percentDecoded(parts[0]) == name else { continue }
            return parts.count > 1 ? Self.percentDecoded(parts[1]) : ""
        }
        return nil
    }

    /// The value of cookie `name` in the `Cookie` field (RFC 6265 §5.4: `a=b; c=d`); nil when absent.
    public func cookie(_ name: String) -> String? {
        guard let header = field("cookie") else { return nil }
        for pair in header.split(separator: ";") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, parts[0].trimmingSpaces == name else { continue }
            return String(parts[1].trimmingSpaces)
        }
        return nil
    }

    /// Bytes of `bytes` up to and including the blank line that ends a head; nil while there is
    /// none yet.
    public static func headLength(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for i in 3..<bytes.count
        where bytes[i] == 10 && bytes[i - 1] == 13 && bytes[i - 2] == 10 && bytes[i - 3] == 13 {
            return i + 1
        }
        return nil
    }

    /// True once `bytes` hold a whole head (a blank line).
    public static func isComplete(_ bytes: [UInt8]) -> Bool { headLength(bytes) != nil }

    /// RFC 9110 §5.6.2 tchar.
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: return true
        default: return "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }

    /// `%XX` decoded and `+` as a space; nil for a bad escape or bytes that are not UTF-8.
    static func percentDecoded(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        var utf8 = text.utf8.makeIterator()
        while let byte = utf8.next() {
            switch byte {
            case UInt8(ascii: "+"): bytes.append(0x20)
            case UInt8(ascii: "%"):
                guard let high = utf8.next().flatMap(hexValue), let low = utf8.next().flatMap(hexValue) else {
                    return nil
                }
                bytes.append(high << 4 | low)
            default: bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: return byte - 0x30
        case 0x41...0x46: return byte - 0x41 + 10
        case 0x61...0x66: return byte - 0x61 + 10
        default: return nil
        }
    }
}

extension Substring {
    fileprivate var trimmingSpaces: Substring {
        var s = self
        while s.first == " " || s.first == "\t" { s = s.dropFirst() }
        while s.last == " " || s.last == "\t" { s = s.dropLast() }
        return s
    }
}
