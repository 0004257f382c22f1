/// The Ogg Opus comment header, the second packet of an Ogg Opus stream.
///
/// RFC 7845 §5.2, https://www.rfc-editor.org/rfc/rfc7845#section-5.2 (Vorbis-comment style, all
/// lengths 32-bit little-endian):
///
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |      'O'      |      'p'      |      'u'      |      's'      |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |      'T'      |      'a'      |      'g'      |      's'      |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                     Vendor String Length                      |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// :                   Vendor String (UTF-8)...                    :
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                User Comment List Length                       |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                 User Comment #0 String Length                 |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// :                 User Comment #0 String ("KEY=value")...       :
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// :                              ...                              :
/// ```
///
/// Thread: a value type, use anywhere.
public struct OpusTags: Sendable, Equatable {
    /// The 8-byte magic that starts the packet.
    public static let magic: [UInt8] = Array("OpusTags".utf8)

    /// The encoder's vendor string, e.g. `libopus 1.3.1`.
    public var vendor: String
    /// User comments, `KEY=value` (invalid UTF-8 is repaired with U+FFFD).
    public var comments: [String]

    /// Creates a comment header.
    public init(vendor: String, comments: [String] = []) {
        self.vendor = vendor
        self.comments = comments
    }

    /// The value of the first comment `KEY=value` whose key matches (case-insensitively, as in
    /// Vorbis comments), or nil.
    public func value(forKey key: String) -> String? {
        let wanted = key.uppercased()
        for comment in comments {
            guard let eq = comment.firstIndex(of: "=") else { continue }
            if comment[..<eq].uppercased() == wanted { return String(comment[comment.index(after: eq)...]) }
        }
        return nil
    }

    /// Parses an `OpusTags` packet. Returns nil when the magic is missing or a length points past
    /// the end of the packet. Bytes after the last comment (RFC 7845 allows binary data there) are
    /// ignored.
    public static func parse(_ bytes: UnsafeRawBufferPointer) -> OpusTags? {
        guard bytes.count >= 16, zip(bytes.prefix(8), magic).allSatisfy({ $0 == $1 }) else { return nil }
        var at = 8
        func length() -> Int? {
            guard bytes.count - at >= 4 else { return nil }
            defer { at += 4 }
            return Int(bytes[at]) | Int(bytes[at + 1]) << 8 | Int(bytes[at + 2]) << 16 | Int(bytes[at + 3]) << 24
        }
        func string(_ n: Int) -> String? {
            guard bytes.count - at >= n else { return nil }
            defer { at += n }
            return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[at..<at + n]), as: UTF8.self)
        }
        guard let vendorLength = length(), let vendor = string(vendorLength), let count = length() else { return nil }
        // Every comment needs at least its 4-byte length: reject absurd counts before reserving.
        guard count <= (bytes.count - at) / 4 else { return nil }
        var comments: [String] = []
        comments.reserveCapacity(count)
        for _ in 0..<count {
            guard let n = length(), let comment = string(n) else { return nil }
            comments.append(comment)
        }
        return OpusTags(vendor: vendor, comments: comments)
    }
}
