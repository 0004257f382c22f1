import COpenSSL

/// A running MD5 or SHA-256 over bytes fed in pieces (OpenSSL EVP). One thread at a time.
final class Digest {
    enum Kind { case md5, sha256 }
    private let context: OpaquePointer

    init(_ kind: Kind) {
        context = EVP_MD_CTX_new()!
        EVP_DigestInit_ex(context, kind == .md5 ? EVP_md5() : EVP_sha256(), nil)
    }

    deinit { EVP_MD_CTX_free(context) }

    func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        EVP_DigestUpdate(context, base, bytes.count)
    }

    func update(_ bytes: [UInt8]) { bytes.withUnsafeBytes { update($0) } }

    /// The digest; the object is used up.
    func finish() -> [UInt8] {
        var out = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        EVP_DigestFinal_ex(context, &out, &length)
        return Array(out[..<Int(length)])
    }

    static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        let d = Digest(.sha256)
        d.update(bytes)
        return d.finish()
    }

    static func md5(_ bytes: [UInt8]) -> [UInt8] {
        let d = Digest(.md5)
        d.update(bytes)
        return d.finish()
    }
}

/// HMAC-SHA256 (OpenSSL's one-shot `HMAC`).
package enum HMACSHA256 {
    /// The 32-byte MAC of `message` under `key`.
    public static func mac(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        key.withUnsafeBytes { k in
            message.withUnsafeBytes { m in
                _ = HMAC(
                    EVP_sha256(), k.baseAddress, Int32(k.count), m.baseAddress?.assumingMemoryBound(to: UInt8.self),
                    m.count, &out, &length)
            }
        }
        return out
    }
}

extension Array where Element == UInt8 {
    /// Lower-case hex.
    var hex: String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(count * 2)
        for b in self {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
