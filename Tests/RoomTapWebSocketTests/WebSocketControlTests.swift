import RoomTapAgentTestSupport
import RoomTapTestSupport
import RoomTapWebSocket
import Testing

/// Pings, pongs, closing and dropping (servers on ports the kernel picks).
@Suite struct WebSocketControlTests {
    @Test func aServerPingIsAnsweredWithItsPayload() throws {
        let server = try WebSocketTestServer()
        defer { server.stop() }
        let (client, _, connection) = try WebSocketMessageTests.connect(server)
        defer { client.close() }
        connection.sendPing(Array("are you there".utf8))
        #expect(
            connection.waitUntil(timeout: .seconds(30)) { $0.pongs.map(\.payload) == [Array("are you there".utf8)] })
    }

    @Test func theClientPingsWhenIdle() throws {
        let server = try WebSocketTestServer()
        defer { server.stop() }
        let start = ContinuousClock.now
        let (client, events, connection) = try WebSocketMessageTests.connect(server) {
            $0.pingInterval = .milliseconds(200)
        }
        defer { client.close() }
        #expect(connection.waitUntil(timeout: .seconds(30)) { $0.pings.count >= 2 })
        let first = try #require(connection.pings.first)
        #expect(start.duration(to: first.time) >= .milliseconds(190))
        #expect(events.all.isEmpty)  // answered pings keep the connection open
    }

    @Test func anUnansweredPingEndsTheConnectionWith1006() throws {
        var options = WebSocketTestServer.Options()
        options.answerPings = false
        let server = try WebSocketTestServer(options: options)
        defer { server.stop() }
        let (client, events, _) = try WebSocketMessageTests.connect(server) {
            $0.pingInterval = .milliseconds(100)
            $0.pongTimeout = .milliseconds(200)
        }
        #expect(client.waitUntilClosed(timeout: .seconds(30)))
        #expect(events.closed?.code == 1006)
        #expect(events.closed?.reason.contains("ping") == true)
    }

    @Test func closeFromTheClientCarriesCodeAndReason() throws {
        let server = try WebSocketTestServer()
        defer { server.stop() }
        let (client, events, connection) = try WebSocketMessageTests.connect(server)
        #expect(client.send(text: "last words"))
        client.close(code: 4000, reason: "done for today")
        let frame = try #require(connection.waitForClose(timeout: .seconds(30)))
        #expect(frame.code == 4000)
        #expect(frame.reason == "done for today")
        #expect(connection.messages.map(\.message) == [.text("last words")])  // sent before the close
        #expect(client.waitUntilClosed(timeout: .seconds(30)))
        #expect(events.all == [.closed(code: 4000, reason: "")])  // the server echoed the code
    }

    @Test func closeFromTheServerIsReportedAndAnswered() throws {
        let server = try WebSocketTestServer()
        defer { server.stop() }
        let (client, events, connection) = try WebSocketMessageTests.connect(server)
        connection.send(text: "before close")
        connection.sendClose(code: 4001, reason: "server says bye")
        #expect(client.waitUntilClosed(timeout: .seconds(30)))
        #expect(events.all == [.text("before close"), .closed(code: 4001, reason: "server says bye")])
        #expect(connection.waitForClose(timeout: .seconds(30))?.code == 4001)
        #expect(connection.waitUntilEnded(timeout: .seconds(30)))
        #expect(!client.send(text: "gone"))
    }

    @Test func aCloseFrameWithoutCodeIsReportedAs1005() throws {
        let server = try WebSocketTestServer()
        defer { server.stop() }
        let (client, events, _) = try WebSocketMessageTests.connect(server) { _ in }
        server.connections[0].sendClose(code: nil)
        #expect(client.waitUntilClosed(timeout: .seconds(30)))
        #expect(events.all == [.closed(code: 1005, reason: "")])
    }

    @Test func aTCPDropIsReportedAs1006() throws {
        let server = try WebSocketTestServer()
        defer { server.stop() }
        let (client, events, connection) = try WebSocketMessageTests.connect(server)
        connection.send(text: "then silence")
        _ = events.wait(count: 1)
        connection.drop()
        #expect(client.waitUntilClosed(timeout: .seconds(30)))
        #expect(events.all.count == 2)
        #expect(events.all.first == .text("then silence"))
        #expect(events.closed?.code == 1006)
    }

    @Test func anUnansweredCloseTimesOutWith1006() throws {
        var options = WebSocketTestServer.Options()
        options.answerClose = false
        let server = try WebSocketTestServer(options: options)
        defer { server.stop() }
        let (client, events, connection) = try WebSocketMessageTests.connect(server) {
            $0.closeTimeout = .milliseconds(300)
        }
        let start = ContinuousClock.now
        client.close()
        #expect(client.waitUntilClosed(timeout: .seconds(30)))
        #expect(start.duration(to: .now) >= .milliseconds(290))
        #expect(connection.closeFrame?.code == 1000)
        #expect(events.closed?.code == 1006)
    }

    @Test func protocolViolationsByTheServerCloseTheConnection() throws {
        let server = try WebSocketTestServer()
        defer { server.stop() }
        // A text message that is not UTF-8 (RFC 6455 section 8.1): 1007.
        let (client, events, connection) = try WebSocketMessageTests.connect(server)
        connection.sendRaw(WebSocketFrame(opcode: 1, payload: [0x66, 0xFF, 0xFE]).encoded())
        #expect(client.waitUntilClosed(timeout: .seconds(30)))
        #expect(events.all.count == 1)
        #expect(events.closed?.code == 1007)
        #expect(connection.waitForClose(timeout: .seconds(30))?.code == 1007)

        // A masked frame from the server (section 5.1): 1002.
        let events2 = EventRecorder()
        let client2 = WebSocketClient(configuration: .init(url: server.url), onEvent: events2.handler)
        try client2.connect()
        let connection2 = try #require(server.waitForConnection(index: 1, timeout: .seconds(30)))
        connection2.sendRaw(WebSocketFrame(opcode: 1, payload: Array("hi".utf8)).encoded(maskKey: [1, 2, 3, 4]))
        #expect(client2.waitUntilClosed(timeout: .seconds(30)))
        #expect(events2.all.count == 1)
        #expect(events2.closed?.code == 1002)
    }
}
