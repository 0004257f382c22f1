/// Where an agent is in its life (``RealtimeAgentStatistics/state``; `status --json` and
/// room.json carry the raw value).
///
/// ```
/// idle ─► connecting ─► connected ◄─► reconnecting      (drops, expiry, rollover)
///               │            │              │
///               └────────────┴──────────────┴─► failed  (refused key, quota, billing, model)
///                                               stopped (stop())
/// ```
///
/// Thread: a value.
public enum RealtimeAgentState: String, Sendable, Codable, Equatable, CaseIterable {
    /// Made, not started.
    case idle
    /// Opening its first session.
    case connecting
    /// A session is open: it hears the room and may speak.
    case connected
    /// Between sessions: after a drop (with backoff) or at a session's end.
    case reconnecting
    /// Ended by ``RealtimeAgent/stop()``.
    case stopped
    /// Ended by a failure retrying cannot heal (``RealtimeAgentStatistics/failure`` says which);
    /// the room records on.
    case failed
}
