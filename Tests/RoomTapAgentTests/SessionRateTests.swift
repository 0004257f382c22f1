import Foundation
import RoomTapAgent
import RoomTapAgentTestSupport
import RoomTapCore
import RoomTapSync
import RoomTapTestSupport
import Testing

/// Sessions that never storm: short sessions are rolled over once per life, not at once; a
/// server that ends every session at once gets a bounded number of attempts and one fatal line;
/// no path opens connections faster than the floor. Against the local stand-in, on the wall clock.
@Suite(.serialized) struct SessionRateTests {
    @Test func theRolloverLeadIsAShareOfTheSessionsLife() {
        let lead = { (life: Duration) in
            RealtimeAgentConfiguration.rolloverLead(life: life, lead: .seconds(300), share: 0.1)
        }
        #expect(lead(.seconds(5)) == .milliseconds(500), "a 5 s session: 0.5 s before its end")
        #expect(lead(.seconds(60 * 60)) == .seconds(300), "an hour: 5 minutes")
        #expect(lead(.seconds(20 * 60)) == .seconds(120))
        #expect(lead(.zero) == .zero)
        #expect(lead(.seconds(-3)) == .zero, "an expires_at in the past: no lead")
        for attempt in 1...10 {
            let delay = RealtimeAgentConfiguration.jitteredBackoff(attempt)
            let base = min(30, 0.5 * Double(1 << (attempt - 1)))
            #expect(delay >= base / 2 && delay <= base, "attempt \(attempt): \(delay) s")
        }
    }

    /// The storm of the issue (154 connections in 16 s with a 5 s expiry): sessions of 2-3 s
    /// (`expires_at` in whole seconds) over a 15 s room with a reply asked for every 0.8 s give one
    /// session per life, no error, and every reply played whole.
    @Test func shortSessionsAreRolledOverOncePerLifeAndEveryReplyIsWhole() throws {
        let reply = sine24(frequency: 500, count: 7_200)  // 0.3 s
        let server = try FakeRealtimeServer(
            expectedKey: AgentTestRig.key, autoReply: reply, maxSessionDuration: .seconds(3))
        let rig = try AgentTestRig(port: 0, humans: [("alice", ConstantSource(0))], server: server) {
            $0.minimumConnectionInterval = .seconds(1)
        }
        let start = ContinuousClock.now
        let roomLength = Duration.seconds(15)
        var asked = 0
        while ContinuousClock.now - start < roomLength {
            rig.agent.say("Say something short.")
            asked += 1
            // The next question once this one is answered and its reply played out (or the room ends).
            _ = waitUntil(timeout: .seconds(5), every: .milliseconds(10)) {
                rig.agent.statistics.responsesDone >= asked && !rig.agent.voice.isPlaying
                    || ContinuousClock.now - start >= roomLength
            }
        }
        let elapsed = ContinuousClock.now - start
        #expect(rig.wait { !rig.agent.voice.isPlaying && !server.hasActiveResponse() })
        let stats = rig.agent.statistics
        let connections = server.connectionCount
        rig.finish()
        let seconds = Double(elapsed.components.seconds)
        print("sessions: \(connections) in \(seconds) s (2-3 s each), \(stats.responsesDone) replies of \(asked) asked")
        #expect(
            connections >= Int(seconds / 3) - 1 && connections <= Int(seconds / 2) + 2,
            "one session per 2-3 s life: \(connections) in \(seconds) s; log \(rig.log.all)")
        #expect(stats.errors == 0, "\(rig.log.all)")
        #expect(stats.rollovers >= connections - 2, "each new session a rollover: \(stats)")
        #expect(stats.retries == 0 && stats.reconnects == 0, "\(stats)")
        #expect(stats.responsesDone >= 8, "replies were made: \(stats.responsesDone)")
        // Every reply whole: 0.3 s at 24 kHz is 14,400 samples at 48 kHz, all queued and played.
        let perReply = 14_400
        #expect(
            abs(Int(stats.voiceSamples) - stats.responsesDone * perReply) <= stats.responsesDone * 48,
            "\(stats.voiceSamples) voice samples for \(stats.responsesDone) replies")
        #expect(stats.voiceOverflowSamples == 0)
        let loud = rig.voice.filter { abs($0) > 1_000 }.count
        #expect(
            Double(loud) > 0.9 * Double(stats.responsesDone * perReply),
            "the replies were played: \(loud) loud samples")
    }

    @Test func aServerThatEndsEverySessionAtOnceGetsFiveAttemptsAndOneLine() throws {
        let server = try FakeRealtimeServer(
            expectedKey: AgentTestRig.key, closesAtOnce: (code: 1001, reason: "going away"))
        let rig = try AgentTestRig(
            port: 0, humans: [("alice", ConstantSource(100))], server: server,
            configure: { $0.reconnectDelay = { _ in 0.01 } }, startRoomAfterConnect: false)
        #expect(rig.wait { rig.agent.statistics.state == .failed })
        let framesAtFailure = rig.voiceSink.frameCount
        #expect(rig.wait { rig.voiceSink.frameCount > framesAtFailure + 50 }, "the room goes on")
        rig.finish()
        #expect(server.connectionCount == 5, "a bounded number of attempts: \(server.connectionCount)")
        let fatal = rig.log.all.filter { $0.contains("the agent is off") }
        #expect(fatal.count == 1, "one fatal line: \(rig.log.all)")
        #expect(fatal.first?.contains("ended 5 sessions in a row") == true, "\(fatal)")
        #expect(rig.agent.statistics.failure == fatal.first)
        #expect(!rig.log.all.contains { $0.contains(AgentTestRig.key) })
    }

    @Test func attemptsNeverComeFasterThanTheFloor() throws {
        let server = try FakeRealtimeServer(
            expectedKey: AgentTestRig.key, closesAtOnce: (code: 1011, reason: "server error"))
        let rig = try AgentTestRig(
            port: 0, humans: [("alice", ConstantSource(100))], server: server,
            configure: {
                $0.reconnectDelay = { _ in 0 }  // no backoff at all: only the floor holds
                $0.minimumConnectionInterval = .milliseconds(300)
                $0.maxQuickSessionEnds = 4
            }, startRoomAfterConnect: false)
        #expect(rig.wait { rig.agent.statistics.state == .failed })
        rig.finish()
        // The server sees a connection when its upgrade is done, which a loaded machine delays
        // (up to the next attempt's start): so connection k+2 comes at least one floor after k.
        let times = server.connectionTimes
        #expect(times.count == 4)
        for (a, b) in zip(times, times.dropFirst(2)) {
            #expect(b - a >= .milliseconds(290), "attempts \(b - a) apart over two steps")
        }
        #expect(rig.log.all.filter { $0.contains("the agent is off") }.count == 1, "\(rig.log.all)")
    }
}
