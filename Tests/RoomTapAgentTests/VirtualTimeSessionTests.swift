import Foundation
import RoomTapAgent
import RoomTapCore
import RoomTapSync
import RoomTapTestSupport
import Testing

/// The agent's timers on virtual time (``ManualAgentClock``, shared with the stand-in's session
/// expiry): minutes of backoff, floors and rollovers in well under a second of wall time, with the
/// very waits the service sees. The driver moves time only to the deadline the agent waits for,
/// and only while it waits (its connects and the server's answers take real time).
@Suite(.serialized) struct VirtualTimeSessionTests {
    /// Moves `clock` to each deadline the agent waits for until `done` (or 30 s of wall time).
    private func drive(_ clock: ManualAgentClock, until done: () -> Bool) -> Bool {
        let start = ContinuousClock.now
        while !done() {
            guard ContinuousClock.now - start < .seconds(30) else { return false }
            guard waitUntil(timeout: .seconds(10), { clock.waiters > 0 || done() }) else { return false }
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
        #expect(drive(clock) { rig.agent.statistics.state == .failed })
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
        #expect(drive(clock) { clock.elapsed >= .seconds(60) })
        let elapsedWall = ContinuousClock.now - wall
        let stats = rig.agent.statistics
        let connections = server.connectionCount
        rig.finish()
        print("\(connections) sessions over \(clock.elapsed) of virtual time in \(elapsedWall) of wall time")
        // expires_at is whole seconds: a session lives 4-5 s and is rolled over 10 % of that before
        // its end (3.6-4.5 s after it opened), so 60 s hold 13-17 sessions.
        #expect(connections >= 12 && connections <= 18, "about one session per 4-5 s: \(connections)")
        #expect(stats.rollovers == connections - 1, "\(stats)")
        #expect(stats.errors == 0 && stats.reconnects == 0 && stats.retries == 0, "\(rig.log.all)")
        #expect(server.events(ofType: "session.update").count == connections)
        let times = server.connectionTimes
        for (a, b) in zip(times, times.dropFirst()) {
            #expect(b - a >= .seconds(3), "one rollover per life, never at once: \(b - a)")
        }
    }
}
