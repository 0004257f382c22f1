/// The request line of an HTTP/1.x request (RFC 9112 §3), all the metrics endpoint reads: method
/// and path (query dropped). Headers are skipped; a body is not read.
///
/// Thread: a value; parsing is pure.
public struct HTTPRequestHead: Sendable, Equatable {
    public let method: String
    public let path: String

    /// The longest head accepted, bytes.
    public static let maxBytes = 8192

    /// Parses the bytes up to the blank line ending the head; nil for anything malformed (then 400).
    public init?(_ bytes: [UInt8]) {
        guard bytes.count <= Self.maxBytes, let end = Self.lineEnd(bytes) else { return nil }
        let line = bytes[..<end]
        let parts = line.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, parts[0].allSatisfy({ $0 >= 0x41 && $0 <= 0x5A }),
            parts[1].first == UInt8(ascii: "/"), parts[1].allSatisfy({ $0 > 0x20 && $0 < 0x7F }),
            parts[2].elementsEqual("HTTP/1.1".utf8) || parts[2].elementsEqual("HTTP/1.0".utf8)
        else { return nil }
        method = String(decoding: parts[0], as: UTF8.self)
        let target = parts[1].split(separator: UInt8(ascii: "?"), maxSplits: 1, omittingEmptySubsequences: false)[0]
        path = String(decoding: target, as: UTF8.self)
    }

    /// True once `bytes` hold a whole head (a blank line).
    public static func isComplete(_ bytes: [UInt8]) -> Bool {
        guard bytes.count >= 4 else { return false }
        for i in 3..<bytes.count
        where bytes[i] == 10 && bytes[i - 1] == 13 && bytes[i - 2] == 10 && bytes[i - 3] == 13 {
            return true
        }
        return false
    }

    private static func lineEnd(_ bytes: [UInt8]) -> Int? {
        guard isComplete(bytes) else { return nil }
        for i in 1..<bytes.count where bytes[i] == 10 && bytes[i - 1] == 13 { return i - 1 }
        return nil
    }
}
