public import Foundation

/// How a worker runs (`roomtap worker`'s options). A value.
public struct WorkerConfiguration: Sendable {
    public var redis: RedisURL
    public var keys: FleetKeys
    /// The consumer name in the group, and the lease owner: unique per worker process.
    public var name: String
    /// Where rooms are recorded: `SPOOL/ID/part-EPOCH/` per attempt, `SPOOL/ID/room/` when done.
    public var spool: String
    /// Where finished rooms go (`s3://BUCKET/PREFIX`; outputs of job ID under `PREFIX/ID/`), or nil.
    public var upload: String?
    /// Tracks this worker records at once at most.
    public var capacity: Int
    /// Tracks of ``capacity`` kept for live rooms taken over from a dead or draining worker: a new
    /// job is claimed only while it fits in `capacity - failoverReserve`, a take-over while it fits
    /// in `capacity`; so a failover does not wait behind offline work (default
    /// ``defaultFailoverReserve(capacity:)``).
    public var failoverReserve: Int
    /// The lease's time to live, seconds; renewed every quarter of it.
    public var leaseSeconds: Double
    /// `HOST:PORT` of the metrics and health endpoint, or nil.
    public var metrics: String?
    /// Where events are posted, or nil.
    public var webhook: String?
    /// The `roomtap` executable that records a room (this program itself).
    public var executable: String
    /// The environment rooms run with (see ``roomEnvironment``).
    public var environment: [String: String]
    /// This machine's name, stored with each attempt (a worker reads an earlier attempt's files
    /// only when they are on its own machine).
    public var host: String

    public init(
        redis: RedisURL, keys: FleetKeys = FleetKeys(), name: String, spool: String, upload: String? = nil,
        capacity: Int, leaseSeconds: Double = 10, metrics: String? = nil, webhook: String? = nil, executable: String,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        host: String = ProcessInfo.processInfo.hostName
    ) {
        self.redis = redis
        self.keys = keys
        self.name = name
        self.spool = spool
        self.upload = upload
        self.capacity = capacity
        self.failoverReserve = Self.defaultFailoverReserve(capacity: capacity)
        self.leaseSeconds = leaseSeconds
        self.metrics = metrics
        self.webhook = webhook
        self.executable = executable
        self.environment = environment
        self.host = host
    }

    /// ``environment`` as a room's recorder gets it: marked a fleet job (`ROOMTAP_FLEET_JOB=1`),
    /// and without `ROOMTAP_CONTROL`: each room has a control socket of its own (rec-PID.sock);
    /// one path for all would refuse every room but one.
    public var roomEnvironment: [String: String] {
        var environment = self.environment
        environment["ROOMTAP_FLEET_JOB"] = "1"
        environment["ROOMTAP_CONTROL"] = nil
        return environment
    }

    /// The default reserve: an eighth of the capacity, at least one live room of unknown size,
    /// at most half the capacity.
    public static func defaultFailoverReserve(capacity: Int) -> Int {
        min(capacity / 2, max(defaultRoomTracks, capacity / 8))
    }

    /// Tracks a room is counted as when its job does not say (a live room of unknown size).
    public static let defaultRoomTracks = 3

    /// The default capacity: tracks per core this machine records with no late tick
    /// (docs/OPERATIONS.md, "Capacity": `make bench` measured a live track at under 1 % of a core;
    /// 32 per core leaves room for the agent, encoders and the disk), times the cores.
    public static func defaultCapacity(cores: Int = ProcessInfo.processInfo.activeProcessorCount) -> Int {
        32 * max(1, cores)
    }
}
