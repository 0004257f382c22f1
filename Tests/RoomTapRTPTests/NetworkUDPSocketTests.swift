import Foundation
import RoomTapRTP
import Testing

@Suite("Network: listen addresses and UDP sockets")
struct NetworkUDPSocketTests {
    @Test(arguments: [
        ("127.0.0.1:25000", "127.0.0.1", UInt16(25000)),
        (":25001", "0.0.0.0", UInt16(25001)),
        ("[::1]:25002", "::1", UInt16(25002)),
        ("0.0.0.0:1", "0.0.0.0", UInt16(1)),
    ])
    func parsesListenAddresses(text: String, host: String, port: UInt16) throws {
        let address = try #require(ListenAddress(text))
        #expect(address.host == host && address.port == port)
        #expect(ListenAddress(address.description) == address)
    }

    @Test(arguments: [
        "127.0.0.1", "127.0.0.1:+0", "127.0.0.1:70000", "localhost:25000", "::1:25000", "[::1]25000", "1.2.3:5", "",
        "127.0.0.1:", "127.0.0.1:٣",
    ])
    func refusesMalformedAddresses(text: String) {
        #expect(ListenAddress(text) == nil)
    }

    /// Port 0 asks the kernel for a port (the fleet's live rooms): parsed, and bound to a real one.
    @Test func portZeroIsAnyFreePort() throws {
        let address = try #require(ListenAddress("127.0.0.1:0"))
        #expect(address.port == 0)
        let socket = try UDPSocket(address: address)
        defer { socket.close() }
        #expect(socket.address.port != 0 && socket.address.host == "127.0.0.1")
    }

    @Test(arguments: ["127.0.0.1", "::1"])
    func receivesADatagram(host: String) throws {
        let socket = try UDPSocket(address: ListenAddress(host: host, port: 0))
        let address = socket.address  // the port the kernel gave
        let payload: [UInt8] = [0x80, 111, 0, 1, 0, 0, 0, 160, 0xDE, 0xAD, 0xBE, 0xEF, 0xF8, 0xFF, 0xFE]
        send(payload, to: address)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 2048, alignment: 8)
        defer { buffer.deallocate() }
        var received = 0
        for _ in 0..<20 where received == 0 { received = socket.receive(into: buffer, timeoutMilliseconds: 100) ?? -1 }
        #expect(received == payload.count)
        #expect(Array(buffer.prefix(received)) == payload)
        #expect(socket.receive(into: buffer, timeoutMilliseconds: 10) == 0, "a timeout with nothing sent gives 0")
    }

    @Test func aPortInUseIsOneClearError() throws {
        let first = try UDPSocket(address: ListenAddress(host: "127.0.0.1", port: 0))
        let address = first.address
        #expect(throws: UDPSocket.BindError.self) { _ = try UDPSocket(address: address) }
        do {
            _ = try UDPSocket(address: address)
        } catch {
            #expect(
                error.description
                    == "cannot listen on 127.0.0.1:\(address.port): the port is already in use (another recorder or program holds it); choose another --listen port"
            )
        }
        first.close()
    }

    @Test func closeEndsABlockedReceive() throws {
        let socket = try UDPSocket(address: ListenAddress(host: "127.0.0.1", port: 0))
        let done = DispatchSemaphore(value: 0)
        let result = ResultBox()
        let receiving = DispatchSemaphore(value: 0)
        Thread {
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64, alignment: 8)
            defer { buffer.deallocate() }
            receiving.signal()
            while let n = socket.receive(into: buffer, timeoutMilliseconds: 200) { result.count += n }
            done.signal()
        }.start()
        #expect(receiving.wait(timeout: .now() + 30) == .success)
        usleep(50_000)  // the receive is then (almost surely) blocked in poll; if not, close must still end it
        socket.close()
        #expect(done.wait(timeout: .now() + 2) == .success, "the receive loop ends after close")
        #expect(socket.isClosed)
    }

    final class ResultBox: @unchecked Sendable { var count = 0 }
}
