import Foundation
public import RoomTapRTP

/// A UDP socket sending from a chosen local address (e.g. `127.0.0.2`, any of 127/8 on Linux), so
/// a test can be a source that `--allow` lets in, or one it does not.
///
/// Thread: one thread at a time.
public final class SourceBoundSocket {
    private let fd: Int32
    private let destination: SocketAddress

    /// Binds to `source` (port chosen by the kernel) and sends to `destination`; nil when the
    /// address is not numeric or cannot be bound.
    public init?(from source: String, to destination: ListenAddress) {
        guard let target = SocketAddress(destination),
            let local = SocketAddress(ListenAddress(host: source, port: 0)), local.family == target.family
        else { return nil }
        self.destination = target
        fd = socket(target.family, Int32(SOCK_DGRAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        var size: Int32 = 4 << 20
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        guard local.withSockaddr({ bind(fd, $0, $1) }) == 0 else {
            Glibc.close(fd)
            return nil
        }
    }

    deinit { Glibc.close(fd) }

    /// Sends one datagram; false when the kernel refused it (a full send buffer: retry).
    @discardableResult
    public func send(_ bytes: [UInt8]) -> Bool {
        let n = destination.withSockaddr { sa, length in
            bytes.withUnsafeBytes { sendto(fd, $0.baseAddress, $0.count, 0, sa, length) }
        }
        return n == bytes.count
    }
}
