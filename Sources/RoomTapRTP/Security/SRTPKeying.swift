public import Foundation

/// The SRTP master key and salt of one sender, and its suite: what an SDP `a=crypto` line
/// (RFC 4568) or a room file's `srtp` object says.
///
/// The key never shows: `description`, `debugDescription` and the mirror print the suite only, so
/// a key is in no log, error or room.json, however a description is printed. Two keyings are equal
/// when suite and bytes are.
///
/// Thread: a value type, use anywhere.
public struct SRTPKeying: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    /// The suite.
    public let suite: SRTPSuite
    /// Master key ‖ master salt, ``SRTPSuite/keyAndSaltLength`` bytes.
    package let keyAndSalt: [UInt8]

    /// A keying from raw bytes; nil when `keyAndSalt` is not the suite's ``SRTPSuite/keyAndSaltLength``.
    public init?(suite: SRTPSuite, keyAndSalt: [UInt8]) {
        guard keyAndSalt.count == suite.keyAndSaltLength else { return nil }
        self.suite = suite
        self.keyAndSalt = keyAndSalt
    }

    /// A keying from base64 (RFC 4648 §4, with or without `=` padding, no spaces): what SDES
    /// `inline:` and Janus's `srtp_crypto` carry. Nil when it is not base64 or not the suite's length.
    public init?(suite: SRTPSuite, base64: some StringProtocol) {
        guard let bytes = Self.decodeBase64(base64) else { return nil }
        self.init(suite: suite, keyAndSalt: bytes)
    }

    /// Decodes strict base64: the alphabet of RFC 4648 §4, padding optional but only at the end.
    static func decodeBase64(_ text: some StringProtocol) -> [UInt8]? {
        var body = Substring(text)
        while body.hasSuffix("=") { body = body.dropLast() }
        guard !body.isEmpty, body.count <= 128, Substring(text).count - body.count <= 2,
            body.unicodeScalars.allSatisfy({
                ("A"..."Z").contains($0) || ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "+"
                    || $0 == "/"
            }), body.count % 4 != 1
        else { return nil }
        let padded = String(body) + String(repeating: "=", count: (4 - body.count % 4) % 4)
        guard let data = Data(base64Encoded: padded) else { return nil }
        return [UInt8](data)
    }

    public var description: String { "\(suite.name) (key not shown)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["suite": suite], displayStyle: .struct) }
}
