import Foundation
import RoomTapRTP

/// Sends `bytes` to `address` from a fresh socket.
func send(_ bytes: [UInt8], to address: ListenAddress) {
    let family = address.isIPv6 ? AF_INET6 : AF_INET
    let fd = socket(family, Int32(SOCK_DGRAM.rawValue), 0)
    defer { close(fd) }
    if address.isIPv6 {
        var sa = sockaddr_in6()
        sa.sin6_family = sa_family_t(AF_INET6)
        sa.sin6_port = address.port.bigEndian
        inet_pton(AF_INET6, address.host, &sa.sin6_addr)
        _ = withUnsafePointer(to: &sa) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                sendto(fd, bytes, bytes.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
            }
        }
    } else {
        var sa = sockaddr_in()
        sa.sin_family = sa_family_t(AF_INET)
        sa.sin_port = address.port.bigEndian
        inet_pton(AF_INET, address.host, &sa.sin_addr)
        _ = withUnsafePointer(to: &sa) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                sendto(fd, bytes, bytes.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
    }
}
