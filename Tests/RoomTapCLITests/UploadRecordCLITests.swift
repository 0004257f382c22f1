import Foundation
import RoomTapAll
import RoomTapCLITestSupport
import RoomTapRTPTestSupport
import RoomTapStorage
import RoomTapTestSupport
import Testing

/// `roomtap record --upload`: segments while recording, the whole room at the end.
@Suite("CLI: record --upload")
struct UploadRecordCLITests {
    /// The segments of one track reassembled by their names (PREFIX/segments/<track>/<first
    /// sample>.wav): placed at their first room sample. Nil when a name or file does not parse.
    static func reassemble(_ server: S3TestServer, prefix: String, track: String, scratch: URL) throws -> [Int16] {
        let objects = try server.client().list(bucket: server.bucket, prefix: "\(prefix)/segments/\(track)/")
        var out: [Int16] = []
        for object in objects.sorted(by: { $0.key < $1.key }) {
            let name = (object.key as NSString).lastPathComponent
            #expect(name.count == 16 && name.hasSuffix(".wav"), "\(name): 12 digits and .wav")
            let first = try #require(Int(name.prefix(12)))
            let path = scratch.appendingPathComponent(UUID().uuidString + ".wav").path
            try server.client().download(bucket: server.bucket, key: object.key, to: path)
            let (format, samples) = try WAVFile.readSamples(path: path)
            #expect(format.sampleRate == 48_000 && format.channels == 1, "48 kHz mono")
            if out.count < first { out += [Int16](repeating: 0, count: first - out.count) }
            #expect(out.count == first, "\(name) starts where the previous ended")
            out += samples
        }
        return out
    }

    /// The sample room (offline) with --upload --upload-keep-segments: the room's files in the
    /// bucket equal the local ones, and each track's segments reassemble to its WAV exactly.
    @Test func segmentsReassembleToTheTrackAndTheRoomGoesUpWhole() throws {
        let server = try S3TestServer()
        let out = try temporaryDirectory()
        let receiver = try WebhookTestReceiver()
        let outcome = InProcessCLI.run(
            [
                "record", "--file", "alice=\(sample("alice"))", "--file", "bob=\(sample("bob"))@2.5",
                "--out", out.path, "--quiet", "--upload", "s3://\(server.bucket)/r", "--segment-seconds", "3",
                "--upload-keep-segments", "--webhook", receiver.url,
            ], environment: server.environment().merging(["ROOMTAP_WEBHOOK_SECRET": "k"]) { _, b in b })
        #expect(outcome.status == 0, "stderr: \(outcome.stderr)")
        for file in ["alice.wav", "bob.wav", "room.json"] {
            let back = try temporaryDirectory("rback").appendingPathComponent(file).path
            try server.client().download(bucket: server.bucket, key: "r/\(file)", to: back)
            #expect(
                try Data(contentsOf: URL(fileURLWithPath: back)) == Data(contentsOf: out.appendingPathComponent(file)))
        }
        for track in ["alice", "bob"] {
            let whole = try WAVFile.readSamples(path: out.appendingPathComponent("\(track).wav").path).1
            let joined = try Self.reassemble(server, prefix: "r", track: track, scratch: try temporaryDirectory("seg"))
            #expect(joined.count == whole.count && joined == whole, "\(track): segments = the WAV")
        }
        let leftovers =
            (FileManager.default.enumerator(atPath: out.appendingPathComponent("segments").path)?
            .allObjects as? [String] ?? []).filter { $0.hasSuffix(".wav") }
        #expect(leftovers.isEmpty, "each segment is deleted locally once verified: \(leftovers)")
        let events = receiver.delivered.compactMap { $0.headers["x-roomtap-event"] }
        #expect(
            events.contains("recording.segment") && events.contains("recording.done") && events.last == "upload.done",
            "\(events)")
        for request in receiver.delivered {
            #expect(
                request.headers["x-roomtap-signature"] == "sha256="
                    + WebhookSender.signature(of: request.body, secret: "k"))
        }
    }

    /// A live room with 2 s segments killed with SIGKILL: the bucket already holds playable
    /// segments of every track (at least 4 s each); repair + upload then completes the room.
    @Test func aKilledLiveRoomHasItsSegmentsInTheBucket() throws {
        let server = try S3TestServer()
        let out = try temporaryDirectory()
        let port = try freeUDPPort()
        let address = try #require(ListenAddress("127.0.0.1:\(port)"))
        let a = RTPTestSender(pcm: TestSignal.speechLike(samples: 500 * 960, seed: 7), to: address, ssrc: 0xA11C_0002)
        let b = RTPTestSender(pcm: TestSignal.speechLike(samples: 500 * 960, seed: 8), to: address, ssrc: 0xB0B0_0002)
        let recorder = try CLIRunner.start(
            [
                "record", "--listen", address.description, "--record-delay", "100", "--out", out.path, "--quiet",
                "--upload", "s3://\(server.bucket)/live", "--segment-seconds", "2",
            ], environment: server.environment())
        try waitUntilListening(port: port, pid: recorder.pid)
        let start = RealTimeClock.monotonicNow() + 50_000_000
        a.start(startNanos: start)
        b.start(startNanos: start)
        let tracks = [a, b].map { "ssrc-" + String($0.ssrc, radix: 16) }
        let client = server.client()
        let uploaded = waitUntil(timeout: .seconds(40), every: .milliseconds(100)) {
            tracks.allSatisfy { track in
                ((try? client.list(bucket: server.bucket, prefix: "live/segments/\(track)/"))?.count ?? 0) >= 3
            }
        }
        #expect(uploaded, "three segments of each track are in the bucket while recording")
        recorder.signal(SIGKILL)
        #expect(recorder.wait(timeout: 20).status == -SIGKILL)
        _ = a.wait()
        _ = b.wait()
        for track in tracks {
            let joined = try Self.reassemble(
                server, prefix: "live", track: track, scratch: try temporaryDirectory("live"))
            #expect(joined.count >= 4 * 48_000, "\(track): \(joined.count) samples in the bucket after the kill")
            #expect((joined.map { abs(Int($0)) }.max() ?? 0) > 1000, "\(track): the speech, not silence")
        }
        try roomtap(["repair", out.path], expect: 0)
        let outcome = InProcessCLI.run(
            ["upload", out.path, "s3://\(server.bucket)/live"], environment: server.environment())
        #expect(outcome.status == 0, "stderr: \(outcome.stderr)")
        for track in tracks {
            let object = try #require(try client.head(bucket: server.bucket, key: "live/\(track).wav"))
            let size =
                try FileManager.default.attributesOfItem(atPath: out.appendingPathComponent("\(track).wav").path)[.size]
                as? Int
            #expect(object.size == Int64(size ?? -1))
        }
        #expect(try client.head(bucket: server.bucket, key: "live/room.json") != nil)
    }

    /// The store goes away mid-recording: the room goes on (every WAV covers the room, past the
    /// outage), the recorder ends with one line saying the store cannot be reached and where the
    /// files are, the segments it could not send stay in DIR/segments, room.json and `status DIR`
    /// list what is pending, and `roomtap upload DIR` to a store that is up sends everything,
    /// segments to their own keys.
    ///
    /// The room is stopped (SIGINT) only once the store is gone (its process has exited) and two
    /// segments have piled up locally: with a fixed --duration a loaded machine could end the room
    /// while SeaweedFS was still shutting down, and its S3 gateway then answers 500 InternalError
    /// (a failing store, said as such: S3ClientTests) instead of refusing connections.
    @Test func aStoreThatGoesDownDoesNotStopTheRoomAndUploadResumes() throws {
        let down = try S3TestServer()
        let out = try temporaryDirectory()
        let port = try freeUDPPort()
        let address = try #require(ListenAddress("127.0.0.1:\(port)"))
        let a = RTPTestSender(pcm: TestSignal.speechLike(samples: 600 * 960, seed: 9), to: address, ssrc: 0xD0A1_0001)
        let recorder = try CLIRunner.start(
            [
                "record", "--listen", address.description, "--record-delay", "100", "--out", out.path, "--quiet",
                "--upload", "s3://\(down.bucket)/gone", "--segment-seconds", "1",
            ], environment: down.environment())
        try waitUntilListening(port: port, pid: recorder.pid)
        a.start(startNanos: RealTimeClock.monotonicNow() + 50_000_000)
        let track = "ssrc-" + String(a.ssrc, radix: 16)
        let segments = out.appendingPathComponent("segments/\(track)")
        func keptSegments() -> [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: segments.path)) ?? []).filter {
                $0.hasSuffix(".wav")
            }
            .sorted()
        }
        // Up and verified: in the bucket, and gone from DIR/segments (the recorder removes a
        // segment once the store has it whole; seen in a listing alone, it may still be checked).
        let first = waitUntil(timeout: .seconds(30), every: .milliseconds(50)) {
            ((try? down.client().list(bucket: down.bucket, prefix: "gone/segments/\(track)/"))?.count ?? 0) >= 1
                && !keptSegments().contains("000000000000.wav")
        }
        #expect(first, "a segment went up before the store went down")
        down.stop()
        let piled = waitUntil(timeout: .seconds(60), every: .milliseconds(50)) { keptSegments().count >= 2 }
        #expect(piled, "the room goes on while the store is down: its segments pile up in DIR/segments")
        recorder.signal(SIGINT)
        let outcome = recorder.wait(timeout: 120)
        _ = a.wait()
        #expect(outcome.status == 1, "the upload failed: exit 1, stderr: \(outcome.stderr)")
        // One line about the upload (a loaded machine may add the late-tick warning, which is not about it).
        #expect(outcome.stderrLines.filter { !$0.contains("ran late") }.count == 1, "one line: \(outcome.stderr)")
        #expect(
            outcome.stderr.contains("cannot reach the S3 store") && outcome.stderr.contains("roomtap upload resumes"),
            "stderr: \(outcome.stderr)")
        let report = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: out.appendingPathComponent("room.json")))
                as? [String: Any])
        let wav = try WAVFile.readSamples(path: out.appendingPathComponent("\(track).wav").path).1
        #expect(wav.count == report["durationSamples"] as? Int, "the file covers the room")
        let kept = keptSegments()
        #expect(kept.count >= 2, "the segments that could not go up are kept locally: \(kept)")
        let firstKept = try #require(Int(kept.first?.prefix(12) ?? ""))
        #expect(wav.count >= firstKept + 2 * 48_000, "the room ran on past the outage: \(wav.count) samples")

        let upload = try #require(report["upload"] as? [String: Any], "room.json says what is not uploaded")
        #expect(
            upload["state"] as? String == "incomplete" && upload["destination"] as? String == "s3://\(down.bucket)/gone"
        )
        let pending = upload["pending"] as? [String] ?? []
        #expect(pending.contains("\(track).wav"), "\(pending)")
        #expect(Set(kept.map { "segments/\(track)/\($0)" }).isSubset(of: Set(pending)), "\(pending)")
        #expect((upload["error"] as? String ?? "").contains("cannot reach the S3 store"), "\(upload)")
        #expect((upload["segmentsUploaded"] as? Int ?? 0) >= 1, "\(upload)")
        let status = try roomtap(["status", out.path], expect: 0)
        #expect(status.stdout.contains("upload      s3://\(down.bucket)/gone: incomplete ("), "\(status.stdout)")
        #expect(status.stdout.contains("pending     \(track).wav"), "\(status.stdout)")
        #expect(status.stdout.contains("pending     segments/\(track)/\(kept[0])"), "\(status.stdout)")
        #expect(status.stdout.contains("last error  cannot reach the S3 store"), "\(status.stdout)")

        let up = try S3TestServer()
        let resumed = InProcessCLI.run(["upload", out.path, "s3://\(up.bucket)/gone"], environment: up.environment())
        #expect(resumed.status == 0, "stderr: \(resumed.stderr)")
        for file in kept {
            #expect(
                try up.client().head(bucket: up.bucket, key: "gone/segments/\(track)/\(file)") != nil, "\(file) went up"
            )
        }
        let object = try #require(try up.client().head(bucket: up.bucket, key: "gone/\(track).wav"))
        #expect(object.size == Int64(44 + wav.count * 2) || object.size > Int64(wav.count * 2))
        let after = try roomtap(["status", out.path], expect: 0)
        #expect(after.stdout.contains("upload      s3://\(up.bucket)/gone: complete ("), "\(after.stdout)")
        #expect(after.stdout.contains(" 0 pending, 0 failed)"), "\(after.stdout)")
    }
}
