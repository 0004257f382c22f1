public import Foundation
import RoomTapCore
import RoomTapFiles
public import RoomTapJSON
import RoomTapSinks
public import RoomTapStorage

/// The fleet's bucket (`roomtap worker --upload s3://BUCKET/PREFIX`, docs/OPERATIONS.md):
///
/// - `PREFIX/ID/<file>`: the room of job ID once it is done (the names of a local recording),
///   whatever worker or workers recorded it; uploaded verified, room.json last.
/// - `PREFIX/ID/parts/<epoch>/segments/<track>/<first room sample, 12 digits>.wav`: while a live
///   attempt records, every `segmentSeconds` of each track, uploaded by the room's own recorder
///   (`record --upload ... --upload-segments-only`). They are what is left of an attempt whose
///   machine died: the worker that finishes the room fetches them back (``fetchPart``) and joins
///   them with the rest. They are removed once the room is up and verified (``removeParts``).
///
/// So a dead machine costs a live room at most a lease plus one segment of audio.
///
/// Thread: any; every call blocks on the network (and the disk).
public struct RoomArchive: Sendable {
    public let client: S3Client
    public let location: S3Location
    /// Seconds of audio per segment object of a live attempt, 1-3600.
    public let segmentSeconds: Int

    public init(client: S3Client, location: S3Location, segmentSeconds: Int = 10) {
        self.client = client
        self.location = location
        self.segmentSeconds = segmentSeconds
    }

    /// Where the room of `job` goes: `PREFIX/ID`.
    public func destination(job: String) -> S3Location { location.appending(job) }

    /// Where attempt `epoch` of `job` puts its segments while it records.
    public func partLocation(job: String, epoch: Int) -> S3Location { location.appending("\(job)/parts/\(epoch)") }

    /// The `record` arguments that make a live attempt upload its segments to ``partLocation``.
    public func recordArguments(job: String, epoch: Int) -> [String] {
        [
            "--upload", partLocation(job: job, epoch: epoch).description, "--segment-seconds", String(segmentSeconds),
            "--upload-segments-only",
        ]
    }

    /// Rebuilds attempt `epoch` of `job` from its segments in the bucket into `directory` (made;
    /// must not exist): one 48 kHz mono WAV per track, each segment at its room sample (silence
    /// where none was uploaded), and a room.json whose `startTime` is the attempt's. Returns the
    /// tracks rebuilt (empty when the bucket holds no segment of that attempt). Throws an
    /// ``S3Error`` or a disk error; what was half-made is removed.
    public func fetchPart(job: String, epoch: Int, startTime: Date, into directory: String) throws -> [String] {
        let part = partLocation(job: job, epoch: epoch)
        let prefix = part.key(for: "segments/")
        var segments: [String: [(first: Int64, key: String)]] = [:]
        for object in try client.list(bucket: part.bucket, prefix: prefix) {
            let relative = object.key.dropFirst(prefix.count).split(separator: "/")
            guard relative.count == 2, relative[1].hasSuffix(".wav"),
                let first = Int64(relative[1].dropLast(4)), first % Int64(AudioFrame.samplesPerChannel) == 0
            else { continue }
            segments[String(relative[0]), default: []].append((first, object.key))
        }
        guard !segments.isEmpty else { return [] }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        do {
            let scratchPath = directory + "/.segment.tmp"
            let frame = AudioFrame.samplesPerChannel
            let samples = UnsafeMutablePointer<Int16>.allocate(capacity: frame)
            defer { samples.deallocate() }
            for (track, list) in segments.sorted(by: { $0.key < $1.key }) {
                var options = WAVWriter.Options()
                options.roomStartTime = startTime
                options.description = "roomtap track \(track)"
                let writer = try WAVWriter(path: directory + "/\(track).wav", channels: 1, options: options)
                for segment in list.sorted(by: { $0.first < $1.first }) {
                    try client.download(bucket: part.bucket, key: segment.key, to: scratchPath, overwrite: true)
                    let reader = try WAVStreamReader(path: scratchPath)
                    guard reader.file.channels == 1, reader.file.sampleRate == AudioFrame.sampleRate else {
                        throw FleetError("\(segment.key) is not a 48 kHz mono segment")
                    }
                    var at = segment.first
                    while try reader.read(into: samples, frames: frame) == frame {
                        try writer.consume(
                            AudioFrame(
                                samples: UnsafeBufferPointer(start: samples, count: frame), channels: 1, roomSample: at,
                                status: .normal))
                        at += Int64(frame)
                    }
                }
                try writer.finish()
            }
            unlink(scratchPath)
            let room: JSONValue = .object([
                "startTime": .string(ISO8601DateFormatter.withMilliseconds.string(from: startTime)),
                "state": .string("segments"), "source": .string(part.description),
                "tracks": .array(segments.keys.sorted().map { .object(["name": .string($0)]) }),
            ])
            try OutputFile.writeAtomically(
                path: directory + "/room.json", bytes: Array((room.prettyJSONText + "\n").utf8), overwrite: false)
        } catch {
            try? FileManager.default.removeItem(atPath: directory)
            throw error
        }
        return segments.keys.sorted()
    }

    /// Uploads the finished room in `directory` to ``destination(job:)`` (verified; the local
    /// `segments/` a recorder could not send stay local: the parts' objects cover them). Returns
    /// the bytes sent; throws a one-line reason when a file did not go up.
    public func upload(directory: String, job: String) throws -> Int {
        let uploader = RecordingUploader(
            client: client, directory: directory, destination: destination(job: job),
            options: .init(excluded: ["segments"]))
        let summary = try uploader.run()
        if let failed = summary.failed.first { throw FleetError("\(failed.file): \(failed.error)") }
        return Int(summary.bytesSent)
    }

    /// Removes every part's segment objects of `job` (once its room is up and verified). Best
    /// effort: returns how many objects were removed; what is left is only a cost, never a loss.
    @discardableResult
    public func removeParts(job: String) -> Int {
        let prefix = location.key(for: "\(job)/parts/")
        var removed = 0
        for object in (try? client.list(bucket: location.bucket, prefix: prefix)) ?? [] {
            if (try? client.delete(bucket: location.bucket, key: object.key)) != nil { removed += 1 }
        }
        return removed
    }
}
