import Foundation
import RoomTapAll
import RoomTapCLITestSupport
import RoomTapRTPTestSupport
import RoomTapStorage
import RoomTapTestSupport
import Testing

/// `roomtap upload` against a real SeaweedFS on loopback (signatures enforced).
@Suite("CLI: upload a recording to S3")
struct UploadCLITests {
    func recordSampleRoom(_ out: URL) throws {
        try roomtap(
            [
                "record", "--file", "alice=\(sample("alice"))", "--file", "bob=\(sample("bob"))@2.5",
                "--file", "carol=\(sample("carol"))", "--out", out.path, "--mix", "--quiet",
            ], expect: 0)
    }

    func upload(_ arguments: [String], _ server: S3TestServer, secret: String? = nil, extra: [String: String] = [:])
        throws -> CLIRunner.Outcome
    {
        InProcessCLI.run(
            ["upload"] + arguments, environment: server.environment(secret: secret).merging(extra) { _, b in b })
    }

    @Test func aRecordingGoesUpWholeAndASecondRunSendsNothing() throws {
        let server = try S3TestServer()
        let out = try temporaryDirectory()
        try recordSampleRoom(out)
        let receiver = try WebhookTestReceiver()
        let first = try upload(
            [out.path, "s3://\(server.bucket)/rooms/demo", "--webhook", receiver.url], server,
            extra: ["ROOMTAP_WEBHOOK_SECRET": "hook-secret"])
        #expect(first.status == 0, "stderr: \(first.stderr)")
        #expect(
            first.stdout.contains("uploaded 5 file(s)") && first.stdout.contains("0 already there"), "\(first.stdout)")
        let files = ["alice.wav", "bob.wav", "carol.wav", "mix.wav", "room.json"]
        let objects = try server.client().list(bucket: server.bucket, prefix: "rooms/demo/")
        #expect(objects.map(\.key).sorted() == files.map { "rooms/demo/\($0)" })
        for file in files {
            let back = try temporaryDirectory("back").appendingPathComponent(file).path
            try server.client().download(bucket: server.bucket, key: "rooms/demo/\(file)", to: back)
            #expect(
                try Data(contentsOf: URL(fileURLWithPath: back)) == Data(contentsOf: out.appendingPathComponent(file)),
                "\(file): the object holds the local bytes")
        }
        let journal = try #require(UploadJournal.read(directory: out.path))
        #expect(journal.counts == (uploaded: 5, pending: 0, failed: 0))
        let hook = try #require(receiver.delivered.first)
        #expect(hook.headers["x-roomtap-event"] == "upload.done")
        #expect(
            hook.headers["x-roomtap-signature"] == "sha256="
                + WebhookSender.signature(of: hook.body, secret: "hook-secret"))

        let second = try upload([out.path, "s3://\(server.bucket)/rooms/demo"], server)
        #expect(second.status == 0, "stderr: \(second.stderr)")
        #expect(second.stdout.contains("uploaded 0 file(s) (0 bytes), 5 already there"), "\(second.stdout)")
    }

    @Test func aWrongSecretIsOneLineExitOneAndNothingLocalChanges() throws {
        let server = try S3TestServer()
        let out = try temporaryDirectory()
        try recordSampleRoom(out)
        let before = try listing(out)
        let alice = try Data(contentsOf: out.appendingPathComponent("alice.wav"))
        let outcome = try upload([out.path, "s3://\(server.bucket)/x", "--delete-local"], server, secret: "wrong")
        #expect(outcome.status == 1)
        #expect(outcome.stderrLines.count == 1, "one line: \(outcome.stderr)")
        #expect(
            outcome.stderr.hasPrefix("roomtap: error: the store refused the request signature"), "\(outcome.stderr)")
        #expect(outcome.stderr.contains("SignatureDoesNotMatch") && outcome.stderr.contains("AWS_SECRET_ACCESS_KEY"))
        #expect(!outcome.stderr.contains("wrong") && !outcome.stderr.contains(server.secretKey))
        #expect(try listing(out) == before, "no file removed or added")
        #expect(try Data(contentsOf: out.appendingPathComponent("alice.wav")) == alice)
    }

    @Test func badInvocationsSayWhatToDo() throws {
        let server = try S3TestServer()
        let out = try temporaryDirectory()
        let usage = try upload([out.path], server)
        #expect(usage.status == 64 && usage.stderr.contains("roomtap upload DIR s3://BUCKET/PREFIX"), "\(usage.stderr)")
        let bad = try upload([out.path, "s3://Bad_Bucket/x"], server)
        #expect(bad.status == 64 && bad.stderr.contains("bucket name"), "\(bad.stderr)")
        let missing = try upload([out.path + "/nope", "s3://\(server.bucket)/x"], server)
        #expect(missing.status == 1 && missing.stderr.contains("is not a directory"), "\(missing.stderr)")
        try Data("x".utf8).write(to: out.appendingPathComponent("a.wav"))
        let noBucket = try upload([out.path, "s3://no-such-bucket/x"], server)
        #expect(noBucket.status == 1 && noBucket.stderr.contains("does not exist"), "\(noBucket.stderr)")
        #expect(noBucket.stderrLines.count == 1)
        let noCredentials = InProcessCLI.run(
            ["upload", out.path, "s3://\(server.bucket)/x"],
            environment: ["AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_ENDPOINT_URL": server.endpoint])
        #expect(
            noCredentials.status == 1 && noCredentials.stderr.contains("AWS_ACCESS_KEY_ID"), "\(noCredentials.stderr)")
    }

    /// A live room killed with SIGKILL, repaired, then uploaded: the bucket holds the room whole
    /// (every WAV with the local bytes, room.json "repaired"); with --delete-local the directory
    /// keeps only the journal.
    @Test func aKilledLiveRoomIsCompletedByRepairThenUpload() throws {
        let server = try S3TestServer()
        let out = try temporaryDirectory()
        let port = try freeUDPPort()
        let address = try #require(ListenAddress("127.0.0.1:\(port)"))
        let a = RTPTestSender(pcm: TestSignal.speechLike(samples: 300 * 960, seed: 5), to: address, ssrc: 0xA11C_0001)
        let b = RTPTestSender(pcm: TestSignal.speechLike(samples: 300 * 960, seed: 6), to: address, ssrc: 0xB0B0_0001)
        let recorder = try CLIRunner.start(
            ["record", "--listen", address.description, "--record-delay", "100", "--out", out.path, "--quiet"])
        try waitUntilListening(port: port, pid: recorder.pid)
        let start = RealTimeClock.monotonicNow() + 50_000_000
        a.start(startNanos: start)
        b.start(startNanos: start)
        let names = [a, b].map { "ssrc-" + String($0.ssrc, radix: 16) + ".wav" }
        let grown = waitUntil(timeout: .seconds(30)) {
            names.allSatisfy {
                ((try? FileManager.default.attributesOfItem(atPath: out.appendingPathComponent($0).path)[.size] as? Int)
                    ?? 0) > 3 * 96_000
            }
        }
        #expect(grown, "both WAVs grow past 3 s")
        recorder.signal(SIGKILL)
        #expect(recorder.wait(timeout: 20).status == -SIGKILL)
        _ = a.wait()
        _ = b.wait()
        try roomtap(["repair", out.path], expect: 0)
        let local = try names.map { try Data(contentsOf: out.appendingPathComponent($0)) }
        let outcome = try upload([out.path, "s3://\(server.bucket)/killed", "--delete-local"], server)
        #expect(outcome.status == 0, "stderr: \(outcome.stderr)")
        // The killed recorder's .roomtap.lock stays (only a name once its holder died; never uploaded).
        let left = try listing(out).filter { !$0.hasPrefix(".") }
        #expect(left == [UploadJournal.fileName], "only verified files were removed: all of them: \(left)")
        for (name, bytes) in zip(names, local) {
            let back = try temporaryDirectory("killedback").appendingPathComponent(name).path
            try server.client().download(bucket: server.bucket, key: "killed/\(name)", to: back)
            #expect(try Data(contentsOf: URL(fileURLWithPath: back)) == bytes)
            let samples = try WAVFile.readSamples(path: back).1
            #expect(samples.count > 3 * 48_000, "\(name): a playable WAV of more than 3 s")
        }
        let roomBack = try temporaryDirectory("killedroom").appendingPathComponent("room.json").path
        try server.client().download(bucket: server.bucket, key: "killed/room.json", to: roomBack)
        #expect(try String(contentsOfFile: roomBack, encoding: .utf8).contains("\"repaired\""))
    }
}
