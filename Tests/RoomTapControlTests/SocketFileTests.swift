import Foundation
import RoomTapControl
import RoomTapSync
import RoomTapTestSupport
import Synchronization
import Testing

/// The socket file's lifecycle: modes, stale and live sockets, files that are not ours.
@Suite struct SocketFileTests {
    @Test func createsAPrivateDirectoryAndAnOwnerOnlySocket() throws {
        let directory = ShortTemporaryDirectory()
        let path = directory.file("run/c.sock")
        let server = try ControlServer(path: path, handler: TestHandler())
        defer { server.stop() }
        let directoryMode = try #require(fileMode(directory.file("run")))
        #expect(directoryMode & S_IFMT == S_IFDIR)
        #expect(directoryMode & 0o777 == 0o700)
        let socketMode = try #require(fileMode(path))
        #expect(socketMode & S_IFMT == S_IFSOCK)
        #expect(socketMode & 0o777 == 0o600)
        #expect(try ControlClient(path: path).request("ping") == ["pong": true])
    }

    @Test func refusesAPerUserDirectoryOthersCanReach() throws {
        let runtime = ShortTemporaryDirectory()
        let environment = ["XDG_RUNTIME_DIR": runtime.path]
        let path = ControlSocketPath.recorderSocket(pid: getpid(), environment: environment)
        #expect(path == runtime.path + "/roomtap/rec-\(getpid()).sock")
        mkdir(runtime.file("roomtap"), 0o755)
        chmod(runtime.file("roomtap"), 0o755)
        #expect(
            throws: ControlSocketError.directory(
                path: runtime.file("roomtap"),
                reason: "other users can access it (mode 0755); run chmod 700 \(runtime.file("roomtap"))")
        ) { try ControlServer(path: path, handler: TestHandler(), environment: environment) }
        #expect(fileMode(path) == nil)
        chmod(runtime.file("roomtap"), 0o700)
        // Owned by someone else (only root can arrange that here).
        if chown(runtime.file("roomtap"), 54_321, 54_321) == 0 {
            #expect(
                throws: ControlSocketError.directory(
                    path: runtime.file("roomtap"),
                    reason: "owned by uid 54321, not by you (uid \(geteuid())); remove it")
            ) { try ControlServer(path: path, handler: TestHandler(), environment: environment) }
            chown(runtime.file("roomtap"), geteuid(), getegid())
        }
        let server = try ControlServer(path: path, handler: TestHandler(), environment: environment)
        server.stop()
        // A symbolic link in its place is refused too.
        rmdir(runtime.file("roomtap"))
        symlink(runtime.path, runtime.file("roomtap"))
        #expect(throws: ControlSocketError.self) {
            try ControlServer(path: path, handler: TestHandler(), environment: environment)
        }
    }

    @Test func createsTheMissingPerUserDirectory() throws {
        let runtime = ShortTemporaryDirectory()
        let environment = ["XDG_RUNTIME_DIR": runtime.path]
        let path = ControlSocketPath.recorderSocket(pid: getpid(), environment: environment)
        let server = try ControlServer(path: path, handler: TestHandler(), environment: environment)
        defer { server.stop() }
        #expect(fileMode(runtime.file("roomtap")).map { $0 & 0o777 } == 0o700)
    }

    @Test func replacesAStaleSocket() throws {
        let directory = ShortTemporaryDirectory()
        let path = directory.file("c.sock")
        // A socket file nobody listens on, as a crashed recorder leaves it.
        let fd = boundUnixSocket(at: path)
        #expect(fd >= 0)
        close(fd)
        #expect(fileMode(path).map { $0 & S_IFMT } == S_IFSOCK)
        #expect(throws: ControlClientError.noRecorder(path: path)) { try ControlClient(path: path) }

        let server = try ControlServer(path: path, handler: TestHandler())
        defer { server.stop() }
        #expect(try ControlClient(path: path).request("ping") == ["pong": true])
    }

    @Test func refusesALiveSocketWithTheMessage() throws {
        let directory = ShortTemporaryDirectory()
        let path = directory.file("c.sock")
        let first = try ControlServer(path: path, handler: TestHandler())
        defer { first.stop() }
        do {
            _ = try ControlServer(path: path, handler: TestHandler())
            Issue.record("a second server started on a live socket")
        } catch {
            #expect(error == .inUse(path: path))
            #expect(
                error.description
                    == "another recorder is running at \(path) (stop it or choose another --control path)")
        }
        #expect(try ControlClient(path: path).request("ping") == ["pong": true])
    }

    @Test func leavesAFileThatIsNotASocketAlone() throws {
        let directory = ShortTemporaryDirectory()
        let path = directory.file("c.sock")
        try "keep me".write(toFile: path, atomically: false, encoding: .utf8)
        #expect(throws: ControlSocketError.notASocket(path: path)) {
            try ControlServer(path: path, handler: TestHandler())
        }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "keep me")
        #expect(throws: ControlClientError.noRecorder(path: path)) { try ControlClient(path: path) }
    }

    @Test func stopRemovesTheSocketOnlyIfItIsStillOurs() throws {
        let directory = ShortTemporaryDirectory()
        let path = directory.file("c.sock")
        let server = try ControlServer(path: path, handler: TestHandler())
        let client = try ControlClient(path: path)
        #expect(try client.request("ping") == ["pong": true])
        server.stop()
        server.stop()
        #expect(fileMode(path) == nil)
        #expect(throws: ControlClientError.disconnected(path: path)) { try client.request("ping") }
        do {
            _ = try ControlClient(path: path)
            Issue.record("connected after stop")
        } catch {
            #expect(error.description == "no recorder at \(path); start one with roomtap record")
        }

        // Someone replaced the socket file: stop leaves their file.
        let second = try ControlServer(path: path, handler: TestHandler())
        unlink(path)
        try "theirs".write(toFile: path, atomically: false, encoding: .utf8)
        second.stop()
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "theirs")
    }

    @Test func stopEndsAWatchAndReleasingTheServerStopsIt() throws {
        let directory = ShortTemporaryDirectory()
        let path = directory.file("c.sock")
        var server: ControlServer? = try ControlServer(path: path, handler: TestHandler())
        let outcome = Locked<ControlClientError?>(nil)
        let watching = Atomic<Bool>(false)
        let watcher = BackgroundWork {
            do throws(ControlClientError) {
                let client = try ControlClient(path: path)
                watching.store(true, ordering: .relaxed)
                try client.watch { _ in true }
            } catch {
                outcome.withLock { $0 = error }
            }
        }
        // The server answered the watch request: the client is a watcher now.
        #expect(
            waitUntil(timeout: .seconds(30)) { watching.load(ordering: .relaxed) && server?.statistics.requests == 1 })
        server = nil  // deinit stops: clients closed, socket removed
        #expect(watcher.wait(timeout: 30))
        #expect(outcome.withLock { $0 } == .disconnected(path: path))
        #expect(fileMode(path) == nil)
        #expect(server == nil)
    }

    @Test func theHandlerCanStopTheServer() throws {
        final class StoppingHandler: ControlHandler {
            let server = Locked<ControlServer?>(nil)
            func handle(_ request: ControlRequest) -> ControlResponse {
                guard request.command == "shutdown" else { return .unknownCommand(request) }
                server.withLock { $0 }?.stop()
                return .ok(["stopping": true])
            }
        }
        let directory = ShortTemporaryDirectory()
        let path = directory.file("c.sock")
        let handler = StoppingHandler()
        let server = try ControlServer(path: path, handler: handler)
        handler.server.withLock { $0 = server }
        defer { handler.server.withLock { $0 = nil } }
        let client = try ControlClient(path: path)
        #expect(try client.request("shutdown") == ["stopping": true])
        server.stop()  // waits for the thread the handler asked to end
        #expect(fileMode(path) == nil)
    }

    @Test func aPathTooLongForASocketIsAClearError() throws {
        let directory = ShortTemporaryDirectory()
        let path = directory.file(String(repeating: "n", count: 100) + ".sock")
        do {
            _ = try ControlServer(path: path, handler: TestHandler())
            Issue.record("a server bound a path of \(path.utf8.count) bytes")
        } catch {
            #expect(error == .pathTooLong(path: path))
            #expect(error.description.contains("choose a shorter --control path"))
        }
        #expect(throws: ControlClientError.self) { try ControlClient(path: path) }
        // The longest path that fits works.
        let longest = directory.path + "/" + String(repeating: "m", count: 107 - directory.path.utf8.count - 1)
        #expect(longest.utf8.count == 107)
        let server = try ControlServer(path: longest, handler: TestHandler())
        defer { server.stop() }
        #expect(try ControlClient(path: longest).request("ping") == ["pong": true])
    }

    @Test func noRecorderMessageIsExact() {
        let path = "/tmp/rtc-none-\(getpid())/x.sock"
        do {
            _ = try ControlClient(path: path)
            Issue.record("connected to nothing")
        } catch {
            #expect(error.description == "no recorder at \(path); start one with roomtap record")
        }
    }
}
