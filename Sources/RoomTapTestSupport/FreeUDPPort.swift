import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Why no free port could be had.
public struct FreePortError: Error, CustomStringConvertible {
    public let description: String
}

/// A UDP port on 127.0.0.1 the kernel just gave out (a socket bound to port 0, read back with
/// getsockname, then closed), so tests running side by side never share one.
public func freeUDPPort() throws -> UInt16 {
    let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
    guard fd >= 0 else { throw FreePortError(description: "socket: \(String(cString: strerror(errno)))") }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
            bind(fd, raw, length) == 0 && getsockname(fd, raw, &length) == 0
        }
    }
    guard bound else { throw FreePortError(description: "bind: \(String(cString: strerror(errno)))") }
    return UInt16(bigEndian: address.sin_port)
}
