import Foundation
import Synchronization

/// Lets one thread wait for a condition another thread makes true: it spins a little (a hand-over
/// that comes within microseconds costs no system call), then sleeps on a semaphore until
/// ``unpark()``. The waker pays a system call only when the waiter is really asleep.
///
/// Thread: ``park(spins:until:)`` from the one waiting thread; ``unpark()`` from any thread, after
/// making the condition true (with a releasing store that the condition reads with acquiring
/// order). Neither allocates, locks or logs.
final class Parker: @unchecked Sendable {
    private let sleeping = Atomic<Bool>(false)
    private let wake = DispatchSemaphore(value: 0)

    /// Returns once `condition` is true: checks it up to `spins` times, then sleeps until
    /// ``unpark()`` (rechecking after every wake).
    @inline(__always)
    func park(spins: Int, until condition: () -> Bool) {
        var tries = 0
        while !condition() {
            tries += 1
            if tries < spins { continue }
            sleeping.store(true, ordering: .sequentiallyConsistent)
            if condition() {
                // Withdraw; if a waker already took the flag, its signal is on the way: consume it.
                if !sleeping.exchange(false, ordering: .sequentiallyConsistent) { wake.wait() }
                return
            }
            wake.wait()
            tries = 0
        }
    }

    /// Wakes the waiting thread if it sleeps. Call after making its condition true.
    @inline(__always)
    func unpark() {
        if sleeping.exchange(false, ordering: .sequentiallyConsistent) { wake.signal() }
    }
}
