/// The Redis names of one fleet (docs/OPERATIONS.md, "The job format"): every key starts with the
/// prefix (`roomtap:` unless `--redis-prefix` says otherwise), so several fleets share one server.
///
/// Thread: a value.
public struct FleetKeys: Sendable, Equatable {
    public let prefix: String
    /// The consumer group every worker reads the job stream in.
    public static let group = "roomtap-workers"

    public init(prefix: String = "roomtap:") { self.prefix = prefix }

    /// The stream of deliveries: one entry `{id: ID}` per time a job is handed out.
    public var stream: String { prefix + "jobs" }
    /// Every job id, scored by its submit time (ms since 1970).
    public var index: String { prefix + "job-ids" }
    /// The job's state, arguments and history (a hash).
    public func job(_ id: String) -> String { prefix + "job:" + id }
    /// Who runs the job now: `WORKER/EPOCH`, with the lease's TTL.
    public func lease(_ id: String) -> String { prefix + "lease:" + id }
    /// A worker's presence (a hash with a TTL of a few leases) for `jobs` and the metrics.
    public func worker(_ name: String) -> String { prefix + "worker:" + name }

    /// True for a prefix made of what keys should hold (letters, digits, `:_-.{}`), 1-64 bytes.
    public static func isValidPrefix(_ prefix: String) -> Bool {
        !prefix.isEmpty && prefix.utf8.count <= 64
            && prefix.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || ":_-.{}".contains($0)) }
    }
}
