import Foundation
import RoomTapAll
import RoomTapCLITestSupport
import RoomTapRTPTestSupport
import RoomTapStorage
import RoomTapTestSupport
import Testing

/// The fleet end to end: a real redis-server, real `roomtap worker` processes recording rooms as
/// child `roomtap record`s, RTP from test senders, workers killed with SIGKILL and drained.
@Suite("CLI: a fleet of workers on Redis", .serialized)
struct FleetCLITests {
    let redis: RedisTestServer
    let root: URL

    init() throws {
        redis = try RedisTestServer()
        root = try temporaryDirectory("fleet")
    }

    func startWorker(
        _ name: String, lease: Double = 2, capacity: Int? = nil, metrics: UInt16? = nil,
        environment: [String: String] = [:]
    ) throws -> CLIRunner.Running {
        var arguments = [
            "worker", "--redis", redis.url, "--name", name, "--spool", root.appendingPathComponent(name).path,
            "--lease-seconds", String(lease),
        ]
        if let capacity { arguments += ["--capacity", String(capacity)] }
        if let metrics { arguments += ["--metrics", "127.0.0.1:\(metrics)"] }
        return try CLIRunner.start(arguments, environment: environment)
    }

    func jobs() throws -> [[String: Any]] {
        let outcome = try CLIRunner.run(["jobs", "--redis", redis.url, "--json"])
        guard outcome.status == 0 else { return [] }
        return (try JSONSerialization.jsonObject(with: Data(outcome.stdout.utf8)) as? [[String: Any]]) ?? []
    }

    func job(_ id: String) throws -> [String: Any] { try jobs().first { $0["id"] as? String == id } ?? [:] }

    func waitForJob(_ id: String, timeout: Int = 60, _ condition: ([String: Any]) -> Bool) throws -> [String: Any] {
        var last: [String: Any] = [:]
        let held = try waitUntil(timeout: .seconds(timeout), every: .milliseconds(100)) {
            last = try job(id)
            return condition(last)
        }
        #expect(held, "job \(id) is \(last)")
        return last
    }

    func get(_ port: UInt16, _ path: String) -> (Int, String) { httpGet("http://127.0.0.1:\(port)\(path)") }

    /// The power of the 440 Hz test tone in `samples` (48 kHz mono) over `range` seconds.
    static func tonePower(_ samples: [Int16], _ range: Range<Double>) -> Double {
        let lo = max(0, Int(range.lowerBound * 48_000))
        let hi = min(samples.count, Int(range.upperBound * 48_000))
        return lo < hi ? goertzelPower(Array(samples[lo..<hi]), frequency: 440) : 0
    }

    /// The data chunk of a WAV (the audio, without the header's wall-clock dates).
    func audioBytes(_ path: String) throws -> Data {
        let file = try WAVFile.inspect(path: path)
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        return data.subdata(in: Int(file.dataOffset)..<Int(file.dataOffset + file.dataSize))
    }

    @Test func anOfflineRoomThroughAWorkerIsTheAudioOfRecordAndTheWorkerReportsToSystemdAndPrometheus() throws {
        let notify = try DatagramReceiver(path: root.appendingPathComponent("notify.sock").path)
        let port = try freeTCPPort()
        let room = ["--file", "alice=\(sample("alice"))", "--file", "bob=\(sample("bob"))@2.5", "--mix"]
        let submitted = try roomtap(
            ["submit", "--redis", redis.url, "--id", "standup", "--", "record"] + room, expect: 0)
        #expect(submitted.stdout == "standup\n")
        let worker = try startWorker(
            "w1", metrics: port, environment: ["NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": "2000000"])
        #expect(notify.receive()?.hasPrefix("READY=1\n") == true)
        let done = try waitForJob("standup") { $0["state"] as? String == "done" }
        let output = try #require(done["outputDirectory"] as? String)
        #expect(output == root.appendingPathComponent("w1/standup/room").path)
        #expect(done["outputs"] as? [String] == ["alice.wav", "bob.wav", "mix.wav", "room.json"])
        #expect(done["epoch"] as? Int == 1 && done["worker"] as? String == "w1")

        let local = try temporaryDirectory("fleet-local")
        try roomtap(["record"] + room + ["--out", local.path, "--force", "--quiet"], expect: 0)
        for name in ["alice.wav", "bob.wav", "mix.wav"] {
            let a = try audioBytes(output + "/" + name)
            let b = try audioBytes(local.appendingPathComponent(name).path)
            #expect(a.count == 504_000 * 2 && a == b, "\(name): the fleet's audio is record's, byte for byte")
        }
        let (status, metrics) = get(port, "/metrics")
        #expect(status == 200)
        #expect(metrics.contains("roomtap_jobs_total{worker=\"w1\",result=\"done\"} 1"))
        #expect(metrics.contains("roomtap_capacity_tracks{worker=\"w1\"} "))
        #expect(metrics.contains("# TYPE roomtap_lease_renewals_failed_total counter"))
        #expect(get(port, "/healthz").0 == 200 && get(port, "/readyz").0 == 200 && get(port, "/nothing").0 == 404)
        var watchdog = false
        for _ in 0..<10 {
            if notify.receive(timeout: 5) == "WATCHDOG=1" {
                watchdog = true
                break
            }
        }
        #expect(watchdog, "WATCHDOG=1 every WATCHDOG_USEC/2")

        worker.signal(SIGTERM)
        let outcome = worker.wait(timeout: 30)
        #expect(outcome.status == 0, "a drained worker exits 0: \(outcome.stderr)")
        var stopping = false
        for _ in 0..<20 {
            if notify.receive(timeout: 5)?.hasPrefix("STOPPING=1") == true {
                stopping = true
                break
            }
        }
        #expect(stopping)
    }

    @Test func aLiveRoomSurvivesAWorkerKilledWithSIGKILL() throws {
        try roomtap(
            [
                "submit", "--redis", redis.url, "--id", "call", "--", "record", "--listen", "127.0.0.1:0", "--duration",
                "12",
            ],
            expect: 0)
        let w1 = try startWorker("w1", lease: 2)
        let first = try waitForJob("call") { ($0["listen"] as? String)?.isEmpty == false }
        let listen1 = try #require(first["listen"] as? String)
        let address1 = try #require(ListenAddress(listen1))
        let tone = TestSignal.sine(frequency: 440, samples: 48_000 * 10, amplitude: 0.5)
        let a = RTPTestSender(pcm: tone, to: address1, ssrc: 0xF1EE7, firstSequence: 100, firstTimestamp: 1000)
        a.start()
        // A second worker waits; the first has written audio to its disk.
        let w2 = try startWorker("w2", lease: 2)
        let part1 = root.appendingPathComponent("w1/call/part-1/ssrc-f1ee7.wav").path
        #expect(
            try waitUntil(timeout: .seconds(30), every: .milliseconds(50)) {
                ((try? FileManager.default.attributesOfItem(atPath: part1))?[.size] as? Int ?? 0) > 150_000
            })
        w1.signal(SIGKILL)
        _ = w1.wait(timeout: 30)
        let killed = Date()
        let moved = try waitForJob("call", timeout: 30) {
            $0["worker"] as? String == "w2" && ($0["listen"] as? String)?.isEmpty == false
        }
        let reclaim = Date().timeIntervalSince(killed)
        #expect(moved["epoch"] as? Int == 2)
        #expect(reclaim < 2 * 2 + 3, "taken over within two leases: \(reclaim) s")
        // The dead worker's recorder died with it: no attempt-1 recorder runs beside attempt 2.
        #expect(try waitUntil(timeout: .seconds(15)) { !Self.processRunning(containing: "/w1/call/part-1") })
        let listen2 = try #require(moved["listen"] as? String)
        let address2 = try #require(ListenAddress(listen2))
        #expect(address2 != address1)
        // The SFU re-points its forwarder: the same stream continues to the new address.
        let b = RTPTestSender(
            pcm: TestSignal.sine(frequency: 440, samples: 48_000 * 4, amplitude: 0.5), to: address2, ssrc: 0xF1EE7,
            firstSequence: 100 &+ UInt16(a.packets.count), firstTimestamp: 1000 &+ UInt32(a.packets.count * 960))
        b.run()
        let done = try waitForJob("call", timeout: 60) { $0["state"] as? String == "done" }
        a.wait()
        let output = try #require(done["outputDirectory"] as? String)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: output).sorted() == ["room.json", "ssrc-f1ee7.wav"])
        let gaps = try #require(done["gaps"] as? [[String: Any]])
        #expect(gaps.count == 1, "one gap: \(gaps)")
        let gap = try #require(gaps.first)
        let from = try #require(gap["from"] as? Double)
        let to = try #require(gap["to"] as? Double)
        #expect(from > 1 && to > from && to - from < 2 + 4, "at most a lease and a take-over lost: \(from)...\(to)")
        let samples = try WAVFile.readSamples(path: output + "/ssrc-f1ee7.wav").samples
        let json = try roomJSON(URL(fileURLWithPath: output))
        #expect(json["durationSamples"] as? Int == samples.count)
        #expect((json["gaps"] as? [[String: Any]])?.count == 1)
        func power(_ range: Range<Double>) -> Double { Self.tonePower(samples, range) }
        #expect(
            power((from - 1)..<from) > 1000 * max(1, power((from + 0.05)..<(to - 0.05))),
            "tone before the gap, silence in it")
        #expect(power((to + 0.5)..<(to + 2.5)) > 1000 * max(1, power((from + 0.05)..<(to - 0.05))), "tone after it")
        w2.signal(SIGTERM)
        #expect(w2.wait(timeout: 30).status == 0)
    }

    /// The headline of issue 22: a machine dies with its disk (worker and recorder SIGKILLed, the
    /// spool gone); the worker on another machine finishes the room, and the room in the bucket is
    /// whole: what the dead machine's recorder had uploaded as segments, the gap, then the rest.
    @Test func aLiveRoomWhoseMachineDiesWithItsDiskIsFinishedWholeFromTheBucket() throws {
        let s3 = try S3TestServer()
        let client = try s3.client()
        try roomtap(
            [
                "submit", "--redis", redis.url, "--id", "far", "--", "record", "--listen", "127.0.0.1:0", "--duration",
                "14",
            ],
            expect: 0)
        func worker(_ name: String) throws -> CLIRunner.Running {
            try CLIRunner.start(
                [
                    "worker", "--redis", redis.url, "--name", name, "--spool", root.appendingPathComponent(name).path,
                    "--lease-seconds", "2", "--upload", "s3://\(s3.bucket)/rooms", "--segment-seconds", "1",
                ], environment: s3.environment())
        }
        let m1 = try worker("m1")
        let first = try waitForJob("far") { ($0["listen"] as? String)?.isEmpty == false }
        let listen1 = try #require(first["listen"] as? String)
        let address1 = try #require(ListenAddress(listen1))
        let a = RTPTestSender(
            pcm: TestSignal.sine(frequency: 440, samples: 48_000 * 10, amplitude: 0.5), to: address1, ssrc: 0xF1EE7,
            firstSequence: 100, firstTimestamp: 1000)
        a.start()
        let m2 = try worker("m2")
        // Attempt 1 has put at least 3 s of the track in the bucket.
        let segments = "rooms/far/parts/1/segments/ssrc-f1ee7/"
        #expect(
            try waitUntil(timeout: .seconds(30), every: .milliseconds(100)) {
                ((try? client.list(bucket: s3.bucket, prefix: segments)) ?? []).count >= 3
            })
        // The machine dies: its recorder and its worker at once, then its disk.
        let recorders = Self.processes(containing: "/m1/far/part-1")
        #expect(!recorders.isEmpty, "attempt 1's recorder runs")
        for pid in recorders { kill(pid, SIGKILL) }
        m1.signal(SIGKILL)
        _ = m1.wait(timeout: 30)
        let uploadedBeforeDeath = try client.list(bucket: s3.bucket, prefix: segments).count
        try FileManager.default.removeItem(at: root.appendingPathComponent("m1"))
        let moved = try waitForJob("far", timeout: 30) {
            $0["worker"] as? String == "m2" && ($0["listen"] as? String)?.isEmpty == false
        }
        #expect(moved["epoch"] as? Int == 2)
        let listen2 = try #require(moved["listen"] as? String)
        let address2 = try #require(ListenAddress(listen2))
        let b = RTPTestSender(
            pcm: TestSignal.sine(frequency: 440, samples: 48_000 * 4, amplitude: 0.5), to: address2, ssrc: 0xF1EE7,
            firstSequence: 100 &+ UInt16(a.packets.count), firstTimestamp: 1000 &+ UInt32(a.packets.count * 960))
        b.run()
        let done = try waitForJob("far", timeout: 60) { $0["state"] as? String == "done" }
        a.wait()
        #expect(done["upload"] as? String == "s3://\(s3.bucket)/rooms/far", "\(done)")
        let objects = try client.list(bucket: s3.bucket, prefix: "rooms/far/").map(\.key).sorted()
        #expect(
            objects == ["rooms/far/room.json", "rooms/far/ssrc-f1ee7.wav"], "the room, and no part left: \(objects)")
        // The room as a user downloads it.
        let copy = try temporaryDirectory("fleet-far")
        for name in ["room.json", "ssrc-f1ee7.wav"] {
            try client.download(
                bucket: s3.bucket, key: "rooms/far/\(name)", to: copy.appendingPathComponent(name).path,
                overwrite: true)
        }
        let samples = try WAVFile.readSamples(path: copy.appendingPathComponent("ssrc-f1ee7.wav").path).samples
        let json = try roomJSON(copy)
        #expect(json["durationSamples"] as? Int == samples.count)
        let parts = try #require(json["parts"] as? [[String: Any]])
        #expect(
            parts.map { $0["reachable"] as? Bool } == [true, true], "attempt 1 came back from the bucket: \(parts)")
        let gaps = try #require(json["gaps"] as? [[String: Any]])
        #expect(gaps.count == 1, "one gap: \(gaps)")
        let from = try #require(gaps.first?["from"] as? Double)
        let to = try #require(gaps.first?["to"] as? Double)
        #expect(
            from >= Double(uploadedBeforeDeath) - 0.05,
            "every segment uploaded before the death is in the room: \(uploadedBeforeDeath) s, gap from \(from)")
        #expect(to > from && to - from < 2 + 4 + 1, "at most a lease, a take-over and a segment lost: \(from)...\(to)")
        FileHandle.standardError.write(
            Data(
                ("machine death: \(uploadedBeforeDeath) segment(s) of 1 s in the bucket; the room's gap "
                    + String(format: "%.2f-%.2f s (%.2f s lost)", from, to, to - from) + "\n").utf8))
        func power(_ range: Range<Double>) -> Double { Self.tonePower(samples, range) }
        let silence = max(1, power((from + 0.05)..<(to - 0.05)))
        #expect(power(1..<(from - 0.05)) > 1000 * silence, "attempt 1's tone, from the bucket, before the gap")
        #expect(power((to + 0.5)..<(to + 2.5)) > 1000 * silence, "attempt 2's tone after it")
        m2.signal(SIGTERM)
        #expect(m2.wait(timeout: 30).status == 0)
    }

    @Test func aDrainedWorkerHandsItsLiveRoomOverAtOnceAndAFullWorkerIsNotReady() throws {
        try roomtap(
            ["submit", "--redis", redis.url, "--id", "handover", "--", "record", "--listen", "127.0.0.1:0"], expect: 0)
        let w1 = try startWorker("w1", lease: 60)
        _ = try waitForJob("handover") { ($0["listen"] as? String)?.isEmpty == false }
        let port = try freeTCPPort()
        let w2 = try startWorker("w2", lease: 60, capacity: 3, metrics: port)
        #expect(try waitUntil(timeout: .seconds(20), every: .milliseconds(50)) { get(port, "/readyz").0 == 200 })
        let drainStarted = Date()
        w1.signal(SIGTERM)
        let moved = try waitForJob("handover", timeout: 30) {
            $0["worker"] as? String == "w2" && ($0["listen"] as? String)?.isEmpty == false
        }
        #expect(Date().timeIntervalSince(drainStarted) < 30, "handed over, not left for its 60 s lease to expire")
        #expect(moved["epoch"] as? Int == 2)
        #expect(w1.wait(timeout: 30).status == 0)
        #expect(get(port, "/readyz").0 == 503, "three tracks of capacity, three taken: not ready")
        #expect(get(port, "/metrics").1.contains("roomtap_jobs_total{worker=\"w2\",result=\"done\"} 0"))
        let cancel = try roomtap(["cancel", "--redis", redis.url, "handover"], expect: 0)
        #expect(cancel.stdout.hasPrefix("handover: cancelling"))
        let cancelled = try waitForJob("handover", timeout: 60) { $0["state"] as? String == "cancelled" }
        #expect((cancelled["outputs"] as? [String])?.contains("room.json") == true, "a cancelled room keeps its files")
        try roomtap(["cancel", "--redis", redis.url, "handover"], expect: 1)
        w2.signal(SIGTERM)
        #expect(w2.wait(timeout: 30).status == 0)
    }

    @Test func aFinishedRoomGoesToStorageUnderItsIDAndEveryEventIsSigned() throws {
        let s3 = try S3TestServer()
        let hooks = try WebhookTestReceiver()
        try roomtap(
            ["submit", "--redis", redis.url, "--id", "uploaded", "--", "record", "--file", "alice=\(sample("alice"))"],
            expect: 0)
        var environment = s3.environment()
        environment["ROOMTAP_WEBHOOK_SECRET"] = "fleet-secret"
        let worker = try CLIRunner.start(
            [
                "worker", "--redis", redis.url, "--name", "w1", "--spool", root.appendingPathComponent("w1").path,
                "--upload", "s3://\(s3.bucket)/rooms", "--webhook", hooks.url,
            ], environment: environment)
        let done = try waitForJob("uploaded") { $0["state"] as? String == "done" }
        #expect(done["upload"] as? String == "s3://\(s3.bucket)/rooms/uploaded")
        let objects = try s3.client().list(bucket: s3.bucket, prefix: "rooms/uploaded/").map(\.key).sorted()
        #expect(
            objects.contains("rooms/uploaded/alice.wav") && objects.contains("rooms/uploaded/room.json"), "\(objects)")
        let local = try Data(
            contentsOf: URL(fileURLWithPath: (done["outputDirectory"] as? String ?? "") + "/alice.wav"))
        let copy = try temporaryDirectory("fleet-download").appendingPathComponent("alice.wav")
        try s3.client().download(bucket: s3.bucket, key: "rooms/uploaded/alice.wav", to: copy.path, overwrite: true)
        #expect(try Data(contentsOf: copy) == local, "the stored file is the local one")
        #expect(
            try waitUntil(timeout: .seconds(20)) {
                hooks.delivered.contains { $0.headers["x-roomtap-event"] == "job.done" }
            })
        for request in hooks.delivered {
            #expect(
                request.headers["x-roomtap-signature"] == "sha256="
                    + WebhookSender.signature(of: request.body, secret: "fleet-secret"))
        }
        #expect(hooks.delivered.compactMap { $0.headers["x-roomtap-event"] }.prefix(2) == ["job.started", "job.done"])
        worker.signal(SIGTERM)
        #expect(worker.wait(timeout: 30).status == 0)
    }

    /// Restart: a finished room whose upload failed (here: a secret the store refuses) stays in
    /// the spool; the worker that starts again on that spool uploads it before taking work, and
    /// the job becomes done.
    @Test func aRoomWhoseUploadFailedGoesUpWhenItsWorkerStartsAgain() throws {
        let s3 = try S3TestServer()
        let client = try s3.client()
        try roomtap(
            ["submit", "--redis", redis.url, "--id", "later", "--", "record", "--file", "alice=\(sample("alice"))"],
            expect: 0)
        func worker(_ environment: [String: String]) throws -> CLIRunner.Running {
            try CLIRunner.start(
                [
                    "worker", "--redis", redis.url, "--name", "w1", "--spool", root.appendingPathComponent("w1").path,
                    "--upload", "s3://\(s3.bucket)/rooms",
                ], environment: environment)
        }
        let refused = try worker(s3.environment(secret: "not-the-secret"))
        let failed = try waitForJob("later") { $0["state"] as? String == "failed" }
        let error = failed["error"] as? String ?? ""
        #expect(error.contains("upload failed (the room is kept in"), "\(error)")
        #expect(try client.list(bucket: s3.bucket, prefix: "rooms/later/").isEmpty)
        refused.signal(SIGTERM)
        #expect(refused.wait(timeout: 30).status == 0)
        let output = try #require(failed["outputDirectory"] as? String)
        let local = try Data(contentsOf: URL(fileURLWithPath: output + "/alice.wav"))
        let restarted = try worker(s3.environment())
        let done = try waitForJob("later") { $0["state"] as? String == "done" }
        #expect(done["upload"] as? String == "s3://\(s3.bucket)/rooms/later")
        #expect((done["error"] as? String ?? "").isEmpty, "\(done)")
        let copy = try temporaryDirectory("fleet-later").appendingPathComponent("alice.wav")
        try client.download(bucket: s3.bucket, key: "rooms/later/alice.wav", to: copy.path, overwrite: true)
        #expect(try Data(contentsOf: copy) == local, "the stored file is the one the spool kept")
        #expect(try client.head(bucket: s3.bucket, key: "rooms/later/room.json") != nil)
        restarted.signal(SIGTERM)
        #expect(restarted.wait(timeout: 30).status == 0)
    }

    @Test func badSetupsAreOneClearLine() throws {
        let port = try freeTCPPort()
        let down = try roomtap(["jobs", "--redis", "redis://127.0.0.1:\(port)"], expect: 1)
        #expect(down.stderrLines.count == 1 && down.stderr.contains("cannot reach Redis at redis://127.0.0.1:\(port)"))
        let worker = try roomtap(["worker", "--redis", "redis://127.0.0.1:\(port)", "--spool", root.path], expect: 1)
        #expect(worker.stderrLines.count == 1 && worker.stderr.contains("is redis-server running"))
        try roomtap(["submit", "--redis", "http://x", "--", "record", "--file", "a=\(sample("alice"))"], expect: 64)
        let noRecord = try roomtap(["submit", "--redis", redis.url, "--", "--file", "a=x"], expect: 64)
        #expect(noRecord.stderr.contains("record arguments"))
        let badRoom = try roomtap(["submit", "--redis", redis.url, "--", "record", "--mix"], expect: 64)
        #expect(badRoom.stderr.contains("the record arguments: no speakers"))
        let out = try roomtap(
            ["submit", "--redis", redis.url, "--", "record", "--file", "a=x.opus", "--out", "d"], expect: 64)
        #expect(out.stderr.contains("--out is not for a job"))
        let upload = try roomtap(
            ["submit", "--redis", redis.url, "--", "record", "--file", "a=x.opus", "--upload", "s3://b/p"], expect: 64)
        #expect(upload.stderr.contains("roomtap worker --upload s3://BUCKET/PREFIX"))
        let segments = try roomtap(
            ["worker", "--redis", redis.url, "--spool", root.path, "--segment-seconds", "5"], expect: 64)
        #expect(segments.stderr.contains("--segment-seconds goes with --upload"))
        try roomtap(["submit", "--redis", redis.url, "--id", "../x", "--", "record", "--file", "a=x.opus"], expect: 64)
        try roomtap(["jobs", "--redis", redis.url, "nothing"], expect: 1)
        // Relative inputs are made absolute for the worker.
        try roomtap(
            ["submit", "--redis", redis.url, "--id", "rel", "--", "record", "--file", "a=x.opus"], expect: 0, in: root)
        #expect((try job("rel")["arguments"] as? [String]) == ["--file", "a=\(root.path)/x.opus"])
    }

    static func processRunning(containing text: String) -> Bool { !processes(containing: text).isEmpty }

    /// The processes whose command line contains `text`.
    static func processes(containing text: String) -> [pid_t] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { entry in
            guard let pid = pid_t(entry), let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline"),
                String(decoding: data.map { $0 == 0 ? 32 : $0 }, as: UTF8.self).contains(text)
            else { return nil }
            return pid
        }
    }
}
