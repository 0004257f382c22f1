public import Foundation
public import RoomTapSync

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
    var now: MonotonicClock.Instant { get }
    /// Now as Unix time in seconds (to read a session's `expires_at`).
    var unixTime: Double { get }
    /// Waits until `deadline` or until `wake` is signalled, whichever is first; true when
    /// signalled (the signal is taken).
    func wait(_ wake: DispatchSemaphore, until deadline: MonotonicClock.Instant) -> Bool
    /// Waits until the deadline `deadline` gives (read again as time moves; nil: none) or until
    /// `wake` is signalled, whichever is first; true when signalled. The supervisor of a session
    /// waits on the session's current next deadline this way, so a virtual clock never moves
    /// time to a deadline that an input on another thread has just replaced.
    func wait(
        _ wake: DispatchSemaphore, untilDeadlineOf deadline: @escaping @Sendable () -> MonotonicClock.Instant?
    ) -> Bool
    /// While `held`, the owner of `wake` has work in flight in wall time (a session being
    /// opened or set up): a virtual clock does not move to a deadline meanwhile. Idempotent. Any
    /// thread (the agent calls it under its lock).
    func hold(_ held: Bool, by wake: DispatchSemaphore)
    /// Wakes the thread waiting on `wake` (or the next to wait on it): the deadline it waits for
    /// no longer stands. A virtual clock stops counting that deadline at once, so a driver never
    /// moves time to it. Idempotent in effect (an extra wake costs one more look). Any thread.
    func wake(_ wake: DispatchSemaphore)
}

extension AgentClock {
    /// Signals `wake` (the wall clock has nothing to forget).
    public func wake(_ wake: DispatchSemaphore) { wake.signal() }

    /// Nothing: the wall clock moves anyway.
    public func hold(_ held: Bool, by wake: DispatchSemaphore) {}

    /// Reads the deadline once (an input that moves it signals `wake`); no deadline: an hour.
    public func wait(
        _ wake: DispatchSemaphore, untilDeadlineOf deadline: @escaping @Sendable () -> MonotonicClock.Instant?
    ) -> Bool {
        wait(wake, until: deadline() ?? now + .seconds(3_600))
    }
}

/// The wall clock (the default).
///
/// Thread: a value; any thread.
public struct SystemAgentClock: AgentClock {
    public init() {}
    public var now: MonotonicClock.Instant { MonotonicClock.now }
    public var unixTime: Double { Date().timeIntervalSince1970 }
    public func wait(_ wake: DispatchSemaphore, until deadline: MonotonicClock.Instant) -> Bool {
        let left = deadline - MonotonicClock.now
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
        /// What each waiter waits for (read outside the lock: it may take the waiter's own lock).
        var deadlines: [Int: @Sendable () -> MonotonicClock.Instant?] = [:]
        /// The semaphore each waiter waits on.
        var semaphores: [Int: ObjectIdentifier] = [:]
        /// Semaphores woken while nobody waited on them: their next wait returns at once.
        var pendingWakes: Set<ObjectIdentifier> = []
        /// Owners with work in flight in wall time: time stands.
        var holders: Set<ObjectIdentifier> = []
        /// Bumped by every wake and hold: a deadline read before a change is not moved to.
        var changes = 0
        var nextWaiter = 0
    }

    private let origin = MonotonicClock.now
    private let unixOrigin: Double
    private let state = Locked(State())

    /// A clock at `unixTime` (default: the wall clock's now) that does not move by itself.
    public init(unixTime: Double = Date().timeIntervalSince1970) { unixOrigin = unixTime }

    public var now: MonotonicClock.Instant { origin + state.withLock { $0.offset } }
    public var unixTime: Double {
        let offset = state.withLock { $0.offset }
        return unixOrigin + Double(offset.components.seconds) + Double(offset.components.attoseconds) / 1e18
    }
    /// Virtual time elapsed since the clock was made.
    public var elapsed: Duration { state.withLock { $0.offset } }

    /// Waits in virtual time: returns when signalled or once the clock has been moved past
    /// `deadline`. Between moves it waits in real time for either (a millisecond at a time).
    public func wait(_ wake: DispatchSemaphore, until deadline: MonotonicClock.Instant) -> Bool {
        wait(wake, untilDeadlineOf: { deadline })
    }

    /// Waits in virtual time until the deadline `deadline` gives now (nil: none) is passed, or
    /// `wake` is signalled. After a ``wake(_:)`` of `wake` that no wait took yet, returns at once
    /// without counting as a waiter.
    public func wait(
        _ wake: DispatchSemaphore, untilDeadlineOf deadline: @escaping @Sendable () -> MonotonicClock.Instant?
    ) -> Bool {
        let key = ObjectIdentifier(wake)
        let registered = state.withLock { s -> Int? in
            // A wake that came before this wait: the deadline read before it no longer stands.
            if s.pendingWakes.remove(key) != nil { return nil }
            s.nextWaiter += 1
            s.deadlines[s.nextWaiter] = deadline
            s.semaphores[s.nextWaiter] = key
            return s.nextWaiter
        }
        guard let id = registered else { return true }
        defer {
            state.withLock { s in
                s.deadlines[id] = nil
                s.semaphores[id] = nil
            }
        }
        while deadline().map({ now < $0 }) ?? true {
            if wake.wait(timeout: .now() + .milliseconds(1)) == .success { return true }
        }
        return false
    }

    /// Forgets the threads waiting on `wake` as waiters, then signals it: a driver that moves
    /// time to the next deadline never moves it to one that no longer stands.
    public func wake(_ wake: DispatchSemaphore) {
        let key = ObjectIdentifier(wake)
        state.withLock { s in
            let waiting = s.semaphores.filter { $0.value == key }.map(\.key)
            for id in waiting {
                s.deadlines[id] = nil
                s.semaphores[id] = nil
            }
            if waiting.isEmpty { s.pendingWakes.insert(key) }
            s.changes += 1
        }
        wake.signal()
    }

    public func hold(_ held: Bool, by wake: DispatchSemaphore) {
        let key = ObjectIdentifier(wake)
        state.withLock { s in
            if held { s.holders.insert(key) } else { s.holders.remove(key) }
            s.changes += 1
        }
    }

    /// Threads waiting on the clock now.
    public var waiters: Int { state.withLock { $0.deadlines.count } }

    /// The earliest deadline a thread waits for, if any (each read now).
    public var nextDeadline: MonotonicClock.Instant? {
        let readers = state.withLock { Array($0.deadlines.values) }
        return readers.compactMap { $0() }.min()
    }

    /// Moves virtual time forward by `duration`.
    public func advance(by duration: Duration) {
        guard duration > .zero else { return }
        state.withLock { $0.offset += duration }
    }

    /// Moves virtual time to the earliest deadline waited for, as it stands now (nothing when
    /// none is ahead, or while an owner holds time: ``hold(_:by:)``). A deadline that changed
    /// while it was read is read again.
    public func advanceToNextDeadline() {
        while true {
            let changes = state.withLock { $0.changes }
            guard let next = nextDeadline else { return }
            let done = state.withLock { s -> Bool in
                guard s.changes == changes else { return false }
                guard s.holders.isEmpty else { return true }
                let target = next - origin
                if target > s.offset { s.offset = target }
                return true
            }
            if done { return }
        }
    }
}
