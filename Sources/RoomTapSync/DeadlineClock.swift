public import Dispatch

/// The time a control thread keeps its deadlines on: the live room's leave-after, the control
/// server's watch ticker. Injected so tests run minutes of those deadlines in milliseconds on a
/// virtual clock (`VirtualDeadlineClock` in test support), as pion's mock tickers and swift-nio's
/// embedded loop do; production runs on ``SystemDeadlineClock`` (``MonotonicClock``). Instants are
/// ``MonotonicClock/Instant``s (nanoseconds); a virtual clock starts at the real now by default.
///
/// The agent's `AgentClock` has the same `now` and `wait(_:until:)` on the same instants, plus
/// what a session needs; the two (and their virtual clocks) could become one.
///
/// A thread waits in one of two ways: on a semaphore (``wait(_:until:)``: a `RoomBus` drainer), or
/// in a blocking call of its own such as `poll` (``blockingTime(until:waking:)``, which gives the
/// call's timeout, and a waker the clock calls when it moves past the deadline without real time).
///
/// Thread: any; the waits block the calling thread (a control thread, never the room clock's).
/// Reading ``now`` never blocks.
package protocol DeadlineClock: Sendable {
    /// Now.
    var now: MonotonicClock.Instant { get }

    /// Waits until `deadline` or until `wake` is signalled, whichever is first; true when
    /// signalled (the signal is taken). A deadline already passed takes a pending signal, if any,
    /// without waiting.
    func wait(_ wake: DispatchSemaphore, until deadline: MonotonicClock.Instant) -> Bool

    /// For a thread about to block in a call of its own that `waker` interrupts (`poll` on a wake
    /// pipe): how long in real time it may block to be back by `deadline` (zero when it has
    /// passed; nil: no limit). With `deadline` nil the thread has no deadline: nil, and a virtual
    /// clock forgets `waker`. A virtual clock returns nil for a deadline ahead and calls
    /// `waker.wake()` once its time reaches `deadline`; each call replaces the last one made with
    /// the same `waker` (identity). The real clock never calls `waker`.
    func blockingTime(until deadline: MonotonicClock.Instant?, waking waker: any DeadlineWaker) -> Duration?
}

/// What a clock calls to interrupt a thread blocked in a call of its own (it writes the thread's
/// wake pipe). Thread: `wake` from any thread; it must not block.
package protocol DeadlineWaker: AnyObject, Sendable {
    /// Interrupts the thread's blocking call. Idempotent enough to be called twice.
    func wake()
}

/// Real time: ``MonotonicClock``. Waits are the semaphore's own timed waits.
///
/// Thread: a value; any thread.
package struct SystemDeadlineClock: DeadlineClock {
    package init() {}

    package var now: MonotonicClock.Instant { MonotonicClock.now }

    package func wait(_ wake: DispatchSemaphore, until deadline: MonotonicClock.Instant) -> Bool {
        wake.wait(timeout: deadline.dispatchTime) == .success
    }

    package func blockingTime(until deadline: MonotonicClock.Instant?, waking waker: any DeadlineWaker) -> Duration? {
        guard let deadline else { return nil }
        let left = deadline - MonotonicClock.now
        return left > .zero ? left : .zero
    }
}

extension Duration {
    /// This duration as a `poll` timeout: whole milliseconds rounded up (so the wait ends no
    /// earlier than the deadline), at most `cap`; -1 (no limit) for nil. Pure.
    package static func pollMilliseconds(_ duration: Duration?, cap: Int32 = .max) -> Int32 {
        guard let duration else { return -1 }
        let nanoseconds = duration.saturatingNanoseconds
        guard nanoseconds > 0 else { return 0 }
        return Int32(clamping: min(Int64(cap), nanoseconds / 1_000_000 + (nanoseconds % 1_000_000 == 0 ? 0 : 1)))
    }
}
