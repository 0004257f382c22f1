import Foundation
import RoomTapAll
import RoomTapStorage
import RoomTapSync

/// `record --upload`: segments of every track while the room runs, uploaded by a thread of its
/// own, then the whole room at the end (``finish(report:)``).
///
/// The room clock only copies frames into each track's segment queue (a ``QueuedSink``, drop on
/// full in a live room); a ``SegmentWriter`` on a sink worker writes each segment file; the upload
/// thread (`roomtap.upload`) sends it to `PREFIX/segments/<track>/<name>.wav` with retries,
/// deletes the local copy once verified, and posts `recording.segment`. A store that is down
/// leaves the segment files in `DIR/segments/` (what `roomtap upload DIR` sends later, to the
/// same keys); nothing of it ever waits the clock or the WAV writers.
///
/// Thread: `attach`/`detach` on the room's event thread, `finish` on the main thread, once.
final class LiveUpload: Sendable {
    let options: RecordUploadOptions
    let directory: String
    let client: S3Client
    let webhook: WebhookSender?
    private let sinks = Locked<[TrackID: QueuedSink]>([:])
    private let pending = Locked<
        (files: [(path: String, key: String, track: String, first: Int64, samples: Int64)], stop: Bool, busy: Bool)
    >(([], false, false))
    private let counts = Locked<(uploaded: Int, failed: Int, failedInARow: Int, lastError: String?)>((0, 0, 0, nil))
    private let wake = DispatchSemaphore(value: 0)
    /// The thread, once started; joined when it is stopped.
    private let uploadThread = Locked<RoomThread?>(nil)

    init(options: RecordUploadOptions, directory: String, configuration: S3Configuration, webhook: WebhookSender?) {
        self.options = options
        self.directory = directory
        self.client = S3Client(
            configuration: configuration, retry: RetryPolicy(attempts: 4, baseDelay: 0.5, maxDelay: 5))
        self.webhook = webhook
        uploadThread.withLock { thread in
            thread = RoomThread.start("roomtap.upload") { [self] in
                uploadLoop()
            }
        }
    }

    /// Starts the segments of `track`, whose whole-room file is `fileName` (the segments go under
    /// its base name). Room event thread.
    func attach(_ track: AudioTrack, fileName: String, policy: OverflowPolicy) {
        let name = ((fileName as NSString).lastPathComponent as NSString).deletingPathExtension
        let folder = "segments/\(name)"
        let writer = SegmentWriter(directory: directory + "/" + folder, segmentSeconds: options.segmentSeconds) {
            [self] path, first, samples in
            let key = options.destination.key(for: folder + "/" + (path as NSString).lastPathComponent)
            pending.withLock { $0.files.append((path, key, name, first, samples)) }
            wake.signal()
        }
        let sink = QueuedSink(consumer: writer, channels: 1, capacity: 300, policy: policy, pool: .shared)
        track.addSink(sink)
        sinks.withLock { $0[track.id] = sink }
    }

    /// Ends the segments of `track` (its last, shorter segment is written). Room event thread.
    func detach(_ track: AudioTrack) {
        guard let sink = sinks.withLock({ $0.removeValue(forKey: track.id) }) else { return }
        track.removeSink(sink)
        try? sink.close()
    }

    /// What the live upload has done so far (for `roomtap status`).
    struct Status: Sendable {
        let destination: String
        /// Segments verified in the bucket.
        let uploaded: Int
        /// Segment uploads that failed (the files stay in DIR/segments for the final upload).
        let failed: Int
        /// Segments written and not yet tried (or being sent).
        let pending: Int
        let lastError: String?
    }

    /// Segments uploaded, failed and waiting so far. Any thread.
    var status: Status {
        let c = counts.withLock { ($0.uploaded, $0.failed, $0.lastError) }
        return Status(
            destination: options.destination.description, uploaded: c.0, failed: c.1,
            pending: pending.withLock { $0.files.count + ($0.busy ? 1 : 0) }, lastError: c.2)
    }

    /// After the room: closes every segment sink, waits for the segment uploads, then (unless
    /// segments only) uploads the room's files (RecordingUploader: verified, room.json last), removes the segments (bucket and
    /// local) unless kept, posts upload.done / upload.failed. Returns the error line when the room
    /// did not go up whole.
    func finish() -> String? {
        for sink in sinks.withLock({ s in
            defer { s.removeAll() }
            return Array(s.values)
        }) { try? sink.close() }
        pending.withLock { $0.stop = true }
        wake.signal()
        uploadThread.withLock { $0 }?.join()
        webhook?.post(event: "recording.done", body: ["destination": .string(options.destination.description)])
        if options.segmentsOnly {
            // The whole room is someone else's to upload (the fleet's worker): segments that did not
            // go up stay in DIR/segments, and the room's files are whole: not this recorder's failure.
            return nil
        }
        let destination = options.destination.description
        let live = status.uploaded
        let directory = self.directory
        let uploader = RecordingUploader(
            client: client, directory: directory, destination: options.destination,
            options: .init(
                deleteLocal: options.deleteLocal,
                beforeRoomJSON: { status in
                    UploadReport.write(
                        UploadReport(status, destination: destination, segmentsUploadedLive: live),
                        directory: directory)
                }))
        /// room.json says what did not go up (it stays local; the bucket's, if any, is older).
        func reportIncomplete(_ error: String?) {
            UploadReport.write(
                UploadReport(
                    UploadStatus.of(directory: directory), destination: destination, segmentsUploadedLive: live,
                    error: error), directory: directory)
        }
        do {
            let summary = try uploader.run()
            if let first = summary.failed.first {
                reportIncomplete(nil)
                webhook?.post(
                    event: "upload.failed",
                    body: ["destination": .string(options.destination.description), "error": .string(first.error)])
                return
                    "upload of \(first.file) failed: \(first.error) (the files stay in \(directory); roomtap upload resumes)"
            }
            if !options.keepSegments {
                let prefix = options.destination.key(for: "segments/")
                for object in (try? client.list(bucket: options.destination.bucket, prefix: prefix)) ?? [] {
                    try? client.delete(bucket: options.destination.bucket, key: object.key)
                }
                try? FileManager.default.removeItem(atPath: directory + "/segments")
            }
            webhook?.post(
                event: "upload.done",
                body: [
                    "destination": .string(options.destination.description),
                    "files": .number(Double(summary.journal.counts.uploaded)),
                    "bytesSent": .number(Double(summary.bytesSent)),
                ])
            return nil
        } catch {
            // A refused signature, an unknown key, no bucket: local files untouched, room.json too.
            if !error.isFatal { reportIncomplete(error.description) }
            webhook?.post(
                event: "upload.failed",
                body: ["destination": .string(options.destination.description), "error": .string(error.description)])
            return "\(error.description) (the recording stays in \(directory); roomtap upload resumes)"
        }
    }

    private func uploadLoop() {
        while true {
            guard
                let next = pending.withLock({
                    s -> (path: String, key: String, track: String, first: Int64, samples: Int64)?? in
                    if s.files.isEmpty { return s.stop ? .some(nil) : nil }
                    s.busy = true
                    return .some(s.files.removeFirst())
                })
            else {
                _ = wake.wait(timeout: .now() + .milliseconds(200))
                continue
            }
            guard let file = next else { return }
            // While the store is failing, one try per segment: a long outage must not make the
            // end of the room wait for every segment's retries (they stay in DIR/segments).
            var client = self.client
            if counts.withLock({ $0.failedInARow }) > 0 { client.retry = RetryPolicy(attempts: 1) }
            do {
                let object = try client.upload(file: file.path, bucket: options.destination.bucket, key: file.key)
                unlink(file.path)  // verified: the bucket has it; the whole-room WAV keeps the audio locally
                counts.withLock {
                    $0.uploaded += 1
                    $0.failedInARow = 0
                }
                webhook?.post(
                    event: "recording.segment",
                    body: [
                        "track": .string(file.track), "key": .string(file.key),
                        "firstSample": .number(Double(file.first)),
                        "samples": .number(Double(file.samples)), "bytes": .number(Double(object.size)),
                    ])
            } catch {
                // Kept in DIR/segments: the final upload (or roomtap upload DIR) sends it.
                counts.withLock {
                    $0.failed += 1
                    $0.failedInARow += 1
                    $0.lastError = error.description
                }
            }
            pending.withLock { $0.busy = false }
        }
    }
}
