import Foundation
import RoomTapAll
import RoomTapSync

/// Every control change made while the room ran, with the room time it took effect, for the
/// `controls` array of room.json (and `roomtap timeline`).
///
/// Thread: safe from any thread (the control socket's thread appends, the recorder reads at the end).
final class ControlLog: Sendable {
    /// One change. `roomTime` is in seconds on the room timeline: when it was live (heard).
    /// `recordTime`, in a room whose record follows its live audio (network streams, see
    /// ``RoomTiming``), is where it is in the files: `recordDelayFrames` ticks later. Nil when
    /// the two are the same.
    ///
    /// A track change has the track's whole state after it: heard (`muted`, `volume`) and
    /// recorded (`recordMuted`, `recordVolume`), and `scope`, what this change applied to
    /// (`heard`, `record` or `all`). `by` is `agent` for a change the agent made with a tool.
    struct Change: Codable, Equatable {
        var roomTime: Double
        var recordTime: Double? = nil
        var change: String
        var track: String? = nil
        var muted: Bool? = nil
        var volume: Float? = nil
        var recordMuted: Bool? = nil
        var recordVolume: Float? = nil
        var scope: String? = nil
        var tracks: [String]? = nil
        /// Who made the change when it was not a control client: `agent` (its room tools).
        var by: String? = nil
    }

    private let changes = Locked<[Change]>([])
    /// Seconds between a change being live and its place in the record.
    private let recordLag: Double

    /// Told ``RoomBus/Event/controlChanged`` after every change.
    private let changeBus = RoomBusLink()

    init(recordLag: Double = 0) { self.recordLag = recordLag }

    /// Posts ``RoomBus/Event/controlChanged`` to `bus` after every change from now on (the
    /// recorder then writes room.json). Any thread; the last bus given wins.
    func postChanges(to bus: RoomBus) { changeBus.connect(bus) }

    /// Records `change` (its ``Change/recordTime`` filled from the room's record lag).
    func append(_ change: Change) {
        var change = change
        if recordLag > 0 { change.recordTime = ((change.roomTime + recordLag) * 100).rounded() / 100 }
        changes.withLock { $0.append(change) }
        changeBus.post(.controlChanged)
    }

    /// The changes in the order they were made.
    var all: [Change] { changes.snapshot(\.self) }
}
