import Foundation
import RoomTapAll
import Synchronization

/// What the machine itself does to a real-time thread's wake-ups, measured beside a live run: a
/// thread at the same SCHED_FIFO priority as the recorder that does nothing but sleep to absolute
/// 10 ms deadlines, counted exactly as the room clock counts its ticks (late when it starts more
/// than 5 ms after its deadline; the next deadline is the previous one plus 10 ms, so one long
/// stall makes several late wake-ups, as it makes several late ticks). On a virtual machine the
/// host can take a vCPU away for tens of milliseconds (steal time); no program in the guest can
/// avoid that, so a recorder's late ticks are judged against this count, taken at the same time.
/// Steal time is read from /proc/stat. Thread: `start` and `stop` on one thread; the probe runs on
/// its own.
final class LatencyProbe: Sendable {
    /// Wake-ups more than this late count as late (the room clock's `lateTolerance`), nanoseconds.
    static let tolerance: UInt64 = 5_000_000
    private static let interval: UInt64 = 10_000_000

    private let running = Atomic<Bool>(true)
    private let late = Atomic<Int>(0)
    private let worst = Atomic<UInt64>(0)
    private let wakeUps = Atomic<Int>(0)
    private let finished = DispatchSemaphore(value: 0)
    private let stealAtStart: Double

    /// Starts the probe thread at SCHED_FIFO `priority` (normal priority when not permitted).
    init(priority: Int32) {
        stealAtStart = Self.stealSeconds()
        let thread = Thread { [self] in
            if RealtimeScheduling.unavailableReason(priority: priority) == nil {
                RealtimeScheduling.applyToCurrentThread(priority: priority)
            }
            var deadline = Self.now() + Self.interval
            while running.load(ordering: .relaxed) {
                var ts = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
                while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil) == EINTR {}
                let lateness = Self.now() &- deadline
                if Int64(bitPattern: lateness) > 0 {
                    if lateness > worst.load(ordering: .relaxed) { worst.store(lateness, ordering: .relaxed) }
                    if lateness > Self.tolerance { late.add(1, ordering: .relaxed) }
                }
                wakeUps.add(1, ordering: .relaxed)
                deadline += Self.interval
            }
            finished.signal()
        }
        thread.name = "soak.probe"
        thread.start()
    }

    struct Figures {
        let wakeUps: Int
        let late: Int
        let worstMs: Double
        /// Seconds of CPU the host took from this machine's vCPUs (all of them) while the probe ran.
        let stealSeconds: Double
    }

    /// Stops the probe and returns what it saw. Once.
    func stop() -> Figures {
        running.store(false, ordering: .relaxed)
        finished.wait()
        return Figures(
            wakeUps: wakeUps.load(ordering: .relaxed), late: late.load(ordering: .relaxed),
            worstMs: Double(worst.load(ordering: .relaxed)) / 1e6, stealSeconds: Self.stealSeconds() - stealAtStart)
    }

    private static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    /// The `steal` column of /proc/stat's `cpu` line, in seconds (USER_HZ ticks / 100).
    static func stealSeconds() -> Double {
        guard let stat = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
            let line = stat.split(separator: "\n").first(where: { $0.hasPrefix("cpu ") })
        else { return 0 }
        let fields = line.split(separator: " ")
        return fields.count > 8 ? (Double(fields[8]) ?? 0) / Double(sysconf(Int32(_SC_CLK_TCK))) : 0
    }
}
