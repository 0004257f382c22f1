import Foundation
import RoomTapAgentTestSupport
import RoomTapTestSupport
import RoomTapWebSocket
import Testing

/// Proxies from the environment (`http_proxy`, `https_proxy`), as libcurl reads them. The
/// environment is process-wide, so the client runs in a child copy of this test binary
/// (servers on ports the kernel picks).
@Suite struct WebSocketEnvironmentProxyTests {
    private static let childURLs = "ROOMTAP_WS_PROXY_CHILD_URLS"
    private static let childCAFile = "ROOMTAP_WS_PROXY_CHILD_CA"

    @Test func theProxyFromTheEnvironmentIsUsedForWsAndWss() throws {
        var options = WebSocketTestServer.Options()
        options.echo = true
        let server = try WebSocketTestServer(options: options)
        defer { server.stop() }
        let proxy = try ConnectProxyTestServer()
        defer { proxy.stop() }
        let tls = try TLSTestTerminator(forwardingTo: server.port)
        defer { tls.stop() }

        var environment = ProcessInfo.processInfo.environment
        for name in ["no_proxy", "NO_PROXY", "all_proxy", "ALL_PROXY", "HTTPS_PROXY"] { environment[name] = nil }
        environment["http_proxy"] = proxy.url
        environment["https_proxy"] = proxy.url
        environment[Self.childURLs] = "\(server.url)plain wss://localhost:\(tls.port)/secure"
        environment[Self.childCAFile] = tls.certificateFile
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        child.arguments = ["--testing-library", "swift-testing", "--filter", "environmentProxyChild"]
        child.environment = environment
        let output = ChildProcesses.pipe()
        child.standardOutput = output
        child.standardError = output
        try ChildProcesses.run(child)
        let log = output.fileHandleForReading.readDataToEndOfFile()
        child.waitUntilExit()
        #expect(child.terminationStatus == 0, "\(String(decoding: log, as: UTF8.self).suffix(2000))")
        #expect(String(decoding: log, as: UTF8.self).contains("environmentProxyChild() passed"))
        #expect(proxy.connectTargets == ["127.0.0.1:\(server.port)", "localhost:\(tls.port)"])
        #expect(server.connections.map(\.request.target) == ["/plain", "/secure"])
    }

    /// The child's half: connects to each URL with the default configuration (proxy from the
    /// environment) and checks an echo. Runs only inside the child process.
    @Test(.enabled(if: ProcessInfo.processInfo.environment[childURLs] != nil))
    func environmentProxyChild() throws {
        let environment = ProcessInfo.processInfo.environment
        for url in (environment[Self.childURLs] ?? "").split(separator: " ") {
            let events = EventRecorder()
            let client = WebSocketClient(
                configuration: .init(url: String(url), caFile: environment[Self.childCAFile]), onEvent: events.handler)
            try client.connect()
            #expect(client.send(text: "through the environment's proxy"))
            #expect(events.wait(count: 1) == [.text("through the environment's proxy")])
            client.close()
            #expect(client.waitUntilClosed(timeout: .seconds(30)))
        }
    }
}
