import RoomTapAgentTestSupport
import RoomTapSync
import RoomTapTestSupport
import RoomTapWebSocket
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Lets an event handler reach the client it belongs to.
final class ClientHolder: Sendable {
    private let lock = Locked<WebSocketClient?>(nil)
    var client: WebSocketClient? {
        get { lock.withLock { $0 } }
        set { lock.withLock { $0 = newValue } }
    }
}

/// Messages both ways against the loopback test server (on a port the kernel picks).
@Suite struct WebSocketMessageTests {
    @Test func textAndBinaryEchoWithMaskedFrames() throws {
        var options = WebSocketTestServer.Options()
        options.echo = true
        let server = try WebSocketTestServer(options: options)
        defer { server.stop() }
        let events = EventRecorder()
        let client = WebSocketClient(configuration: .init(url: server.url + "echo?x=1"), onEvent: events.handler)
        try client.connect()
        let connection = try #require(server.waitForConnection(timeout: .seconds(30)))
        #expect(connection.request.target == "/echo?x=1")
        #expect(connection.request.header("Host") == "127.0.0.1:\(server.port)")

        #expect(client.send(text: "hello, wörld"))
        #expect(client.send(binary: [0, 1, 2, 255]))
        #expect(events.wait(count: 2) == [.text("hello, wörld"), .binary([0, 1, 2, 255])])
        let received = connection.messages
        #expect(received.map(\.message) == [.text("hello, wörld"), .binary([0, 1, 2, 255])])
        #expect(received.allSatisfy { $0.masked })
        #expect(connection.unmaskedFrames == 0)
        #expect(connection.protocolErrors.isEmpty)

        client.close()
        #expect(client.waitUntilClosed(timeout: .seconds(30)))
        #expect(events.closed?.code == 1000)
        // One loop thread delivered everything, not the test's thread.
        #expect(events.threads.count == 1)
        #expect(!events.threads.contains(UInt(pthread_self())))
    }
}

extension WebSocketMessageTests {
    /// Connects a client to `server` and returns it with its recorder and the server's connection.
    static func connect(
        _ server: WebSocketTestServer, configure: (inout WebSocketConfiguration) -> Void = { _ in }
    ) throws -> (WebSocketClient, EventRecorder, WebSocketTestConnection) {
        var configuration = WebSocketConfiguration(url: server.url)
        configure(&configuration)
        let events = EventRecorder()
        let client = WebSocketClient(configuration: configuration, onEvent: events.handler)
        try client.connect()
        let connection = try #require(server.waitForConnection(timeout: .seconds(30)))
        return (client, events, connection)
    }

    @Test func theEventHandlerMaySendAndClose() throws {
        let server = try WebSocketTestServer()
        defer { server.stop() }
        let holder = ClientHolder()
        let client = WebSocketClient(configuration: .init(url: server.url)) { event in
            guard case .text(let text) = event, let client = holder.client else { return }
            if text == "stop" {
                client.close(code: 1000, reason: "asked to stop")
            } else {
                client.send(text: "re: " + text)
            }
        }
        holder.client = client
        #expect(!client.isOpen)
        try client.connect()
        #expect(client.isOpen)
        let connection = try #require(server.waitForConnection(timeout: .seconds(30)))
        connection.send(text: "one")
        connection.send(text: "two")
        #expect(connection.waitForMessage(timeout: .seconds(30))?.message == .text("re: one"))
        #expect(connection.waitForMessage(timeout: .seconds(30))?.message == .text("re: two"))
        connection.send(text: "stop")
        #expect(connection.waitForClose(timeout: .seconds(30))?.reason == "asked to stop")
        #expect(client.waitUntilClosed(timeout: .seconds(30)))
        #expect(!client.isOpen)
        #expect(client.outboxBytes == 0)
    }

    @Test func fragmentedServerMessagesAreReassembled() throws {
        let server = try WebSocketTestServer()
        defer { server.stop() }
        let (client, events, connection) = try Self.connect(server)
        defer { client.close() }
        let text = String(repeating: "fragmented ünïcode ", count: 50)
        let bytes = (0..<10_000).map { UInt8(truncatingIfNeeded: $0 * 7) }
        #expect(connection.sendFragmented(.text(text), pieces: 7, pingBetween: true))
        #expect(connection.sendFragmented(.binary(bytes), pieces: 3))
        #expect(events.wait(count: 2) == [.text(text), .binary(bytes)])
        // The ping between the fragments was answered.
        #expect(connection.waitUntil(timeout: .seconds(30)) { $0.pongs.map(\.payload) == [Array("mid".utf8)] })
    }

    @Test func fiveMebibyteMessagesBothWays() throws {
        let server = try WebSocketTestServer()
        defer { server.stop() }
        let (client, events, connection) = try Self.connect(server)
        defer { client.close() }
        let big = (0..<(5 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) }
        #expect(client.send(binary: big))
        let received = try #require(connection.waitForMessage(timeout: .seconds(20)))
        #expect(received.message == .binary(big))
        #expect(received.masked)

        var bigText = String(repeating: "0123456789abcdef", count: (5 << 20) / 16)
        bigText += "end"
        #expect(connection.send(text: bigText))
        #expect(events.wait(count: 1, timeout: .seconds(20)) == [.text(bigText)])
    }

    @Test func framesInTheSameWriteAsThe101AreDelivered() throws {
        var options = WebSocketTestServer.Options()
        options.messagesWithUpgrade = [.text("session.created"), .binary([9, 8, 7])]
        let server = try WebSocketTestServer(options: options)
        defer { server.stop() }
        let (client, events, _) = try Self.connect(server)
        defer { client.close() }
        #expect(events.wait(count: 2) == [.text("session.created"), .binary([9, 8, 7])])
    }

    @Test func aMessageOverTheLimitClosesWith1009() throws {
        let server = try WebSocketTestServer()
        defer { server.stop() }
        let (client, events, connection) = try Self.connect(server) { $0.maxMessageBytes = 1000 }
        connection.send(binary: [UInt8](repeating: 1, count: 999))
        connection.send(binary: [UInt8](repeating: 2, count: 1001))
        #expect(client.waitUntilClosed(timeout: .seconds(30)))
        #expect(events.all.first == .binary([UInt8](repeating: 1, count: 999)))
        #expect(events.all.count == 2)
        #expect(events.closed?.code == 1009)
        #expect(connection.waitForClose(timeout: .seconds(30))?.code == 1009)
    }

    @Test func sendFailsBeforeConnectAndAfterClose() throws {
        let server = try WebSocketTestServer()
        defer { server.stop() }
        let events = EventRecorder()
        let client = WebSocketClient(configuration: .init(url: server.url), onEvent: events.handler)
        #expect(!client.send(text: "too early"))
        try client.connect()
        #expect(throws: WebSocketError.self) { try client.connect() }
        client.close()
        #expect(!client.send(text: "too late"))
        #expect(client.waitUntilClosed(timeout: .seconds(30)))
        client.close()  // idempotent
        #expect(events.all == [.closed(code: 1000, reason: "")])
    }

    @Test func aFullOutboxRefusesMessages() throws {
        let server = try WebSocketTestServer()
        defer { server.stop() }
        let (client, _, connection) = try Self.connect(server) { $0.outboxLimitBytes = 4 << 20 }
        defer { client.close() }
        // 64 × 1 MiB at once: wslay takes ~1 MiB, the outbox 4 MiB, the kernel some; the rest is refused.
        let chunk = [UInt8](repeating: 7, count: 1 << 20)
        let accepted = (0..<64).map { _ in client.send(binary: chunk) }.filter { $0 }.count
        #expect(accepted >= 4)
        #expect(accepted < 64)
        // Everything accepted arrives, in order, and the client can send again afterwards.
        #expect(connection.waitUntil(timeout: .seconds(20)) { $0.messages.count == accepted })
        #expect(client.send(text: "after"))
        #expect(connection.waitUntil(timeout: .seconds(30)) { $0.messages.last?.message == .text("after") })
    }
}
