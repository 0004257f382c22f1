import Foundation
import RoomTapTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// TLS in front of a plain test server, for `wss://` tests: a self-signed certificate for
/// `localhost` and `127.0.0.1` made with the `openssl` CLI, served by
/// `socat OPENSSL-LISTEN:<port>,... TCP:127.0.0.1:<plainPort>` (both must be installed).
/// Any thread; `stop` ends socat.
public final class TLSTestTerminator: Sendable {
    /// The TLS port.
    public let port: UInt16
    /// The PEM certificate (its own CA) to trust: `WebSocketConfiguration.caFile`.
    public let certificateFile: String
    private let directory: String
    private let process: Process

    /// Makes a key and certificate in a new temporary directory and starts socat on `port` (by
    /// default a port the kernel just gave out: socat cannot report one it picked, so a port taken
    /// meanwhile by another process is retried with a new one); returns once socat accepts
    /// connections (or throws after three tries of 5 s).
    public init(port: UInt16 = 0, forwardingTo plainPort: UInt16) throws {
        directory = NSTemporaryDirectory() + "roomtap-tls-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        certificateFile = directory + "/cert.pem"
        let keyFile = directory + "/key.pem"
        let openssl = Process()
        openssl.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        openssl.arguments = [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", keyFile,
            "-out", certificateFile, "-days", "2", "-subj", "/CN=localhost",
            "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
        ]
        openssl.standardOutput = FileHandle.nullDevice
        openssl.standardError = FileHandle.nullDevice
        try ChildProcesses.run(openssl)
        openssl.waitUntilExit()
        guard openssl.terminationStatus == 0 else {
            throw TestTCP.Failure(description: "openssl req failed with status \(openssl.terminationStatus)")
        }
        var attempt = 0
        while true {
            attempt += 1
            let chosen = port != 0 ? port : try TestTCP.freePort()
            let socat = Process()
            socat.executableURL = URL(fileURLWithPath: "/usr/bin/socat")
            socat.arguments = [
                "OPENSSL-LISTEN:\(chosen),bind=127.0.0.1,cert=\(certificateFile),key=\(keyFile),verify=0,reuseaddr,fork",
                "TCP:127.0.0.1:\(plainPort)",
            ]
            socat.standardOutput = FileHandle.nullDevice
            socat.standardError = FileHandle.nullDevice
            try ChildProcesses.run(socat)
            let ready = waitUntil(timeout: .seconds(5)) {
                guard socat.isRunning else { return true }  // exited: the port was taken
                let fd = TestTCP.connect(port: chosen)
                guard fd >= 0 else { return false }
                close(fd)
                return true
            }
            if ready && socat.isRunning {
                self.port = chosen
                self.process = socat
                return
            }
            if socat.isRunning {
                kill(socat.processIdentifier, SIGKILL)
                socat.waitUntilExit()
            }
            guard port == 0 && attempt < 3 else {
                try? FileManager.default.removeItem(atPath: directory)
                throw TestTCP.Failure(description: "socat did not start listening on \(chosen)")
            }
        }
    }

    /// Ends socat and removes the key and certificate. Idempotent.
    public func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)  // socat may ignore SIGTERM while it serves
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(atPath: directory)
    }
}
