import Foundation
import RoomTapAll
import RoomTapCLITestSupport
import RoomTapMediaTestSupport
import RoomTapStorage
import RoomTapSync
import RoomTapTestSupport
import Testing

/// A worker that dies while it uploads a live room that had ended (the job is `uploading`): the
/// worker that reclaims it records nothing again; it joins what the room left and uploads it.
/// A worker in this process (its rooms' recorder is `/bin/false`: a recording would fail the job),
/// a real redis-server and a real S3 store.
@Suite("Fleet: an ended room whose worker died uploading it", .serialized)
struct EndedRoomTakeOverTests {
    @Test func itIsFinishedFromWhatItLeftNotRecordedAgain() throws {
        let redis = try RedisTestServer()
        let s3 = try S3TestServer()
        let keys = FleetKeys(prefix: "ended\(UInt32.random(in: 0...UInt32.max)):")
        let store = JobStore(connection: RedisConnection(try RedisURL(redis.url)), keys: keys)
        #expect(
            try store.submit(
                .init(id: "ended", arguments: ["--listen", "127.0.0.1:0"], tracks: 1, isLive: true, upload: nil)))
        try store.ensureGroup()
        // The dead worker: claimed the room, recorded it on this machine, began its upload.
        let delivery = try #require(try store.readNew(consumer: "dead", block: 1))
        #expect(
            try store.claim(delivery, worker: "dead", lease: 1)
                == .claimed(epoch: 1, previousWorker: "", previousState: "queued"))
        let spool = try TestScratch.directory("ended-room").path
        let part = spool + "/ended/part-1"
        try FileManager.default.createDirectory(atPath: part, withIntermediateDirectories: true)
        let tone = TestSignal.sine(frequency: 440, samples: 48_000 * 2, amplitude: 0.5)
        try WAVFixtures.write(tone, channels: 1, to: part + "/alice.wav")
        let start = Date(timeIntervalSince1970: 1_796_000_000)
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let room: JSONValue = .object([
            "startTime": .string(formatter.string(from: start)), "durationSamples": .number(96_000),
            "state": .string("complete"), "tracks": .array([.object(["name": .string("alice")])]),
        ])
        try Data(room.jsonText.utf8).write(to: URL(fileURLWithPath: part + "/room.json"))
        let parts: JSONValue = .array([
            .object([
                "epoch": .number(1), "worker": .string("dead"), "host": .string("this-host"), "dir": .string(part),
                "claimed": .number(start.timeIntervalSince1970 * 1000),
                "startTime": .string(formatter.string(from: start)),
            ])
        ])
        #expect(
            try store.update(
                job: "ended", token: "dead/1", epoch: 1, [("parts", parts.jsonText), ("state", "uploading")]))
        // It stops renewing (it died); a worker on the same machine starts.
        var configuration = WorkerConfiguration(
            redis: try RedisURL(redis.url), keys: keys, name: "w2", spool: spool, capacity: 8, leaseSeconds: 1,
            executable: "/bin/false", host: "this-host")
        configuration.environment = [:]
        let worker = Worker(configuration: configuration)
        worker.archive = RoomArchive(client: s3.client(), location: try S3Location(parsing: "s3://\(s3.bucket)/rooms"))
        let lines = Locked<[String]>([])
        worker.log = { line in lines.withLock { $0.append(line) } }
        let done = DispatchSemaphore(value: 0)
        Thread {
            try? worker.run()
            done.signal()
        }.start()
        var record: JobRecord?
        #expect(
            waitUntil(timeout: .seconds(30)) {
                record = try? store.job("ended")
                return record?.state == .done || record?.state == .failed
            })
        worker.drain()
        #expect(done.wait(timeout: .now() + 30) == .success)
        #expect(record?.state == .done, "\(record?.error ?? "") \(lines.withLock { $0 })")
        #expect(record?.epoch == 2)
        #expect(record?.upload == "s3://\(s3.bucket)/rooms/ended")
        #expect(
            lines.withLock { $0 }.contains { $0.contains("stopped while uploading the ended room") },
            "\(lines.withLock { $0 })")
        let objects = try s3.client().list(bucket: s3.bucket, prefix: "rooms/ended/").map(\.key).sorted()
        #expect(objects == ["rooms/ended/alice.wav", "rooms/ended/room.json"])
        let copy = try TestScratch.directory("ended-room-copy").path + "/alice.wav"
        try s3.client().download(bucket: s3.bucket, key: "rooms/ended/alice.wav", to: copy, overwrite: true)
        let samples = try WAVFile.readSamples(path: copy).samples
        #expect(samples.count == 96_000)
        #expect(Array(samples.prefix(tone.count)) == tone, "the room as it was recorded, not a new recording")
    }
}
