public import Foundation
import RoomTapSync

/// The time the agent's timers run on: backoff, the floor between connection attempts, the
/// rollover before a session's end, the quick-end check, the patience of a rollover's move and the
/// playout of the agent's lines; the supervisor sleeps on it until the session reducer's next
/// deadline (``AgentSession/nextDeadline``). Injected (``RealtimeAgentConfiguration/clock``) so tests run minutes of
/// those timers in milliseconds (``ManualAgentClock``), as pion's mock tickers and swift-nio's
/// embedded loop do; production runs on ``SystemAgentClock``.
///
/// Thread: any; `wait` blocks the caller (the agent's supervisor thread, never the room clock).
public protocol AgentClock: Sendable {
    /// Now (monotonic).
    var now: ContinuousClock.Instant { get }
    /// Now as Unix time in seconds (to read a session's `expires_at`).
    var unixTime: Double { get }
    /// Waits until `deadline` or until `wake` is signalled, whichever is first; true when
    /// signalled (the signal is taken).
    func wait(_ wake: DispatchSemaphore, until deadline: ContinuousClock.Instant) -> Bool
}

/// The wall clock (the default).
///
/// Thread: a value; any thread.
public struct SystemAgentClock: AgentClock {
    public init() {}
    public var now: ContinuousClock.Instant { ContinuousClock.now }
    public var unixTime: Double { Date().timeIntervalSince1970 }
    public func wait(_ wake: DispatchSemaphore, until deadline: ContinuousClock.Instant) -> Bool {
        let left = deadline - ContinuousClock.now
        let nanoseconds = left <= .zero ? 0 : left.nanosecondsClamped
        return wake.wait(timeout: .now() + .nanoseconds(Int(min(nanoseconds, UInt64(Int.max))))) == .success
    }
}

/// Virtual time for tests: it stands still until ``advance(by:)`` (or ``advanceToNextDeadline()``)
/// moves it, and every wait whose deadline is passed then returns. ``waiters`` and
/// ``nextDeadline`` tell a test driver that the agent is idle, waiting for time.
///
/// Thread: any.
package final class ManualAgentClock: AgentClock {
    private struct State {
        var offset: Duration = .zero
        var deadlines: [Int: ContinuousClock.Instant] = [:]
        var nextWaiter = 0
    }

    private let origin = ContinuousClock.now
    private let unixOrigin: Double
    private let state = Locked(State())
    private let moved = DispatchSemaphore(value: 0)

    /// A clock at `unixTime` (default: the wall clock's now) that does not move by itself.
    public init(unixTime: Double = Date().timeIntervalSince1970) { unixOrigin = unixTime }

    public var now: ContinuousClock.Instant { origin + state.withLock { $0.offset } }
    public var unixTime: Double {
        let offset = state.withLock { $0.offset }
        return unixOrigin + Double(offset.components.seconds) + Double(offset.components.attoseconds) / 1e18
    }
    /// Virtual time elapsed since the clock was made.
    public var elapsed: Duration { state.withLock { $0.offset } }

    /// Waits in virtual time: returns when signalled or once the clock has been moved past
    /// `deadline`. Between moves it waits in real time for either (a millisecond at a time).
    public func wait(_ wake: DispatchSemaphore, until deadline: ContinuousClock.Instant) -> Bool {
        let id = state.withLock { s -> Int in
            s.nextWaiter += 1
            s.deadlines[s.nextWaiter] = deadline
            return s.nextWaiter
        }
        defer { _ = state.withLock { $0.deadlines.removeValue(forKey: id) } }
        while now < deadline {
            if wake.wait(timeout: .now() + .milliseconds(1)) == .success { return true }
        }
        return false
    }

    /// Threads waiting on the clock now.
    public var waiters: Int { state.withLock { $0.deadlines.count } }

    /// The earliest deadline a thread waits for, if any.
    public var nextDeadline: ContinuousClock.Instant? { state.withLock { $0.deadlines.values.min() } }

    /// Moves virtual time forward by `duration`.
    public func advance(by duration: Duration) {
        guard duration > .zero else { return }
        state.withLock { $0.offset += duration }
    }

    /// Moves virtual time to the earliest deadline waited for (nothing when none is ahead).
    public func advanceToNextDeadline() {
        state.withLock { s in
            guard let next = s.deadlines.values.min() else { return }
            let target = next - origin
            if target > s.offset { s.offset = target }
        }
    }
}
