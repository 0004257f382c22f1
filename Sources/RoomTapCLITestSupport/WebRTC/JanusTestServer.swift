public import Foundation
import RoomTapSync
import RoomTapTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// A real Janus (Debian `janus` 1.1, `make interop` installs it) for the WebRTC client's tests:
/// the VideoRoom plugin and the HTTP API (`baseURL`, on 127.0.0.1 and a reserved free port), with
/// ICE on 127.0.0.1 only, so no test traffic leaves loopback.
///
/// Janus never gathers ICE candidates on a loopback interface (src/ice.c skips IFF_LOOPBACK,
/// whatever the configuration says), so the server runs with `Tests/Interop/webrtc/loopback_ice.c`
/// preloaded (built here with `cc`: `getifaddrs` reports no interface as loopback) and
/// `nat: { ice_enforce_list = "127.0.0.1" }`: one host candidate, 127.0.0.1, and no other.
/// Everything (configuration, the shim, `janus.log`) lives in a scratch directory of its own.
/// `init` waits (at most 30 s) until `GET /janus/info` answers and throws with Janus's log tail
/// when it cannot start; ``stop()`` (and deinit) end it.
///
/// Thread: any; every call blocks the caller.
public final class JanusTestServer: @unchecked Sendable {
    /// Why Janus could not start or a request failed, with Janus's own words.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// The HTTP API's port on 127.0.0.1.
    public let port: UInt16
    /// The scratch directory (conf/, janus.log).
    public let directory: URL
    private let process: Process
    private let isStopped = Locked(false)

    /// `http://127.0.0.1:PORT/janus`.
    public var baseURL: String { "http://127.0.0.1:\(port)/janus" }

    /// The path of Janus's log (its stdout and stderr).
    public var logPath: String { directory.appendingPathComponent("janus.log").path }

    /// Starts Janus; `sessionTimeout` (seconds) is how long a session lives without a request
    /// (Janus's default 60), `debugLevel` Janus's log level (4: info; 7: everything).
    public init(sessionTimeout: Int = 60, debugLevel: Int = 4) throws {
        let lib = "/usr/lib/x86_64-linux-gnu/janus"
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/janus"),
            FileManager.default.fileExists(atPath: "\(lib)/plugins/libjanus_videoroom.so")
        else { throw Failure(description: "Janus is not installed: apt-get install janus (make interop does)") }
        directory = try TestScratch.directory("janus")
        port = try freeTCPPort()
        let dir = directory.path
        for sub in ["conf", "plugins", "transports"] {
            try FileManager.default.createDirectory(atPath: "\(dir)/\(sub)", withIntermediateDirectories: true)
        }
        try FileManager.default.createSymbolicLink(
            atPath: "\(dir)/plugins/libjanus_videoroom.so", withDestinationPath: "\(lib)/plugins/libjanus_videoroom.so")
        try FileManager.default.createSymbolicLink(
            atPath: "\(dir)/transports/libjanus_http.so", withDestinationPath: "\(lib)/transports/libjanus_http.so")
        try Self.buildShim(into: "\(dir)/loopback_ice.so")
        try Self.configuration(directory: dir, port: port, sessionTimeout: sessionTimeout, debugLevel: debugLevel)
        FileManager.default.createFile(atPath: "\(dir)/janus.log", contents: nil)
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: "\(dir)/janus.log"))
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/janus")
        // Not -T: that is --ice-tcp, not the transports folder (janus.jcfg gives the folders).
        process.arguments = ["-F", "\(dir)/conf", "-P", "\(dir)/plugins"]
        var environment = ProcessInfo.processInfo.environment
        environment["LD_PRELOAD"] = "\(dir)/loopback_ice.so"
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = log
        process.standardError = log
        try ChildProcesses.run(process)
        try? log.close()
        let process = process
        let port = port
        let up = waitUntil(timeout: .seconds(30), every: .milliseconds(20)) {
            guard process.isRunning else { return true }
            return (try? LoopbackHTTP.request("GET", port: port, path: "/janus/info", timeout: .seconds(2)))?.status
                == 200
        }
        guard process.isRunning, up else {
            let why = process.isRunning ? "did not answer GET /janus/info within 30 s" : "exited"
            stop()
            throw Failure(description: "Janus \(why): \(logTail())")
        }
    }

    deinit { stop() }

    /// Creates VideoRoom `id` (not permanent) through the HTTP API: Opus audio, `publishers`
    /// publishers at most, `pin` when given. Throws with Janus's error (427: the room exists).
    public func createRoom(id: UInt64, pin: String? = nil, audiocodec: String = "opus", publishers: Int = 16)
        throws
    {
        var body: [String: Any] = [
            "request": "create", "room": id, "audiocodec": audiocodec, "publishers": publishers,
            "description": "roomtap test room \(id)",
        ]
        if let pin { body["pin"] = pin }
        let answer = try videoroomRequest(body)
        guard answer["videoroom"] as? String == "created" else {
            throw Failure(description: "Janus did not create room \(id): \(answer)")
        }
    }

    /// Sends one synchronous VideoRoom request (create, destroy, exists, listparticipants, ...)
    /// in a session of its own and returns the plugin's answer (`plugindata.data`). Throws with
    /// the error code and text when the plugin answers `error_code`.
    public func videoroomRequest(_ body: [String: Any]) throws -> [String: Any] {
        let session = try api("/janus", ["janus": "create"])
        guard let sessionID = (session["data"] as? [String: Any])?["id"] as? UInt64 else {
            throw Failure(description: "Janus made no session: \(session)")
        }
        defer { _ = try? api("/janus/\(sessionID)", ["janus": "destroy"]) }
        let handle = try api("/janus/\(sessionID)", ["janus": "attach", "plugin": "janus.plugin.videoroom"])
        guard let handleID = (handle["data"] as? [String: Any])?["id"] as? UInt64 else {
            throw Failure(description: "Janus attached no handle: \(handle)")
        }
        let answer = try api("/janus/\(sessionID)/\(handleID)", ["janus": "message", "body": body])
        let data = (answer["plugindata"] as? [String: Any])?["data"] as? [String: Any] ?? [:]
        if let code = data["error_code"] {
            throw Failure(description: "Janus VideoRoom error \(code): \(data["error"] ?? "")")
        }
        return data
    }

    /// The last `lines` lines of Janus's log.
    public func logTail(_ lines: Int = 12) -> String {
        let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").suffix(lines).joined(separator: " | ")
    }

    /// Stops Janus with SIGKILL (its rooms live in memory: nothing to save; and a child of the test
    /// binary starts with SIGTERM blocked, inherited from the spawning thread's mask, so SIGTERM
    /// would not reach it). Idempotent.
    public func stop() {
        let first = isStopped.withLock { stopped -> Bool in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// POSTs `message` (with a fresh transaction) to `path` of the HTTP API; the JSON answer.
    private func api(_ path: String, _ message: [String: Any]) throws -> [String: Any] {
        var message = message
        message["transaction"] = UUID().uuidString
        let body = try JSONSerialization.data(withJSONObject: message)
        let response = try LoopbackHTTP.request(
            "POST", port: port, path: path, headers: [("Content-Type", "application/json")], body: body)
        guard response.status == 200,
            let json = try JSONSerialization.jsonObject(with: response.body) as? [String: Any]
        else { throw Failure(description: "Janus answered \(response.status) to \(path): \(response.text)") }
        if json["janus"] as? String == "error" {
            throw Failure(description: "Janus error on \(path): \(json["error"] ?? json)")
        }
        return json
    }

    /// Compiles the loopback shim (`Tests/Interop/webrtc/loopback_ice.c`) to `path`.
    private static func buildShim(into path: String) throws {
        let source = WebRTCPeers.scripts.appendingPathComponent("loopback_ice.c").path
        let cc = Process()
        cc.executableURL = URL(fileURLWithPath: "/usr/bin/cc")
        cc.arguments = ["-shared", "-fPIC", "-O2", "-o", path, source, "-ldl"]
        let errors = ChildProcesses.pipe()
        cc.standardError = errors
        cc.standardOutput = FileHandle.nullDevice
        try ChildProcesses.run(cc)
        try? errors.fileHandleForWriting.close()
        let said = errors.fileHandleForReading.readDataToEndOfFile()
        cc.waitUntilExit()
        guard cc.terminationStatus == 0 else {
            throw Failure(description: "cc could not build \(source): \(String(decoding: said, as: UTF8.self))")
        }
    }

    /// janus.jcfg (folders, 127.0.0.1 in SDPs, ICE on 127.0.0.1 only, no ICE-TCP, no IPv6), the
    /// HTTP transport on `port` of lo, and the VideoRoom plugin (rooms come from ``createRoom``).
    private static func configuration(directory dir: String, port: UInt16, sessionTimeout: Int, debugLevel: Int)
        throws
    {
        let janus = """
            general: { configs_folder = "\(dir)/conf", plugins_folder = "\(dir)/plugins",
              transports_folder = "\(dir)/transports", events_folder = "\(dir)/none", loggers_folder = "\(dir)/none",
              debug_level = \(debugLevel), admin_secret = "roomtap-test", interface = "127.0.0.1",
              session_timeout = \(sessionTimeout) }
            nat: { ice_enforce_list = "127.0.0.1", ice_tcp = false, nice_debug = false }
            media: { ipv6 = false }

            """
        let http = """
            general: { json = "compact", base_path = "/janus", http = true, port = \(port), interface = "lo", https = false }
            admin: { admin_http = false }

            """
        try janus.write(toFile: "\(dir)/conf/janus.jcfg", atomically: true, encoding: .utf8)
        try http.write(toFile: "\(dir)/conf/janus.transport.http.jcfg", atomically: true, encoding: .utf8)
        try "general: { }\n".write(toFile: "\(dir)/conf/janus.plugin.videoroom.jcfg", atomically: true, encoding: .utf8)
    }
}
