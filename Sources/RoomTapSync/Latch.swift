#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A one-shot event: closed until ``open()``, then open for good; any number of threads wait for
/// it, each with a deadline. A POSIX mutex and condition variable (what ThreadSanitizer
/// understands, like ``Locked``), each in a heap allocation of its own that never moves.
///
/// Thread: any. ``wait(timeoutMilliseconds:)`` blocks; ``open()`` never blocks for long and is
/// idempotent. Allocates in `init` only.
package final class Latch: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>
    private var isOpen = false  // under `mutex`

    package init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        precondition(pthread_mutex_init(mutex, nil) == 0, "pthread_mutex_init failed")
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)  // deadlines immune to clock steps
        precondition(pthread_cond_init(condition, &attributes) == 0, "pthread_cond_init failed")
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        condition.deinitialize(count: 1)
        condition.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Opens the latch and wakes every waiter. Idempotent.
    package func open() {
        pthread_mutex_lock(mutex)
        isOpen = true
        pthread_cond_broadcast(condition)
        pthread_mutex_unlock(mutex)
    }

    /// Whether it is open now. Never waits for long.
    package var isOpened: Bool {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return isOpen
    }

    /// Waits until the latch is open or `timeoutMilliseconds` passed (monotonic); true when open.
    package func wait(timeoutMilliseconds: Int) -> Bool {
        // The condition variable waits on CLOCK_MONOTONIC, the one clock (MonotonicClock).
        let end = (MonotonicClock.now + .milliseconds(max(0, timeoutMilliseconds))).signedNanoseconds
        var deadline = timespec(tv_sec: Int(end / 1_000_000_000), tv_nsec: Int(end % 1_000_000_000))
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while !isOpen {
            if pthread_cond_timedwait(condition, mutex, &deadline) == ETIMEDOUT { return isOpen }
        }
        return true
    }
}
