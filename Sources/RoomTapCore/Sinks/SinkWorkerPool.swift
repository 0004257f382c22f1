import CLinuxNet
import Foundation
import RoomTapSync
import Synchronization

/// A few threads shared by many ``QueuedSink``s whose consumers do short blocking I/O (file
/// writers), so that a room of 1000 tracks has a handful of writer threads instead of 1000.
///
/// Each sink is given to one worker when it is created (the worker with the fewest sinks, round
/// robin among equals) and stays with it until it is closed. That worker alone calls the sink's
/// consumer, so the `consume`/`drained`/`finish` calls of one sink are never concurrent and keep
/// their order. A worker sleeps until one of its sinks' queues reaches that sink's wake threshold,
/// or a sink is closing, or 50 ms have passed; it then makes a pass over every sink it holds:
/// consumes the frames that were queued when it got to the sink, calls `drained`, and calls
/// `finish` on a closing sink whose queue is empty.
///
/// Slowness: the room clock never waits for a worker under `.drop` (the sink's queue decouples
/// them). A slow consumer (a stalled disk) delays only the other sinks on the same worker, whose
/// queues then fill and drop (`.drop`) or hold the clock (`.wait`, virtual clock only) as if their
/// own consumer were slow; sinks on other workers are not affected. Consumers that block for long
/// or have latency needs (a sound device, the network) keep a dedicated thread instead: the
/// default of ``QueuedSink/init(consumer:channels:capacity:wakeThreshold:policy:threadName:)``.
///
/// Threads: a worker's thread (named ``threadName``, "roomtap.writer" by default; Linux shows
/// the first 15 bytes) starts the first time a sink is given to it, so the pool never has more
/// than ``workerCount`` threads. ``shared`` lives as long as the process; another pool's threads
/// end once the pool is released and all its sinks are closed. Sinks are given to workers on the
/// control side, under a lock the room clock never takes; the clock only wakes a worker (an atomic
/// exchange and a semaphore signal: no blocking, no allocation).
public final class SinkWorkerPool: Sendable {
    /// The process-wide pool of file writers (``defaultWorkerCount`` workers, "roomtap.writer"),
    /// created on first use.
    public static let shared = SinkWorkerPool()

    /// min(4, max(1, active cores)).
    public static var defaultWorkerCount: Int { min(4, max(1, ProcessInfo.processInfo.activeProcessorCount)) }

    /// Workers, and so the most threads the pool runs.
    public var workerCount: Int { workers.count }
    /// The name of every worker thread.
    public let threadName: String

    private let nextStart = Atomic<UInt>(0)
    private let workers: [Worker]

    /// A pool of `workerCount` (at least 1) workers whose threads are named `threadName`. No thread
    /// starts before a sink is given to the pool.
    public init(workerCount: Int = SinkWorkerPool.defaultWorkerCount, threadName: String = "roomtap.writer") {
        self.threadName = threadName
        workers = (0..<max(1, workerCount)).map { _ in Worker(threadName: threadName) }
    }

    deinit {
        for worker in workers { worker.retire() }
    }

    /// The worker with the fewest sinks (the first from a rotating start among equals), with one
    /// more sink counted for it; the caller then registers its sink with it. Control side
    /// (`QueuedSink.init`), never the room clock.
    func chooseWorker() -> Worker {
        let start = Int(nextStart.wrappingAdd(1, ordering: .relaxed).oldValue % UInt(workers.count))
        var chosen = workers[start]
        for k in 1..<workers.count {
            let candidate = workers[(start + k) % workers.count]
            if candidate.sinkCount < chosen.sinkCount { chosen = candidate }
        }
        chosen.reserve()
        return chosen
    }

    /// One thread of the pool and the sinks it services.
    ///
    /// Thread: `register` on the control side, `wake` from any thread including the room clock's,
    /// `run` on the worker's own thread.
    final class Worker: @unchecked Sendable {
        private let threadName: String
        private let sleeping = Atomic<Bool>(false)
        private let retired = Atomic<Bool>(false)
        private let assigned = Atomic<Int>(0)  // registered and not yet finished
        private let wakeUp = DispatchSemaphore(value: 0)
        private let state = Locked<(sinks: [QueuedSink], running: Bool)>(([], false))

        init(threadName: String) { self.threadName = threadName }

        /// Sinks registered and not yet finished.
        var sinkCount: Int { assigned.load(ordering: .relaxed) }

        /// Counts one more sink, before it is registered (so sinks created at once spread out).
        func reserve() { assigned.add(1, ordering: .relaxed) }

        /// Adds `sink` (counted by `reserve`) to the next pass, starting the thread if it is not
        /// running. Control side.
        func register(_ sink: QueuedSink) {
            let start = state.withLock { s -> Bool in
                s.sinks.append(sink)
                let start = !s.running
                s.running = true
                return start
            }
            if start {
                // I/O: never the creator's SCHED_FIFO.
                RoomThread.start(threadName, policy: .normal) { [self] in run() }
            }
        }

        /// Wakes the worker if it sleeps. Any thread, including the room clock's: never blocks or
        /// allocates.
        func wake() {
            if sleeping.exchange(false, ordering: .sequentiallyConsistent) { wakeUp.signal() }
        }

        /// Lets the thread end once it has no sinks (the pool was released).
        func retire() {
            retired.store(true, ordering: .sequentiallyConsistent)
            wakeUp.signal()
        }

        private func run() {
            var finished: [QueuedSink] = []
            while true {
                let sinks = state.withLock { s -> [QueuedSink]? in
                    guard !(s.sinks.isEmpty && retired.load(ordering: .sequentiallyConsistent)) else {
                        s.running = false
                        return nil
                    }
                    return s.sinks
                }
                guard let sinks else { return }
                for sink in sinks where sink.servicePass() { finished.append(sink) }
                if !finished.isEmpty {
                    state.withLock { s in s.sinks.removeAll { sink in finished.contains { $0 === sink } } }
                    assigned.subtract(finished.count, ordering: .relaxed)
                    for sink in finished { sink.passFinished() }
                    finished.removeAll(keepingCapacity: true)
                    continue
                }
                sleeping.store(true, ordering: .sequentiallyConsistent)
                if sinks.contains(where: { $0.needsPass })
                    || (sinks.isEmpty && retired.load(ordering: .sequentiallyConsistent))
                {
                    sleeping.store(false, ordering: .sequentiallyConsistent)
                    continue
                }
                _ = wakeUp.wait(timeout: .now() + .milliseconds(50))
                sleeping.store(false, ordering: .sequentiallyConsistent)
            }
        }
    }
}
