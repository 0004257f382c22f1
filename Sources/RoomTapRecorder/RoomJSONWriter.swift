import Foundation
import RoomTapSync

/// Keeps `DIR/room.json` current while a room runs, so a recorder killed with SIGKILL (or a power
/// cut) still leaves a report saying which file is whose, marked `"state": "recording"`.
///
/// Every write replaces the whole file atomically (``RoomReport/writeAtomically(_:to:overwrite:)``:
/// a temporary file, fsync, rename). ``submit(_:)`` encodes on the caller's thread and hands the
/// bytes to a serial queue ("roomtap.room-json"), so a slow disk never holds the caller; a report
/// still waiting is replaced by a newer one rather than queued behind it. ``write(_:overwrite:)``
/// writes on the caller's thread after anything queued, for the first and the final report.
///
/// Thread: any thread but the room clock's (encoding allocates); `submit` and `write` from one
/// thread at a time (the recorder's main loop).
final class RoomJSONWriter: Sendable {
    /// The room.json written.
    let path: String
    private let queue = DispatchQueue(label: "roomtap.room-json")
    private let state = Locked<State>(State())

    private struct State {
        /// The newest report not written yet.
        var pending: Data?
        /// True while a write of `pending` is queued.
        var scheduled = false
        /// The last background write's error, until ``takeFailure()`` hands it out.
        var failure: String?
        /// True once a failure was handed out: later ones are kept quiet.
        var reported = false
    }

    init(path: String) { self.path = path }

    /// Writes `report` now, after any write still queued. Throws a one-line error (nothing is
    /// left half-written). Without `overwrite` an existing room.json is an error.
    func write(_ report: RoomReport, overwrite: Bool) throws {
        let data = try report.encoded()
        try queue.sync {
            state.withLock { $0.pending = nil }
            try RoomReport.writeAtomically(data, to: path, overwrite: overwrite)
        }
    }

    /// Queues `report` to replace room.json and returns at once. A failed write is kept for
    /// ``takeFailure()``; the next report tries again.
    func submit(_ report: RoomReport) {
        guard let data = try? report.encoded() else { return }
        let schedule = state.withLock { s in
            s.pending = data
            defer { s.scheduled = true }
            return !s.scheduled
        }
        guard schedule else { return }
        queue.async { [self] in
            let data = state.withLock { s in
                s.scheduled = false
                defer { s.pending = nil }
                return s.pending
            }
            guard let data else { return }
            do {
                try RoomReport.writeAtomically(data, to: path, overwrite: true)
            } catch {
                state.withLock { $0.failure = "\(error)" }
            }
        }
    }

    /// The first background write failure, once (later ones: nil), for a warning.
    func takeFailure() -> String? {
        state.withLock { s in
            guard let failure = s.failure, !s.reported else { return nil }
            s.reported = true
            return failure
        }
    }
}
