import Foundation
import RoomTapAgentTestSupport
import RoomTapSync
import RoomTapTestSupport
import RoomTapWebSocket
import Testing

/// The opening handshake and connection failures (servers on ports the kernel picks).
@Suite struct WebSocketHandshakeTests {
    @Test func theUpgradeRequestFollowsRFC6455AndCarriesExtraHeaders() throws {
        let server = try WebSocketTestServer()
        defer { server.stop() }
        let (client, _, connection) = try WebSocketMessageTests.connect(server) {
            $0.url = server.url + "v1/realtime?model=gpt-realtime"
            $0.headers = [
                .init(name: "Authorization", value: "Bearer sk-test-123"), .init(name: "OpenAI-Beta", value: "x"),
            ]
        }
        defer { client.close() }
        let request = connection.request
        #expect(request.target == "/v1/realtime?model=gpt-realtime")
        #expect(request.header("Authorization") == "Bearer sk-test-123")
        #expect(request.header("OpenAI-Beta") == "x")
        #expect(request.header("Sec-WebSocket-Version") == "13")
        #expect(request.head.hasPrefix("GET /v1/realtime?model=gpt-realtime HTTP/1.1\r\n"))
        let key = try #require(request.header("Sec-WebSocket-Key"))
        #expect(Data(base64Encoded: key)?.count == 16)
    }

    @Test func eachConnectionUsesAFreshKey() throws {
        let server = try WebSocketTestServer()
        defer { server.stop() }
        for _ in 0..<2 {
            let client = WebSocketClient(configuration: .init(url: server.url)) { _ in }
            try client.connect()
            client.close()
            #expect(client.waitUntilClosed(timeout: .seconds(30)))
        }
        let keys = server.connections.map { $0.request.header("Sec-WebSocket-Key") }
        #expect(keys.count == 2)
        #expect(keys[0] != keys[1])
    }

    @Test func aRefusalCarriesStatusAndBodyButNoHeaderValues() throws {
        var options = WebSocketTestServer.Options()
        options.status = 403
        options.body = "{\"error\": \"key Bearer sk-secret-abcdef rejected\"}"
        let server = try WebSocketTestServer(options: options)
        defer { server.stop() }
        let client = WebSocketClient(
            configuration: .init(
                url: server.url, headers: [.init(name: "Authorization", value: "Bearer sk-secret-abcdef")])
        ) { _ in }
        let error = try #require(throws: WebSocketError.self) { try client.connect() }
        #expect(error.kind == .httpStatus(403))
        #expect(error.message.contains("HTTP 403 Forbidden"))
        #expect(error.message.contains("ws://127.0.0.1:\(server.port)"))
        #expect(error.bodyExcerpt.contains("rejected"))
        #expect(!error.message.contains("sk-secret-abcdef"))
        #expect(!error.bodyExcerpt.contains("sk-secret-abcdef"))
        #expect(!error.message.contains("\n"))
        #expect(client.waitUntilClosed(timeout: .zero))
    }

    @Test func theServerCanRefuseRequestsOneByOne() throws {
        var options = WebSocketTestServer.Options()
        options.refuse = { request in
            request.header("Authorization") == "Bearer good" ? nil : (401, "missing or wrong key")
        }
        let server = try WebSocketTestServer(options: options)
        defer { server.stop() }
        let refused = WebSocketClient(configuration: .init(url: server.url)) { _ in }
        let error = try #require(throws: WebSocketError.self) { try refused.connect() }
        #expect(error.kind == .httpStatus(401))
        #expect(error.bodyExcerpt == "missing or wrong key")
        let accepted = WebSocketClient(
            configuration: .init(url: server.url, headers: [.init(name: "Authorization", value: "Bearer good")])
        ) { _ in }
        try accepted.connect()
        accepted.close()
        #expect(accepted.waitUntilClosed(timeout: .seconds(30)))
        #expect(server.connections.count == 1)
        #expect(server.upgradeRequests.count == 2)
    }

    @Test func aWrongAcceptValueIsRejected() throws {
        var options = WebSocketTestServer.Options()
        options.acceptOverride = "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
        let server = try WebSocketTestServer(options: options)
        defer { server.stop() }
        let client = WebSocketClient(configuration: .init(url: server.url)) { _ in }
        let error = try #require(throws: WebSocketError.self) { try client.connect() }
        #expect(error.kind == .handshake)
        #expect(error.message.contains("Sec-WebSocket-Accept"))
    }

    @Test func aRefusedConnectionSaysSo() throws {
        let refusing = try RefusingTCPPort()
        let client = WebSocketClient(configuration: .init(url: "ws://127.0.0.1:\(refusing.port)/")) { _ in }
        let error = try #require(throws: WebSocketError.self) { try client.connect() }
        #expect(error.kind == .connect)
        #expect(error.message.contains("ws://127.0.0.1:\(refusing.port)"))
        #expect(error.message.contains("is the server running?"))
    }

    @Test func aSilentServerTimesOut() throws {
        var options = WebSocketTestServer.Options()
        options.responseDelay = .seconds(3)
        let server = try WebSocketTestServer(options: options)
        defer { server.stop() }
        let client = WebSocketClient(
            configuration: .init(url: server.url, connectTimeout: .milliseconds(300))
        ) { _ in }
        let start = ContinuousClock.now
        let error = try #require(throws: WebSocketError.self) { try client.connect() }
        #expect(error.kind == .timeout)
        #expect(start.duration(to: .now) < .seconds(2))
    }

    /// A recorder stopping (Ctrl-C) while its agent is still connecting must not wait for the
    /// connect timeout: close() ends a connect in progress within a poll slice.
    @Test func closingWhileConnectingEndsTheConnectAtOnce() throws {
        var options = WebSocketTestServer.Options()
        options.responseDelay = .seconds(8)
        let server = try WebSocketTestServer(options: options)
        defer { server.stop() }
        let client = WebSocketClient(configuration: .init(url: server.url, connectTimeout: .seconds(10))) { _ in }
        let closedAt = Locked<ContinuousClock.Instant?>(nil)
        let closer = Thread {
            // The connect is in progress: the server has the upgrade request (and holds its answer).
            _ = waitUntil(timeout: .seconds(30)) { !server.upgradeRequests.isEmpty }
            closedAt.withLock { $0 = .now }
            client.close()
        }
        closer.start()
        let error = try #require(throws: WebSocketError.self) { try client.connect() }
        let ended = ContinuousClock.now
        #expect(error.kind == .state, "\(error)")
        let took = try #require(closedAt.withLock { $0 }, "connect ended before close").duration(to: ended)
        #expect(took < .seconds(2), "connect ended \(took) after close, not at the 10 s timeout")
        #expect(client.waitUntilClosed(timeout: .seconds(30)))
    }

    @Test func closingBeforeConnectMakesConnectFail() throws {
        let server = try WebSocketTestServer()
        defer { server.stop() }
        let client = WebSocketClient(configuration: .init(url: server.url)) { _ in }
        client.close()
        #expect(client.waitUntilClosed(timeout: .zero))
        let error = try #require(throws: WebSocketError.self) { try client.connect() }
        #expect(error.kind == .state)
        #expect(server.upgradeRequests.isEmpty)
    }

    @Test(arguments: ["http://127.0.0.1:28148/", "ws://", "ws://user:pw@host/", "wss:///path", "ws://host/a b"])
    func badURLsAreRejected(url: String) {
        let client = WebSocketClient(configuration: .init(url: url)) { _ in }
        #expect(throws: WebSocketError(.badURL, "'\(url)' is not a ws:// or wss:// URL with a host")) {
            try client.connect()
        }
    }

    @Test func headersThatWouldBreakTheRequestAreRefused() throws {
        let server = try WebSocketTestServer()
        defer { server.stop() }
        for header in [
            WebSocketHeader(name: "X-Bad", value: "a\r\nInjected: yes"), .init(name: "Bad Name", value: "v"),
        ] {
            let client = WebSocketClient(configuration: .init(url: server.url, headers: [header])) { _ in }
            let error = try #require(throws: WebSocketError.self) { try client.connect() }
            #expect(error.kind == .handshake)
            #expect(!error.message.contains("Injected"))
        }
        #expect(server.upgradeRequests.isEmpty)
    }

    @Test func theAcceptValueMatchesRFC6455() {
        // RFC 6455 section 1.3.
        #expect(WebSocketHandshake.acceptValue(forKey: "dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }

    @Test(arguments: [0, 1, 3, 19, 20, 55, 56, 63, 64, 65, 119, 120, 200])
    func theAcceptValueMatchesOpenSSL(keyLength: Int) throws {
        // key + GUID spans one to four SHA-1 blocks, across every padding boundary.
        let key = String((0..<keyLength).map { Character(UnicodeScalar(UInt8(33 + ($0 * 31) % 90))) })
        let openssl = Process()
        openssl.executableURL = URL(fileURLWithPath: "/bin/sh")
        openssl.arguments = [
            "-c", "printf '%s' \"$1\" | openssl dgst -sha1 -binary | base64", "sh",
            key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11",
        ]
        let pipe = ChildProcesses.pipe()
        openssl.standardOutput = pipe
        try ChildProcesses.run(openssl)
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        openssl.waitUntilExit()
        let expected = String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(expected.count == 28)
        #expect(WebSocketHandshake.acceptValue(forKey: key) == expected)
    }
}
