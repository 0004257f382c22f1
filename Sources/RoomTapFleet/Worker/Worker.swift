import Foundation
import Glibc
public import RoomTapJSON
import RoomTapSinks
import RoomTapSync
import Synchronization

/// `roomtap worker`: takes room jobs from the fleet's stream and records each as its own child
/// `roomtap record` process (a crash of one room never takes the others down), holding a lease
/// per room that another worker reclaims when this one dies (docs/OPERATIONS.md).
///
/// - Claims: new deliveries (XREADGROUP) while it has capacity for the job's tracks (a new job
///   leaves ``WorkerConfiguration/failoverReserve`` free for live rooms taken over); deliveries
///   idle longer than a lease (their worker stopped renewing: XAUTOCLAIM) as a janitor.
/// - A claim bumps the job's epoch; every later write is fenced by it (``FleetScripts``).
/// - A live room that moved (its previous attempt's worker died or handed it over) records again
///   with the same arguments (a new address when the port was 0); at its end the attempts are
///   joined into one recording of the whole room (``RoomAssembly``). An offline room restarts.
/// - SIGTERM drains (no new work; offline rooms finish; live rooms are handed over at once); a
///   second SIGTERM or SIGINT ends at once (the rooms' recorders get SIGTERM and finalise).
///
/// Thread: ``run()`` on the thread that owns the worker (the main thread); it must live as long
/// as the rooms (their recorders die with it). A room that ended is joined and uploaded on a
/// `roomtap.finish` thread of its own (its own Redis connection). ``drain()``/``stopNow()`` from
/// any thread; a drain waits for the finishing rooms, a stop does not.
public final class Worker: @unchecked Sendable {
    public let configuration: WorkerConfiguration
    public let metrics: WorkerMetrics
    /// Events for webhooks (`job.started`, `room.listening`, `room.moved`, `job.done`,
    /// `job.failed`), posted from the main thread; must not block.
    public var onEvent: @Sendable (String, JSONValue) -> Void = { _, _ in }
    /// Lines for the worker's log (stderr).
    public var log: @Sendable (String) -> Void = { _ in }
    /// The fleet's bucket (`--upload`): live attempts upload their segments there while they
    /// record, finished rooms go to `PREFIX/ID/`. Used on the main thread (the rooms' leases are
    /// renewed meanwhile by their own thread).
    public var archive: RoomArchive?
    /// Called once the worker takes work, with the metrics address when there is one.
    public var onReady: @Sendable (String?) -> Void = { _ in }

    private let draining = Atomic<Bool>(false)
    private let stopping = Atomic<Bool>(false)
    private let notifier = SystemdNotifier()
    private var rooms: [String: Room] = [:]
    /// Rooms whose recording ended and that are being joined and uploaded, each on a thread of its
    /// own (`roomtap.finish`) with its own Redis connection: a long upload never holds up the
    /// main loop (claims, take-overs, other rooms' addresses). Their leases are held meanwhile.
    let finishing = Locked<Set<String>>([])
    let finishers = DispatchGroup()
    var leases: LeaseKeeper!

    /// One room this worker records.
    private struct Room {
        var id: String
        var epoch: Int
        var token: String
        var tracks: Int
        var isLive: Bool
        var process: RoomProcess
        var jobDirectory: String
        var partDirectory: String
        var parts: [JSONValue]
        var listen: [String] = []
        /// The attempt's room start time is in its part entry in Redis (read off its room.json).
        var startTimeStored = false
        var stopSignalled = false
        var handedOver = false
        var lost = false
        var cancelled = false
        var moved: Bool

        var completion: Completion {
            Completion(
                id: id, epoch: epoch, token: token, jobDirectory: jobDirectory, partDirectory: partDirectory,
                parts: parts, cancelled: cancelled)
        }
    }

    /// A room whose recording has ended, to be joined, uploaded and recorded as done.
    struct Completion: Sendable {
        var id: String
        var epoch: Int
        var token: String
        var jobDirectory: String
        /// This worker's own attempt's directory, or nil (a room that ended on a worker that died
        /// while uploading it: only earlier attempts).
        var partDirectory: String?
        var parts: [JSONValue]
        var cancelled: Bool
    }

    public init(configuration: WorkerConfiguration) {
        self.configuration = configuration
        metrics = WorkerMetrics(capacityTracks: configuration.capacity)
    }

    /// Stop claiming; finish offline rooms, hand live rooms over, then return. Idempotent.
    public func drain() { draining.store(true, ordering: .relaxed) }
    /// Return at once (the rooms' recorders are sent SIGTERM and finalise their files).
    public func stopNow() { stopping.store(true, ordering: .relaxed) }
    public var isDraining: Bool { draining.load(ordering: .relaxed) }

    /// Runs until drained or stopped; throws a one-line reason when it cannot start (Redis
    /// unreachable, spool not writable, metrics port taken).
    public func run() throws {
        try FileManager.default.createDirectory(atPath: configuration.spool, withIntermediateDirectories: true)
        guard access(configuration.spool, W_OK) == 0 else {
            throw FleetError("the spool \(configuration.spool) is not writable: give --spool DIR")
        }
        let connection = RedisConnection(configuration.redis)
        let store = JobStore(connection: connection, keys: configuration.keys)
        do { try store.ensureGroup() } catch { throw FleetError("\(error.description) (is redis-server running?)") }
        recoverLeftovers(store)
        let metrics = self.metrics
        var server: MetricsServer?
        if let address = configuration.metrics {
            let name = configuration.name
            server = try MetricsServer(address: address) { request in
                switch request.path {
                case "/metrics": return (200, "text/plain; version=0.0.4", metrics.text(worker: name))
                case "/healthz": return (200, "text/plain", "ok\n")
                case "/readyz":
                    return metrics.isReady ? (200, "text/plain", "ready\n") : (503, "text/plain", "not ready\n")
                default: return (404, "text/plain", "not found\n")
                }
            }
            server?.start()
        }
        let configuration = self.configuration
        leases = LeaseKeeper(configuration: configuration, metrics: metrics) {
            [
                ("host", configuration.host), ("capacity", String(configuration.capacity)),
                ("tracks", String(metrics.tracks.load(ordering: .relaxed))),
                ("rooms", String(metrics.rooms.load(ordering: .relaxed))),
                ("draining", metrics.draining.load(ordering: .relaxed) ? "1" : "0"),
                ("seen", String(Int64(Date().timeIntervalSince1970 * 1000))),
            ]
        }
        leases.start()
        metrics.ready.store(true, ordering: .relaxed)
        notifier.notify("READY=1\nSTATUS=taking work (capacity \(configuration.capacity) tracks)")
        onReady(server?.address)
        log("taking work from \(configuration.redis) (capacity \(configuration.capacity) tracks)")
        var lastJanitor = MonotonicClock.now - .seconds(3600)
        var lastWatchdog = MonotonicClock.now
        var pauseReadsUntil = MonotonicClock.now
        while !stopping.load(ordering: .relaxed) {
            if draining.load(ordering: .relaxed) && !metrics.draining.load(ordering: .relaxed) {
                metrics.draining.store(true, ordering: .relaxed)
                notifier.notify("STATUS=draining: \(rooms.count) room(s)")
                log("draining: \(rooms.count) room(s) to finish or hand over")
            }
            superviseRooms(store)
            if isDraining && rooms.isEmpty && finishing.withLock({ $0.isEmpty }) { break }
            let now = MonotonicClock.now
            if let interval = notifier.watchdogInterval, now - lastWatchdog >= .milliseconds(Int(interval * 1000)) {
                notifier.notify("WATCHDOG=1")
                lastWatchdog = now
            }
            do {
                if !isDraining, now - lastJanitor >= .milliseconds(Int(configuration.leaseSeconds * 500)) {
                    lastJanitor = now
                    for delivery in try store.reclaimIdle(
                        consumer: configuration.name, minIdle: configuration.leaseSeconds)
                    {
                        try consider(delivery, store: store, reclaimed: true, pauseReads: &pauseReadsUntil)
                    }
                }
                if !isDraining, usedTracks < configuration.capacity, now >= pauseReadsUntil {
                    if let delivery = try store.readNew(consumer: configuration.name, block: 0.25) {
                        try consider(delivery, store: store, reclaimed: false, pauseReads: &pauseReadsUntil)
                    }
                } else {
                    usleep(50_000)
                }
            } catch {
                log("warning: \(error.description); retrying")
                usleep(500_000)
            }
        }
        notifier.notify("STOPPING=1")
        metrics.ready.store(false, ordering: .relaxed)
        if stopping.load(ordering: .relaxed) {
            // At once: recorders finalise; an upload under way is left to the next claim (the job
            // stays `uploading` until its lease expires, then another worker finishes it).
            for room in rooms.values { room.process.signal(SIGTERM) }
        } else {
            finishers.wait()
        }
        leases.stop()
        server?.stop()
        log("stopped")
    }

    private var usedTracks: Int { rooms.values.reduce(0) { $0 + $1.tracks } }

    private func updateGauges() {
        metrics.rooms.store(rooms.count, ordering: .relaxed)
        metrics.tracks.store(usedTracks, ordering: .relaxed)
    }

    // MARK: - Claiming

    private func consider(
        _ delivery: JobStore.Delivery, store: JobStore, reclaimed: Bool, pauseReads: inout MonotonicClock.Instant
    ) throws(RedisError) {
        guard !delivery.job.isEmpty else { return try store.acknowledge(entry: delivery.entry) }
        // Ours already (the janitor found our own entry), recording or finishing.
        if rooms[delivery.job] != nil || finishing.withLock({ $0.contains(delivery.job) }) { return }
        let fields = try store.fields(of: delivery.job)
        guard !fields.isEmpty else { return try store.acknowledge(entry: delivery.entry) }
        let tracks = max(1, Int(fields["tracks"] ?? "") ?? WorkerConfiguration.defaultRoomTracks)
        // A live room that moved may use the reserve; anything else leaves it free for one.
        let takeOver = fields["live"] == "1" && (Int(fields["epoch"] ?? "") ?? 0) > 0
        let limit = configuration.capacity - (takeOver ? 0 : configuration.failoverReserve)
        if usedTracks + tracks > limit {
            try store.putBack(delivery)
            pauseReads = .now + .seconds(1)
            return
        }
        switch try store.claim(delivery, worker: configuration.name, lease: configuration.leaseSeconds) {
        case .finished, .stale: try store.acknowledge(entry: delivery.entry)
        case .held: break
        case .claimed(let epoch, let previousWorker, let previousState):
            metrics.claims.add(1, ordering: .relaxed)
            if reclaimed { metrics.reclaims.add(1, ordering: .relaxed) }
            if previousState == JobState.uploading.rawValue, fields["live"] == "1" {
                return completeEndedRoom(
                    job: delivery.job, entry: delivery.entry, epoch: epoch, fields: fields,
                    previousWorker: previousWorker)
            }
            let moved = epoch > 1 && (previousState == "running" || previousState == "moving")
            start(
                job: delivery.job, entry: delivery.entry, epoch: epoch, fields: fields, tracks: tracks, moved: moved,
                previousWorker: previousWorker, store: store)
        }
    }

    private func start(
        job id: String, entry: String, epoch: Int, fields: [String: String], tracks: Int, moved: Bool,
        previousWorker: String, store: JobStore
    ) {
        let token = "\(configuration.name)/\(epoch)"
        leases.hold(job: id, token: token, entry: entry)
        let isLive = fields["live"] == "1"
        let jobDirectory = configuration.spool + "/" + id
        let partDirectory = jobDirectory + "/part-\(epoch)"
        var parts = (try? JSONValue(parsing: fields["parts"] ?? "[]"))?.arrayValue ?? []
        parts.append(
            .object([
                "epoch": .number(Double(epoch)), "worker": .string(configuration.name),
                "host": .string(configuration.host),
                "dir": .string(partDirectory), "claimed": .number(Date().timeIntervalSince1970 * 1000),
            ]))
        if !isLive { parts = [parts[parts.count - 1]] }  // an offline room restarts: earlier attempts do not count
        func fail(_ message: String) {
            log("job \(id): \(message)")
            _ = try? store.finish(job: id, token: token, epoch: epoch, state: .failed, [("error", message)])
            leases.release(job: id)
            metrics.jobsFailed.add(1, ordering: .relaxed)
            onEvent(
                "job.failed", .object(["id": .string(id), "epoch": .number(Double(epoch)), "error": .string(message)]))
        }
        do {
            try FileManager.default.createDirectory(atPath: jobDirectory, withIntermediateDirectories: true)
            if FileManager.default.fileExists(atPath: partDirectory) {
                try FileManager.default.moveItem(atPath: partDirectory, toPath: partDirectory + ".old-\(getpid())")
            }
        } catch {
            return fail("cannot make \(partDirectory): \(error.localizedDescription)")
        }
        var recordArguments = JobRecord.strings(fields["args"])
        if moved, isLive, let first = parts.first?["claimed"]?.doubleValue {
            // A room taken over records what is left of its --duration, counted from its first attempt.
            let elapsed = Date().timeIntervalSince1970 - first / 1000
            recordArguments = Self.remainingDuration(recordArguments, elapsed: elapsed)
        }
        var arguments = ["record"] + recordArguments + ["--out", partDirectory, "--quiet"]
        if isLive, let archive, !recordArguments.contains(where: { $0 == "--upload" || $0.hasPrefix("--upload=") }) {
            arguments += archive.recordArguments(job: id, epoch: epoch)
        }
        let process: RoomProcess
        do {
            process = try RoomProcess(
                executable: configuration.executable, arguments: arguments, environment: configuration.roomEnvironment,
                logPath: jobDirectory + "/part-\(epoch).log")
        } catch {
            return fail("\(error)")
        }
        _ = try? store.update(
            job: id, token: token, epoch: epoch,
            [("parts", JSONValue.array(parts).jsonText), ("outputDir", ""), ("host", configuration.host)])
        rooms[id] = Room(
            id: id, epoch: epoch, token: token, tracks: tracks, isLive: isLive, process: process,
            jobDirectory: jobDirectory, partDirectory: partDirectory, parts: parts, moved: moved)
        updateGauges()
        log(
            "job \(id): attempt \(epoch) started (pid \(process.pid))"
                + (moved ? ", taken over from \(previousWorker)" : ""))
        onEvent(
            "job.started",
            .object([
                "id": .string(id), "epoch": .number(Double(epoch)), "worker": .string(configuration.name),
                "previousWorker": previousWorker.isEmpty ? .null : .string(previousWorker),
            ]))
    }

    /// `arguments` with `--duration D` (or `--duration=D`) lowered by `elapsed` seconds (at least 1 s
    /// is left: a recorder that starts records something).
    public static func remainingDuration(_ arguments: [String], elapsed: Double) -> [String] {
        var result = arguments
        for i in result.indices {
            var valueIndex: Int?
            if result[i] == "--duration", i + 1 < result.count { valueIndex = i + 1 }
            if let v = valueIndex, let d = Double(result[v]) {
                result[v] = String(format: "%.2f", max(1, d - elapsed))
            } else if result[i].hasPrefix("--duration="), let d = Double(result[i].dropFirst("--duration=".count)) {
                result[i] = "--duration=" + String(format: "%.2f", max(1, d - elapsed))
            }
        }
        return result
    }

    // MARK: - Running rooms

    private func superviseRooms(_ store: JobStore) {
        for id in Array(rooms.keys) {
            guard var room = rooms[id] else { continue }
            let lease = leases.state(of: id)
            let expired =
                lease.map { MonotonicClock.now - $0.renewed > .milliseconds(Int(configuration.leaseSeconds * 1000)) }
                ?? true
            if !room.lost, !room.handedOver, lease?.lost == true || expired {
                room.lost = true
                metrics.jobsLost.add(1, ordering: .relaxed)
                log("job \(id): lost the lease of attempt \(room.epoch); stopping its recorder")
                room.process.signal(SIGINT)
                leases.release(job: id)
            }
            if !room.cancelled, lease?.cancelRequested == true {
                room.cancelled = true
                room.process.signal(SIGINT)
                log("job \(id): cancel asked; stopping")
            }
            if isDraining, room.isLive, !room.handedOver, !room.lost {
                room.process.signal(SIGINT)  // reception ends at once; the record delay drains
                if (try? store.handOver(job: id, token: room.token, epoch: room.epoch, state: .moving)) == true {
                    metrics.jobsHandedOver.add(1, ordering: .relaxed)
                    log("job \(id): handed over")
                }
                room.handedOver = true
                leases.release(job: id)
            }
            room.process.scanLog()
            if room.isLive, !room.startTimeStored, !room.lost, !room.handedOver,
                let start = (try? RoomAssembly.roomJSON(in: room.partDirectory))?["startTime"]?.stringValue,
                var last = room.parts.last?.objectValue
            {
                // Where this attempt sits on the room's timeline, for a worker that joins it from the
                // bucket after this machine is gone.
                last["startTime"] = .string(start)
                room.parts[room.parts.count - 1] = .object(last)
                room.startTimeStored =
                    (try? store.update(
                        job: id, token: room.token, epoch: room.epoch,
                        [("parts", JSONValue.array(room.parts).jsonText)])) == true
            }
            if room.process.listenAddresses != room.listen, !room.lost, !room.handedOver {
                room.listen = room.process.listenAddresses
                let listen = room.listen.joined(separator: ",")
                if (try? store.update(job: id, token: room.token, epoch: room.epoch, [("listen", listen)])) == true {
                    let body: JSONValue = .object([
                        "id": .string(id), "epoch": .number(Double(room.epoch)), "listen": .string(listen),
                        "worker": .string(configuration.name),
                    ])
                    onEvent("room.listening", body)
                    if room.moved { onEvent("room.moved", body) }
                    log("job \(id): listening on \(listen)")
                }
            }
            rooms[id] = room
            guard let status = room.process.poll() else { continue }
            rooms[id] = nil
            updateGauges()
            if room.lost || room.handedOver { continue }
            let error =
                status == 0
                ? nil : room.process.lastError.isEmpty ? "record exited with status \(status)" : room.process.lastError
            finishInBackground(room.completion, error: error)
        }
    }
}
