import Foundation
import Glibc
import RoomTapJSON
import RoomTapSinks
import RoomTapSync

/// How a worker finishes rooms: a room whose recorder exited is failed or joined, uploaded and
/// recorded as done on a `roomtap.finish` thread of its own; a live room that ended while its
/// worker uploaded it is finished from what it left; and, at start, what a previous run left in
/// the spool is repaired or uploaded. Called from the worker's main thread.
extension Worker {
    /// Fails (with `error`) or completes a room whose recorder exited, on a `roomtap.finish`
    /// thread; its lease is released at the end.
    func finishInBackground(_ room: Completion, error: String?) {
        finishing.withLock { _ = $0.insert(room.id) }
        finishers.enter()
        RoomThread.start("roomtap.finish") { [self] in
            let store = JobStore(connection: RedisConnection(configuration.redis), keys: configuration.keys)
            if let error { fail(room, error, store: store) } else { complete(room, store: store) }
            leases.release(job: room.id)
            finishing.withLock { _ = $0.remove(room.id) }
            finishers.leave()
        }
    }

    /// A live room that had ended when its worker died uploading it (the job was `uploading`):
    /// nothing is recorded again; its attempts are joined (from this disk or the bucket) and
    /// uploaded under this claim.
    func completeEndedRoom(
        job id: String, entry: String, epoch: Int, fields: [String: String], previousWorker: String
    ) {
        let token = "\(configuration.name)/\(epoch)"
        leases.hold(job: id, token: token, entry: entry)
        let parts = (try? JSONValue(parsing: fields["parts"] ?? "[]"))?.arrayValue ?? []
        log(
            "job \(id): worker \(previousWorker) stopped while uploading the ended room; "
                + "finishing it from its \(parts.count) attempt(s)")
        finishInBackground(
            Completion(
                id: id, epoch: epoch, token: token, jobDirectory: configuration.spool + "/" + id, partDirectory: nil,
                parts: parts, cancelled: false),
            error: nil)
    }

    /// The attempts joined, uploaded (with an archive), the result recorded (fenced), job.done or
    /// job.failed posted.
    func complete(_ room: Completion, store: JobStore) {
        let id = room.id
        let output = room.jobDirectory + "/room"
        let gaps: [RoomAssembly.Gap]
        do { gaps = try assemble(room, into: output) } catch {
            return fail(room, "cannot put the room together in \(output): \(error)", store: store)
        }
        let files = ((try? FileManager.default.contentsOfDirectory(atPath: output)) ?? []).filter {
            $0 != "segments" && $0 != "upload-journal.json"
        }.sorted()
        var bytes = 0
        for file in files {
            bytes += ((try? FileManager.default.attributesOfItem(atPath: output + "/" + file))?[.size] as? Int) ?? 0
        }
        metrics.bytesWritten.add(bytes, ordering: .relaxed)
        let lost = gaps.reduce(0.0) { $0 + ($1.to - $1.from) }
        metrics.audioLostMilliseconds.add(Int(lost * 1000), ordering: .relaxed)
        addRoomCounters(output)
        let outputs: [(String, String)] = [
            ("outputs", JSONValue.array(files.map(JSONValue.string)).jsonText), ("outputDir", output),
            ("gaps", JSONValue.array(gaps.map(\.json)).jsonText), ("listen", ""),
        ]
        var uploadFields: [(String, String)] = []
        if let archive {
            guard
                (try? store.update(
                    job: id, token: room.token, epoch: room.epoch, [("state", JobState.uploading.rawValue)])) == true
            else {
                log("job \(id): attempt \(room.epoch) no longer holds it; not uploading")
                return
            }
            do {
                metrics.bytesUploaded.add(try archive.upload(directory: output, job: id), ordering: .relaxed)
                uploadFields = [("upload", archive.destination(job: id).description)]
            } catch {
                metrics.uploadFailures.add(1, ordering: .relaxed)
                let message =
                    "upload failed (the room is kept in \(output); roomtap upload \(output) retries): \(error)"
                return fail(room, message, store: store, outputs)
            }
        }
        let state: JobState = room.cancelled ? .cancelled : .done
        guard
            (try? store.finish(job: id, token: room.token, epoch: room.epoch, state: state, outputs + uploadFields))
                == true
        else {
            log("job \(id): finished, but attempt \(room.epoch) no longer holds it (its result is not recorded)")
            return
        }
        // The room is up and verified: its parts' segments are no longer the only copy of anything.
        if let archive { archive.removeParts(job: id) }
        if state == .done {
            metrics.jobsDone.add(1, ordering: .relaxed)
        } else {
            metrics.jobsCancelled.add(1, ordering: .relaxed)
        }
        log(
            "job \(id): \(state.rawValue), \(files.count) file(s) in \(output)"
                + (gaps.isEmpty ? "" : ", \(gaps.count) gap(s)"))
        onEvent(
            "job.done",
            .object([
                "id": .string(id), "state": .string(state.rawValue), "epoch": .number(Double(room.epoch)),
                "outputDir": .string(output), "outputs": .array(files.map(JSONValue.string)),
                "gaps": .array(gaps.map(\.json)),
            ]))
    }

    /// Records a room's failure (fenced) with `message`, counts it, posts job.failed.
    func fail(_ room: Completion, _ message: String, store: JobStore, _ fields: [(String, String)] = []) {
        _ = try? store.finish(
            job: room.id, token: room.token, epoch: room.epoch, state: .failed, [("error", message)] + fields)
        metrics.jobsFailed.add(1, ordering: .relaxed)
        log("job \(room.id): failed: \(message)")
        onEvent(
            "job.failed",
            .object(["id": .string(room.id), "epoch": .number(Double(room.epoch)), "error": .string(message)]))
    }

    /// The room's whole recording in `output` (`SPOOL/ID/room`): the only attempt's directory
    /// renamed, or every attempt joined (``RoomAssembly``). An attempt recorded on another machine
    /// (or whose directory is gone) is fetched back from the archive's segments when it can be.
    /// Returns the gaps.
    func assemble(_ room: Completion, into output: String) throws -> [RoomAssembly.Gap] {
        if room.partDirectory == nil, let joined = try? RoomAssembly.roomJSON(in: output),
            joined["state"]?.stringValue == "complete"
        {
            // Its worker died uploading it on this machine: the room is whole here already.
            return (joined["gaps"]?.arrayValue ?? []).compactMap { gap in
                guard let from = gap["from"]?.doubleValue, let to = gap["to"]?.doubleValue else { return nil }
                return RoomAssembly.Gap(from: from, to: to, reason: gap["reason"]?.stringValue ?? "")
            }
        }
        if FileManager.default.fileExists(atPath: output) {
            try FileManager.default.moveItem(atPath: output, toPath: output + ".old-\(getpid())-\(room.epoch)")
        }
        if room.parts.count == 1, let own = room.partDirectory {
            try FileManager.default.moveItem(atPath: own, toPath: output)
            return []
        }
        let parts = room.parts.compactMap { part -> RoomAssembly.Part? in
            guard let epoch = part["epoch"]?.intValue else { return nil }
            var directory = part["dir"]?.stringValue
            let here =
                part["host"]?.stringValue == configuration.host
                && directory.map { FileManager.default.fileExists(atPath: $0 + "/room.json") } == true
            if !here { directory = fetchPart(of: room, epoch: epoch, entry: part) }
            return RoomAssembly.Part(
                epoch: epoch, worker: part["worker"]?.stringValue ?? "?", directory: directory,
                claimed: Date(timeIntervalSince1970: (part["claimed"]?.doubleValue ?? 0) / 1000))
        }
        return try RoomAssembly.assemble(parts: parts, into: output).gaps
    }

    /// Attempt `epoch` of a room, rebuilt from the archive's segments into
    /// `SPOOL/ID/part-EPOCH.fetched`, or nil (no archive, no start time known, nothing uploaded).
    func fetchPart(of room: Completion, epoch: Int, entry: JSONValue) -> String? {
        guard let archive, let text = entry["startTime"]?.stringValue,
            let start = ISO8601DateFormatter.withMilliseconds.date(from: text)
        else { return nil }
        let directory = room.jobDirectory + "/part-\(epoch).fetched"
        try? FileManager.default.removeItem(atPath: directory)
        do {
            let tracks = try archive.fetchPart(job: room.id, epoch: epoch, startTime: start, into: directory)
            log(
                "job \(room.id): attempt \(epoch) (worker \(entry["worker"]?.stringValue ?? "?")) fetched from "
                    + "\(archive.partLocation(job: room.id, epoch: epoch)): \(tracks.count) track(s)")
            return tracks.isEmpty ? nil : directory
        } catch {
            log("job \(room.id): cannot fetch attempt \(epoch) from the archive: \(error)")
            return nil
        }
    }

    /// Late ticks and packet counters of a finished room, from its room.json.
    func addRoomCounters(_ directory: String) {
        guard let room = try? RoomAssembly.roomJSON(in: directory) else { return }
        if let late = room["clock"]?["lateTicks"]?.intValue ?? room["lateTicks"]?.intValue {
            metrics.lateTicks.add(late, ordering: .relaxed)
        }
        if let network = room["network"] {
            metrics.packetsReceived.add(network["rtpPackets"]?.intValue ?? 0, ordering: .relaxed)
        }
    }

    // MARK: - Leftovers

    /// A previous run of this worker died with rooms on its disk: their WAVs are repaired in place
    /// (everything that reached the disk is readable again), so the worker that took the room
    /// over on this machine, or an operator, finds them whole. With an archive, a finished room
    /// whose upload failed (`SPOOL/ID/room` of a job `failed` with that directory) is uploaded now
    /// and its job becomes `done`. Runs before the worker takes work.
    func recoverLeftovers(_ store: JobStore) {
        let jobs = (try? FileManager.default.contentsOfDirectory(atPath: configuration.spool)) ?? []
        var repaired = 0
        for job in jobs.sorted() {
            let jobDirectory = configuration.spool + "/" + job
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: jobDirectory)) ?? []
            for part in entries where part.hasPrefix("part-") && !part.hasSuffix(".log") && !part.contains(".old-") {
                let directory = jobDirectory + "/" + part
                for file in ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [])
                where file.hasSuffix(".wav") {
                    if let report = try? WAVRepair.repair(path: directory + "/" + file), report.changed {
                        repaired += 1
                    }
                }
            }
            if entries.contains("room") { uploadLeftover(job: job, directory: jobDirectory + "/room", store: store) }
        }
        if repaired > 0 { log("recovered \(repaired) file(s) a previous run left in \(configuration.spool)") }
    }

    /// A finished room left in the spool whose upload failed: uploaded again, its job made `done`.
    func uploadLeftover(job id: String, directory: String, store: JobStore) {
        guard let archive, let fields = try? store.fields(of: id), fields["state"] == JobState.failed.rawValue,
            fields["outputDir"] == directory
        else { return }
        do {
            metrics.bytesUploaded.add(try archive.upload(directory: directory, job: id), ordering: .relaxed)
        } catch {
            metrics.uploadFailures.add(1, ordering: .relaxed)
            return log("job \(id): the upload of \(directory) failed again: \(error)")
        }
        let location = archive.destination(job: id).description
        guard (try? store.uploadedLater(job: id, outputDir: directory, upload: location)) == true else { return }
        archive.removeParts(job: id)
        log("job \(id): done: the room left in \(directory) is uploaded to \(location)")
        onEvent(
            "job.done",
            .object([
                "id": .string(id), "state": .string(JobState.done.rawValue), "outputDir": .string(directory),
                "upload": .string(location), "uploadedLater": .bool(true),
            ]))
    }
}
