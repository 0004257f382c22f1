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
    private let finishing = Locked<Set<String>>([])
    private let finishers = DispatchGroup()
    private var leases: LeaseKeeper!

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
    private struct Completion: Sendable {
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
        var lastJanitor = ContinuousClock.now - .seconds(3600)
        var lastWatchdog = ContinuousClock.now
        var pauseReadsUntil = ContinuousClock.now
        while !stopping.load(ordering: .relaxed) {
            if draining.load(ordering: .relaxed) && !metrics.draining.load(ordering: .relaxed) {
                metrics.draining.store(true, ordering: .relaxed)
                notifier.notify("STATUS=draining: \(rooms.count) room(s)")
                log("draining: \(rooms.count) room(s) to finish or hand over")
            }
            superviseRooms(store)
            if isDraining && rooms.isEmpty && finishing.withLock({ $0.isEmpty }) { break }
            let now = ContinuousClock.now
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
        _ delivery: JobStore.Delivery, store: JobStore, reclaimed: Bool, pauseReads: inout ContinuousClock.Instant
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
                lease.map { ContinuousClock.now - $0.renewed > .milliseconds(Int(configuration.leaseSeconds * 1000)) }
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

    /// Fails (with `error`) or completes a room whose recorder exited, on a `roomtap.finish`
    /// thread; its lease is released at the end.
    private func finishInBackground(_ room: Completion, error: String?) {
        finishing.withLock { _ = $0.insert(room.id) }
        finishers.enter()
        let thread = Thread { [self] in
            let store = JobStore(connection: RedisConnection(configuration.redis), keys: configuration.keys)
            if let error { fail(room, error, store: store) } else { complete(room, store: store) }
            leases.release(job: room.id)
            finishing.withLock { _ = $0.remove(room.id) }
            finishers.leave()
        }
        thread.name = "roomtap.finish"
        thread.start()
    }

    /// A live room that had ended when its worker died uploading it (the job was `uploading`):
    /// nothing is recorded again; its attempts are joined (from this disk or the bucket) and
    /// uploaded under this claim.
    private func completeEndedRoom(
        job id: String, entry: String, epoch: Int, fields: [String: String], previousWorker: String
    ) {
        let token = "\(configuration.name)/\(epoch)"
        leases.hold(job: id, token: token, entry: entry)
        let parts = (try? JSONValue(parsing: fields["parts"] ?? "[]"))?.arrayValue ?? []
        log(
            "job \(id): worker \(previousWorker) stopped while uploading the ended room; "
                + "finishing it from its \(parts.count) attempt(s)")
        finishInBackground(
            Completion(
                id: id, epoch: epoch, token: token, jobDirectory: configuration.spool + "/" + id, partDirectory: nil,
                parts: parts, cancelled: false),
            error: nil)
    }

    /// The attempts joined, uploaded (with an archive), the result recorded (fenced), job.done or
    /// job.failed posted.
    private func complete(_ room: Completion, store: JobStore) {
        let id = room.id
        let output = room.jobDirectory + "/room"
        let gaps: [RoomAssembly.Gap]
        do { gaps = try assemble(room, into: output) } catch {
            return fail(room, "cannot put the room together in \(output): \(error)", store: store)
        }
        let files = ((try? FileManager.default.contentsOfDirectory(atPath: output)) ?? []).filter {
            $0 != "segments" && $0 != "upload-journal.json"
        }.sorted()
        var bytes = 0
        for file in files {
            bytes += ((try? FileManager.default.attributesOfItem(atPath: output + "/" + file))?[.size] as? Int) ?? 0
        }
        metrics.bytesWritten.add(bytes, ordering: .relaxed)
        let lost = gaps.reduce(0.0) { $0 + ($1.to - $1.from) }
        metrics.audioLostMilliseconds.add(Int(lost * 1000), ordering: .relaxed)
        addRoomCounters(output)
        let outputs: [(String, String)] = [
            ("outputs", JSONValue.array(files.map(JSONValue.string)).jsonText), ("outputDir", output),
            ("gaps", JSONValue.array(gaps.map(\.json)).jsonText), ("listen", ""),
        ]
        var uploadFields: [(String, String)] = []
        if let archive {
            guard
                (try? store.update(
                    job: id, token: room.token, epoch: room.epoch, [("state", JobState.uploading.rawValue)])) == true
            else {
                log("job \(id): attempt \(room.epoch) no longer holds it; not uploading")
                return
            }
            do {
                metrics.bytesUploaded.add(try archive.upload(directory: output, job: id), ordering: .relaxed)
                uploadFields = [("upload", archive.destination(job: id).description)]
            } catch {
                metrics.uploadFailures.add(1, ordering: .relaxed)
                let message =
                    "upload failed (the room is kept in \(output); roomtap upload \(output) retries): \(error)"
                return fail(room, message, store: store, outputs)
            }
        }
        let state: JobState = room.cancelled ? .cancelled : .done
        guard
            (try? store.finish(job: id, token: room.token, epoch: room.epoch, state: state, outputs + uploadFields))
                == true
        else {
            log("job \(id): finished, but attempt \(room.epoch) no longer holds it (its result is not recorded)")
            return
        }
        // The room is up and verified: its parts' segments are no longer the only copy of anything.
        if let archive { archive.removeParts(job: id) }
        if state == .done {
            metrics.jobsDone.add(1, ordering: .relaxed)
        } else {
            metrics.jobsCancelled.add(1, ordering: .relaxed)
        }
        log(
            "job \(id): \(state.rawValue), \(files.count) file(s) in \(output)"
                + (gaps.isEmpty ? "" : ", \(gaps.count) gap(s)"))
        onEvent(
            "job.done",
            .object([
                "id": .string(id), "state": .string(state.rawValue), "epoch": .number(Double(room.epoch)),
                "outputDir": .string(output), "outputs": .array(files.map(JSONValue.string)),
                "gaps": .array(gaps.map(\.json)),
            ]))
    }

    /// Records a room's failure (fenced) with `message`, counts it, posts job.failed.
    private func fail(_ room: Completion, _ message: String, store: JobStore, _ fields: [(String, String)] = []) {
        _ = try? store.finish(
            job: room.id, token: room.token, epoch: room.epoch, state: .failed, [("error", message)] + fields)
        metrics.jobsFailed.add(1, ordering: .relaxed)
        log("job \(room.id): failed: \(message)")
        onEvent(
            "job.failed",
            .object(["id": .string(room.id), "epoch": .number(Double(room.epoch)), "error": .string(message)]))
    }

    /// The room's whole recording in `output` (`SPOOL/ID/room`): the only attempt's directory
    /// renamed, or every attempt joined (``RoomAssembly``). An attempt recorded on another machine
    /// (or whose directory is gone) is fetched back from the archive's segments when it can be.
    /// Returns the gaps.
    private func assemble(_ room: Completion, into output: String) throws -> [RoomAssembly.Gap] {
        if room.partDirectory == nil, let joined = try? RoomAssembly.roomJSON(in: output),
            joined["state"]?.stringValue == "complete"
        {
            // Its worker died uploading it on this machine: the room is whole here already.
            return (joined["gaps"]?.arrayValue ?? []).compactMap { gap in
                guard let from = gap["from"]?.doubleValue, let to = gap["to"]?.doubleValue else { return nil }
                return RoomAssembly.Gap(from: from, to: to, reason: gap["reason"]?.stringValue ?? "")
            }
        }
        if FileManager.default.fileExists(atPath: output) {
            try FileManager.default.moveItem(atPath: output, toPath: output + ".old-\(getpid())-\(room.epoch)")
        }
        if room.parts.count == 1, let own = room.partDirectory {
            try FileManager.default.moveItem(atPath: own, toPath: output)
            return []
        }
        let parts = room.parts.compactMap { part -> RoomAssembly.Part? in
            guard let epoch = part["epoch"]?.intValue else { return nil }
            var directory = part["dir"]?.stringValue
            let here =
                part["host"]?.stringValue == configuration.host
                && directory.map { FileManager.default.fileExists(atPath: $0 + "/room.json") } == true
            if !here { directory = fetchPart(of: room, epoch: epoch, entry: part) }
            return RoomAssembly.Part(
                epoch: epoch, worker: part["worker"]?.stringValue ?? "?", directory: directory,
                claimed: Date(timeIntervalSince1970: (part["claimed"]?.doubleValue ?? 0) / 1000))
        }
        return try RoomAssembly.assemble(parts: parts, into: output).gaps
    }

    /// Attempt `epoch` of a room, rebuilt from the archive's segments into
    /// `SPOOL/ID/part-EPOCH.fetched`, or nil (no archive, no start time known, nothing uploaded).
    private func fetchPart(of room: Completion, epoch: Int, entry: JSONValue) -> String? {
        guard let archive, let text = entry["startTime"]?.stringValue,
            let start = ISO8601DateFormatter.withMilliseconds.date(from: text)
        else { return nil }
        let directory = room.jobDirectory + "/part-\(epoch).fetched"
        try? FileManager.default.removeItem(atPath: directory)
        do {
            let tracks = try archive.fetchPart(job: room.id, epoch: epoch, startTime: start, into: directory)
            log(
                "job \(room.id): attempt \(epoch) (worker \(entry["worker"]?.stringValue ?? "?")) fetched from "
                    + "\(archive.partLocation(job: room.id, epoch: epoch)): \(tracks.count) track(s)")
            return tracks.isEmpty ? nil : directory
        } catch {
            log("job \(room.id): cannot fetch attempt \(epoch) from the archive: \(error)")
            return nil
        }
    }

    /// Late ticks and packet counters of a finished room, from its room.json.
    private func addRoomCounters(_ directory: String) {
        guard let room = try? RoomAssembly.roomJSON(in: directory) else { return }
        if let late = room["clock"]?["lateTicks"]?.intValue ?? room["lateTicks"]?.intValue {
            metrics.lateTicks.add(late, ordering: .relaxed)
        }
        if let network = room["network"] {
            metrics.packetsReceived.add(network["rtpPackets"]?.intValue ?? 0, ordering: .relaxed)
        }
    }

    // MARK: - Leftovers

    /// A previous run of this worker died with rooms on its disk: their WAVs are repaired in place
    /// (everything that reached the disk is readable again), so the worker that took the room
    /// over on this machine, or an operator, finds them whole. With an archive, a finished room
    /// whose upload failed (`SPOOL/ID/room` of a job `failed` with that directory) is uploaded now
    /// and its job becomes `done`. Runs before the worker takes work.
    private func recoverLeftovers(_ store: JobStore) {
        let jobs = (try? FileManager.default.contentsOfDirectory(atPath: configuration.spool)) ?? []
        var repaired = 0
        for job in jobs.sorted() {
            let jobDirectory = configuration.spool + "/" + job
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: jobDirectory)) ?? []
            for part in entries where part.hasPrefix("part-") && !part.hasSuffix(".log") && !part.contains(".old-") {
                let directory = jobDirectory + "/" + part
                for file in ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [])
                where file.hasSuffix(".wav") {
                    if let report = try? WAVRepair.repair(path: directory + "/" + file), report.changed {
                        repaired += 1
                    }
                }
            }
            if entries.contains("room") { uploadLeftover(job: job, directory: jobDirectory + "/room", store: store) }
        }
        if repaired > 0 { log("recovered \(repaired) file(s) a previous run left in \(configuration.spool)") }
    }

    /// A finished room left in the spool whose upload failed: uploaded again, its job made `done`.
    private func uploadLeftover(job id: String, directory: String, store: JobStore) {
        guard let archive, let fields = try? store.fields(of: id), fields["state"] == JobState.failed.rawValue,
            fields["outputDir"] == directory
        else { return }
        do {
            metrics.bytesUploaded.add(try archive.upload(directory: directory, job: id), ordering: .relaxed)
        } catch {
            metrics.uploadFailures.add(1, ordering: .relaxed)
            return log("job \(id): the upload of \(directory) failed again: \(error)")
        }
        let location = archive.destination(job: id).description
        guard (try? store.uploadedLater(job: id, outputDir: directory, upload: location)) == true else { return }
        archive.removeParts(job: id)
        log("job \(id): done: the room left in \(directory) is uploaded to \(location)")
        onEvent(
            "job.done",
            .object([
                "id": .string(id), "state": .string(JobState.done.rawValue), "outputDir": .string(directory),
                "upload": .string(location), "uploadedLater": .bool(true),
            ]))
    }
}
