package import Foundation

/// A `ListenAddress` as the kernel's `sockaddr_in`/`sockaddr_in6`, for bind(2) and sendto(2): the
/// one place roomtap builds socket addresses.
///
/// Thread: a value.
package struct SocketAddress: Sendable {
    /// `AF_INET` or `AF_INET6`.
    public let family: Int32
    private var storage = sockaddr_storage()
    private let length: socklen_t

    /// Nil when the host is not a numeric address of its family.
    public init?(_ address: ListenAddress) {
        if address.isIPv6 {
            var sa = sockaddr_in6()
            sa.sin6_family = sa_family_t(AF_INET6)
            sa.sin6_port = address.port.bigEndian
            guard inet_pton(AF_INET6, address.host, &sa.sin6_addr) == 1 else { return nil }
            family = AF_INET6
            length = socklen_t(MemoryLayout<sockaddr_in6>.size)
            withUnsafeMutableBytes(of: &storage) { dst in withUnsafeBytes(of: sa) { dst.copyMemory(from: $0) } }
        } else {
            var sa = sockaddr_in()
            sa.sin_family = sa_family_t(AF_INET)
            sa.sin_port = address.port.bigEndian
            guard inet_pton(AF_INET, address.host, &sa.sin_addr) == 1 else { return nil }
            family = AF_INET
            length = socklen_t(MemoryLayout<sockaddr_in>.size)
            withUnsafeMutableBytes(of: &storage) { dst in withUnsafeBytes(of: sa) { dst.copyMemory(from: $0) } }
        }
    }

    /// Calls `body` with the address and its length. Does not allocate.
    public func withSockaddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) throws -> R) rethrows -> R {
        try withUnsafeBytes(of: storage) { raw in
            try body(raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), length)
        }
    }
}
