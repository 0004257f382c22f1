import Foundation

/// What `roomtap timeline` needs from a recording's room.json: the tracks (name, kind, file), the
/// room's length, and the track controls if the recording has any. Read leniently: fields other
/// commands add are ignored, and a malformed control entry is skipped rather than failing.
struct TimelineRoom: Decodable {
    struct Track: Decodable {
        var name: String
        var kind: String?
        /// The track's ``TrackRole`` (nil in a room.json written before roles).
        var role: String?
        var file: String
        /// Channels of the file (1 when room.json does not say).
        var channels: Int?
        /// Audio that stands in for lost or undecodable input, ms (room.json's `concealedMs`).
        var concealedMs: Int?
        /// Damaged places in the input (CRC-rejected pages, holes in the page sequence).
        var holes: Int?
    }

    /// A span of room time no part of a failover-joined recording covers (room.json's `gaps`,
    /// written by the fleet's worker), in seconds of room time.
    struct Gap: Decodable {
        var from: Double
        var to: Double
        var reason: String?
    }

    /// One track control applied during the recording (`controls` in room.json).
    struct Control: Decodable {
        /// Where the change is in the files, in seconds of room time (room.json's `recordTime`
        /// when the record followed the live audio, else `roomTime`).
        var roomTime: Double
        /// "mute", "unmute", "volume", "solo", "unsolo", ...
        var change: String
        var track: String?
        var tracks: [String]?
        var volume: Double?
        var muted: Bool?
        var recordMuted: Bool?
        var recordVolume: Double?
        /// What the change applied to: "heard", "record" or "all". (Recordings made before the
        /// record had controls of its own give the track's scope after the change.)
        var scope: String?

        private enum Key: String, CodingKey {
            case roomTime, recordTime
            case change, track, tracks, volume, muted, recordMuted, recordVolume, scope
        }

        /// Whether, after this change, the track is muted for what is heard; nil when the entry
        /// does not say (a volume change without `muted`).
        var leavesHeardMuted: Bool? { muted ?? (change == "mute" ? true : change == "unmute" ? false : nil) }

        /// Whether, after this change, the track's file holds silence (off the record); nil when
        /// the entry does not say. Older room.json files have no `recordMuted`: there a mute under
        /// the track's scope `record` was both heard and recorded.
        var leavesRecordMuted: Bool? {
            if let recordMuted { return recordMuted }
            return leavesHeardMuted.map { $0 && scope == "record" }
        }

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: Key.self)
            roomTime = try (try? c.decode(Double.self, forKey: .recordTime)) ?? c.decode(Double.self, forKey: .roomTime)
            change = try c.decode(String.self, forKey: .change)
            track = try? c.decode(String.self, forKey: .track)
            tracks = try? c.decode([String].self, forKey: .tracks)
            volume = try? c.decode(Double.self, forKey: .volume)
            muted = try? c.decode(Bool.self, forKey: .muted)
            recordMuted = try? c.decode(Bool.self, forKey: .recordMuted)
            recordVolume = try? c.decode(Double.self, forKey: .recordVolume)
            scope = try? c.decode(String.self, forKey: .scope)
        }
    }

    /// Decodes an element, or nothing when it is malformed.
    private struct Lenient<T: Decodable>: Decodable {
        let value: T?
        init(from decoder: any Decoder) throws { value = try? T(from: decoder) }
    }

    var durationSeconds: Double?
    var tracks: [Track]
    var controls: [Control]
    /// "recording" (cut short, or still running), "complete" or "repaired"; nil in old files.
    var state: String?
    /// When the room started (ISO 8601), as room.json says it.
    var startTime: String?
    var gaps: [Gap]
    /// Whether the room had an agent (its track is then the one named `agent`).
    var hasAgent: Bool

    private enum Key: String, CodingKey { case durationSeconds, tracks, controls, state, startTime, gaps, agent }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Key.self)
        durationSeconds = try? c.decode(Double.self, forKey: .durationSeconds)
        tracks = try c.decode([Track].self, forKey: .tracks)
        let lenient = (try? c.decode([Lenient<Control>].self, forKey: .controls)) ?? []
        controls = lenient.compactMap(\.value).sorted { $0.roomTime < $1.roomTime }
        state = try? c.decode(String.self, forKey: .state)
        startTime = try? c.decode(String.self, forKey: .startTime)
        gaps = ((try? c.decode([Lenient<Gap>].self, forKey: .gaps)) ?? []).compactMap(\.value)
        hasAgent = c.contains(.agent) && (try? c.decodeNil(forKey: .agent)) == false
    }

    /// The speakers: every track but mixes.
    var speakers: [Track] { tracks.filter { $0.kind != "mix" } }

    /// Reads `DIR/room.json` of a recording directory the user named (``RoomJSONFile``): a file
    /// given instead of the directory, a missing or unreadable room.json are one-line errors.
    static func loadRecording(directory: String) throws -> TimelineRoom {
        try RoomJSONFile.readRecording(TimelineRoom.self, directory: directory)
    }
}
