import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Real-time scheduling for the threads that keep the 10 ms deadline (the room clock and its
/// render helpers: ``Room/init(clock:endsWhenSourcesFinish:events:renderThreads:parallelThreshold:timing:metersTracks:realtimePriority:)``),
/// and locking the process's memory so a page fault never delays a tick.
///
/// `SCHED_FIFO` needs `CAP_SYS_NICE` or an `RLIMIT_RTPRIO` (`ulimit -r`) of at least the
/// priority; `mlockall` of a growing process needs `CAP_IPC_LOCK` or an unlimited
/// `RLIMIT_MEMLOCK` (`ulimit -l`: with a finite limit, later allocations past it would fail, so
/// roomtap does not lock then). Linux. Thread: any.
public enum RealtimeScheduling {
    /// The SCHED_FIFO priority roomtap asks for: low among real-time priorities (1-99), above
    /// every normal thread, below the kernel's interrupt threads (50).
    public static let defaultPriority: Int32 = 10

    /// Puts the calling thread under SCHED_FIFO at `priority`. Returns 0, or the error number
    /// (EPERM: not permitted).
    @discardableResult
    public static func applyToCurrentThread(priority: Int32) -> Int32 {
        var parameters = sched_param()
        parameters.sched_priority = priority
        return pthread_setschedparam(pthread_self(), SCHED_FIFO, &parameters)
    }

    /// Puts the calling thread back under the normal policy (SCHED_OTHER), which is always
    /// permitted. For the threads that do I/O (file writers, a sink's own thread): a thread
    /// inherits its creator's policy, and a sink made by the receive thread (a participant's first
    /// packet) would otherwise write and encode files under SCHED_FIFO.
    public static func applyNormalToCurrentThread() {
        var parameters = sched_param()
        parameters.sched_priority = 0
        _ = pthread_setschedparam(pthread_self(), SCHED_OTHER, &parameters)
    }

    /// Why SCHED_FIFO at `priority` is not available to this process (one clause, for a warning
    /// line), or nil when it is: tries it on the calling thread and puts the thread back.
    public static func unavailableReason(priority: Int32) -> String? {
        var policy: Int32 = 0
        var previous = sched_param()
        guard pthread_getschedparam(pthread_self(), &policy, &previous) == 0 else { return "cannot read the policy" }
        let status = applyToCurrentThread(priority: priority)
        guard status == 0 else {
            let limit = resourceLimit(Int32(__RLIMIT_RTPRIO.rawValue))
            return "SCHED_FIFO is not permitted (\(String(cString: strerror(status))); it needs CAP_SYS_NICE "
                + "or ulimit -r of at least \(priority), which is \(limit.map(String.init) ?? "unlimited") here)"
        }
        _ = pthread_setschedparam(pthread_self(), policy, &previous)
        return nil
    }

    /// Locks all of the process's memory, present and future (`mlockall`), when that is safe: as
    /// root or with an unlimited `ulimit -l`. Returns nil when locked, else why not (one clause).
    public static func lockMemory() -> String? {
        if let limit = resourceLimit(Int32(__RLIMIT_MEMLOCK.rawValue)), geteuid() != 0 {
            return "memory is not locked (ulimit -l is \(limit / 1024) KiB; locking needs unlimited or CAP_IPC_LOCK)"
        }
        guard mlockall(MCL_CURRENT | MCL_FUTURE) == 0 else {
            return "memory is not locked (mlockall: \(String(cString: strerror(errno))))"
        }
        return nil
    }

    /// The soft limit of `resource`, nil when unlimited.
    private static func resourceLimit(_ resource: Int32) -> UInt64? {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(resource), &limit) == 0 else { return 0 }
        return limit.rlim_cur == rlim_t.max ? nil : UInt64(limit.rlim_cur)  // RLIM_INFINITY
    }
}
