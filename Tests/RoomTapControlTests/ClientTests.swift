import Foundation
import RoomTapControl
import Testing

@Suite struct ClientTests {
    @Test func aRecorderThatDoesNotAnswerTimesOut() throws {
        let directory = ShortTemporaryDirectory()
        let path = directory.file("mute.sock")
        // A socket that listens but never answers (the kernel completes the connection).
        let fd = boundUnixSocket(at: path)
        defer { close(fd) }
        #expect(fd >= 0 && listen(fd, 4) == 0)

        let client = try ControlClient(path: path)
        let start = Date()
        #expect(throws: ControlClientError.timeout(command: "ping")) {
            try client.request("ping", timeout: .milliseconds(300))
        }
        #expect(Date().timeIntervalSince(start) >= 0.25)
        #expect(
            ControlClientError.timeout(command: "ping").description
                == #"the recorder did not answer "ping" in time; is it stuck?"#)
    }

    @Test func failuresCarryTheRecordersCodeAndMessage() throws {
        let directory = ShortTemporaryDirectory()
        let path = directory.file("c.sock")
        let server = try ControlServer(path: path, handler: TestHandler())
        defer { server.stop() }
        let client = try ControlClient(path: path)
        do {
            _ = try client.request("volume", ["track": "alice", "volume": -1])
            Issue.record("a negative volume was accepted")
        } catch {
            guard case .failure(let code, let message) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(code == .outOfRange)
            #expect(message == #""volume" -1 is outside 0...10 (use decibels like "-6dB" to clamp)"#)
            #expect(error.description == message)
        }
    }
}
