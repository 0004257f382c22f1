import Foundation
import RoomTapAll
import RoomTapCLITestSupport
import RoomTapStorage
import Testing

/// `roomtap record --sora-recording DIR`: folders in the shape Sora's recorder writes, built here
/// from the sample room's speakers (ffmpeg: libopus into WebM and MP4), recorded to a track per
/// connection, each its source at its place, every file the length of the whole recording.
@Suite("CLI: Sora recordings in (--sora-recording)")
struct SoraRecordingCLITests {
    static let alice = "CONNALICE0000000000000000A"
    static let bob = "CONNBOB0000000000000000000"
    static let carol = "CONNCAROL00000000000000000"
    static let dave = "CONNDAVE000000000000000000"

    /// The sora.connections entry of room.json for `id`.
    static func connection(_ json: [String: Any], _ id: String) throws -> [String: Any] {
        let sora = try #require(json["sora"] as? [String: Any])
        let connections = try #require(sora["connections"] as? [[String: Any]])
        return try #require(connections.first { $0["connectionID"] as? String == id })
    }

    /// A single WebM (named by metadata), a single MP4 (by client_id), a split WebM recording with
    /// a gap (by connection id) and a JSON whose media is missing: each track is its source at its
    /// place (by start_timestamp, to the microsecond), silent elsewhere; every file has the length
    /// of the whole recording; the missing media is a warning and a silent track.
    @Test(needsFFmpeg) func aSoraFolderIsATrackPerConnectionEachAtItsPlace() throws {
        let work = try temporaryDirectory()
        let alice = try SoraFolderBuilder.source("alice", in: work)
        let bob = try SoraFolderBuilder.source("bob", in: work)
        let carol = try SoraFolderBuilder.source("carol", in: work)
        var folder = try SoraFolderBuilder(work.appendingPathComponent("recording"))
        // Places in samples, multiples of 6 (whole microseconds).
        let bobAt = 112_590  // 2.345625 s
        let carolPieces = [(range: 0..<96_000, start: 57_606), (range: 96_000..<carol.samples.count, start: 312_000)]
        try folder.single(
            Self.alice, client: "alice-client", metadata: ["display_name": "Alice"], source: alice.path,
            0..<alice.samples.count, at: 0)
        try folder.single(Self.bob, client: "bob", format: "mp4", source: bob.path, 0..<bob.samples.count, at: bobAt)
        try folder.split(Self.carol, source: carol.path, pieces: carolPieces)
        try folder.single(Self.dave, client: "dave", source: alice.path, 0..<48_000, at: 48_000, writeMedia: false)
        try folder.writeReport()

        let out = work.appendingPathComponent("out")
        let run = try roomtap(
            [
                "record", "--sora-recording", folder.directory.path, "--sora-name-key", "display_name", "--mix",
                "--quiet", "--out", out.path,
            ], expect: 0)
        #expect(
            try listing(out)
                == ["Alice.wav", "bob.wav", "\(Self.carol).wav", "dave.wav", "mix.wav", "room.json"].sorted())
        // One warning: dave's media.
        #expect(run.stderrLines.count == 1, "\(run.stderr)")
        #expect(
            run.stderr.contains("warning: --sora-recording") && run.stderr.contains("track dave")
                && run.stderr.contains("archive-\(Self.dave).webm is missing"), "\(run.stderr)")

        let tracks = try ["Alice", "bob", Self.carol, "dave", "mix"].map { try wav(out, $0) }
        let carolEnd = carolPieces[1].start + carolPieces[1].range.count
        let end = max(alice.samples.count, bobAt + bob.samples.count, carolEnd)
        for track in tracks {
            #expect(track.count == tracks[0].count, "every file the same length")
            #expect(track.count >= end && track.count < end + 480, "\(track.count) samples for an end at \(end)")
        }
        var measured: [String] = []
        func check(_ name: String, _ source: ArraySlice<Int16>, _ track: [Int16], at offset: Int) {
            let (correlation, lag) = alignment(of: source, in: track, at: offset)
            measured.append(
                String(format: "%@ at %d: correlation %.4f, lag %d samples", name, offset, correlation, lag))
            #expect(correlation > 0.9, "\(name): correlation \(correlation) with its source at \(offset)")
            #expect(abs(lag) <= 48, "\(name): \(lag) samples from its place \(offset)")
        }
        check("alice", alice.samples[...], tracks[0], at: 0)
        check("bob", bob.samples[...], tracks[1], at: bobAt)
        check("carol-1", carol.samples[carolPieces[0].range], tracks[2], at: carolPieces[0].start)
        check("carol-2", carol.samples[carolPieces[1].range], tracks[2], at: carolPieces[1].start)
        print("sora placement: " + measured.joined(separator: "; "))
        // Silence where a speaker is absent: bob before his start, carol before, in her gap, after.
        #expect(tracks[1][0..<bobAt].allSatisfy { $0 == 0 })
        #expect(tracks[2][0..<carolPieces[0].start].allSatisfy { $0 == 0 })
        #expect(tracks[2][(carolPieces[0].start + 96_000 + 480)..<carolPieces[1].start].allSatisfy { $0 == 0 })
        #expect(tracks[2][(carolEnd + 480)...].allSatisfy { $0 == 0 })
        #expect(tracks[3].allSatisfy { $0 == 0 }, "dave's media is missing: his track is silence")

        let json = try roomJSON(out)
        let start = try #require(roomStartTime(json))
        #expect(abs(start.timeIntervalSince1970 - Double(SoraFolderBuilder.origin) / 1e6) < 0.001)
        let room = try roomTracks(out)
        #expect((room["bob"]?["source"] as? [String: Any])?["kind"] as? String == "sora-recording")
        let sora = try #require(json["sora"] as? [String: Any])
        #expect(sora["recordingID"] as? String == folder.recordingID)
        #expect(sora["startFrom"] as? String == "archives")
        let bobFile = try #require((try Self.connection(json, Self.bob)["files"] as? [[String: Any]])?.first)
        #expect(bobFile["placedBy"] as? String == "start_timestamp")
        #expect(bobFile["precisionSeconds"] as? Double == 0.000001)
        #expect(bobFile["offsetSamples"] as? Int == bobAt)
        #expect(try Self.connection(json, Self.alice)["track"] as? String == "Alice")
        #expect(try Self.connection(json, Self.alice)["clientID"] as? String == "alice-client")
        let carolFiles = try #require(try Self.connection(json, Self.carol)["files"] as? [[String: Any]])
        #expect(carolFiles.map { $0["splitIndex"] as? Int } == [1, 2])
        #expect(carolFiles.map { $0["offsetSamples"] as? Int } == carolPieces.map(\.start))
        let daveFile = try #require((try Self.connection(json, Self.dave)["files"] as? [[String: Any]])?.first)
        #expect(daveFile["used"] as? Bool == false)
        #expect((daveFile["problem"] as? String)?.contains("is missing") == true)
    }

    /// Where a Sora file holds the same packets as an Ogg file (ffmpeg -c copy into WebM and MP4),
    /// its track is that file's samples exactly, at the place its start_timestamp gives against
    /// the report's start_timestamp: the same samples as `--file NAME=FILE.opus@SECONDS`.
    @Test(needsFFmpeg, arguments: ["webm", "mp4"])
    func aFileHoldingTheSamePacketsIsExactToTheSample(format: String) throws {
        let work = try temporaryDirectory("exact-\(format)")
        var folder = try SoraFolderBuilder(work.appendingPathComponent("recording"))
        let at = 59_250  // 1.234375 s
        let media = "archive-\(Self.alice).\(format)"
        try ffmpeg(["-i", sample("alice"), "-c", "copy", folder.directory.appendingPathComponent(media).path])
        var json = folder.archiveJSON(
            Self.alice, client: "alice", metadata: nil, format: format, start: at, length: 432_000, media: media)
        // The report's start is 2 s before the archives' clock says: the report wins.
        json["start_timestamp"] = SoraFolderBuilder.timestamp(Int64(at) * 1000 / 48 + 2_000_000)
        json["start_time_offset"] = 1
        try folder.write(json, to: "archive-\(Self.alice).json")
        folder.reportArchives = [["connection_id": Self.alice, "metadata_filename": "archive-\(Self.alice).json"]]
        try folder.writeReport(startTimestamp: 2_000_000)
        let out = work.appendingPathComponent("sora")
        try roomtap(["record", "--sora-recording", folder.directory.path, "-q", "-o", out.path], expect: 0)
        let ogg = work.appendingPathComponent("ogg")
        try roomtap(["record", "--file", "alice=\(sample("alice"))@1.234375", "-q", "-o", ogg.path], expect: 0)
        let track = try wav(out, "alice")
        #expect(track.count >= 59_250 + 432_000 && track.count < 59_250 + 432_000 + 480, "\(track.count) samples")
        #expect(track == (try wav(ogg, "alice")), "the Ogg path's samples, at the same sample")
        let json2 = try roomJSON(out)
        let sora = try #require(json2["sora"] as? [String: Any])
        #expect(sora["startFrom"] as? String == "report")
        #expect(sora["startTimestamp"] as? String == "2026-12-01T10:00:02.000000Z")
        let file = try #require((try Self.connection(json2, Self.alice)["files"] as? [[String: Any]])?.first)
        #expect(file["placedBy"] as? String == "start_timestamp" && file["offsetSamples"] as? Int == at)
    }

    /// Dual output (the same audio in a single file and in split pieces) is taken once: the track
    /// is exactly the single file's; without the single file's media, the pieces make the track.
    @Test(needsFFmpeg) func dualOutputIsTakenOnce() throws {
        let work = try temporaryDirectory()
        let alice = try SoraFolderBuilder.source("alice", in: work)
        let bob = try SoraFolderBuilder.source("bob", in: work)
        var folder = try SoraFolderBuilder(work.appendingPathComponent("dual"))
        let at = 24_000
        try folder.single(Self.alice, client: "alice", source: alice.path, 0..<alice.samples.count, at: at)
        try folder.split(
            Self.alice, client: "alice", source: alice.path,
            pieces: [(0..<200_000, at), (200_000..<alice.samples.count, at + 200_000)], listed: false)
        try folder.single(Self.bob, client: "bob", source: bob.path, 0..<bob.samples.count, at: 0)
        try folder.writeReport()
        // The single file alone: the reference.
        var only = try SoraFolderBuilder(work.appendingPathComponent("single"))
        try FileManager.default.copyItem(
            at: folder.directory.appendingPathComponent("archive-\(Self.alice).webm"),
            to: only.directory.appendingPathComponent("archive-\(Self.alice).webm"))
        try only.single(
            Self.alice, client: "alice", source: alice.path, 0..<alice.samples.count, at: at, writeMedia: false)
        try FileManager.default.copyItem(
            at: folder.directory.appendingPathComponent("archive-\(Self.bob).webm"),
            to: only.directory.appendingPathComponent("archive-\(Self.bob).webm"))
        try only.single(Self.bob, client: "bob", source: bob.path, 0..<bob.samples.count, at: 0, writeMedia: false)
        try only.writeReport()

        let out = work.appendingPathComponent("out")
        let run = try roomtap(["record", "--sora-recording", folder.directory.path, "-q", "-o", out.path], expect: 0)
        #expect(run.stderr.isEmpty, "\(run.stderr)")
        let reference = work.appendingPathComponent("reference")
        try roomtap(["record", "--sora-recording", only.directory.path, "-q", "-o", reference.path], expect: 0)
        #expect(try wav(out, "alice") == wav(reference, "alice"), "dual output: the single file's audio, once")
        let files = try #require(try Self.connection(try roomJSON(out), Self.alice)["files"] as? [[String: Any]])
        #expect(files.map { $0["used"] as? Bool } == [true, false, false])
        #expect(files.dropFirst().allSatisfy { ($0["note"] as? String)?.contains("dual output") == true })

        // The single file's media lost: the split pieces hold the same audio.
        try FileManager.default.removeItem(at: folder.directory.appendingPathComponent("archive-\(Self.alice).webm"))
        let pieces = work.appendingPathComponent("pieces")
        let warned = try roomtap(
            ["record", "--sora-recording", folder.directory.path, "-q", "-o", pieces.path], expect: 0)
        #expect(warned.stderrLines.count == 1 && warned.stderr.contains("is missing"), "\(warned.stderr)")
        let track = try wav(pieces, "alice")
        #expect(track.count == (try wav(pieces, "bob")).count)
        for (range, start) in [(0..<200_000, at), (200_000..<alice.samples.count, at + 200_000)] {
            let (correlation, lag) = alignment(of: alice.samples[range], in: track, at: start)
            #expect(correlation > 0.9 && abs(lag) <= 48, "piece at \(start): \(correlation), lag \(lag)")
        }
    }

    /// Whole seconds only (no start_timestamp): files at start_time_offset; a split piece whose
    /// predecessor ends within its second follows it without a gap.
    @Test(needsFFmpeg) func wholeSecondOffsetsPlaceFilesAndSplitPiecesFollowOn() throws {
        let work = try temporaryDirectory()
        let carol = try SoraFolderBuilder.source("carol", in: work)
        var folder = try SoraFolderBuilder(work.appendingPathComponent("seconds"))
        // Piece 1: 1.0 s to 2.5 s; piece 2 from 2.5 s (its JSON says 2).
        try folder.split(
            Self.carol, client: "carol", source: carol.path,
            pieces: [(0..<72_000, 48_000), (72_000..<carol.samples.count, 120_000)], timestamps: false)
        try folder.writeReport(splitOnly: true)
        let out = work.appendingPathComponent("out")
        try roomtap(["record", "--sora-recording", folder.directory.path, "-q", "-o", out.path], expect: 0)
        let track = try wav(out, "carol")
        for (range, start) in [(0..<72_000, 48_000), (72_000..<carol.samples.count, 120_000)] {
            let (correlation, lag) = alignment(of: carol.samples[range], in: track, at: start)
            #expect(correlation > 0.9 && abs(lag) <= 48, "piece at \(start): \(correlation), lag \(lag)")
        }
        let files = try #require(try Self.connection(try roomJSON(out), Self.carol)["files"] as? [[String: Any]])
        #expect(files.map { $0["placedBy"] as? String } == ["start_time_offset", "start_time_offset+previous_split"])
        #expect(files.map { $0["precisionSeconds"] as? Double } == [1, 1])
    }

    /// Faults stay with their track: unreadable media, media cut short, a report naming a file that
    /// is not there, a JSON that is not an archive's; each a warning line and in room.json, the
    /// other tracks recorded.
    @Test(needsFFmpeg) func faultsStayWithTheirTrack() throws {
        let work = try temporaryDirectory()
        let alice = try SoraFolderBuilder.source("alice", in: work)
        var folder = try SoraFolderBuilder(work.appendingPathComponent("faults"))
        try folder.single(Self.alice, client: "alice", source: alice.path, 0..<alice.samples.count, at: 0)
        // bob: not a WebM at all.
        try folder.single(Self.bob, client: "bob", source: alice.path, 0..<48_000, at: 0, writeMedia: false)
        try Data(repeating: 0x5A, count: 4096).write(
            to: folder.directory.appendingPathComponent("archive-\(Self.bob).webm"))
        // carol: her WebM cut in half.
        let media = try folder.single(Self.carol, client: "carol", source: alice.path, 0..<240_000, at: 48_000)
        let path = folder.directory.appendingPathComponent(media)
        let whole = try Data(contentsOf: path)
        try whole.prefix(whole.count / 2).write(to: path)
        // dave: a JSON that is not JSON.
        try Data("{\"connection_id\": ".utf8).write(
            to: folder.directory.appendingPathComponent("archive-\(Self.dave).json"))
        // eve: a start_timestamp 30 s away from its start_time_offset (1 s) is not believed.
        try folder.single("EVE", client: "eve", source: alice.path, 0..<48_000, at: 48_000)
        var eve = folder.archiveJSON(
            "EVE", client: "eve", metadata: nil, format: "webm", start: 48_000, length: 48_000,
            media: "archive-EVE.webm")
        eve["start_timestamp"] = SoraFolderBuilder.timestamp(30_000_000)
        try folder.write(eve, to: "archive-EVE.json")
        // The report names an archive that is not in the folder.
        folder.reportArchives.append(["connection_id": "GHOST", "metadata_filename": "archive-GHOST.json"])
        try folder.writeReport()
        let before = try listing(folder.directory)

        let out = work.appendingPathComponent("out")
        let run = try roomtap(["record", "--sora-recording", folder.directory.path, "-q", "-o", out.path], expect: 0)
        let lines = run.stderrLines
        #expect(lines.count == 5, "\(run.stderr)")
        #expect(lines.allSatisfy { $0.hasPrefix("roomtap: warning: --sora-recording ") })
        #expect(lines.contains { $0.contains("track bob") && $0.contains("cannot read the file") })
        #expect(lines.contains { $0.contains("track carol") && $0.contains("cut short") })
        #expect(lines.contains { $0.contains("track \(Self.dave)") && $0.contains("not an archive JSON") })
        #expect(lines.contains { $0.contains("track GHOST") && $0.contains("archive-GHOST.json, which is not in") })
        #expect(lines.contains { $0.contains("track eve") && $0.contains("placed by start_time_offset") })
        #expect(try listing(folder.directory) == before, "the recording's folder is left as it was")

        let names = ["alice", "bob", "carol", Self.dave, "GHOST", "eve"]
        #expect(try listing(out) == (names.map { "\($0).wav" } + ["room.json"]).sorted())
        let tracks = try names.map { try wav(out, $0) }
        #expect(Set(tracks.map(\.count)).count == 1, "every file the same length")
        #expect(alignment(of: alice.samples[...], in: tracks[0], at: 0).correlation > 0.9)
        #expect(
            tracks[1].allSatisfy { $0 == 0 } && tracks[3].allSatisfy { $0 == 0 } && tracks[4].allSatisfy { $0 == 0 })
        #expect(abs(alignment(of: alice.samples[0..<48_000], in: tracks[5], at: 48_000).lag) <= 48, "eve at 1 s")
        // What the cut file holds is recorded, from its place.
        #expect(tracks[2][0..<48_000].allSatisfy { $0 == 0 } && tracks[2][48_000..<96_000].contains { $0 != 0 })
        let json = try roomJSON(out)
        let carolFile = try #require((try Self.connection(json, Self.carol)["files"] as? [[String: Any]])?.first)
        #expect(carolFile["cut"] as? Bool == true && carolFile["used"] as? Bool == true)
        #expect(((try Self.connection(json, "GHOST"))["problems"] as? [String])?.count == 1)
    }

    /// A folder that is not a Sora recording, or whose audio cannot be read at all: one line,
    /// exit 1, --out not made.
    @Test(needsFFmpeg) func aFolderThatIsNotASoraRecordingIsOneLine() throws {
        let work = try temporaryDirectory()
        let empty = work.appendingPathComponent("empty")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        let other = work.appendingPathComponent("other")
        try FileManager.default.createDirectory(at: other, withIntermediateDirectories: true)
        try Data("hello".utf8).write(to: other.appendingPathComponent("notes.json"))
        try FileManager.default.copyItem(atPath: sample("alice"), toPath: other.appendingPathComponent("a.opus").path)
        var lost = try SoraFolderBuilder(work.appendingPathComponent("lost"))
        try lost.single(Self.alice, client: "alice", source: sample("alice"), 0..<48_000, at: 0, writeMedia: false)
        try lost.writeReport()
        let file = work.appendingPathComponent("file.json")
        try Data("{}".utf8).write(to: file)
        let cases: [(URL, String)] = [
            (empty, "not a Sora recording"), (other, "not a Sora recording"),
            (work.appendingPathComponent("missing"), "cannot read the directory"), (file, "cannot read the directory"),
            (lost.directory, "no audio of this Sora recording can be read"),
        ]
        for (directory, expected) in cases {
            let out = work.appendingPathComponent("out")
            let run = try roomtap(["record", "--sora-recording", directory.path, "-o", out.path], expect: 1)
            #expect(run.stderrLines.count == 1 && run.stderr.contains(expected), "\(directory.path): \(run.stderr)")
            #expect(run.stderr.hasPrefix("roomtap: error: --sora-recording \(directory.path): "), "\(run.stderr)")
            #expect(!FileManager.default.fileExists(atPath: out.path), "no --out for \(directory.lastPathComponent)")
        }
        let usage = try roomtap(
            ["record", "--sora-name-key", "x", "-o", work.appendingPathComponent("o").path], expect: 64)
        #expect(usage.stderr.contains("--sora-name-key x names the tracks of --sora-recording"), "\(usage.stderr)")
    }

    /// Names: --sora-name-key, then client_id, then the connection id; made unique and safe as file
    /// names; room.json keeps the ids.
    @Test(needsFFmpeg) func tracksAreNamedByMetadataClientIDOrConnectionID() throws {
        let work = try temporaryDirectory()
        let carol = try SoraFolderBuilder.source("carol", in: work)
        var folder = try SoraFolderBuilder(work.appendingPathComponent("names"))
        try folder.single(
            "C1", client: "same", metadata: ["name": "../../etc/x\nY"], source: carol.path, 0..<48_000, at: 0)
        try folder.single("C2", client: "same", source: carol.path, 0..<48_000, at: 0)
        try folder.single("C3", client: "Same", metadata: ["name": 42], source: carol.path, 0..<48_000, at: 0)
        try folder.single("C4", source: carol.path, 0..<48_000, at: 0)
        try folder.single("C5", client: "same", source: carol.path, 0..<48_000, at: 0)
        try folder.writeReport()
        let out = work.appendingPathComponent("out")
        try roomtap(
            ["record", "--sora-recording", folder.directory.path, "--sora-name-key", "name", "-q", "-o", out.path],
            expect: 0)
        #expect(
            try listing(out) == ["42.wav", "C4.wav", "_.._.._etc_xY.wav", "room.json", "same-2.wav", "same.wav"])
        let json = try roomJSON(out)
        #expect(
            try ["C1", "C2", "C3", "C4", "C5"].map { try Self.connection(json, $0)["track"] as? String } == [
                "../../etc/xY", "same", "42", "C4", "same-2",
            ])
    }

    /// `--sora-recording s3://BUCKET/PREFIX` (sora-archive-uploader's `<recording_id>/` layout)
    /// records the same bytes as the local folder; room.json names the URL; the download is removed.
    @Test(needsFFmpeg) func aSoraRecordingInS3RecordsTheSameBytes() throws {
        let server = try S3TestServer()
        let work = try temporaryDirectory()
        let carol = try SoraFolderBuilder.source("carol", in: work)
        var folder = try SoraFolderBuilder(work.appendingPathComponent("local-recording"))
        try folder.single(Self.alice, client: "alice", source: carol.path, 0..<96_000, at: 30_000)
        try folder.split(Self.carol, client: "carol", source: carol.path, pieces: [(96_000..<144_000, 150_000)])
        try folder.writeReport()
        let client = server.client()
        let prefix = "recordings/\(folder.recordingID)"
        for name in try listing(folder.directory) {
            try client.upload(
                file: folder.directory.appendingPathComponent(name).path, bucket: server.bucket,
                key: "\(prefix)/\(name)")
        }
        let tmp = work.appendingPathComponent("tmp")
        try FileManager.default.createDirectory(at: tmp, withIntermediateDirectories: true)
        let local = work.appendingPathComponent("local")
        try roomtap(["record", "--sora-recording", folder.directory.path, "-q", "-o", local.path], expect: 0)
        let url = "s3://\(server.bucket)/\(prefix)"
        let remote = work.appendingPathComponent("remote")
        let outcome = InProcessCLI.run(
            ["record", "--sora-recording", url, "-q", "-o", remote.path],
            environment: server.environment().merging(["TMPDIR": tmp.path]) { _, b in b })
        #expect(outcome.status == 0 && outcome.stderr.isEmpty, "\(outcome.stderr)")
        #expect(try listing(remote) == ["alice.wav", "carol.wav", "room.json"])
        for name in ["alice", "carol"] {
            #expect(try wav(remote, name) == wav(local, name), "\(name): the same samples as the local folder")
        }
        let sora = try #require(try roomJSON(remote)["sora"] as? [String: Any])
        #expect(sora["folder"] as? String == url)
        #expect((try roomTracks(remote)["alice"]?["source"] as? [String: Any])?["path"] as? String == url)
        #expect(try listing(tmp).isEmpty, "the download is removed")
    }
}
