import Foundation
import RoomTapAll
import RoomTapCLITestSupport
import RoomTapMediaTestSupport
import RoomTapRTPTestSupport
import RoomTapStorage
import RoomTapTestSupport
import Testing

/// `record` with `s3://` inputs (--file, --janus-room) against a SeaweedFS that enforces SigV4:
/// the same bytes as recording the local files, the downloads removed afterwards, and one line
/// per failure with nothing created in --out.
@Suite("CLI: record s3:// inputs")
struct RemoteInputCLITests {
    /// A Janus room of two publishers (alice's and bob's packets, bob 1.5 s later by wall clock)
    /// in `directory`.
    static func writeJanusRoom(_ directory: URL) throws -> [String] {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let u: Int64 = 1_796_070_494_461_418
        var names: [String] = []
        for (k, speaker) in ["alice", "bob"].enumerated() {
            let packets = try #require(OggPacketDump(path: sample(speaker))).audioPackets
            let at = u + Int64(k) * 1_500_000
            let name = "videoroom-4242-user-\(1001 + k)-\(at)-audio-0.mjr"
            try Data(JanusRecordingBuilder.opus(packets, u: at).bytes()).write(
                to: directory.appendingPathComponent(name))
            names.append(name)
        }
        return names
    }

    /// room.json as a dictionary with every track's `source.path` taken out (and returned).
    static func roomWithoutPaths(_ out: URL) throws -> (room: NSDictionary, paths: [String]) {
        let data = try Data(contentsOf: out.appendingPathComponent("room.json"))
        var room = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        var paths: [String] = []
        var tracks = try #require(room["tracks"] as? [[String: Any]])
        for i in tracks.indices {
            guard var source = tracks[i]["source"] as? [String: Any] else { continue }
            paths.append(source.removeValue(forKey: "path") as? String ?? "")
            tracks[i]["source"] = source
        }
        room["tracks"] = tracks
        return (room as NSDictionary, paths.sorted())
    }

    /// `--file carol=s3://...@1.5 --janus-room s3://...` records byte for byte what the same
    /// local inputs record (the Janus times place the room, so even the BWF start time agrees);
    /// room.json differs only in naming the s3:// URLs; the private download directory is gone.
    @Test func s3InputsRecordTheSameBytesAsTheLocalFiles() throws {
        let server = try S3TestServer()
        let work = try temporaryDirectory()
        let janus = work.appendingPathComponent("janus")
        let names = try Self.writeJanusRoom(janus)
        let client = server.client()
        for name in names {
            try client.upload(
                file: janus.appendingPathComponent(name).path, bucket: server.bucket, key: "in/janus/\(name)")
        }
        try client.upload(file: sample("carol"), bucket: server.bucket, key: "in/carol.opus")
        let tmp = work.appendingPathComponent("tmp")
        try FileManager.default.createDirectory(at: tmp, withIntermediateDirectories: true)

        let local = work.appendingPathComponent("local")
        try roomtap(
            [
                "record", "--file", "carol=\(sample("carol"))@1.5", "--janus-room", janus.path, "--mix", "--quiet",
                "--out", local.path,
            ], expect: 0)
        let remote = work.appendingPathComponent("remote")
        let outcome = InProcessCLI.run(
            [
                "record", "--file", "carol=s3://\(server.bucket)/in/carol.opus@1.5", "--janus-room",
                "s3://\(server.bucket)/in/janus", "--mix", "--quiet", "--out", remote.path,
            ], environment: server.environment().merging(["TMPDIR": tmp.path]) { _, b in b })
        #expect(outcome.status == 0, "stderr: \(outcome.stderr)")
        #expect(outcome.stderr.isEmpty, "\(outcome.stderr)")

        let files = try listing(local)
        #expect(files == ["carol.wav", "mix.wav", "room.json", "user-1001.wav", "user-1002.wav"], "\(files)")
        #expect(try listing(remote) == files)
        for file in files where file.hasSuffix(".wav") {
            let a = try Data(contentsOf: local.appendingPathComponent(file))
            let b = try Data(contentsOf: remote.appendingPathComponent(file))
            #expect(a.count > 100_000 && a == b, "\(file): \(a.count) and \(b.count) bytes, the same bytes")
        }
        let (localRoom, _) = try Self.roomWithoutPaths(local)
        let (remoteRoom, remotePaths) = try Self.roomWithoutPaths(remote)
        #expect(localRoom == remoteRoom, "room.json: the same but for the source paths")
        #expect(
            remotePaths
                == (["s3://\(server.bucket)/in/carol.opus"] + names.map { "s3://\(server.bucket)/in/janus/\($0)" })
                .sorted(), "room.json names the URLs: \(remotePaths)")
        let left = try listing(tmp)
        #expect(left.isEmpty, "the downloads are removed: \(left)")
    }

    /// A missing object, a missing bucket, a wrong secret, an empty prefix: one line naming the
    /// option and the URL and what to do, exit 1, no --out directory, no download left behind.
    @Test func aMissingObjectBucketOrWrongSecretIsOneLineAndCreatesNothing() throws {
        let server = try S3TestServer()
        let work = try temporaryDirectory()
        let tmp = work.appendingPathComponent("tmp")
        try FileManager.default.createDirectory(at: tmp, withIntermediateDirectories: true)
        try server.client().upload(file: sample("alice"), bucket: server.bucket, key: "in/alice.opus")
        let notes = work.appendingPathComponent("notes.txt")
        try Data("not audio\n".utf8).write(to: notes)
        try server.client().upload(file: notes.path, bucket: server.bucket, key: "in/notes.opus")
        let b = server.bucket
        let cases: [(args: [String], secret: String?, says: [String])] = [
            (
                ["--file", "alice=s3://\(b)/in/nope.opus"], nil,
                [
                    "--file alice=s3://\(b)/in/nope.opus: there is no object s3://\(b)/in/nope.opus",
                    "check the bucket and key",
                ]
            ),
            (
                ["--file", "alice=s3://no-such-bucket-rt/alice.opus"], nil,
                ["--file alice=s3://no-such-bucket-rt/alice.opus", "does not exist", "create it or fix the s3:// URL"]
            ),
            (
                ["--file", "alice=s3://\(b)/in/alice.opus"], "wrong-secret",
                [
                    "--file alice=s3://\(b)/in/alice.opus", "refused the request signature",
                    "check AWS_SECRET_ACCESS_KEY",
                ]
            ),
            (
                // Downloaded, then refused by the checks: the message names the URL, not the copy.
                ["--file", "alice=s3://\(b)/in/notes.opus"], nil, ["s3://\(b)/in/notes.opus"]
            ),
            (
                ["--file", "bob=\(sample("bob"))", "--janus-room", "s3://\(b)/in/empty"], nil,
                ["--janus-room s3://\(b)/in/empty: there is no object under s3://\(b)/in/empty/"]
            ),
        ]
        for (n, c) in cases.enumerated() {
            let out = work.appendingPathComponent("out-\(n)")
            let outcome = InProcessCLI.run(
                ["record"] + c.args + ["--quiet", "--out", out.path],
                environment: server.environment(secret: c.secret).merging(["TMPDIR": tmp.path]) { _, b in b })
            #expect(outcome.status == 1, "\(c.args): exit 1, stderr: \(outcome.stderr)")
            #expect(outcome.stderrLines.count == 1, "\(c.args): one line: \(outcome.stderr)")
            for text in c.says { #expect(outcome.stderr.contains(text), "\(c.args): '\(text)' in: \(outcome.stderr)") }
            #expect(!outcome.stderr.contains(tmp.path), "\(c.args): no temporary path: \(outcome.stderr)")
            #expect(!FileManager.default.fileExists(atPath: out.path), "\(c.args): --out is not created")
            let left = try listing(tmp)
            #expect(left.isEmpty, "\(c.args): no download left: \(left)")
        }
    }

    /// `--room s3://...` and `--sdp s3://...` (room descriptions): downloaded, then planned as the
    /// local file is (--dry-run: the same plan), and the copy removed.
    @Test func roomDescriptionsComeFromS3Too() throws {
        let server = try S3TestServer()
        let work = try temporaryDirectory()
        let tmp = work.appendingPathComponent("tmp")
        try FileManager.default.createDirectory(at: tmp, withIntermediateDirectories: true)
        let (p1, p2) = (try freeUDPPort(), try freeUDPPort())
        let room = work.appendingPathComponent("people.json")
        try """
        {"listen": "127.0.0.1", "participants": [{"name": "ann", "port": \(p1)}, {"name": "ben", "port": \(p2)}]}
        """.write(to: room, atomically: true, encoding: .utf8)
        let sdp = work.appendingPathComponent("room.sdp")
        try
            "v=0\no=- 0 0 IN IP4 127.0.0.1\ns=r\nc=IN IP4 127.0.0.1\nt=0 0\nm=audio \(p1) RTP/AVP 111\na=rtpmap:111 opus/48000/2\n"
            .write(to: sdp, atomically: true, encoding: .utf8)
        try server.client().upload(file: room.path, bucket: server.bucket, key: "in/people.json")
        try server.client().upload(file: sdp.path, bucket: server.bucket, key: "in/room.sdp")
        for (option, local, key) in [("--room", room.path, "in/people.json"), ("--sdp", sdp.path, "in/room.sdp")] {
            let out = work.appendingPathComponent("out").path
            let plain = try roomtap(["record", option, local, "--out", out, "--dry-run"], expect: 0)
            let remote = InProcessCLI.run(
                ["record", option, "s3://\(server.bucket)/\(key)", "--out", out, "--dry-run"],
                environment: server.environment().merging(["TMPDIR": tmp.path]) { _, b in b })
            #expect(remote.status == 0, "\(option): \(remote.stderr)")
            #expect(remote.stdout.contains("\(p1)"), "\(option): \(remote.stdout)")
            #expect(
                remote.stdout == plain.stdout,
                "\(option): the plan of the local file:\n\(remote.stdout)\n\(plain.stdout)")
            let left = try listing(tmp)
            #expect(left.isEmpty, "\(option): the copy is removed: \(left)")
        }
    }
}
