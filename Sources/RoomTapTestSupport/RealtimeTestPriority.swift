import RoomTapCore

/// The real-time priority the live tests give the threads a deployment would (the room clock,
/// its render helpers and receive thread, the test senders), when this machine permits SCHED_FIFO
/// (root, `CAP_SYS_NICE` or `ulimit -r`): with it, live tests hold on a machine loaded far past
/// its cores (`stress-ng`, a second `make test`), as `--realtime-priority` does for a recorder.
/// Without it everything runs at normal priority, as before. Thread: any.
public enum RealtimeTestPriority {
    /// The SCHED_FIFO priority when permitted, else nil. Probed once per process.
    public static let priority: Int32? = {
        let wanted = RealtimeScheduling.defaultPriority
        return RealtimeScheduling.unavailableReason(priority: wanted) == nil ? wanted : nil
    }()

    /// `["--realtime-priority"]` for a live `roomtap record` when permitted, else `[]` (the
    /// option would only warn).
    public static var recordFlags: [String] { priority == nil ? [] : ["--realtime-priority"] }

    /// Puts the calling thread under SCHED_FIFO when permitted; does nothing otherwise.
    public static func applyToCurrentThread() {
        if let priority { RealtimeScheduling.applyToCurrentThread(priority: priority) }
    }
}
