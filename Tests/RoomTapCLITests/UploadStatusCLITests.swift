import Foundation
import RoomTapAll
import RoomTapCLITestSupport
import RoomTapStorage
import Testing

/// room.json's `upload` and `roomtap status DIR`: what of a recording is uploaded, pending, failed.
@Suite("CLI: upload status")
struct UploadStatusCLITests {
    static func upload(_ out: URL) throws -> [String: Any] {
        let data = try Data(contentsOf: out.appendingPathComponent("room.json"))
        let room = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        return try #require(room["upload"] as? [String: Any], "room.json has upload")
    }

    /// After a normal `record --upload`: room.json (local, and the same bytes in the bucket) says
    /// complete with every file; `status DIR` says so in text and JSON; a second `roomtap upload`
    /// sends nothing (room.json's upload is deterministic).
    @Test func afterANormalUploadRoomJSONAndStatusSayComplete() throws {
        let server = try S3TestServer()
        let out = try temporaryDirectory()
        let outcome = InProcessCLI.run(
            [
                "record", "--file", "alice=\(sample("alice"))", "--file", "bob=\(sample("bob"))@2.5", "--out",
                out.path, "--quiet", "--upload", "s3://\(server.bucket)/done", "--segment-seconds", "3",
            ], environment: server.environment())
        #expect(outcome.status == 0, "stderr: \(outcome.stderr)")
        let upload = try Self.upload(out)
        #expect(upload["state"] as? String == "complete", "\(upload)")
        #expect(upload["destination"] as? String == "s3://\(server.bucket)/done")
        #expect(upload["uploaded"] as? [String] == ["alice.wav", "bob.wav"], "\(upload)")
        #expect((upload["pending"] as? [String])?.isEmpty == true && (upload["failed"] as? [Any])?.isEmpty == true)
        #expect((upload["segmentsUploaded"] as? Int ?? 0) >= 4, "segments of both tracks went up live: \(upload)")
        let back = try temporaryDirectory("back").appendingPathComponent("room.json").path
        try server.client().download(bucket: server.bucket, key: "done/room.json", to: back)
        #expect(
            try Data(contentsOf: URL(fileURLWithPath: back))
                == Data(contentsOf: out.appendingPathComponent("room.json")),
            "the bucket's room.json is the local one")

        let status = try roomtap(["status", out.path], expect: 0)
        #expect(status.stdout.contains("room        complete, "), "\(status.stdout)")
        #expect(
            status.stdout.contains("upload      s3://\(server.bucket)/done: complete (2 uploaded, "), "\(status.stdout)"
        )
        #expect(status.stdout.contains("0 pending, 0 failed)"), "\(status.stdout)")
        #expect(status.stdout.contains("uploaded    alice.wav\nuploaded    bob.wav\n"), "\(status.stdout)")
        let json = try roomtap(["status", out.path, "--json"], expect: 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let jsonUpload = try #require(object["upload"] as? [String: Any])
        #expect(jsonUpload["state"] as? String == "complete" && object["state"] as? String == "complete")

        let again = InProcessCLI.run(
            ["upload", out.path, "s3://\(server.bucket)/done"], environment: server.environment())
        #expect(again.status == 0, "stderr: \(again.stderr)")
        #expect(again.stdout.hasPrefix("uploaded 0 file(s) (0 bytes)"), "\(again.stdout)")
    }

    /// A directory nothing was uploaded from: status says so (exit 0); a directory that is no
    /// recording: one line, exit 1.
    @Test func aDirectoryWithoutUploadOrRecording() throws {
        let out = try temporaryDirectory()
        try roomtap(["record", "--file", "alice=\(sample("alice"))", "--out", out.path, "--quiet"], expect: 0)
        let status = try roomtap(["status", out.path], expect: 0)
        #expect(status.stdout.contains("upload      none (roomtap upload DIR s3://BUCKET/PREFIX sends it)"))
        let empty = try temporaryDirectory("empty")
        let refused = try roomtap(["status", empty.path], expect: 1)
        #expect(refused.stderrLines.count == 1 && refused.stderr.contains("holds no recording"), "\(refused.stderr)")
        let usage = try roomtap(["status", out.path, "extra"], expect: 64)
        #expect(usage.stderr.contains("usage: roomtap status [DIR]"), "\(usage.stderr)")
    }
}
