import Foundation

/// An address prefix that may send: `ADDR` (one host) or `ADDR/PREFIX` (a network, CIDR notation,
/// RFC 4632 §3.1 and RFC 4291 §2.3), IPv4 or IPv6, e.g. `192.0.2.7`, `10.0.0.0/8`, `::1`,
/// `2001:db8::/32`. Bits beyond the prefix length are cleared (`10.1.2.3/8` is `10.0.0.0/8`).
///
/// Thread: a value type, use anywhere.
public struct SourcePrefix: Sendable, Hashable, CustomStringConvertible {
    /// Whether this is an IPv6 prefix.
    public let isIPv6: Bool
    /// The prefix length in bits (0...32 for IPv4, 0...128 for IPv6).
    public let length: Int
    /// The address, in network order, in the high bits of two words (IPv4: the top 32 bits of `high`).
    let high: UInt64
    let low: UInt64

    /// Parses `ADDR[/PREFIX]`; nil when it is not a numeric IPv4 or IPv6 address with an optional
    /// prefix length within the family's bits.
    public init?(_ text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count <= 2, let host = parts.first, !host.isEmpty else { return nil }
        var bytes = [UInt8](repeating: 0, count: 16)
        let v6 = host.contains(":")
        let parsed = String(host).withCString { inet_pton(v6 ? AF_INET6 : AF_INET, $0, &bytes) }
        guard parsed == 1 else { return nil }
        let bits = v6 ? 128 : 32
        var length = bits
        if parts.count == 2 {
            guard let given = parts[1].sdpDecimal(maximum: UInt64(bits)), parts[1].utf8.count <= 3 else { return nil }
            length = Int(given)
        }
        self.init(isIPv6: v6, bytes: bytes, length: length)
    }

    /// A prefix from 16 address bytes (IPv4: the first 4), masked to `length` bits.
    init(isIPv6: Bool, bytes: [UInt8], length: Int) {
        self.isIPv6 = isIPv6
        self.length = length
        let (mask0, mask1) = Self.mask(length)
        high = Self.word(bytes, 0) & mask0
        low = Self.word(bytes, 8) & mask1
    }

    /// Whether an address (16 bytes as two big-endian words, IPv4 in the first 4 bytes) lies within.
    /// Allocates nothing.
    func contains(isIPv6 v6: Bool, high h: UInt64, low l: UInt64) -> Bool {
        guard v6 == isIPv6 else { return false }
        let (mask0, mask1) = Self.mask(length)
        return h & mask0 == high && l & mask1 == low
    }

    /// `ADDR/PREFIX` in the usual text form (`10.0.0.0/8`, `2001:db8::/32`, `::1/128`).
    public var description: String {
        var bytes = [UInt8](repeating: 0, count: 16)
        for i in 0..<8 {
            bytes[i] = UInt8(truncatingIfNeeded: high >> (56 - 8 * i))
            bytes[8 + i] = UInt8(truncatingIfNeeded: low >> (56 - 8 * i))
        }
        var text = [CChar](repeating: 0, count: 64)
        inet_ntop(isIPv6 ? AF_INET6 : AF_INET, bytes, &text, 64)
        return String(cString: text) + "/\(length)"
    }

    private static func word(_ bytes: [UInt8], _ offset: Int) -> UInt64 {
        (0..<8).reduce(0) { $0 << 8 | UInt64(bytes[offset + $1]) }
    }

    private static func mask(_ length: Int) -> (UInt64, UInt64) {
        let first = length >= 64 ? UInt64.max : (length == 0 ? 0 : ~(UInt64.max >> UInt64(length)))
        let second = length <= 64 ? 0 : (length >= 128 ? UInt64.max : ~(UInt64.max >> UInt64(length - 64)))
        return (first, second)
    }
}

/// Who may send to a socket: the sources within any of its prefixes (``SourcePrefix``). A datagram
/// from elsewhere is dropped and counted before it is parsed (see ``ReceiveGuard``).
///
/// Thread: a value type, use anywhere; ``allows(isIPv6:high:low:)`` allocates nothing.
public struct SourceFilter: Sendable, Equatable {
    /// The prefixes; a source within any of them is allowed.
    public let prefixes: [SourcePrefix]

    /// A filter allowing the sources within `prefixes` (none: nobody).
    public init(_ prefixes: [SourcePrefix]) {
        self.prefixes = prefixes
    }

    /// Whether a source may send (the address as ``SourcePrefix`` stores it).
    func allows(isIPv6: Bool, high: UInt64, low: UInt64) -> Bool {
        for prefix in prefixes where prefix.contains(isIPv6: isIPv6, high: high, low: low) { return true }
        return false
    }
}
