#if canImport(Glibc)
    public import Glibc
#elseif canImport(Darwin)
    public import Darwin
#endif

/// A value guarded by a POSIX mutex: the one lock type of roomtap's own code.
///
/// The mutex and the value each live in a heap allocation of their own, made in `init` and freed
/// in `deinit`, so neither ever moves and nothing declared next to a `Locked` in a class can share
/// memory with it (the hazard of an inline `Synchronization.Mutex`, whose storage is laid out
/// inside its owner: see docs/ARCHITECTURE.md, "Locks"). A `pthread_mutex_t` is also what
/// ThreadSanitizer understands, so accesses under a `Locked` are seen as ordered (on Linux
/// `Synchronization.Mutex` is a bare futex that TSan cannot see, and every access it guarded was a
/// false report).
///
/// The API is `Mutex`'s: `withLock` and `withLockIfAvailable`, with `sending` in and out, so a
/// non-`Sendable` value can be guarded and the type is `Sendable`.
///
/// Thread: any. `withLock` blocks while another thread holds the lock; `withLockIfAvailable` never
/// blocks, takes no system call when the lock is free and allocates nothing, so the room clock may
/// use it. Not recursive: calling `withLock` again inside `body` on the same lock deadlocks.
/// Allocates twice in `init` (the mutex, the value), never afterwards.
package final class Locked<Value>: @unchecked Sendable {
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    @usableFromInline let storage: UnsafeMutablePointer<Value>

    /// A lock guarding `initialValue`.
    package init(_ initialValue: sending Value) {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        let status = pthread_mutex_init(mutex, nil)
        precondition(status == 0, "pthread_mutex_init failed: \(status)")
        storage = .allocate(capacity: 1)
        storage.initialize(to: initialValue)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
        storage.deinitialize(count: 1)
        storage.deallocate()
    }

    /// Runs `body` with the value while holding the lock, waiting for the lock if it is held.
    @inlinable
    package func withLock<Result, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&storage.pointee)
    }

    /// Runs `body` with the value if the lock is free, and returns nil without waiting if it is
    /// held (by any thread: this thread too).
    @inlinable
    package func withLockIfAvailable<Result, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result? {
        guard pthread_mutex_trylock(mutex) == 0 else { return nil }
        defer { pthread_mutex_unlock(mutex) }
        return try body(&storage.pointee)
    }
}

extension Locked {
    /// A copy of the array at `keyPath` (`\.self` for a guarded array), taken under the lock into
    /// storage of its own: what a getter returns for another thread to read.
    ///
    /// Returning the array itself would share its storage with the guarded value (copy on write).
    /// That is safe: the owner writes in place only once the storage is unique again, and the
    /// reference count orders the reader's last read before that write. But the ordering lives in
    /// the Swift runtime, which ThreadSanitizer does not see, so it reports the reader's reads and
    /// the owner's next append as a race. A copy of its own shares nothing, so no report of a real
    /// race is ever hidden among those. O(count): a caller reading elements one by one takes one
    /// snapshot first. Thread: any but the room clock's (allocates).
    package func snapshot<Element: Sendable>(_ keyPath: KeyPath<Value, [Element]> & Sendable) -> [Element] {
        withLock { value in
            let shared = value[keyPath: keyPath]
            // Empty: the runtime's shared empty storage, which the initializer below would write
            // its count (0) into, a benign race TSan reports.
            guard !shared.isEmpty else { return [] }
            return [Element](unsafeUninitializedCapacity: shared.count) { copy, count in
                count = shared.withUnsafeBufferPointer { copy.initialize(fromContentsOf: $0) }
            }
        }
    }
}
