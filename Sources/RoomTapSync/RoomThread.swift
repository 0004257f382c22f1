import CLinuxNet

#if canImport(Glibc)
    import Glibc
#endif

/// The one way roomtap starts a thread: the thread is named before ``start(_:policy:_:)`` returns
/// and names itself before anything else (the first 15 bytes of its name, whole characters, as
/// Linux keeps them: `ps -L`, `top -H`, gdb and /proc/self/task/*/comm show it), puts itself under
/// its scheduling ``Policy``, runs its body, and is joined by its owner (``join()``), or detached
/// when its handle goes away unjoined.
///
/// It is a joinable POSIX thread (`pthread_create`): no Foundation `Thread`, whose name reaches
/// the OS thread only when Foundation already knows the new thread's handle (a race a loaded
/// machine loses), and which cannot be joined.
///
/// Thread: ``start(_:policy:_:)`` and ``join()`` from any thread but the started one (a thread
/// cannot join itself: ``join()`` from it returns at once). Allocates at start only.
public final class RoomThread: Sendable {
    /// How the thread is scheduled.
    public enum Policy: Sendable, Equatable {
        /// SCHED_OTHER, whatever its creator runs under: threads that do I/O or may block (a
        /// thread inherits its creator's policy, and a writer started by a SCHED_FIFO thread must
        /// not write files under SCHED_FIFO).
        case normal
        /// SCHED_FIFO at `priority` (1-99) when the process is permitted it; else SCHED_OTHER
        /// (the caller said so once, see RoomTapCore's `RealtimeScheduling.unavailableReason`).
        case realtime(priority: Int32)

        /// ``realtime(priority:)`` when `priority` is given, else ``normal``.
        public static func realtime(orNormal priority: Int32?) -> Policy {
            priority.map { .realtime(priority: $0) } ?? .normal
        }
    }

    /// The name as the kernel keeps it (at most 15 bytes).
    public let name: String
    public let policy: Policy
    private let handle: pthread_t
    private let joined = Locked(false)

    private final class Start {
        let name: String
        let policy: Policy
        let body: @Sendable () -> Void
        init(name: String, policy: Policy, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.policy = policy
            self.body = body
        }
    }

    private init(name: String, policy: Policy, handle: pthread_t) {
        self.name = name
        self.policy = policy
        self.handle = handle
    }

    /// Starts `body` on a new thread named `name` under `policy`. Traps when the system cannot
    /// make a thread (no memory, or the process's thread limit reached): nothing roomtap does
    /// can go on without the thread it asked for.
    @discardableResult
    public static func start(
        _ name: String, policy: Policy = .normal, _ body: @escaping @Sendable () -> Void
    ) -> RoomThread {
        let kept = kernelName(name)
        let start = Unmanaged.passRetained(Start(name: kept, policy: policy, body: body)).toOpaque()
        var handle = pthread_t()
        let result = pthread_create(
            &handle, nil,
            { context in
                let start = Unmanaged<Start>.fromOpaque(context!).takeRetainedValue()
                RoomThread.nameCurrent(start.name)
                RoomThread.apply(start.policy)
                start.body()
                return nil
            }, start)
        guard result == 0 else {
            Unmanaged<Start>.fromOpaque(start).release()
            fatalError("cannot start thread \(kept): \(String(cString: strerror(result)))")
        }
        // Named from here too, so that it has its name when start returns (the thread's own
        // naming may come later on a loaded machine).
        _ = roomtap_thread_set_name(UInt(handle), kept)
        return RoomThread(name: kept, policy: policy, handle: handle)
    }

    /// Waits until the body has returned. Idempotent: later calls return at once; from the thread
    /// itself it returns at once (a thread cannot wait for its own end).
    public func join() {
        guard !isCurrent else { return }
        joined.withLock { done in
            guard !done else { return }
            done = true
            pthread_join(handle, nil)
        }
    }

    /// True on the started thread itself.
    public var isCurrent: Bool { pthread_equal(pthread_self(), handle) != 0 }

    deinit {
        // Never joined: its resources go back to the system when it ends.
        if !joined.withLock({ $0 }) { pthread_detach(handle) }
    }

    /// Names the calling thread `name`, cut to the 15 bytes Linux keeps (whole characters). For
    /// threads roomtap did not start (a test's, a library's callback thread).
    public static func nameCurrent(_ name: String) {
        _ = roomtap_thread_set_name(UInt(pthread_self()), kernelName(name))
    }

    /// `name` cut to the 15 bytes a Linux thread name holds, at a character's end.
    public static func kernelName(_ name: String) -> String {
        var kept = ""
        for character in name {
            guard kept.utf8.count + character.utf8.count <= 15 else { break }
            kept.append(character)
        }
        return kept
    }

    /// Puts the calling thread under `policy`; SCHED_FIFO refused (EPERM) leaves it normal.
    private static func apply(_ policy: Policy) {
        var parameters = sched_param()
        switch policy {
        case .normal:
            parameters.sched_priority = 0
            _ = pthread_setschedparam(pthread_self(), SCHED_OTHER, &parameters)
        case .realtime(let priority):
            parameters.sched_priority = priority
            if pthread_setschedparam(pthread_self(), SCHED_FIFO, &parameters) != 0 {
                parameters.sched_priority = 0
                _ = pthread_setschedparam(pthread_self(), SCHED_OTHER, &parameters)
            }
        }
    }
}
