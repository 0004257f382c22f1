import Foundation
import RoomTapJSON
public import RoomTapRTP

/// One Sora recording's folder read as the tracks of a room: a track per connection, each made of
/// its files' audio at their own places on the recording's timeline.
///
/// What Sora writes for a recording (``SoraFileName``): a report, and per connection an archive
/// JSON with its WebM or MP4, or split pieces each with its own JSON and media and a split end, or
/// both (dual output). Each file is placed by its JSON (``SoraPlacement``: `start_timestamp` against
/// the recording's start, else `start_time_offset`) and then by the container's own timestamps
/// (``ContainerRecording``); a gap between split pieces is silence. With dual output the single
/// file is used when it reads whole, the split pieces otherwise; the others are noted, not played
/// twice. Faults stay with their connection: a JSON whose media is missing, media that cannot be
/// read or is cut short (what is there is kept), a file the report names that is not there, an
/// archive the report lists as failed; each is a ``File/problem`` or ``Connection/problems``
/// line, and that part of the track is silence.
///
/// Thread: a value type; ``read(directory:)`` reads files and runs libavformat on the calling
/// thread (any thread, control side). Reading twice gives the same result.
public struct SoraRecording: Sendable {
    /// One archive file (its JSON and media) of a connection.
    public struct File: Sendable {
        public enum Role: Sendable, Equatable {
            /// `archive-<connection_id>`: the whole recording of the connection.
            case archive
            /// `split-archive-<connection_id>_NNNN`: piece NNNN.
            case split(Int)
        }

        public var role: Role
        /// The JSON's name in the folder.
        public var json: String
        /// The media's name (the JSON's `filename`, else the JSON's name with the format's
        /// extension).
        public var media: String
        /// Where the JSON places the file; nil when the JSON could not be read.
        public var placement: SoraPlacement.Placed?
        /// Room sample of its first played sample and its length, when its audio was read.
        public var offsetSamples: Int64?
        public var durationSamples: Int64?
        /// True when its audio is in the track.
        public var used = false
        /// True when the media ends inside a block or before its declared length (what is there
        /// is used).
        public var isCut = false
        /// What is wrong with it, one line naming no directory (a missing or unreadable file).
        public var problem: String?
        /// Why readable audio was not used, or was cut (dual output, an overlap), one line.
        public var note: String?

        init(role: Role, json: String, media: String) {
            self.role = role
            self.json = json
            self.media = media
        }
    }

    /// A piece of a track's audio: a file's stream, its first played sample at room sample
    /// `offset`, cut at room sample `until` when the next piece starts before it ends.
    public struct Segment: Sendable {
        public var stream: RecordedRTPStream
        public var offset: Int64
        public var until: Int64?

        /// Room sample just after its last played sample.
        public var end: Int64 { min(offset + stream.durationSamples, until ?? .max) }
    }

    /// One connection: a track.
    public struct Connection: Sendable {
        public var connectionID: String
        /// The first of its JSONs that could be read (ids, `client_id`, `metadata`).
        public var metadata: SoraArchiveMetadata?
        /// Its archive files: the single archive first, then split pieces by index.
        public var files: [File] = []
        /// The audio played, in time order, not overlapping.
        public var segments: [Segment] = []
        /// Faults that are not one present file's: files the report names that are missing, a
        /// failed archive, a split recording without its end. One line each.
        public var problems: [String] = []
        /// False when its JSONs say it recorded no audio (video only): it is no track.
        public var hasAudio = true
        /// Room sample where its recording ends: its last audio, or where the JSON of a file whose
        /// media could not be read says that file stopped, when later.
        public var endSamples: Int64 = 0

        init(connectionID: String) { self.connectionID = connectionID }

        /// The track name: the value of `nameKey` in `metadata` (`--sora-name-key`), else
        /// `client_id`, else the connection id.
        public func trackName(nameKey: String?) -> String {
            if let nameKey, let name = metadata?.metadataName(nameKey) { return name }
            if let client = metadata?.clientID, !client.isEmpty { return client }
            return connectionID
        }

        /// True when any of its files or it has a problem.
        public var hasProblems: Bool { !problems.isEmpty || files.contains { $0.problem != nil || $0.isCut } }
    }

    /// Largest JSON read from the folder (the report's limit; an archive's is smaller).
    static let maxJSONBytes = SoraRecordingReport.maxBytes

    /// The folder as given.
    public let directory: String
    /// The report's file name, nil when the folder has none.
    public let reportName: String?
    public let recordingID: String?
    public let channelID: String?
    public let sessionID: String?
    /// The recording's start on the wall clock (µs since the epoch), when known (see
    /// ``SoraPlacement/origin(report:archives:)``), and whether the report gave it.
    public let originMicroseconds: Int64?
    public let originFromReport: Bool
    /// Every connection, in order of its first audio (then its id).
    public let connections: [Connection]
    /// Faults of the folder as a whole (no report, an unreadable report), one line each.
    public let problems: [String]

    /// Reads the recording in `directory`. Throws one line (a ``RecordingError`` on the folder)
    /// when it is not a Sora recording's folder (no report and no archive JSON), holds several
    /// recordings' reports, cannot be read, or none of its connections has any audio that can be
    /// read; every other fault stays with its connection.
    public static func read(directory: String) throws(RecordingError) -> SoraRecording {
        let names: [String]
        do { names = try FileManager.default.contentsOfDirectory(atPath: directory) } catch {
            throw RecordingError(
                path: directory,
                message: "cannot read the directory; give the folder Sora wrote for one recording "
                    + "(report-<recording_id>.json, archive-<connection_id>.json, ...)")
        }
        let folder = Folder(names: names)
        guard !folder.reports.isEmpty || !folder.connectionIDs.isEmpty else {
            throw RecordingError(
                path: directory,
                message: "not a Sora recording: no report-<recording_id>.json or archive-<connection_id>.json "
                    + "in it; give the folder Sora wrote for one recording")
        }
        guard folder.reports.count <= 1 else {
            let ids = folder.reports.map(\.recordingID).sorted()
            throw RecordingError(
                path: directory,
                message: "reports of \(ids.count) recordings (\(ids.prefix(4).joined(separator: ", "))"
                    + "\(ids.count > 4 ? ", ..." : "")); give one recording's folder")
        }
        return try read(directory: directory, folder: folder) { name in
            readFile(join(directory, name), limit: maxJSONBytes)
        } media: { name in
            let path = join(directory, name)
            guard FileManager.default.fileExists(atPath: path) else { return .missing }
            do { return .read(try ContainerRecording.read(path: path)) } catch {
                return .unreadable((error as? RecordingError)?.message ?? "\(error)")
            }
        }
    }

    /// What reading a media file gave.
    package enum MediaResult {
        case missing
        case unreadable(String)
        case read(ContainerRecording)
    }

    /// The folder's Sora files by kind.
    package struct Folder {
        var reports: [(name: String, recordingID: String)] = []
        var singles: [String: String] = [:]
        var splits: [String: [Int: String]] = [:]
        var ends: [String: String] = [:]
        var present: Set<String>

        package init(names: [String]) {
            present = Set(names)
            for name in names.sorted() {
                guard let parsed = SoraFileName(name), parsed.fileExtension == .json else { continue }
                switch parsed.kind {
                case .report(let id): reports.append((name, id))
                case .archive: singles[parsed.connectionID] = name
                case .split(let index): splits[parsed.connectionID, default: [:]][index] = name
                case .splitEnd: ends[parsed.connectionID] = name
                }
            }
        }

        var connectionIDs: Set<String> { Set(singles.keys).union(splits.keys).union(ends.keys) }
    }

    /// The reading, over the folder's names, a JSON reader and a media reader (so the fuzz target
    /// and tests can give bytes instead of files).
    package static func read(
        directory: String, folder: Folder, json: (String) -> [UInt8]?, media: (String) -> MediaResult
    ) throws(RecordingError) -> SoraRecording {
        var problems: [String] = []
        var report: SoraRecordingReport?
        if let entry = folder.reports.first {
            if let bytes = json(entry.name) {
                let result = bytes.withUnsafeBytes { raw in
                    Result { () throws(SoraMetadataError) in try SoraRecordingReport.parse(raw) }
                }
                switch result {
                case .success(let parsed): report = parsed
                case .failure(let error):
                    problems.append(
                        "\(entry.name) is not a recording report (\(error.message)); the archives found are recorded")
                }
            } else {
                problems.append("\(entry.name) cannot be read; the archives found are recorded")
            }
        } else {
            problems.append(
                "no report-<recording_id>.json (Sora writes it when the recording ends); the archives found are "
                    + "recorded")
        }

        // Every JSON of every connection, parsed once.
        var parsed: [String: Result<SoraArchiveMetadata, SoraMetadataError>] = [:]
        func metadata(_ name: String) -> Result<SoraArchiveMetadata, SoraMetadataError> {
            if let known = parsed[name] { return known }
            let result: Result<SoraArchiveMetadata, SoraMetadataError>
            if let bytes = json(name) {
                result = bytes.withUnsafeBytes { raw in
                    Result { () throws(SoraMetadataError) in try SoraArchiveMetadata.parse(raw) }
                }
            } else {
                result = .failure(SoraMetadataError("cannot be read"))
            }
            parsed[name] = result
            return result
        }
        var ids = folder.connectionIDs
        for entry in report?.archives ?? [] { if let id = entry.connectionID { ids.insert(id) } }
        let allJSON =
            ids.flatMap { id in
                [folder.singles[id], folder.ends[id]].compactMap { $0 } + (folder.splits[id]?.values.map { $0 } ?? [])
            }
        let origin = SoraPlacement.origin(
            report: report, archives: allJSON.sorted().compactMap { try? metadata($0).get() })

        var connections: [Connection] = []
        for id in ids.sorted() {
            var connection = Connection(connectionID: id)
            let entries = (report?.archives ?? []).filter { $0.connectionID == id }
            // Files the report names that are not in the folder.
            for entry in entries {
                if let name = entry.metadataFilename, !folder.present.contains(name), report?.splitOnly != true,
                    SoraFileName(name).map({ $0.kind == .archive }) ?? true
                {
                    connection.problems.append("the report names \(name), which is not in the folder")
                }
            }
            let lastIndex =
                entries.compactMap(\.splitLastIndex).max()
                ?? folder.ends[id].flatMap { try? metadata($0).get().splitLastIndex }
            let present = folder.splits[id] ?? [:]
            if let lastIndex {
                let missing = (1...min(lastIndex, 9999)).filter { present[$0] == nil }
                if let first = missing.first {
                    let name = "split-archive-\(id)_\(String(format: "%04d", first)).json"
                    connection.problems.append(
                        missing.count == 1
                            ? "split piece \(name) is not in the folder (the recording has \(lastIndex) pieces)"
                            : "\(missing.count) of its \(lastIndex) split pieces are not in the folder, the first "
                                + "\(name)")
                }
            } else if !present.isEmpty && folder.ends[id] == nil {
                connection.problems.append(
                    "no split-archive-end-\(id).json: the split recording may have more pieces than the folder holds")
            }
            for failed in report?.failedArchives ?? []
            where failed.connectionID == id || (failed.connectionID == nil && failed.filename?.contains(id) == true) {
                connection.problems.append(
                    "the report lists \(failed.filename ?? failed.metadataFilename ?? "an archive") under "
                        + "failed_archives (Sora could not record it)")
            }

            // The files: the single archive, then split pieces by index.
            var files: [(File, SoraArchiveMetadata?)] = []
            let jsons =
                (folder.singles[id].map { [(File.Role.archive, $0)] } ?? [])
                + present.keys.sorted().map { (File.Role.split($0), present[$0]!) }
            for (role, name) in jsons {
                switch metadata(name) {
                case .success(let archive):
                    let mediaName = archive.filename ?? SoraFileName.mediaName(ofJSON: name, format: archive.format)
                    var file = File(role: role, json: name, media: mediaName)
                    file.placement = SoraPlacement.place(archive, origin: origin?.microseconds)
                    if file.placement?.method == SoraPlacement.Method.none, archive.hasAudio {
                        connection.problems.append(
                            "\(name) gives neither start_time_offset nor start_timestamp; placed at the recording's "
                                + "start")
                    }
                    if let note = file.placement?.note, archive.hasAudio {
                        connection.problems.append("\(name): \(note); placed by start_time_offset, to the second")
                    }
                    if archive.connectionID != id {
                        file.note = "its connection_id is \(archive.connectionID); placed with \(id), as its name says"
                    }
                    files.append((file, archive))
                    if connection.metadata == nil { connection.metadata = archive }
                case .failure(let error):
                    var file = File(role: role, json: name, media: SoraFileName.mediaName(ofJSON: name, format: .webm))
                    file.problem = "\(name) is not an archive JSON (\(error.message)); its media is left out"
                    files.append((file, nil))
                }
            }
            if connection.metadata == nil, let end = folder.ends[id] { connection.metadata = try? metadata(end).get() }
            let archives = files.compactMap(\.1)
            connection.hasAudio = archives.isEmpty || archives.contains(where: \.hasAudio)

            // The media.
            var streams: [Int: (stream: RecordedRTPStream, start: Int64)] = [:]
            for i in files.indices {
                guard let archive = files[i].1 else { continue }
                guard archive.hasAudio else {
                    files[i].0.note = "no audio (\"audio\": false)"
                    continue
                }
                let name = files[i].0.media
                switch media(name) {
                case .missing:
                    files[i].0.problem = "\(name) is missing (\(files[i].0.json) names it)"
                case .unreadable(let message):
                    files[i].0.problem = "\(name): \(message)"
                case .read(let container):
                    guard let track = container.tracks.first else {
                        files[i].0.problem = "\(name) holds no Opus audio"
                        continue
                    }
                    streams[i] = (track.stream, track.startSamples)
                    files[i].0.isCut = container.isDamaged
                    files[i].0.durationSamples = track.stream.durationSamples
                    if container.isDamaged {
                        files[i].0.problem = "\(name) is cut short; what it holds is recorded"
                    }
                }
            }

            // Dual output: the single archive when it reads whole, else the split pieces.
            let single = files.indices.first { files[$0].0.role == .archive }
            let splitIndices = files.indices.filter { files[$0].0.role != .archive }
            let readableSplits = splitIndices.filter { streams[$0] != nil }
            var chosen: [Int]
            if let single, streams[single] != nil, !files[single].0.isCut || readableSplits.isEmpty {
                chosen = [single]
                for i in readableSplits {
                    files[i].0.note = "dual output: the same audio as \(files[single].0.media), which is used"
                }
            } else {
                chosen = readableSplits
                if let single, streams[single] != nil {
                    files[single].0.note = "cut short: the split pieces, which hold the same audio, are used"
                }
            }

            // Places: the JSON's, then the container's own start; a split piece placed to the
            // second right after its predecessor when that one ends within the second.
            var previousEnd: Int64?
            for i in chosen {
                guard let (stream, start) = streams[i], let placement = files[i].0.placement else { continue }
                var offset = placement.samples + start
                if case .split = files[i].0.role, placement.method == .startTimeOffset, let end = previousEnd,
                    end > placement.samples, end < placement.samples + 48_000
                {
                    offset = end
                    files[i].0.placement?.method = .afterPreviousSplit
                }
                files[i].0.offsetSamples = offset
                files[i].0.used = true
                previousEnd = offset + stream.durationSamples
                connection.segments.append(Segment(stream: stream, offset: offset, until: nil))
            }
            // In time order, each cut where the next begins.
            connection.segments.sort { $0.offset < $1.offset }
            for k in connection.segments.indices.dropLast() {
                let next = connection.segments[k + 1].offset
                if next < connection.segments[k].end { connection.segments[k].until = next }
            }
            for i in chosen {
                guard let offset = files[i].0.offsetSamples, let duration = files[i].0.durationSamples,
                    let cut = connection.segments.first(where: { $0.offset == offset })?.until,
                    cut < offset + duration
                else { continue }
                files[i].0.note = String(
                    format: "overlaps the next piece by %.1f ms: cut where it begins",
                    Double(offset + duration - cut) / 48)
            }
            // Where its audio ends; a file whose media could not be read ends where its JSON says.
            let stops = files.compactMap { file, archive -> Int64? in
                guard let archive, file.durationSamples == nil, archive.hasAudio,
                    let stop = SoraPlacement.stop(archive, origin: origin?.microseconds),
                    stop > file.placement?.samples ?? 0
                else { return nil }
                return stop
            }
            connection.endSamples = max(connection.segments.map(\.end).max() ?? 0, stops.max() ?? 0)
            connection.files = files.map(\.0)
            connections.append(connection)
        }

        let audible = connections.filter(\.hasAudio)
        guard audible.contains(where: { !$0.segments.isEmpty }) else {
            let first = audible.lazy.flatMap { c in c.files.compactMap(\.problem) + c.problems }.first
            throw RecordingError(
                path: directory,
                message: audible.isEmpty
                    ? "a Sora recording without audio (its archives say \"audio\": false); nothing to record"
                    : "no audio of this Sora recording can be read (\(first ?? "no media")); check the folder")
        }
        let firstAudio = { (c: Connection) in c.segments.first?.offset ?? .max }
        connections.sort { (firstAudio($0), $0.connectionID) < (firstAudio($1), $1.connectionID) }
        return SoraRecording(
            directory: directory, reportName: folder.reports.first?.name, recordingID: report?.recordingID,
            channelID: report?.channelID, sessionID: report?.sessionID, originMicroseconds: origin?.microseconds,
            originFromReport: origin?.fromReport ?? false, connections: connections, problems: problems)
    }

    static func join(_ directory: String, _ name: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }

    /// The bytes of the regular file at `path`, nil when it is missing, not a regular file, or
    /// larger than `limit` bytes.
    static func readFile(_ path: String, limit: Int) -> [UInt8]? {
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG, Int(info.st_size) <= limit else { return nil }
        guard let data = FileManager.default.contents(atPath: path), data.count <= limit else { return nil }
        return [UInt8](data)
    }
}
