import RoomTapAgentTestSupport
import RoomTapWebSocket
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// wss:// through socat with a test CA, and the HTTP CONNECT proxy (servers on ports the kernel picks).
@Suite struct WebSocketTLSAndProxyTests {
    @Test func wssWorksWithTheTestCAAndFailsWithoutIt() throws {
        var options = WebSocketTestServer.Options()
        options.echo = true
        let server = try WebSocketTestServer(options: options)
        defer { server.stop() }
        let tls = try TLSTestTerminator(forwardingTo: server.port)
        defer { tls.stop() }

        let untrusting = WebSocketClient(configuration: .init(url: "wss://localhost:\(tls.port)/")) { _ in }
        let error = try #require(throws: WebSocketError.self) { try untrusting.connect() }
        #expect(error.kind == .tls)
        #expect(error.message.contains("certificate"))
        #expect(error.message.contains("wss://localhost:\(tls.port)"))

        let events = EventRecorder()
        let client = WebSocketClient(
            configuration: .init(url: "wss://localhost:\(tls.port)/secure", caFile: tls.certificateFile),
            onEvent: events.handler)
        try client.connect()
        #expect(client.send(text: "over TLS"))
        let big = [UInt8](repeating: 0xA5, count: 300_000)
        #expect(client.send(binary: big))
        #expect(events.wait(count: 2) == [.text("over TLS"), .binary(big)])
        client.close(code: 1000, reason: "tls done")
        #expect(client.waitUntilClosed(timeout: .seconds(30)))
        #expect(events.closed?.code == 1000)
        #expect(server.connections.count == 1)
        #expect(server.connections.first?.request.target == "/secure")
    }

    @Test func aDropWhileSendingOverTLSIsReportedAs1006() throws {
        let server = try WebSocketTestServer()
        defer { server.stop() }
        let tls = try TLSTestTerminator(forwardingTo: server.port)
        defer { tls.stop() }
        let events = EventRecorder()
        let client = WebSocketClient(
            configuration: .init(url: "wss://127.0.0.1:\(tls.port)/", caFile: tls.certificateFile),
            onEvent: events.handler)
        try client.connect()
        let connection = try #require(server.waitForConnection(timeout: .seconds(30)))
        connection.drop()
        let chunk = [UInt8](repeating: 3, count: 256 << 10)
        for _ in 0..<40 where client.send(binary: chunk) { usleep(5000) }  // the test's own pacing of sends
        #expect(client.waitUntilClosed(timeout: .seconds(30)))
        #expect(events.all.count == 1)
        #expect(events.closed?.code == 1006)
    }

    @Test func theProxyTunnelsPlainAndTLSConnections() throws {
        var options = WebSocketTestServer.Options()
        options.echo = true
        let server = try WebSocketTestServer(options: options)
        defer { server.stop() }
        let proxy = try ConnectProxyTestServer()
        defer { proxy.stop() }
        let tls = try TLSTestTerminator(forwardingTo: server.port)
        defer { tls.stop() }

        for (url, caFile) in [(server.url, nil), ("wss://localhost:\(tls.port)/", tls.certificateFile)] {
            let events = EventRecorder()
            let client = WebSocketClient(
                configuration: .init(url: url, caFile: caFile, proxy: proxy.url), onEvent: events.handler)
            try client.connect()
            #expect(client.send(text: "via proxy"))
            #expect(events.wait(count: 1) == [.text("via proxy")])
            client.close()
            #expect(client.waitUntilClosed(timeout: .seconds(30)))
        }
        #expect(proxy.connectTargets == ["127.0.0.1:\(server.port)", "localhost:\(tls.port)"])
        #expect(server.connections.count == 2)
    }

    @Test func aRefusingProxyIsAProxyError() throws {
        let proxy = try ConnectProxyTestServer()
        defer { proxy.stop() }
        // The test proxy only tunnels to loopback; any other host gets 405.
        let client = WebSocketClient(configuration: .init(url: "ws://example.invalid:80/", proxy: proxy.url)) { _ in }
        let error = try #require(throws: WebSocketError.self) { try client.connect() }
        #expect(error.kind == .proxy)
        #expect(proxy.connectTargets == ["example.invalid:80"])
    }

    @Test func anEmptyProxyConnectsDirectly() throws {
        let server = try WebSocketTestServer()
        defer { server.stop() }
        let (client, _, _) = try WebSocketMessageTests.connect(server) { $0.proxy = "" }
        client.close()
        #expect(client.waitUntilClosed(timeout: .seconds(30)))
    }
}
