public import Foundation
public import RoomTapJSON

/// What `roomtap jobs` shows of one job: its hash, read at one moment.
///
/// Thread: a value.
public struct JobRecord: Sendable, Equatable {
    public var id: String
    /// The state as stored; ``displayState`` is what users see.
    public var state: JobState
    /// True when the lease key existed when the job was read.
    public var leased: Bool
    public var worker: String
    public var epoch: Int
    /// `HOST:PORT` of a live room while it records.
    public var listen: String
    /// The `record` arguments (without `--out`).
    public var arguments: [String]
    public var tracks: Int
    public var isLive: Bool
    public var upload: String
    public var created: Date?
    public var started: Date?
    public var ended: Date?
    public var error: String
    /// Where the outputs are (a directory or an `s3://` prefix) and their file names.
    public var outputs: [String]
    public var outputDirectory: String
    /// The gaps of a room that moved between workers: `[{from, to, reason}]` in seconds of room time.
    public var gaps: [JSONValue]
    /// Every attempt (epoch, worker, host, dir, claimed ms, startTime of its room once known).
    public var parts: [JSONValue]
    public var cancelRequested: Bool

    /// `running` whose lease has expired shows as `moving` (its worker is gone; the next claims it).
    public var displayState: JobState {
        state == .running && !leased ? .moving : state
    }

    /// Reads the fields of an HGETALL.
    public init?(fields: [String: String], leased: Bool) {
        guard let id = fields["id"], let state = fields["state"].flatMap(JobState.init(rawValue:)) else { return nil }
        self.id = id
        self.state = state
        self.leased = leased
        worker = fields["worker"] ?? ""
        epoch = Int(fields["epoch"] ?? "") ?? 0
        listen = fields["listen"] ?? ""
        arguments = Self.strings(fields["args"])
        tracks = Int(fields["tracks"] ?? "") ?? 0
        isLive = fields["live"] == "1"
        upload = fields["upload"] ?? ""
        created = Self.date(fields["created"])
        started = Self.date(fields["started"])
        ended = Self.date(fields["ended"])
        error = fields["error"] ?? ""
        outputs = Self.strings(fields["outputs"])
        outputDirectory = fields["outputDir"] ?? ""
        gaps = (try? JSONValue(parsing: fields["gaps"] ?? "[]"))?.arrayValue ?? []
        parts = (try? JSONValue(parsing: fields["parts"] ?? "[]"))?.arrayValue ?? []
        cancelRequested = fields["cancel"] == "1"
    }

    /// The object `jobs --json` prints.
    public var json: JSONValue {
        func time(_ date: Date?) -> JSONValue {
            date.map { .string(ISO8601DateFormatter.withMilliseconds.string(from: $0)) } ?? .null
        }
        return .object([
            "id": .string(id), "state": .string(displayState.rawValue),
            "worker": worker.isEmpty ? .null : .string(worker),
            "epoch": .number(Double(epoch)), "listen": listen.isEmpty ? .null : .string(listen),
            "error": error.isEmpty ? .null : .string(error), "tracks": .number(Double(tracks)), "live": .bool(isLive),
            "arguments": .array(arguments.map(JSONValue.string)), "created": time(created), "started": time(started),
            "ended": time(ended), "outputs": .array(outputs.map(JSONValue.string)),
            "outputDirectory": outputDirectory.isEmpty ? .null : .string(outputDirectory),
            "upload": upload.isEmpty ? .null : .string(upload), "gaps": .array(gaps),
            "parts": .array(parts),
            "cancelRequested": .bool(cancelRequested),
        ])
    }

    static func strings(_ text: String?) -> [String] {
        guard let text, let value = try? JSONValue(parsing: text), let items = value.arrayValue else { return [] }
        return items.compactMap(\.stringValue)
    }

    static func date(_ text: String?) -> Date? {
        guard let text, let ms = Double(text) else { return nil }
        return Date(timeIntervalSince1970: ms / 1000)
    }
}

extension ISO8601DateFormatter {
    /// `2026-12-02T11:28:07.687Z`, as room.json writes times.
    nonisolated(unsafe) static let withMilliseconds: ISO8601DateFormatter = {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter
    }()
}
