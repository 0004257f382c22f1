import Foundation
import RoomTapSync

/// Renews the leases of the rooms a worker holds, every quarter of the lease, on its own thread
/// (`roomtap.lease`) and its own Redis connection, so a busy main loop never lets a lease lapse.
/// Each renewal also keeps the room's stream delivery fresh (XCLAIM JUSTID) so no other worker's
/// janitor takes it, and publishes the worker's presence (`PREFIX worker:NAME`, TTL 3 leases).
///
/// A renewal that finds the lease gone marks the room `lost` (another worker has it, or it was
/// handed over); Redis being unreachable only counts a failure: the main loop stops a room whose
/// last renewal is older than the lease itself, as the lease has then expired for everyone.
///
/// Thread: ``hold``, ``release``, ``state(of:)`` from any thread; renewals on its own.
final class LeaseKeeper: @unchecked Sendable {
    struct Held: Sendable {
        var token: String
        var entry: String
        var renewed: MonotonicClock.Instant
        var cancelRequested = false
        var lost = false
    }

    private let configuration: WorkerConfiguration
    private let metrics: WorkerMetrics
    private let held = Locked<[String: Held]>([:])
    private let stopping = Locked(false)
    private let presence: @Sendable () -> [(String, String)]
    /// The thread, once started; joined when it is stopped.
    private let leaseThread = Locked<RoomThread?>(nil)

    init(
        configuration: WorkerConfiguration, metrics: WorkerMetrics,
        presence: @escaping @Sendable () -> [(String, String)]
    ) {
        self.configuration = configuration
        self.metrics = metrics
        self.presence = presence
    }

    func start() {
        leaseThread.withLock { thread in
            thread = RoomThread.start("roomtap.lease") { [self] in
                run()
            }
        }
    }

    /// Stops renewing (a lease not released expires by itself). Waits for the thread.
    func stop() {
        stopping.withLock { $0 = true }
        leaseThread.withLock { $0 }?.join()
    }

    func hold(job: String, token: String, entry: String) {
        held.withLock { $0[job] = Held(token: token, entry: entry, renewed: .now) }
    }

    func release(job: String) { _ = held.withLock { $0.removeValue(forKey: job) } }

    func state(of job: String) -> Held? { held.withLock { $0[job] } }

    private func run() {
        let connection = RedisConnection(configuration.redis, timeout: max(0.5, configuration.leaseSeconds / 4))
        let store = JobStore(connection: connection, keys: configuration.keys)
        let interval = configuration.leaseSeconds / 4
        var next = MonotonicClock.now
        while !stopping.withLock({ $0 }) {
            let now = MonotonicClock.now
            if now < next {
                Thread.sleep(forTimeInterval: min(0.05, (next - now) / .seconds(1)))
                continue
            }
            next = now + .milliseconds(Int(interval * 1000))
            let snapshot = held.withLock { $0 }
            for (job, lease) in snapshot where !lease.lost {
                do {
                    let result = try store.renew(job: job, token: lease.token, lease: configuration.leaseSeconds)
                    if let cancel = result {
                        try store.touch(entry: lease.entry, consumer: configuration.name)
                        metrics.leaseRenewals.add(1, ordering: .relaxed)
                        held.withLock {
                            $0[job]?.renewed = now
                            $0[job]?.cancelRequested = cancel
                        }
                    } else {
                        metrics.leaseRenewalsFailed.add(1, ordering: .relaxed)
                        held.withLock { $0[job]?.lost = true }
                    }
                } catch {
                    metrics.leaseRenewalsFailed.add(1, ordering: .relaxed)
                }
            }
            var argv = ["HSET", configuration.keys.worker(configuration.name)]
            for (key, value) in presence() { argv += [key, value] }
            _ = try? connection.command(argv)
            _ = try? connection.command([
                "PEXPIRE", configuration.keys.worker(configuration.name),
                String(Int(configuration.leaseSeconds * 3000)),
            ])
        }
    }
}
