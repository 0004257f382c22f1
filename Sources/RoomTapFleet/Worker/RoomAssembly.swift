public import Foundation
import RoomTapCore
public import RoomTapJSON
import RoomTapSinks

/// Joins the attempts ("parts") of a live room that moved between workers into one recording that
/// covers the whole room: for every track, what each part recorded at its place on the room's
/// timeline (the first part's start), silence where no part recorded (the gap of a failover), and
/// every track padded to the same length. room.json is the last part's, with the first part's
/// start time, the total length, and `gaps` and `parts` added.
///
/// Parts are placed by their room.json `startTime` (wall clock, ms; workers' clocks are assumed
/// NTP-synchronised) rounded to 10 ms frames. WAV outputs (48 kHz) only; a mono part of a
/// stereo track (rebuilt from the bucket's mono segments) is upmixed; a part whose files cannot
/// be read (on a machine that is gone, and not in the bucket) becomes a gap whose reason says so.
///
/// Thread: any; blocks on the disk.
package enum RoomAssembly {
    /// One attempt: where its files are, or nil when they cannot be reached.
    public struct Part: Sendable {
        public var epoch: Int
        public var worker: String
        public var directory: String?
        /// When the attempt began (its claim), for a part that cannot be read.
        public var claimed: Date

        public init(epoch: Int, worker: String, directory: String?, claimed: Date) {
            self.epoch = epoch
            self.worker = worker
            self.directory = directory
            self.claimed = claimed
        }
    }

    /// A span of room time no part covers, in seconds of room time.
    public struct Gap: Sendable, Equatable {
        public var from: Double
        public var to: Double
        public var reason: String

        public var json: JSONValue {
            .object(["from": .number(from), "to": .number(to), "reason": .string(reason)])
        }
    }

    /// What was written.
    public struct Result: Sendable {
        public var files: [String]
        public var gaps: [Gap]
        public var samples: Int64
    }

    private struct ReadablePart {
        var part: Part
        var directory: String
        var start: Date
        var offset: Int64
        var length: Int64
        var wavs: [String]
        var roomJSON: JSONValue?
    }

    /// Writes the joined room into `output` (created; must not exist).
    public static func assemble(parts: [Part], into output: String) throws -> Result {
        let frame = Int64(AudioFrame.samplesPerChannel)
        var readable: [ReadablePart] = []
        for part in parts.sorted(by: { $0.epoch < $1.epoch }) {
            guard let directory = part.directory, let room = try? roomJSON(in: directory),
                let startText = room["startTime"]?.stringValue,
                let start = ISO8601DateFormatter.withMilliseconds.date(from: startText)
            else { continue }
            let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter {
                $0.hasSuffix(".wav")
            }.sorted()
            // What the attempt covered: as long as its recorder ran (room.json's durationSamples,
            // once it finalised), or as its longest file (a recorder killed with SIGKILL).
            var length = Int64(room["durationSamples"]?.doubleValue ?? 0) / frame * frame
            for name in names {
                let path = directory + "/" + name
                _ = try? WAVRepair.repair(path: path)  // a killed part: everything that reached its disk
                if let file = try? WAVFile.inspect(path: path) { length = max(length, file.frameCount / frame * frame) }
            }
            readable.append(
                ReadablePart(
                    part: part, directory: directory, start: start, offset: 0, length: length, wavs: names,
                    roomJSON: room))
        }
        guard let origin = readable.first?.start ?? parts.first?.claimed else {
            throw FleetError("no part of the room can be read")
        }
        for i in readable.indices {
            let seconds = readable[i].start.timeIntervalSince(origin)
            readable[i].offset = max(0, Int64((seconds * 48_000 / Double(frame)).rounded())) * frame
        }
        // Gaps: before the first readable part, between parts, each with the reason it is a gap.
        var gaps: [Gap] = []
        var covered: Int64 = 0
        for (k, part) in readable.enumerated() {
            if part.offset > covered {
                let lost = parts.filter { p in
                    p.epoch < part.part.epoch && !readable.contains { $0.part.epoch == p.epoch }
                }
                let previous = k > 0 ? readable[k - 1].part : nil
                let reason =
                    lost.isEmpty
                    ? "worker \(previous?.worker ?? "?") stopped (attempt \(previous?.epoch ?? 0)); "
                        + "worker \(part.part.worker) took the room over (attempt \(part.part.epoch))"
                    : "the files of attempt \(lost.map { String($0.epoch) }.joined(separator: ", ")) "
                        + "(worker \(lost.map(\.worker).joined(separator: ", "))) cannot be reached"
                gaps.append(Gap(from: Double(covered) / 48_000, to: Double(part.offset) / 48_000, reason: reason))
            }
            covered = max(covered, part.offset + part.length)
        }
        let total = covered
        try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: false)
        let names = Set(readable.flatMap(\.wavs)).sorted()
        let scratch = UnsafeMutablePointer<Int16>.allocate(capacity: Int(frame) * AudioFrame.maxChannels)
        defer { scratch.deallocate() }
        for name in names {
            // The widest part decides (a part rebuilt from mono segments joins a stereo track, upmixed).
            let channels =
                readable.compactMap { try? WAVFile.inspect(path: $0.directory + "/" + name) }.map(\.channels).max() ?? 1
            var options = WAVWriter.Options()
            options.roomStartTime = origin
            options.description = "roomtap track \(name.dropLast(4))"
            let writer = try WAVWriter(path: output + "/" + name, channels: channels, options: options)
            var position: Int64 = 0
            for part in readable where FileManager.default.fileExists(atPath: part.directory + "/" + name) {
                let reader = try WAVStreamReader(path: part.directory + "/" + name)
                let upmix = reader.file.channels == 1 && channels > 1
                guard reader.file.channels == channels || upmix else { continue }
                var local: Int64 = 0
                while local < part.length {
                    let n = try reader.read(into: scratch, frames: Int(frame))
                    guard n == Int(frame) else { break }
                    if upmix {
                        for i in stride(from: n - 1, through: 0, by: -1) {
                            for c in 0..<channels { scratch[i * channels + c] = scratch[i] }
                        }
                    }
                    let at = part.offset + local
                    local += frame
                    guard at >= position else { continue }  // parts that overlap: the earlier one wins
                    try writer.consume(
                        AudioFrame(
                            samples: UnsafeBufferPointer(start: scratch, count: n * channels), channels: channels,
                            roomSample: at, status: .normal))
                    position = at + frame
                }
            }
            if position < total {
                scratch.update(repeating: 0, count: Int(frame) * channels)
                try writer.consume(
                    AudioFrame(
                        samples: UnsafeBufferPointer(start: scratch, count: Int(frame) * channels), channels: channels,
                        roomSample: total - frame, status: .silence))
            }
            try writer.finish()
        }
        var room = readable.last?.roomJSON?.objectValue ?? [:]
        room["startTime"] = .string(ISO8601DateFormatter.withMilliseconds.string(from: origin))
        room["durationSamples"] = .number(Double(total))
        room["durationSeconds"] = .number(Double(total) / 48_000)
        // Every track of every part: the last part's entries, then those only earlier parts had.
        var tracksByName: [JSONValue] = room["tracks"]?.arrayValue ?? []
        var seen = Set(tracksByName.compactMap { $0["name"]?.stringValue })
        for part in readable.reversed().dropFirst() {
            for track in part.roomJSON?["tracks"]?.arrayValue ?? [] {
                if let name = track["name"]?.stringValue, seen.insert(name).inserted { tracksByName.append(track) }
            }
        }
        room["tracks"] = .array(tracksByName)
        if let tracks = room["tracks"]?.arrayValue {
            room["tracks"] = .array(
                tracks.map { track in
                    guard var object = track.objectValue else { return track }
                    object["samples"] = .number(Double(total))
                    object["samplesWritten"] = .number(Double(total))
                    return .object(object)
                })
        }
        room["gaps"] = .array(gaps.map(\.json))
        room["parts"] = .array(
            parts.sorted(by: { $0.epoch < $1.epoch }).map { part in
                let found = readable.first { $0.part.epoch == part.epoch }
                return .object([
                    "epoch": .number(Double(part.epoch)), "worker": .string(part.worker),
                    "reachable": .bool(found != nil),
                    "startTime": found.map { .string(ISO8601DateFormatter.withMilliseconds.string(from: $0.start)) }
                        ?? .null,
                    "offsetSamples": found.map { .number(Double($0.offset)) } ?? .null,
                    "samples": found.map { .number(Double($0.length)) } ?? .null,
                ])
            })
        room["state"] = .string("complete")
        try Data((JSONValue.object(room).prettyJSONText + "\n").utf8).write(
            to: URL(fileURLWithPath: output + "/room.json"), options: .withoutOverwriting)
        return Result(files: names + ["room.json"], gaps: gaps, samples: total)
    }

    static func roomJSON(in directory: String) throws -> JSONValue {
        let data = try Data(contentsOf: URL(fileURLWithPath: directory + "/room.json"))
        return try data.withUnsafeBytes { raw throws(JSONParseError) in try JSONValue(parsing: raw) }
    }
}
