import Foundation
import RoomTapAll
import RoomTapCLITestSupport
import RoomTapRTPTestSupport
import RoomTapStorage
import RoomTapTestSupport
import Testing

/// Uploads through a ``FaultProxy`` in front of SeaweedFS: connections cut mid-body, refused,
/// stalled, while the room records; nothing is lost, and what failed is listed.
@Suite("CLI: uploads through a faulty network")
struct UploadFaultCLITests {
    /// Every file of `out` (recursively; not the journal) is in the bucket under `prefix` with
    /// the local bytes; returns how many were compared.
    static func expectBucketHoldsEveryFile(_ server: S3TestServer, _ out: URL, prefix: String) throws -> Int {
        let client = server.client()
        let listed = Dictionary(
            try client.list(bucket: server.bucket, prefix: prefix + "/").map { ($0.key, $0.size) },
            uniquingKeysWith: { a, _ in a })
        let files = (FileManager.default.enumerator(atPath: out.path)?.allObjects as? [String] ?? []).filter {
            var isDirectory: ObjCBool = false
            FileManager.default.fileExists(atPath: out.appendingPathComponent($0).path, isDirectory: &isDirectory)
            return !isDirectory.boolValue && $0 != UploadJournal.fileName
        }
        let scratch = try temporaryDirectory("fault-back")
        for file in files {
            let local = try Data(contentsOf: out.appendingPathComponent(file))
            #expect(listed["\(prefix)/\(file)"] == Int64(local.count), "\(file): listed with \(local.count) bytes")
            let back = scratch.appendingPathComponent(UUID().uuidString).path
            try client.download(bucket: server.bucket, key: "\(prefix)/\(file)", to: back)
            #expect(
                try Data(contentsOf: URL(fileURLWithPath: back)) == local,
                "\(file): the bucket's bytes are the local ones")
        }
        return files.count
    }

    /// A live room with --upload through the proxy: while it records, segment uploads are cut
    /// mid-body, refused and stalled mid-body (each fault waited for by the proxy's counts). The room ends
    /// (SIGINT) with exit 0; the bucket then holds every local file byte for byte, and each
    /// track's segments reassemble to its WAV exactly (the ones that failed live went up at the end).
    @Test func faultsMidRecordingLoseNothing() throws {
        let server = try S3TestServer()
        let proxy = try FaultProxy(inFrontOf: server)
        let out = try temporaryDirectory()
        let port = try freeUDPPort()
        let address = try #require(ListenAddress("127.0.0.1:\(port)"))
        // One control socket for the recorder and `roomtap status` (each child gets its own otherwise).
        let control = try temporaryDirectory("fault-ctl").appendingPathComponent("c.sock").path
        let environment = server.environment().merging(["AWS_ENDPOINT_URL": proxy.endpoint, "ROOMTAP_CONTROL": control])
        {
            _, b in b
        }
        let a = RTPTestSender(pcm: TestSignal.speechLike(samples: 750 * 960, seed: 21), to: address, ssrc: 0xFA01_0001)
        let b = RTPTestSender(pcm: TestSignal.speechLike(samples: 750 * 960, seed: 22), to: address, ssrc: 0xFA01_0002)
        let recorder = try CLIRunner.start(
            [
                "record", "--listen", address.description, "--record-delay", "100", "--out", out.path, "--quiet",
                "--upload", "s3://\(server.bucket)/faults", "--segment-seconds", "1", "--upload-keep-segments",
            ], environment: environment)
        try waitUntilListening(port: port, pid: recorder.pid)
        let start = RealTimeClock.monotonicNow() + 50_000_000
        a.start(startNanos: start)
        b.start(startNanos: start)
        let direct = server.client()
        let first = waitUntil(timeout: .seconds(30), every: .milliseconds(50)) {
            ((try? direct.list(bucket: server.bucket, prefix: "faults/segments/"))?.count ?? 0) >= 2
        }
        #expect(first, "segments go up through the proxy")
        let running = InProcessCLI.run(["status", out.path], environment: environment)
        #expect(running.status == 0, "\(running.stderr)")
        #expect(
            running.stdout.contains("upload      s3://\(server.bucket)/faults: uploading, "), "\(running.stdout)")
        #expect(running.stdout.contains(" segment(s) uploaded, "), "\(running.stdout)")
        proxy.set(.cut(afterBytes: 4_000))
        #expect(waitUntil(timeout: .seconds(30), every: .milliseconds(20)) { proxy.counts.cut >= 2 }, "two cut")
        proxy.set(.refuse)
        #expect(waitUntil(timeout: .seconds(30), every: .milliseconds(20)) { proxy.counts.refused >= 2 }, "refused")
        proxy.set(.stall(afterBytes: 20_000))  // a 1 s segment is 96 kB: held mid-body
        #expect(waitUntil(timeout: .seconds(30), every: .milliseconds(20)) { proxy.counts.stalled >= 1 }, "stalled")
        let held = proxy.counts.accepted
        proxy.set(.pass)
        #expect(
            waitUntil(timeout: .seconds(60), every: .milliseconds(50)) { proxy.counts.accepted >= held + 2 },
            "uploads go on after the stall")
        recorder.signal(SIGINT)
        let outcome = recorder.wait(timeout: 120)
        _ = a.wait()
        _ = b.wait()
        #expect(outcome.status == 0, "the room went up whole: stderr: \(outcome.stderr)")
        let counts = proxy.counts
        #expect(counts.cut >= 2 && counts.refused >= 2 && counts.stalled >= 1, "\(counts)")

        let compared = try Self.expectBucketHoldsEveryFile(server, out, prefix: "faults")
        #expect(compared >= 3, "\(compared) files compared")
        for ssrc in [a.ssrc, b.ssrc] {
            let track = "ssrc-" + String(ssrc, radix: 16)
            let whole = try WAVFile.readSamples(path: out.appendingPathComponent("\(track).wav").path).1
            let joined = try UploadRecordCLITests.reassemble(
                server, prefix: "faults", track: track, scratch: try temporaryDirectory("fault-seg"))
            #expect(joined.count == whole.count && joined == whole, "\(track): the segments are the whole WAV")
        }
        let upload = try UploadStatusCLITests.upload(out)
        #expect(upload["state"] as? String == "complete", "\(upload)")
    }

    /// `roomtap upload` while every request body is cut after 3000 bytes: each file fails (after
    /// its retries), exit 1, and room.json and `status DIR` list them as failed with the error;
    /// the next run through a sound network sends them all and status says complete.
    @Test func filesThatFailAreListedAndTheNextRunSendsThem() throws {
        let server = try S3TestServer()
        let proxy = try FaultProxy(inFrontOf: server)
        let out = try temporaryDirectory()
        try roomtap(
            [
                "record", "--file", "alice=\(sample("alice"))", "--file", "bob=\(sample("bob"))", "--out", out.path,
                "-q",
            ],
            expect: 0)
        let environment = server.environment().merging(["AWS_ENDPOINT_URL": proxy.endpoint]) { _, b in b }
        proxy.set(.cut(afterBytes: 3_000))
        let failed = InProcessCLI.run(
            ["upload", out.path, "s3://\(server.bucket)/cut", "--quiet"], environment: environment)
        #expect(failed.status == 1, "stderr: \(failed.stderr)")
        #expect(failed.stderrLines.count == 1, "one line: \(failed.stderr)")
        #expect(failed.stderr.contains("cannot reach the S3 store"), "\(failed.stderr)")
        let upload = try UploadStatusCLITests.upload(out)
        #expect(upload["state"] as? String == "incomplete", "\(upload)")
        let failedFiles = (upload["failed"] as? [[String: Any]] ?? []).compactMap { $0["file"] as? String }
        #expect(failedFiles == ["alice.wav", "bob.wav"], "\(upload)")
        let status = try roomtap(["status", out.path], expect: 0)
        #expect(
            status.stdout.contains("incomplete (0 uploaded, 0 segment(s), 0 pending, 2 failed)"), "\(status.stdout)")
        #expect(status.stdout.contains("failed      alice.wav: cannot reach the S3 store"), "\(status.stdout)")

        proxy.set(.pass)
        let resumed = InProcessCLI.run(["upload", out.path, "s3://\(server.bucket)/cut"], environment: environment)
        #expect(resumed.status == 0, "stderr: \(resumed.stderr)")
        let after = try roomtap(["status", out.path], expect: 0)
        #expect(after.stdout.contains("complete (2 uploaded, 0 segment(s), 0 pending, 0 failed)"), "\(after.stdout)")
        #expect(try Self.expectBucketHoldsEveryFile(server, out, prefix: "cut") == 3)
    }
}
