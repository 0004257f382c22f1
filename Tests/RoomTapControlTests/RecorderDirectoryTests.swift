import Foundation
import RoomTapControl
import RoomTapTestSupport
import Testing

/// Finding the running recorders in the runtime directory: live ones are listed, the sockets of
/// recorders whose process is gone are removed, and nothing else is ever touched.
@Suite struct RecorderDirectoryTests {
    /// Answers `hello` as a recorder of `directory` would.
    final class HelloHandler: ControlHandler {
        let directory: String
        init(directory: String) { self.directory = directory }

        func handle(_ request: ControlRequest) -> ControlResponse {
            guard request.command == "hello" else { return .unknownCommand(request) }
            return .ok([
                "pid": .number(Double(getpid())), "dir": .string(directory), "tracks": 3, "uptime": 61.5,
                "started": "2026-12-01T00:00:00Z", "state": "recording",
            ])
        }
    }

    /// A socket file at `path` that nobody listens on, as a recorder killed with kill -9 leaves it.
    private func leaveStaleSocket(at path: String) {
        let fd = boundUnixSocket(at: path)
        #expect(fd >= 0)
        close(fd)
    }

    /// A process id that has just ended (spawned, exited, reaped).
    private func deadPID() throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/true")
        try ChildProcesses.run(process)
        process.waitUntilExit()
        return process.processIdentifier
    }

    private func names(_ directory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
    }

    @Test func listsTheLiveAndRemovesOnlyTheStaleSocketsOfEndedRecorders() throws {
        let runtime = ShortTemporaryDirectory()
        let environment = ["XDG_RUNTIME_DIR": runtime.path]
        let sockets = ControlSocketPath.defaultDirectory(environment: environment)
        let live = ControlSocketPath.recorderSocket(pid: getpid(), environment: environment)
        let server = try ControlServer(
            path: live, handler: HelloHandler(directory: "/rec/a"), environment: environment)
        defer { server.stop() }
        let dead = try deadPID()
        #expect(ProcessLiveness.isGone(dead))
        #expect(!ProcessLiveness.isGone(getpid()))
        // The stale socket of an ended recorder; a stale one of a live pid (a recorder between bind
        // and listen); a stale one under another name; a file that is not a socket.
        leaveStaleSocket(at: sockets + "/rec-\(dead).sock")
        leaveStaleSocket(at: sockets + "/rec-1.sock")
        leaveStaleSocket(at: sockets + "/mine.sock")
        let dead2 = try deadPID()
        #expect(FileManager.default.createFile(atPath: sockets + "/rec-\(dead2).sock", contents: Data("x".utf8)))

        let scan = RecorderDirectory.scan(environment: environment)
        #expect(
            scan.recorders == [
                RunningRecorder(
                    socket: live, pid: getpid(), directory: "/rec/a", tracks: 3, uptime: 61.5,
                    started: "2026-12-01T00:00:00Z", state: "recording")
            ])
        #expect(scan.removed == [sockets + "/rec-\(dead).sock"])
        #expect(scan.unanswered.isEmpty)
        #expect(
            names(sockets)
                == ["mine.sock", "rec-1.sock", "rec-\(dead2).sock", "rec-\(getpid()).sock"].sorted(),
            "only the stale socket of the ended recorder is gone")

        // A recorder at start removes them the same way, without asking the live ones anything.
        leaveStaleSocket(at: sockets + "/rec-\(dead).sock")
        #expect(RecorderDirectory.removeStale(environment: environment) == [sockets + "/rec-\(dead).sock"])
        #expect(names(sockets).count == 4)
        #expect(try ControlClient(path: live).request("hello")["dir"] == "/rec/a", "the live one still answers")
    }

    @Test func aZombieCountsAsGone() throws {
        var pid: pid_t = 0
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/true"), nil]
        defer { for arg in argv { free(arg) } }
        #expect(posix_spawn(&pid, "/bin/true", nil, nil, argv, nil) == 0)
        // Not reaped yet: kill(pid, 0) still succeeds, but the process has ended.
        #expect(waitUntil { ProcessLiveness.isGone(pid) })
        #expect(kill(pid, 0) == 0, "a zombie, not yet reaped")
        var status: Int32 = 0
        #expect(waitpid(pid, &status, 0) == pid)
        #expect(ProcessLiveness.isGone(pid))
    }
}
