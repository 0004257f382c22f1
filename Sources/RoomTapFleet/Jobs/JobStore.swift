import Foundation
public import RoomTapJSON

/// The fleet's jobs in Redis: submit, list, cancel (the CLI), and claim, renew, fenced updates,
/// finish and hand-over (the worker). Every change is one Lua script (``FleetScripts``), atomic
/// on the server; the stream `PREFIX jobs` and the consumer group `roomtap-workers` hand jobs out
/// (XREADGROUP for new ones, XAUTOCLAIM for those whose worker stopped renewing).
///
/// Thread: confined, as its ``RedisConnection``.
public final class JobStore {
    public let keys: FleetKeys
    public let connection: RedisConnection

    public init(connection: RedisConnection, keys: FleetKeys) {
        self.connection = connection
        self.keys = keys
    }

    /// What a claim found.
    public enum ClaimResult: Equatable, Sendable {
        /// The job is this worker's now, under `epoch`; `previousWorker`/`previousState` say whether it
        /// continues a room another worker started (failover or hand-over).
        case claimed(epoch: Int, previousWorker: String, previousState: String)
        /// Finished (or cancelled before it ran): the delivery is acknowledged.
        case finished(JobState)
        /// Another worker holds its lease.
        case held(String)
        /// An old delivery of a job that was handed out again, or of a job that no longer exists.
        case stale
    }

    /// One job read from the stream: its entry id and job id.
    public struct Delivery: Equatable, Sendable {
        public let entry: String
        public let job: String
    }

    /// The fields a submit stores beside the state.
    public struct Submission: Sendable {
        public var id: String
        public var arguments: [String]
        public var tracks: Int
        public var isLive: Bool
        public var upload: String?

        public init(id: String, arguments: [String], tracks: Int, isLive: Bool, upload: String?) {
            self.id = id
            self.arguments = arguments
            self.tracks = tracks
            self.isLive = isLive
            self.upload = upload
        }
    }

    static func now() -> String { String(Int64(Date().timeIntervalSince1970 * 1000)) }

    // MARK: - The CLI's side

    /// Queues a job; false when a job of that id exists.
    public func submit(_ submission: Submission) throws(RedisError) -> Bool {
        var argv = [
            "EVAL", FleetScripts.submit, "3", keys.job(submission.id), keys.index, keys.stream, submission.id,
            Self.now(),
            FleetKeys.group,
        ]
        argv += [
            "args", JSONValue.array(submission.arguments.map(JSONValue.string)).jsonText, "tracks",
            String(submission.tracks), "live", submission.isLive ? "1" : "0",
        ]
        if let upload = submission.upload { argv += ["upload", upload] }
        let reply = try connection.command(argv)
        return reply.integer != 0
    }

    /// One job; nil when there is none of that id.
    public func job(_ id: String) throws(RedisError) -> JobRecord? {
        let fields = try connection.command(["HGETALL", keys.job(id)]).fields
        guard !fields.isEmpty else { return nil }
        let leased = try connection.command(["EXISTS", keys.lease(id)]).integer == 1
        return JobRecord(fields: fields, leased: leased)
    }

    /// Every job, oldest first.
    public func jobs() throws(RedisError) -> [JobRecord] {
        let ids = try connection.command(["ZRANGE", keys.index, "0", "-1"]).elements.compactMap(\.text)
        var records: [JobRecord] = []
        for id in ids { if let record = try job(id) { records.append(record) } }
        return records
    }

    /// Cancels a job: "cancelled" when it was queued, "cancelling" when its worker will stop it,
    /// "ended:STATE" when it had ended already, nil when there is no such job.
    public func cancel(_ id: String) throws(RedisError) -> String? {
        let reply = try connection.command([
            "EVAL", FleetScripts.cancel, "3", keys.job(id), keys.lease(id), keys.stream, FleetKeys.group, Self.now(),
        ])
        let state = reply.text ?? "missing"
        return state == "missing" ? nil : state
    }

    // MARK: - The worker's side

    /// Creates the stream and the group when missing (idempotent).
    public func ensureGroup() throws(RedisError) {
        do {
            try connection.command(["XGROUP", "CREATE", keys.stream, FleetKeys.group, "0", "MKSTREAM"])
        } catch  where error.isReply && error.description.contains("BUSYGROUP") {}
    }

    /// Reads at most one new delivery for `consumer`, waiting up to `block` seconds.
    public func readNew(consumer: String, block: Double) throws(RedisError) -> Delivery? {
        let reply = try connection.command(
            [
                "XREADGROUP", "GROUP", FleetKeys.group, consumer, "COUNT", "1", "BLOCK", String(Int(block * 1000)),
                "STREAMS", keys.stream, ">",
            ], blockSeconds: block)
        return Self.deliveries(reply.elements.first?.elements.dropFirst().first ?? .null).first
    }

    /// Takes over deliveries idle for `minIdle` seconds (their worker stopped renewing): XAUTOCLAIM.
    public func reclaimIdle(consumer: String, minIdle: Double, count: Int = 16) throws(RedisError) -> [Delivery] {
        let reply = try connection.command([
            "XAUTOCLAIM", keys.stream, FleetKeys.group, consumer, String(Int(minIdle * 1000)), "0-0", "COUNT",
            String(count),
        ])
        let claimed = reply.elements.dropFirst().first ?? .null
        return Self.deliveries(claimed)
    }

    /// Keeps this worker's delivery fresh (XCLAIM to itself, JUSTID: resets its idle time without
    /// counting a delivery), so no janitor takes a room whose worker is alive.
    public func touch(entry: String, consumer: String) throws(RedisError) {
        try connection.command(["XCLAIM", keys.stream, FleetKeys.group, consumer, "0", entry, "JUSTID"])
    }

    /// Acknowledges a delivery that names no job to run (finished, stale, missing).
    public func acknowledge(entry: String) throws(RedisError) {
        try connection.command(["XACK", keys.stream, FleetKeys.group, entry])
    }

    /// Claims `delivery` for `worker` with a lease of `lease` seconds.
    public func claim(_ delivery: Delivery, worker: String, lease: Double) throws(RedisError) -> ClaimResult {
        let reply = try connection.command([
            "EVAL", FleetScripts.claim, "2", keys.job(delivery.job), keys.lease(delivery.job), worker,
            String(Int(lease * 1000)), Self.now(), delivery.entry,
        ])
        let items = reply.elements.compactMap(\.text)
        switch items.first {
        case "claimed":
            return .claimed(
                epoch: Int(items.count > 1 ? items[1] : "") ?? 0, previousWorker: items.count > 2 ? items[2] : "",
                previousState: items.count > 3 ? items[3] : "")
        case "finished":
            return .finished(JobState(rawValue: items.count > 1 ? items[1] : "") ?? .done)
        case "held": return .held(items.count > 1 ? items[1] : "")
        default: return .stale
        }
    }

    /// Renews the lease held as `token`: nil when it is no longer held (fenced off), else whether
    /// a cancel was asked for.
    public func renew(job id: String, token: String, lease: Double) throws(RedisError) -> Bool? {
        let reply = try connection.command([
            "EVAL", FleetScripts.renew, "2", keys.job(id), keys.lease(id), token, String(Int(lease * 1000)),
        ])
        let items = reply.elements
        guard items.first?.integer == 1 else { return nil }
        return items.count > 1 && items[1].text == "1"
    }

    /// Sets fields of a job this worker holds; false when fenced off.
    public func update(job id: String, token: String, epoch: Int, _ fields: [(String, String)]) throws(RedisError)
        -> Bool
    {
        var argv = ["EVAL", FleetScripts.update, "2", keys.job(id), keys.lease(id), token, String(epoch)]
        for (key, value) in fields { argv += [key, value] }
        return try connection.command(argv).integer == 1
    }

    /// Ends a job this worker holds; false when fenced off.
    public func finish(
        job id: String, token: String, epoch: Int, state: JobState, _ fields: [(String, String)] = []
    ) throws(RedisError) -> Bool {
        var argv = [
            "EVAL", FleetScripts.finish, "3", keys.job(id), keys.lease(id), keys.stream, token, String(epoch),
            FleetKeys.group, state.rawValue, Self.now(),
        ]
        for (key, value) in fields { argv += [key, value] }
        return try connection.command(argv).integer == 1
    }

    /// A failed room whose upload this worker retried and completed (``FleetScripts/uploadedLater``):
    /// true when the job was that room and is `done` now.
    public func uploadedLater(job id: String, outputDir: String, upload: String) throws(RedisError) -> Bool {
        try connection.command(["EVAL", FleetScripts.uploadedLater, "1", keys.job(id), outputDir, upload, Self.now()])
            .integer == 1
    }

    /// Hands a held job to the next free worker at once (drain); false when fenced off.
    public func handOver(job id: String, token: String, epoch: Int, state: JobState) throws(RedisError) -> Bool {
        try connection.command([
            "EVAL", FleetScripts.handOver, "3", keys.job(id), keys.lease(id), keys.stream, token, String(epoch),
            FleetKeys.group, id, state.rawValue,
        ]).integer == 1
    }

    /// Puts back a delivery this worker read but cannot take (capacity).
    public func putBack(_ delivery: Delivery) throws(RedisError) {
        try connection.command([
            "EVAL", FleetScripts.putBack, "3", keys.job(delivery.job), keys.stream, keys.lease(delivery.job),
            FleetKeys.group, delivery.entry, delivery.job,
        ])
    }

    /// The job's hash (for a worker starting a claimed job).
    public func fields(of id: String) throws(RedisError) -> [String: String] {
        try connection.command(["HGETALL", keys.job(id)]).fields
    }

    /// `[[entry, [field, value, ...]], ...]` as deliveries (entries without an `id` field are
    /// returned with an empty job, to be acknowledged).
    static func deliveries(_ reply: RedisReply) -> [Delivery] {
        reply.elements.compactMap { item in
            let parts = item.elements
            guard let entry = parts.first?.text else { return nil }
            let fields = parts.count > 1 ? parts[1].fields : [:]
            return Delivery(entry: entry, job: fields["id"] ?? "")
        }
    }
}
