package import Dispatch
package import RoomTapSync

/// Virtual time for the control threads' deadlines (``DeadlineClock``): it stands still until
/// ``advance(by:)`` or ``advance(to:)`` moves it, and then wakes every thread whose deadline that
/// passed, at once and without polling. A test runs minutes of leave-after or ticker time in
/// milliseconds, and asserts what happened at a deadline and not before.
///
/// ``waiters`` and ``nextDeadline`` tell the test that a thread has gone back to waiting for time
/// (wait for them with `waitUntil` before moving the clock, so the move is not taken as earlier
/// than the thread's computation of its deadline).
///
/// Thread: any. The waits block their callers in real time until a signal or a move of the clock.
package final class VirtualDeadlineClock: DeadlineClock {
    private struct Sleeper {
        let deadline: MonotonicClock.Instant
        let semaphore: DispatchSemaphore
        /// Set by a move of the clock past `deadline`, which signalled `semaphore` once for it.
        var kicked = false
    }

    private struct State {
        var now: MonotonicClock.Instant
        var sleepers: [Int: Sleeper] = [:]
        var nextSleeper = 0
        var blocked: [ObjectIdentifier: (deadline: MonotonicClock.Instant, waker: any DeadlineWaker)] = [:]
    }

    private let state: Locked<State>
    /// Where the clock started.
    package let origin: MonotonicClock.Instant

    /// A clock at `start` (default: the real monotonic now, so its instants look like packet
    /// arrivals) that does not move by itself.
    package init(start: MonotonicClock.Instant = MonotonicClock.now) {
        origin = start
        state = Locked(State(now: start))
    }

    package var now: MonotonicClock.Instant { state.withLock { $0.now } }

    /// Virtual time elapsed since the clock was made.
    package var elapsed: Duration { now - origin }

    /// Waits in virtual time: returns true when `wake` is signalled, false once the clock has been
    /// moved to or past `deadline`. Blocks on the semaphore alone (the move signals it once and the
    /// wait accounts for that signal, so the semaphore's count stays the count of real signals).
    package func wait(_ wake: DispatchSemaphore, until deadline: MonotonicClock.Instant) -> Bool {
        let id = state.withLock { s -> Int? in
            guard s.now < deadline else { return nil }
            s.nextSleeper += 1
            s.sleepers[s.nextSleeper] = Sleeper(deadline: deadline, semaphore: wake)
            return s.nextSleeper
        }
        guard let id else { return wake.wait(timeout: .now()) == .success }
        wake.wait()
        let kicked = state.withLock { $0.sleepers.removeValue(forKey: id)?.kicked ?? false }
        return !kicked
    }

    package func blockingTime(until deadline: MonotonicClock.Instant?, waking waker: any DeadlineWaker) -> Duration? {
        state.withLock { s -> Duration? in
            let key = ObjectIdentifier(waker)
            guard let deadline else {
                s.blocked.removeValue(forKey: key)
                return nil
            }
            guard s.now < deadline else {
                s.blocked.removeValue(forKey: key)
                return .zero
            }
            s.blocked[key] = (deadline, waker)
            return nil
        }
    }

    /// Threads waiting for a deadline now (on a semaphore or in a blocking call).
    package var waiters: Int {
        state.withLock { s in s.sleepers.values.count(where: { !$0.kicked }) + s.blocked.count }
    }

    /// The earliest deadline a thread waits for, if any.
    package var nextDeadline: MonotonicClock.Instant? {
        state.withLock { s in
            (s.sleepers.values.filter { !$0.kicked }.map(\.deadline) + s.blocked.values.map(\.deadline)).min()
        }
    }

    /// Moves virtual time forward by `duration` (nothing for a duration not above zero) and wakes
    /// the threads whose deadline it reached.
    package func advance(by duration: Duration) {
        guard duration > .zero else { return }
        move { $0 + duration }
    }

    /// Moves virtual time to `instant` (nothing when it is not ahead) and wakes the threads whose
    /// deadline it reached.
    package func advance(to instant: MonotonicClock.Instant) {
        move { max($0, instant) }
    }

    /// Moves virtual time to the earliest deadline waited for (nothing when none is ahead).
    package func advanceToNextDeadline() {
        guard let next = nextDeadline else { return }
        advance(to: next)
    }

    private func move(_ target: (MonotonicClock.Instant) -> MonotonicClock.Instant) {
        let (semaphores, wakers) = state.withLock { s -> ([DispatchSemaphore], [any DeadlineWaker]) in
            s.now = target(s.now)
            var semaphores: [DispatchSemaphore] = []
            for (id, sleeper) in s.sleepers where !sleeper.kicked && sleeper.deadline <= s.now {
                s.sleepers[id]?.kicked = true
                semaphores.append(sleeper.semaphore)
            }
            let due = s.blocked.filter { $0.value.deadline <= s.now }
            for key in due.keys { s.blocked.removeValue(forKey: key) }
            return (semaphores, due.values.map(\.waker))
        }
        for semaphore in semaphores { semaphore.signal() }
        for waker in wakers { waker.wake() }
    }
}
