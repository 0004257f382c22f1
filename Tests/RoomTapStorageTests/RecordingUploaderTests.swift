import Foundation
import RoomTapCLITestSupport
import RoomTapStorage
import RoomTapTestSupport
import Testing

/// RecordingUploader against a real SeaweedFS: idempotent, journaled, deletes only what is verified.
@Suite("Storage: recording uploader against SeaweedFS")
struct RecordingUploaderTests {
    /// A directory like a recording's: two WAVs, room.json, a nested file, a hidden file.
    static func makeRecording(_ label: String) throws -> URL {
        let dir = try TestScratch.directory(label)
        try Data((0..<96_044).map { UInt8(truncatingIfNeeded: $0) }).write(to: dir.appendingPathComponent("alice.wav"))
        try Data((0..<50_000).map { UInt8(truncatingIfNeeded: $0 &* 3) }).write(
            to: dir.appendingPathComponent("bob.wav"))
        try Data("{\"state\":\"complete\"}\n".utf8).write(to: dir.appendingPathComponent("room.json"))
        try FileManager.default.createDirectory(
            at: dir.appendingPathComponent("extra"), withIntermediateDirectories: true)
        try Data("x".utf8).write(to: dir.appendingPathComponent("extra/notes.txt"))
        try Data("hidden".utf8).write(to: dir.appendingPathComponent(".hidden"))
        return dir
    }

    @Test func uploadsEveryFileThenASecondRunUploadsNothing() throws {
        let server = try S3TestServer()
        let dir = try Self.makeRecording("uploader")
        let destination = try S3Location(parsing: "s3://\(server.bucket)/rooms/r1")
        let uploader = RecordingUploader(client: server.client(), directory: dir.path, destination: destination)
        let first = try uploader.run()
        #expect(first.uploaded == ["alice.wav", "bob.wav", "extra/notes.txt", "room.json"], "room.json last")
        #expect(first.failed.isEmpty && first.bytesSent == 96_044 + 50_000 + 1 + 21)
        let listed = try server.client().list(bucket: server.bucket, prefix: "rooms/r1/")
        #expect(
            listed.map(\.key).sorted()
                == ["alice.wav", "bob.wav", "extra/notes.txt", "room.json"].map { "rooms/r1/\($0)" })
        #expect(listed.first { $0.key == "rooms/r1/alice.wav" }?.size == 96_044)
        let journal = try #require(UploadJournal.read(directory: dir.path))
        #expect(journal.counts.uploaded == 4 && journal.counts.pending == 0 && journal.counts.failed == 0)
        #expect(journal.destination == "s3://\(server.bucket)/rooms/r1")

        let second = try uploader.run()
        #expect(second.uploaded.isEmpty && second.bytesSent == 0)
        #expect(second.alreadyThere.count == 4)

        // A file changed locally goes up again; the others do not.
        try Data("{\"state\":\"repaired\"}\n".utf8).write(to: dir.appendingPathComponent("room.json"))
        let third = try uploader.run()
        #expect(third.uploaded == ["room.json"])
        let back = dir.appendingPathComponent("room-back.json").path
        try server.client().download(bucket: server.bucket, key: "rooms/r1/room.json", to: back)
        #expect(try String(contentsOfFile: back, encoding: .utf8) == "{\"state\":\"repaired\"}\n")
    }

    @Test func deleteLocalRemovesOnlyVerifiedFiles() throws {
        let server = try S3TestServer()
        let dir = try Self.makeRecording("deletelocal")
        let destination = try S3Location(parsing: "s3://\(server.bucket)/del")
        let summary = try RecordingUploader(
            client: server.client(), directory: dir.path, destination: destination,
            options: .init(deleteLocal: true)
        ).run()
        #expect(summary.deletedLocal.sorted() == ["alice.wav", "bob.wav", "extra/notes.txt", "room.json"])
        #expect(try listing(dir) == [".hidden", "extra", UploadJournal.fileName])
        #expect(try server.client().list(bucket: server.bucket, prefix: "del/").count == 4)
        let journal = try #require(UploadJournal.read(directory: dir.path))
        #expect(journal.files.values.allSatisfy { $0.deletedLocal && $0.state == .uploaded })
    }

    @Test func aWrongSecretStopsAtOnceAndTouchesNothing() throws {
        let server = try S3TestServer()
        let dir = try Self.makeRecording("uploadwrong")
        var configuration = server.configuration
        configuration.credentials = S3Credentials(accessKeyID: server.accessKey, secretAccessKey: "nope")
        let before = try listing(dir)
        let alice = try Data(contentsOf: dir.appendingPathComponent("alice.wav"))
        let error = try #require(throws: S3Error.self) {
            try RecordingUploader(
                client: S3Client(configuration: configuration, retry: RetryPolicy(attempts: 1)), directory: dir.path,
                destination: try S3Location(parsing: "s3://\(server.bucket)/w"), options: .init(deleteLocal: true)
            ).run()
        }
        #expect(error.kind == .signatureMismatch)
        #expect(try listing(dir) == before)
        #expect(try Data(contentsOf: dir.appendingPathComponent("alice.wav")) == alice)
        #expect(try server.client().list(bucket: server.bucket, prefix: "w/").isEmpty)
    }

    func listing(_ dir: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
    }
}
