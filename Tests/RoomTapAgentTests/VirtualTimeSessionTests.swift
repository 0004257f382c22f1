import Foundation
import RoomTapAgent
import RoomTapAgentTestSupport
import RoomTapCore
import RoomTapSync
import RoomTapTestSupport
import Synchronization
import Testing

/// The agent's timers on virtual time (``ManualAgentClock``, shared with the stand-in's session
/// expiry): minutes of backoff, floors and rollovers in well under a second of wall time, with the
/// very waits the service sees. The driver moves time only to the deadline the agent waits for,
/// and only while it waits (its connects and the server's answers take real time).
@Suite(.serialized) struct VirtualTimeSessionTests {
    /// Nothing is happening in wall time that virtual time must wait for: no session being
    /// opened, and the server has taken up every connection the agent made (its own clock reads
    /// the time of each).
    private func settled(_ rig: AgentTestRig) -> Bool {
        !rig.agent.isOpeningSession && rig.server.connectionCount >= rig.agent.statistics.sessions
    }

    /// Moves `clock` to each deadline the agent waits for until `done` (or 30 s of wall time),
    /// holding time still while the agent and the server are not ``settled(_:)``.
    private func drive(_ clock: ManualAgentClock, _ rig: AgentTestRig, until done: () -> Bool) -> Bool {
        let start = ContinuousClock.now
        while !done() {
            guard ContinuousClock.now - start < .seconds(30) else { return false }
            guard waitUntil(timeout: .seconds(10), { clock.waiters > 0 && settled(rig) || done() })
            else { return false }
            clock.advanceToNextDeadline()
        }
        return true
    }

    @Test func aServerThatEndsEverySessionAtOnceIsBackedOffInFullOnVirtualTime() throws {
        let clock = ManualAgentClock()
        let server = try FakeRealtimeServer(
            expectedKey: AgentTestRig.key, closesAtOnce: (code: 1001, reason: "going away"), clock: clock)
        let wall = ContinuousClock.now
        let rig = try AgentTestRig(
            port: 0, humans: [("alice", ConstantSource(100))], server: server,
            configure: {
                $0.clock = clock
                $0.reconnectDelay = RealtimeAgentConfiguration.jitteredBackoff  // the production delays
                $0.minimumConnectionInterval = .seconds(1)
            }, startRoomAfterConnect: false)
        #expect(drive(clock, rig) { rig.agent.statistics.state == .failed })
        let elapsedWall = ContinuousClock.now - wall
        rig.finish()
        let times = server.connectionTimes
        #expect(times.count == 5, "five attempts: \(times.count)")
        for (a, b) in zip(times, times.dropFirst()) {
            #expect(b - a >= .seconds(1), "never faster than the floor: \(b - a) of virtual time")
        }
        // Attempts 3-5 each waited a backoff of 0.25-0.5, 0.5-1 and 1-2 s (the floor overlaps it).
        #expect(clock.elapsed >= .seconds(4), "virtual time waited: \(clock.elapsed)")
        #expect(rig.log.all.filter { $0.contains("the agent is off") }.count == 1, "\(rig.log.all)")
        print("5 attempts over \(clock.elapsed) of virtual time in \(elapsedWall) of wall time")
        #expect(elapsedWall < .seconds(clock.elapsed.components.seconds), "faster than the wall clock")
    }

    /// The proof: sessions that expire after 5 s over a 60 s room give about 12 sessions,
    /// each rolled over before its end, no error, no reconnect.
    @Test func sixtySecondsOfFiveSecondSessionsRollOverOncePerLifeOnVirtualTime() throws {
        let clock = ManualAgentClock()
        let server = try FakeRealtimeServer(
            expectedKey: AgentTestRig.key, maxSessionDuration: .seconds(5), clock: clock)
        let rig = try AgentTestRig(
            port: 0, humans: [("alice", ConstantSource(0))], server: server,
            configure: {
                $0.clock = clock
                $0.minimumConnectionInterval = .seconds(1)
            }, startRoomAfterConnect: false)
        let wall = ContinuousClock.now
        #expect(drive(clock, rig) { clock.elapsed >= .seconds(60) })
        let elapsedWall = ContinuousClock.now - wall
        let stats = rig.agent.statistics
        let connections = server.connectionCount
        rig.finish()
        print("\(connections) sessions over \(clock.elapsed) of virtual time in \(elapsedWall) of wall time")
        // expires_at is whole seconds: a session lives 4-5 s and is rolled over 10 % of that before
        // its end (3.6-4.5 s after it opened), so 60 s hold 13-17 sessions.
        #expect(connections >= 12 && connections <= 18, "about one session per 4-5 s: \(connections)")
        // Every session after the first a rollover; one more may be opening as the room ends.
        #expect(stats.rollovers == stats.sessions - 1 && [0, 1].contains(connections - stats.sessions), "\(stats)")
        #expect(stats.errors == 0 && stats.reconnects == 0 && stats.retries == 0, "\(rig.log.all)")
        #expect(server.events(ofType: "session.update").count == connections)
        let times = server.connectionTimes
        for (a, b) in zip(times, times.dropFirst()) {
            #expect(b - a >= .seconds(3), "one rollover per life, never at once: \(b - a)")
        }
    }

    /// The proof with replies: 5 s sessions over a 60 s room on virtual time, the room's
    /// clock following the agent's (``FollowingRoomClock``), a question every 1.7 s: about 12
    /// sessions, every one a rollover, no error, and every reply played whole and written.
    @Test func sixtySecondsOfFiveSecondSessionsWithRepliesPlayEveryReplyWholeOnVirtualTime() throws {
        let clock = ManualAgentClock()
        // 0.25 s: shorter than the rollover's lead (10 % of a 4-5 s life), which waits for a
        // reply to play out before it moves (as a 60-minute session's 5-minute lead does).
        let reply = sine24(frequency: 600, count: 6_000)
        let server = try FakeRealtimeServer(
            expectedKey: AgentTestRig.key, autoReply: reply, maxSessionDuration: .seconds(5), clock: clock)
        let dir = try TemporaryDirectory()
        let writer = try TranscriptWriter(path: dir.file("transcript.jsonl"))
        let roomClock = FollowingRoomClock(clock)
        let rig = try AgentTestRig(
            port: 0, humans: [("alice", ConstantSource(0))], server: server,
            configure: {
                $0.clock = clock
                $0.minimumConnectionInterval = .seconds(1)
                $0.transcript = writer
            }, roomClock: roomClock)
        let wall = ContinuousClock.now
        var asked = 0
        var nextQuestion = Duration.milliseconds(200)
        var step = 0
        while clock.elapsed < .seconds(60) || rig.agent.voice.isPlaying {
            if clock.elapsed >= nextQuestion && clock.elapsed < .seconds(60) {
                rig.agent.say("Question \(asked)")
                asked += 1
                nextQuestion += .milliseconds(1_700)
                // Time stands while the reply arrives (wall time): it is all queued before it plays on.
                #expect(rig.wait { rig.agent.statistics.responsesDone >= asked }, "reply \(asked) came")
            }
            #expect(waitUntil { settled(rig) }, "a session opened")
            clock.advance(by: .milliseconds(10))
            step += 1
            let target = Int64(step) * 480
            #expect(waitUntil(every: .microseconds(200)) { rig.room.position >= target }, "the room follows")
        }
        // The agent writes a line when it sees the reply has played out (on its clock): time goes on.
        let allWritten = waitUntil {
            guard writer.lineCount < asked else { return true }
            if settled(rig) { clock.advance(by: .milliseconds(10)) }
            return false
        }
        #expect(allWritten, "every reply written: \(writer.lineCount)/\(asked)")
        let elapsedWall = ContinuousClock.now - wall
        let stats = rig.agent.statistics
        let connections = server.connectionCount
        roomClock.release()
        rig.finish()
        writer.close()
        print("\(connections) sessions, \(asked) replies over \(clock.elapsed) of virtual time in \(elapsedWall)")
        #expect(connections >= 12 && connections <= 18, "about one session per 4-5 s: \(connections)")
        // Every session after the first a rollover; one more may be opening as the room ends.
        #expect(stats.rollovers == stats.sessions - 1 && [0, 1].contains(connections - stats.sessions), "\(stats)")
        #expect(stats.errors == 0 && stats.reconnects == 0 && stats.retries == 0, "\(rig.log.all)")
        #expect(server.events(ofType: "response.create").count == asked && asked == 36)
        // Every reply whole: 0.25 s at 24 kHz is 12,000 samples at 48 kHz, played without a gap.
        #expect(stats.voiceOverflowSamples == 0)
        let voice = rig.voice
        let spoken = voice.count - silentRuns(voice[...])
        #expect(abs(spoken - asked * 12_000) <= asked * 100, "every reply played whole: \(spoken) samples")
        #expect(voice.count >= rig.voiceSink.frameCount * 480 - 480, "agent.wav keeps the room's timeline")
        let heard = (0..<connections).reduce(0) { $0 + server.audio(connection: $1).count }
        #expect(
            Double(heard) >= 0.97 * 60 * 24_000 && stats.listenDroppedFrames == 0,
            "the heard audio moved over from session to session without gaps: \(heard)")
        let lines = transcriptLines(dir.file("transcript.jsonl"))
        #expect(lines.count == asked && lines.allSatisfy { $0["interrupted"] == nil }, "\(lines.prefix(3))")
        let starts = lines.compactMap { $0["start"] as? Double }
        #expect(starts == starts.sorted(), "transcript lines in room order")
        for (a, b) in zip(starts, starts.dropFirst()) {
            #expect(abs(b - a - 1.7) < 0.05, "each reply placed where it was asked for: \(b - a) s apart")
        }
    }
}

/// A room clock that follows a ``ManualAgentClock``: frame n is rendered once the agent's virtual
/// time has reached n × 10 ms, so the room's audio and the agent's timers share one timeline (and
/// the room does not run ahead while time stands). ``release()`` lets it run free (to stop).
///
/// Thread: `run` on the room clock's thread; `release` from any.
final class FollowingRoomClock: RoomClock {
    private let clock: ManualAgentClock
    private let released = Atomic<Bool>(false)

    init(_ clock: ManualAgentClock) { self.clock = clock }

    var isRealTime: Bool { true }

    func release() { released.store(true, ordering: .releasing) }

    func run(_ tick: (Int64) -> Bool) {
        var index: Int64 = 0
        repeat {
            while clock.elapsed < .milliseconds(10 * index) && !released.load(ordering: .acquiring) { usleep(100) }
            index += 1
        } while tick(index - 1)
    }
}
