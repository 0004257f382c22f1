import Foundation
import RoomTap
import Synchronization

/// Every control change made while the room ran, with the room time it took effect, for the
/// `controls` array of room.json (and `roomtap timeline`).
///
/// Thread: safe from any thread (the control socket's thread appends, the recorder reads at the end).
final class ControlLog: Sendable {
    /// One change. `roomTime` is in seconds on the room timeline.
    struct Change: Codable, Equatable {
        var roomTime: Double
        var change: String
        var track: String?
        var muted: Bool?
        var volume: Float?
        var scope: String?
        var tracks: [String]?
    }

    private let changes = Mutex<[Change]>([])

    func append(_ change: Change) { changes.withLock { $0.append(change) } }

    /// The changes in the order they were made.
    var all: [Change] { changes.withLock { $0 } }
}
