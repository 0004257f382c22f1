/// An SRTP crypto suite roomtap receives (RFC 3711, https://www.rfc-editor.org/rfc/rfc3711; AES-GCM:
/// RFC 7714, https://www.rfc-editor.org/rfc/rfc7714), named as SDES writes it (RFC 4568 §6.2,
/// RFC 7714 §14.2). libsrtp2 does the cryptography.
///
/// | suite | master key | master salt | SRTP tag | SRTCP tag |
/// |---|---|---|---|---|
/// | `AES_CM_128_HMAC_SHA1_80` | 16 | 14 | 10 | 10 |
/// | `AES_CM_128_HMAC_SHA1_32` | 16 | 14 | 4 | 10 (RFC 4568 §6.2.2) |
/// | `AEAD_AES_128_GCM` | 16 | 12 | 16 | 16 |
/// | `AEAD_AES_256_GCM` | 32 | 12 | 16 | 16 |
///
/// Thread: a value type, use anywhere.
public enum SRTPSuite: Int32, Sendable, CaseIterable, CustomStringConvertible {
    case aesCM128HMACSHA1Tag80 = 0
    case aesCM128HMACSHA1Tag32 = 1
    case aeadAES128GCM = 2
    case aeadAES256GCM = 3

    /// The SDES name (`a=crypto`), e.g. `AES_CM_128_HMAC_SHA1_80`.
    public var name: String {
        switch self {
        case .aesCM128HMACSHA1Tag80: "AES_CM_128_HMAC_SHA1_80"
        case .aesCM128HMACSHA1Tag32: "AES_CM_128_HMAC_SHA1_32"
        case .aeadAES128GCM: "AEAD_AES_128_GCM"
        case .aeadAES256GCM: "AEAD_AES_256_GCM"
        }
    }

    public var description: String { name }

    /// The suite an SDES name names (exact, case-sensitive, as RFC 4568 §9.2 registers them).
    public init?(name: some StringProtocol) {
        guard let suite = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = suite
    }

    /// The suite Janus's `rtp_forward` means by `srtp_suite`: 32 or 80 (the AES-CM tag length in bits).
    public init?(janusSuite: Int) {
        switch janusSuite {
        case 32: self = .aesCM128HMACSHA1Tag32
        case 80: self = .aesCM128HMACSHA1Tag80
        default: return nil
        }
    }

    /// Bytes of master key.
    public var keyLength: Int { self == .aeadAES256GCM ? 32 : 16 }
    /// Bytes of master salt.
    public var saltLength: Int { self == .aeadAES128GCM || self == .aeadAES256GCM ? 12 : 14 }
    /// Bytes of key ‖ salt, as `inline:` carries them in base64 (30, 30, 28 and 44).
    public var keyAndSaltLength: Int { keyLength + saltLength }

    /// The four names, for messages: "AES_CM_128_HMAC_SHA1_80, ..., AEAD_AES_256_GCM".
    static var namesForMessages: String { allCases.map(\.name).joined(separator: ", ") }
}
