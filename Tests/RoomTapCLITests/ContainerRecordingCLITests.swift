import Foundation
import RoomTapAll
import RoomTapCLITestSupport
import RoomTapMediaTestSupport
import RoomTapRTPTestSupport
import Testing

/// Runs ffmpeg (quiet) and requires it to succeed.
func ffmpeg(_ arguments: [String]) throws {
    let outcome = try CLIRunner.run(
        ["-hide_banner", "-loglevel", "error", "-y"] + arguments, timeout: 60,
        executable: URL(fileURLWithPath: "/usr/bin/ffmpeg"))
    #expect(outcome.status == 0, "ffmpeg \(arguments.joined(separator: " ")): \(outcome.stderr)")
}

let needsFFmpeg = Testing.ConditionTrait.enabled(
    if: FileManager.default.isExecutableFile(atPath: "/usr/bin/ffmpeg"),
    "ffmpeg is not installed (/usr/bin/ffmpeg); make deps installs it")

/// The tracks of room.json by name.
func roomTracks(_ out: URL) throws -> [String: [String: Any]] {
    let tracks = try #require(try roomJSON(out)["tracks"] as? [[String: Any]])
    return Dictionary(uniqueKeysWithValues: tracks.compactMap { t in (t["name"] as? String).map { ($0, t) } })
}

/// The samples of DIR/NAME.wav.
func wav(_ out: URL, _ name: String) throws -> [Int16] {
    try WAVFile.readSamples(path: out.appendingPathComponent("\(name).wav").path).samples
}

@Suite("CLI: WebM, Matroska and MP4 recordings in")
struct ContainerRecordingCLITests {
    /// A Jitsi-style multitrack Matroska made by ffmpeg from the sample room (packets copied, carol
    /// 2.5 s later): a track per participant named from its track title, each file bit-identical
    /// to the Ogg path's WAV of the same packets at the same place.
    @Test(needsFFmpeg) func aMultiTrackMatroskaIsATrackPerParticipantExactToThePacket() throws {
        let work = try temporaryDirectory()
        let mka = work.appendingPathComponent("room.mka")
        try ffmpeg([
            "-i", sample("alice"), "-i", sample("bob"), "-itsoffset", "2.5", "-i", sample("carol"), "-map", "0",
            "-map", "1", "-map", "2", "-c", "copy", "-metadata:s:0", "title=alice", "-metadata:s:1", "title=bob",
            "-metadata:s:2", "title=carol", mka.path,
        ])
        let out = work.appendingPathComponent("mka")
        try roomtap(["record", "--file", "jitsi=\(mka.path)", "--mix", "--quiet", "--out", out.path], expect: 0)
        #expect(try listing(out) == ["jitsi-alice.wav", "jitsi-bob.wav", "jitsi-carol.wav", "mix.wav", "room.json"])
        let tracks = try roomTracks(out)
        let offsets = try ["alice", "bob", "carol"].map { name -> Int in
            let source = try #require(tracks["jitsi-\(name)"]?["source"] as? [String: Any])
            #expect(source["kind"] as? String == "matroska")
            return try #require(source["offsetSamples"] as? Int)
        }
        #expect(offsets[0] == 0 && offsets[1] == 0)
        // Matroska keeps milliseconds: carol's first block lands within 1 ms of 2.5 s.
        #expect(abs(offsets[2] - 120_000) <= 48, "carol at \(offsets[2])")

        let ogg = work.appendingPathComponent("ogg")
        try roomtap(
            [
                "record", "--file", "alice=\(sample("alice"))", "--file", "bob=\(sample("bob"))", "--file",
                "carol=\(sample("carol"))@\(String(format: "%.6f", Double(offsets[2]) / 48_000))", "--mix", "--quiet",
                "--out", ogg.path,
            ], expect: 0)
        for name in ["alice", "bob", "carol"] {
            let fromMKA = try wav(out, "jitsi-\(name)")
            let fromOgg = try wav(ogg, name)
            #expect(fromMKA.count == fromOgg.count, "\(name): \(fromMKA.count) vs \(fromOgg.count) samples")
            #expect(fromMKA == fromOgg, "\(name) differs from the Ogg path's WAV")
        }
        #expect(try wav(out, "mix") == wav(ogg, "mix"))
    }

    /// What MediaRecorder (WebM) and MP4 writers hold: the same packets as the Ogg file, so the
    /// same samples, the pre-skip and the trimmed end (DiscardPadding, MP4's edit list) included.
    @Test(needsFFmpeg, arguments: ["webm", "mp4"])
    func aSingleTrackFileIsBitIdenticalToTheOggPath(container: String) throws {
        let work = try temporaryDirectory()
        let file = work.appendingPathComponent("alice.\(container)")
        try ffmpeg(["-i", sample("alice"), "-c", "copy", file.path])
        let out = work.appendingPathComponent("out")
        try roomtap(
            ["record", "--file", "a=\(file.path)@1.25", "--file", "b=\(sample("bob"))", "-q", "-o", out.path], expect: 0
        )
        let ogg = work.appendingPathComponent("ogg")
        try roomtap(
            ["record", "--file", "a=\(sample("alice"))@1.25", "--file", "b=\(sample("bob"))", "-q", "-o", ogg.path],
            expect: 0)
        let fromFile = try wav(out, "a")
        #expect(fromFile.count == 60_000 + 432_000)
        #expect(fromFile == (try wav(ogg, "a")))
        #expect(
            try roomTracks(out)["a"]?["source"].flatMap { ($0 as? [String: Any])?["kind"] as? String }
                == (container == "mp4" ? "mp4" : "matroska"))
    }

    /// --align wallclock lines files up by their start tags (creation_time here); without it each
    /// file starts at the room's start.
    @Test(needsFFmpeg) func wallclockAlignmentLinesFilesUpByTheirStartTags() throws {
        let work = try temporaryDirectory()
        let first = work.appendingPathComponent("first.webm")
        let second = work.appendingPathComponent("second.webm")
        try ffmpeg([
            "-i", sample("alice"), "-c", "copy", "-metadata", "creation_time=2026-12-01T10:00:00.000000Z", first.path,
        ])
        try ffmpeg([
            "-i", sample("bob"), "-c", "copy", "-metadata", "creation_time=2026-12-01T10:00:02.500000Z", second.path,
        ])
        let aligned = work.appendingPathComponent("aligned")
        try roomtap(
            [
                "record", "--file", "a=\(second.path)", "--file", "b=\(first.path)", "--align", "wallclock", "-q", "-o",
                aligned.path,
            ], expect: 0)
        let tracks = try roomTracks(aligned)
        #expect((tracks["a"]?["source"] as? [String: Any])?["offsetSamples"] as? Int == 120_000)
        #expect((tracks["b"]?["source"] as? [String: Any])?["offsetSamples"] as? Int == 0)
        let start = try #require(roomStartTime(try roomJSON(aligned)))
        #expect(abs(start.timeIntervalSince1970 - 1_796_119_200) < 0.001, "\(start)")
        // The same packets 2.5 s later: bob's own file, moved.
        let plain = work.appendingPathComponent("plain")
        try roomtap(
            ["record", "--file", "a=\(second.path)", "--file", "b=\(first.path)", "-q", "-o", plain.path], expect: 0)
        let bob = try wav(plain, "a")
        let moved = try wav(aligned, "a")
        #expect(moved.count == 120_000 + 384_000)  // bob's 8 s end the room
        #expect(moved.count == 504_000 && Array(moved[120_000...]) == Array(bob[0..<384_000]))
        #expect(moved[0..<120_000].allSatisfy { $0 == 0 })
        // A file without a start tag cannot be placed on the wall clock.
        let untagged = work.appendingPathComponent("untagged.webm")
        try ffmpeg(["-i", sample("carol"), "-c", "copy", "-fflags", "+bitexact", untagged.path])
        let refused = try roomtap(
            [
                "record", "--file", "c=\(untagged.path)", "--align", "wallclock", "-o",
                work.appendingPathComponent("x").path,
            ],
            expect: 1)
        #expect(refused.stderrLines.count == 1 && refused.stderr.contains("no wall-clock start"), "\(refused.stderr)")
    }

    /// --align wallclock puts WebM files and Janus recordings on one wall clock; tracks without a
    /// title are NAME-1, NAME-2, ...
    @Test(needsFFmpeg) func wallclockAlignmentJoinsJanusRecordingsAndUntitledTracksAreNumbered() throws {
        let work = try temporaryDirectory()
        let u: Int64 = 1_796_070_494_461_418
        let packets = try #require(OggPacketDump(path: sample("alice"))).audioPackets
        let mjr = work.appendingPathComponent("alice.mjr")
        try Data(JanusRecordingBuilder.opus(packets, u: u).bytes()).write(to: mjr)
        // 1.5 s after the Janus recording's first packet: 2026-11-30T20:28:15.961418Z.
        let webm = work.appendingPathComponent("pair.webm")
        try ffmpeg([
            "-i", sample("bob"), "-i", sample("carol"), "-map", "0", "-map", "1", "-c", "copy", "-metadata",
            "creation_time=2026-11-30T20:28:15.961418Z", "-metadata:s:0", "title=", "-metadata:s:1", "title=",
            webm.path,
        ])
        let out = work.appendingPathComponent("out")
        try roomtap(
            [
                "record", "--file", "janus=\(mjr.path)", "--file", "pair=\(webm.path)", "--align", "wallclock", "-q",
                "-o", out.path,
            ], expect: 0)
        let tracks = try roomTracks(out)
        #expect(Set(tracks.keys) == ["janus", "pair-1", "pair-2"])
        for (name, offset) in [("janus", 0), ("pair-1", 72_000), ("pair-2", 72_000)] {
            #expect((tracks[name]?["source"] as? [String: Any])?["offsetSamples"] as? Int == offset, "\(name)")
        }
        let start = try #require(roomStartTime(try roomJSON(out)))
        #expect(abs(start.timeIntervalSince1970 - Double(u) / 1e6) < 0.001)
    }

    /// A Matroska file cut short (a killed recorder: its packets end long before the length its
    /// header declares) is refused unless --allow-truncated, which records what is there.
    @Test(needsFFmpeg) func aCutMatroskaIsRecordedOnlyWithAllowTruncated() throws {
        let work = try temporaryDirectory()
        let whole = work.appendingPathComponent("whole.mka")
        try ffmpeg(["-i", sample("alice"), "-c", "copy", whole.path])
        let cut = work.appendingPathComponent("cut.mka")
        try Data(contentsOf: whole).prefix(12_000).write(to: cut)
        let out = work.appendingPathComponent("out")
        let refused = try roomtap(["record", "--file", "a=\(cut.path)", "-o", out.path], expect: 1)
        #expect(refused.stderrLines.count == 1 && refused.stderr.contains("--allow-truncated"), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out.path))
        try roomtap(["record", "--file", "a=\(cut.path)", "--allow-truncated", "-q", "-o", out.path], expect: 0)
        let samples = try wav(out, "a")
        #expect(samples.count > 48_000 && samples.count < 432_000, "\(samples.count)")
        let ogg = try WAVFile.readSamples(path: try recordOgg(work)).samples
        #expect(Array(ogg.prefix(samples.count - 960)) == Array(samples.prefix(samples.count - 960)))
    }

    /// The Ogg path's alice.wav, for comparisons.
    func recordOgg(_ work: URL) throws -> String {
        let out = work.appendingPathComponent("ogg")
        try roomtap(["record", "--file", "alice=\(sample("alice"))", "-q", "-o", out.path], expect: 0)
        return out.appendingPathComponent("alice.wav").path
    }

    @Test(needsFFmpeg) func aFileWithoutOpusIsOneLineNamingWhatIsThere() throws {
        let work = try temporaryDirectory()
        let file = work.appendingPathComponent("tone.webm")
        try ffmpeg(["-f", "lavfi", "-i", "sine=f=440:d=1", "-c:a", "libvorbis", file.path])
        let out = work.appendingPathComponent("out")
        let outcome = try roomtap(["record", "--file", "t=\(file.path)", "-o", out.path], expect: 1)
        #expect(outcome.stderrLines.count == 1, "\(outcome.stderr)")
        #expect(outcome.stderr.contains("no Opus track") && outcome.stderr.contains("vorbis"), "\(outcome.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out.path))
        let usage = try roomtap(
            ["record", "--file", "t=\(file.path)", "--align", "sideways", "-o", out.path], expect: 64)
        #expect(usage.stderr.contains("--align must be file or wallclock"))
    }
}
