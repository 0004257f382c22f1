import Foundation
import RoomTapAgentTestSupport
import RoomTapAll
import RoomTapCLITestSupport
import RoomTapTestSupport
import Testing

/// Issue 25's storm, through the real `roomtap record --agent` that once opened 154 connections in
/// 16 s against 5 s sessions: sessions shorter than the old fixed 5-minute rollover lead are rolled
/// over about once per life, attempts are never closer than the 1 s floor, and a server that ends
/// every session at once gets a bounded number of attempts and one fatal line while the recording
/// goes on.
@Suite("CLI: the agent never storms the service", .serialized)
struct AgentStormCLITests {
    static let key = "sk-test-STORM-0123456789"

    /// Gaps between consecutive connections, in seconds.
    private func gaps(_ server: FakeRealtimeServer) -> [Double] {
        let times = server.connectionTimes
        return zip(times, times.dropFirst()).map { a, b in
            let d = a.duration(to: b)
            return Double(d.components.seconds) + Double(d.components.attoseconds) * 1e-18
        }
    }

    @Test func shortSessionsAreRolledOverAboutOncePerLife() throws {
        // expires_at is whole seconds: each session lives 2-3 s.
        let server = try FakeRealtimeServer(expectedKey: Self.key, maxSessionDuration: .seconds(3))
        defer { server.stop() }
        let out = try temporaryDirectory()
        let outcome = try CLIRunner.run(
            [
                "record", "--file", "alice=\(sample("alice"))", "--realtime", "--duration", "12", "--agent",
                "--agent-url", server.url, "--out", out.path, "--quiet",
            ], environment: ["OPENAI_API_KEY": Self.key], timeout: 90)
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let count = server.connectionCount
        let spacing = gaps(server)
        print("agent storm (CLI): \(count) connections in a 12 s room of 2-3 s sessions; gaps \(spacing)")
        // About one per 2-3 s life (12 s / 2.7 s = 4.4, plus the first): never dozens.
        #expect((3...8).contains(count), "\(count) connections: \(spacing)")
        #expect(spacing.allSatisfy { $0 >= 0.9 }, "attempts at least the 1 s floor apart: \(spacing)")
        let report =
            try JSONSerialization.jsonObject(with: Data(contentsOf: out.appendingPathComponent("room.json")))
            as? [String: Any]
        let stats = (report?["agent"] as? [String: Any])?["statistics"] as? [String: Any]
        #expect((stats?["rollovers"] as? Int ?? 0) >= 2, "\(stats ?? [:])")
        #expect(!outcome.stderr.contains(Self.key))
    }

    @Test func aServerThatEndsEverySessionAtOnceGetsFiveAttemptsAndOneLine() throws {
        let server = try FakeRealtimeServer(expectedKey: Self.key, closesAtOnce: (code: 1011, reason: "server error"))
        defer { server.stop() }
        let out = try temporaryDirectory()
        let control = uniqueControlPath()
        let recorder = try CLIRunner.start(
            [
                "record", "--file", "alice=\(sample("alice"))", "--file", "later=\(sample("bob"))@300", "--realtime",
                "--agent", "--agent-url", server.url, "--out", out.path, "--quiet", "--control", control,
            ], environment: ["OPENAI_API_KEY": Self.key])
        defer { if recorder.isRunning { recorder.signal(SIGKILL) } }
        #expect(
            try waitUntil(timeout: .seconds(90), every: .milliseconds(100)) {
                recorder.stderrSoFar.contains("ended 5 sessions in a row")
            }, "\(recorder.stderrSoFar)")
        let spacing = gaps(server)
        print("agent storm (CLI): a server closing every session at once: \(server.connectionCount) attempts; ")
        print("  gaps \(spacing)")
        #expect(server.connectionCount == 5, "a bounded number of attempts: \(spacing)")
        #expect(spacing.allSatisfy { $0 >= 0.9 }, "\(spacing)")
        // The recording goes on without the agent, and ends whole.
        #expect(try CLIRunner.run(["stop", "--control", control], timeout: 60).status == 0)
        let outcome = recorder.wait(timeout: 60)
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(server.connectionCount == 5, "no attempt after the fatal line")
        let fatal = outcome.stderr.split(separator: "\n").filter { $0.contains("ended 5 sessions in a row") }
        #expect(fatal.count == 1, "one fatal line: \(outcome.stderr)")
        let alice = try WAVFile.readSamples(path: out.appendingPathComponent("alice.wav").path).1
        #expect(alice.contains { abs($0) > 500 }, "alice is recorded")
        #expect(!outcome.stderr.contains(Self.key))
    }
}
