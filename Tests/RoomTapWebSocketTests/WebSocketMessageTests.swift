import RoomTapTestSupport
import RoomTapWebSocket
import Testing

/// Messages both ways against the loopback test server (ports 28000-28049).
@Suite struct WebSocketMessageTests {
    @Test func textAndBinaryEchoWithMaskedFrames() throws {
        var options = WebSocketTestServer.Options()
        options.echo = true
        let server = try WebSocketTestServer(port: 28000, options: options)
        defer { server.stop() }
        let events = EventRecorder()
        let client = WebSocketClient(configuration: .init(url: server.url + "echo?x=1"), onEvent: events.handler)
        try client.connect()
        let connection = try #require(server.waitForConnection(timeout: .seconds(5)))
        #expect(connection.request.target == "/echo?x=1")
        #expect(connection.request.header("Host") == "127.0.0.1:28000")

        #expect(client.send(text: "hello, wörld"))
        #expect(client.send(binary: [0, 1, 2, 255]))
        #expect(events.wait(count: 2) == [.text("hello, wörld"), .binary([0, 1, 2, 255])])
        let received = connection.messages
        #expect(received.map(\.message) == [.text("hello, wörld"), .binary([0, 1, 2, 255])])
        #expect(received.allSatisfy { $0.masked })
        #expect(connection.unmaskedFrames == 0)
        #expect(connection.protocolErrors.isEmpty)

        client.close()
        #expect(client.waitUntilClosed(timeout: .seconds(5)))
        #expect(events.closed?.code == 1000)
        #expect(events.threadNames == ["roomtap.ws"])
    }
}
