import Foundation
import RoomTapAll
import RoomTapCLITestSupport
import RoomTapMediaTestSupport
import RoomTapRTPTestSupport
import RoomTapTestSupport
import Testing

/// The files a recording can be written as (issue 13, "Out"): FLAC decoded back by `flac` is the
/// WAV bit for bit, Ogg Opus decoded by `opusdec` has the WAV's length and sound, `--rate 16000`
/// is sox's resampling of the 48 kHz file, a killed FLAC recording decodes, loudness agrees with
/// ffmpeg's EBU R 128 meter, and `export` cooks a finished recording without overwriting anything.
@Suite("CLI: output formats, rates, loudness, export", .serialized)
struct OutputFormatTests {
    /// The sample room's three speakers, 48 kHz WAV, once per test process.
    static let wavRoom: URL = {
        let out = try! temporaryDirectory("wavRoom")
        _ = InProcessCLI.run(
            [
                "record", "--file", "alice=\(sample("alice"))", "--file", "bob=\(sample("bob"))@2.5",
                "--file", "carol=\(sample("carol"))@5", "--mix", "--out", out.path, "--quiet",
            ])
        return out
    }()

    static let speakers = ["alice", "bob", "carol"]

    func record(_ extra: [String], _ label: String = #function) throws -> URL {
        let out = try temporaryDirectory(label)
        try roomtap(
            [
                "record", "--file", "alice=\(sample("alice"))", "--file", "bob=\(sample("bob"))@2.5",
                "--file", "carol=\(sample("carol"))@5", "--mix", "--out", out.path, "--quiet",
            ] + extra, expect: 0)
        return out
    }

    func samples(_ path: String) throws -> [Int16] { try WAVFile.readSamples(path: path).samples }

    func tool(_ name: String, _ arguments: [String]) throws -> String {
        let path = try #require(WAVFixtures.tool(name), "\(name) is not installed; make deps installs it")
        let (status, output) = try WAVFixtures.run(path, arguments)
        #expect(status == 0, "\(name) \(arguments.joined(separator: " ")): \(output)")
        return output
    }

    /// `--format flac`: every file (speakers and mix) decoded by `flac -d` equals the WAV of the
    /// same room sample for sample; STREAMINFO states the length; the Vorbis comments carry the
    /// start (TIME_REFERENCE, the room's start time); room.json names the files and their format.
    @Test func flacDecodesBitExactWithTheWAV() throws {
        let out = try record(["--format", "flac"])
        for name in Self.speakers + ["mix"] {
            let flac = out.appendingPathComponent("\(name).flac").path
            let decoded = out.appendingPathComponent("\(name)-decoded.wav").path
            _ = try tool("flac", ["-s", "-d", flac, "-o", decoded])
            let reference = try samples(Self.wavRoom.appendingPathComponent("\(name).wav").path)
            let back = try samples(decoded)
            #expect(back.count == reference.count && back == reference, "\(name).flac is the WAV, bit for bit")
            let total = try tool("metaflac", ["--show-total-samples", flac])
            #expect(Int(total.trimmingCharacters(in: .whitespacesAndNewlines)) == reference.count)
            let tags = try tool("metaflac", ["--export-tags-to=-", flac])
            #expect(tags.contains("TITLE=roomtap track \(name)") && tags.contains("TIME_REFERENCE="))
            #expect(tags.contains("ROOMTAP_START_TIME="), "\(tags)")
        }
        let json = try roomJSON(out)
        let tracks = try #require(json["tracks"] as? [[String: Any]])
        #expect(Set(tracks.compactMap { $0["file"] as? String }) == Set((Self.speakers + ["mix"]).map { "\($0).flac" }))
        #expect(tracks.allSatisfy { $0["format"] as? String == "flac" })
    }

    /// `--format opus --bitrate 64000`: `opusdec` gives back exactly the WAV's length (pre-skip and
    /// the last granule right), correlating >= 0.95 with it, sample-aligned (no lag).
    @Test func opusDecodesToTheWAVsLengthAndSound() throws {
        let out = try record(["--format", "opus", "--bitrate", "64000"])
        for name in Self.speakers + ["mix"] {
            let decoded = out.appendingPathComponent("\(name)-decoded.wav").path
            _ = try tool(
                "opusdec", ["--quiet", "--rate", "48000", out.appendingPathComponent("\(name).opus").path, decoded])
            let reference = try samples(Self.wavRoom.appendingPathComponent("\(name).wav").path)
            let back = try samples(decoded)
            #expect(back.count == reference.count, "\(name).opus decodes to \(back.count), not \(reference.count)")
            let r = correlation(back, reference)
            #expect(r >= 0.95, "\(name).opus correlates \(r) with the WAV")
        }
        let info = try tool("opusinfo", [out.appendingPathComponent("alice.opus").path])
        #expect(info.contains("ROOMTAP_START_TIME="), "the start time is in OpusTags")
    }

    /// `--rate 16000`: every file is the room's length / 3 exactly, and correlates >= 0.999 with
    /// sox's own resampling of the 48 kHz WAV (same alignment). Also at 8, 24 and 44.1 kHz (FLAC,
    /// decoded by flac): exact lengths.
    @Test func rate16000IsSoxsResamplingOfTheRoom() throws {
        let out = try record(["--rate", "16000"])
        for name in Self.speakers + ["mix"] {
            let file = out.appendingPathComponent("\(name).wav").path
            let (info, ours) = try WAVFile.readSamples(path: file)
            #expect(info.sampleRate == 16_000)
            let reference48 = Self.wavRoom.appendingPathComponent("\(name).wav").path
            let soxed = out.appendingPathComponent("\(name)-sox.wav").path
            _ = try tool("sox", [reference48, "-r", "16000", soxed])
            let theirs = try samples(soxed)
            let length48 = try samples(reference48).count
            #expect(ours.count * 3 == length48, "\(name): \(ours.count) samples at 16 kHz for \(length48) at 48")
            #expect(ours.count == theirs.count)
            let r = correlation(ours, theirs)
            #expect(r >= 0.999, "\(name): correlation \(r) with sox")
        }
        for rate in [8_000, 24_000, 44_100] {
            let other = try record(["--rate", String(rate), "--format", "flac"], "rate\(rate)")
            let decoded = other.appendingPathComponent("a.wav").path
            _ = try tool("flac", ["-s", "-d", other.appendingPathComponent("alice.flac").path, "-o", decoded])
            let (info, back) = try WAVFile.readSamples(path: decoded)
            #expect(info.sampleRate == rate && back.count == 504_000 * rate / 48_000)
        }
    }

    /// `--loudness`: each track's integrated loudness in room.json is within 0.1 LU of
    /// `ffmpeg -af ebur128` on the same WAV, its true peak within 0.2 dB.
    @Test func loudnessAgreesWithFFmpegsEBUR128() throws {
        let out = try record(["--loudness"])
        let tracks = try #require(try roomJSON(out)["tracks"] as? [[String: Any]])
        for track in tracks {
            let name = try #require(track["file"] as? String)
            let loudness = try #require(track["loudness"] as? [String: Any], "\(name) has loudness")
            let ours = try #require(loudness["integratedLUFS"] as? Double)
            let peak = try #require(loudness["truePeakDBTP"] as? Double)
            let (lufs, truePeak) = try ffmpegLoudness(out.appendingPathComponent(name).path)
            #expect(abs(ours - lufs) <= 0.1, "\(name): \(ours) LUFS, ffmpeg \(lufs)")
            #expect(abs(peak - truePeak) <= 0.2, "\(name): \(peak) dBTP, ffmpeg \(truePeak)")
        }
    }

    func ffmpegLoudness(_ path: String) throws -> (Double, Double) {
        let output = try tool(
            "ffmpeg", ["-hide_banner", "-nostats", "-i", path, "-af", "ebur128=peak=true", "-f", "null", "-"])
        let summary = try #require(output.range(of: "Summary:")).upperBound
        let tail = output[summary...]
        func value(after label: String) -> Double? {
            guard let at = tail.range(of: label) else { return nil }
            return Double(tail[at.upperBound...].split(whereSeparator: \.isWhitespace).first ?? "")
        }
        return (try #require(value(after: "I:")), try #require(value(after: "Peak:")))
    }

    /// A live FLAC recording killed with SIGKILL: each file `flac -d` decodes holds the audio up to
    /// about the kill (more than 2 s of the 4 s sent before it), and the decode equals what a
    /// recording of the same packets would be (it is one of the sender's signal: correlation).
    @Test func aKilledFLACRecordingDecodes() throws {
        let out = try temporaryDirectory()
        let port = try freeUDPPort()
        let address = try #require(ListenAddress("127.0.0.1:\(port)"))
        let pcm = TestSignal.speechLike(samples: 400 * 960, seed: 13)
        let sender = RTPTestSender(pcm: pcm, to: address, ssrc: 0xF1AC_0001)
        let name = "ssrc-" + String(sender.ssrc, radix: 16) + ".flac"
        let flac = out.appendingPathComponent(name).path
        let recorder = try CLIRunner.start(
            [
                "record", "--listen", address.description, "--record-delay", "100", "--format", "flac", "--out",
                out.path, "--quiet",
            ])
        try waitUntilListening(port: port, pid: recorder.pid)
        sender.start(startNanos: RealTimeClock.monotonicNow() + 50_000_000)
        let grown = waitUntil(timeout: .seconds(30)) {
            ((try? FileManager.default.attributesOfItem(atPath: flac)[.size] as? Int) ?? 0) > 150_000
        }
        #expect(grown, "the FLAC file grows while recording")
        recorder.signal(SIGKILL)
        #expect(recorder.wait(timeout: 20).status == -SIGKILL)
        _ = sender.wait()
        let decoded = out.appendingPathComponent("decoded.wav").path
        _ = try tool("flac", ["-s", "-d", "-F", flac, "-o", decoded])
        let back = try samples(decoded)
        #expect(back.count > 2 * 48_000, "\(back.count) samples decode from the killed recording")
        let peak = back.map { abs(Int($0)) }.max() ?? 0
        #expect(peak > 1000, "the decoded audio is the speech sent, not silence")

        // repair DIR: STREAMINFO states the frames the file holds, `flac -t` passes, room.json agrees.
        let repair = try roomtap(["repair", out.path], expect: 0)
        #expect(repair.stdout.contains("\(name): repaired"), "\(repair.stdout)")
        let total = try #require(
            Int(try tool("metaflac", ["--show-total-samples", flac]).trimmingCharacters(in: .whitespacesAndNewlines)))
        _ = try tool("flac", ["-s", "-t", flac])
        let again = out.appendingPathComponent("again.wav").path
        _ = try tool("flac", ["-s", "-d", flac, "-o", again])
        #expect(try samples(again).count == total && total > 2 * 48_000)
        let track = try #require((try roomJSON(out)["tracks"] as? [[String: Any]])?.first)
        #expect(track["samplesWritten"] as? Int == total)
    }

    /// A live Ogg Opus recording killed with SIGKILL: the pages flushed every second play in
    /// `opusdec` (no end-of-stream page), more than 2 s of the speech sent.
    @Test func aKilledOpusRecordingPlays() throws {
        let out = try temporaryDirectory()
        let port = try freeUDPPort()
        let address = try #require(ListenAddress("127.0.0.1:\(port)"))
        let sender = RTPTestSender(
            pcm: TestSignal.speechLike(samples: 400 * 960, seed: 17), to: address, ssrc: 0x0905_0001)
        let opus = out.appendingPathComponent("ssrc-" + String(sender.ssrc, radix: 16) + ".opus").path
        let recorder = try CLIRunner.start(
            [
                "record", "--listen", address.description, "--record-delay", "100", "--format", "opus", "--out",
                out.path, "--quiet",
            ])
        try waitUntilListening(port: port, pid: recorder.pid)
        sender.start(startNanos: RealTimeClock.monotonicNow() + 50_000_000)
        let grown = waitUntil(timeout: .seconds(30)) {
            ((try? FileManager.default.attributesOfItem(atPath: opus)[.size] as? Int) ?? 0) > 14_000
        }
        #expect(grown, "the Opus file grows while recording")
        recorder.signal(SIGKILL)
        #expect(recorder.wait(timeout: 20).status == -SIGKILL)
        _ = sender.wait()
        let decoded = out.appendingPathComponent("decoded.wav").path
        _ = try tool("opusdec", ["--quiet", "--rate", "48000", opus, decoded])
        let back = try samples(decoded)
        #expect(back.count > 2 * 48_000, "\(back.count) samples play from the killed recording")
        #expect((back.map { abs(Int($0)) }.max() ?? 0) > 1000, "the speech sent, not silence")
    }

    /// `export`: FLAC at 16 kHz of every speaker and the mix, loudness in OUT/room.json (the same
    /// as record --loudness measures), a multichannel WAV whose channel k is speaker k (room
    /// order) with the names in LIST/INFO, and a normalized mix with each speaker's gain.
    @Test func exportCooksAFinishedRecording() throws {
        let base = try temporaryDirectory()
        let out = base.appendingPathComponent("cooked").path
        let multi = base.appendingPathComponent("room.wav").path
        let outcome = try roomtap(
            [
                "export", Self.wavRoom.path, "--out", out, "--format", "flac", "--rate", "16000",
                "--multichannel", multi, "--normalize", "-23",
            ], expect: 0)
        #expect(outcome.stdout.contains("LUFS"), "\(outcome.stdout)")
        let json = try roomJSON(URL(fileURLWithPath: out))
        let tracks = try #require(json["tracks"] as? [[String: Any]])
        for track in tracks where track["kind"] as? String == "speaker" {
            let name = try #require(track["name"] as? String)
            let lufs = try #require((track["loudness"] as? [String: Any])?["integratedLUFS"] as? Double)
            let (reference, _) = try ffmpegLoudness(Self.wavRoom.appendingPathComponent("\(name).wav").path)
            #expect(abs(lufs - reference) <= 0.1, "\(name): \(lufs) vs ffmpeg \(reference)")
            let gain = try #require(track["mixGainDB"] as? Double)
            #expect(abs(gain - (-23 - lufs)) <= 0.02)
            #expect(track["file"] as? String == "\(name).flac" && track["fileSampleRate"] as? Int == 16_000)
        }
        #expect(
            try listing(URL(fileURLWithPath: out)) == ["alice.flac", "bob.flac", "carol.flac", "mix.flac", "room.json"])

        let (info, interleaved) = try WAVFile.readSamples(path: multi)
        #expect(info.channels == 3 && info.sampleRate == 16_000)
        let header = try Data(contentsOf: URL(fileURLWithPath: multi)).prefix(info.dataOffset.asInt)
        #expect(String(decoding: header, as: UTF8.self).contains("channels: alice, bob, carol"))
        for (k, name) in Self.speakers.enumerated() {
            let decoded = base.appendingPathComponent("\(name).wav").path
            _ = try tool("flac", ["-s", "-d", "\(out)/\(name).flac", "-o", decoded])
            let single = try samples(decoded)
            let channel = stride(from: k, to: interleaved.count, by: 3).map { interleaved[$0] }
            #expect(channel == single, "channel \(k + 1) is \(name)")
        }
        let multichannel = try #require(json["multichannel"] as? [String: Any])
        #expect(multichannel["channels"] as? [String] == Self.speakers)

        // Nothing is overwritten without --force (and nothing new is created).
        let again = try roomtap(["export", Self.wavRoom.path, "--out", out, "--format", "flac"], expect: 1)
        #expect(again.stderrLines.count == 1 && again.stderr.contains("already exists; pass --force"))
        // An input is never an output, even with --force.
        let same = try roomtap(["export", Self.wavRoom.path, "--force"], expect: 1)
        #expect(same.stderr.contains("is the same file as an input (the recording of track"), "\(same.stderr)")
        #expect(same.stderr.contains("exporting there would overwrite it"), "\(same.stderr)")
        #expect(try listing(Self.wavRoom) == ["alice.wav", "bob.wav", "carol.wav", "mix.wav", "room.json"])
        // Never through a link (OutputGuard, as record): a link among the outputs is one line, even
        // with --force, and what it points at is untouched.
        let linked = base.appendingPathComponent("linked")
        try FileManager.default.createDirectory(at: linked, withIntermediateDirectories: true)
        let target = base.appendingPathComponent("precious.txt")
        try Data("keep".utf8).write(to: target)
        try FileManager.default.createSymbolicLink(
            atPath: linked.appendingPathComponent("bob.flac").path, withDestinationPath: target.path)
        let throughLink = try roomtap(
            ["export", Self.wavRoom.path, "--out", linked.path, "--format", "flac", "--force"], expect: 1)
        #expect(
            throughLink.stderrLines.count == 1 && throughLink.stderr.contains("bob.flac is a symbolic link"),
            "\(throughLink.stderr)")
        #expect(try String(contentsOf: target, encoding: .utf8) == "keep")
        #expect(try listing(linked) == ["bob.flac"], "nothing written")
    }

    /// `record --multichannel FILE.flac`: one FLAC with a channel per speaker in room order, each
    /// channel the speaker's WAV sample for sample, the names in ROOMTAP_CHANNELS and room.json.
    @Test func recordWritesAMultichannelFLAC() throws {
        let base = try temporaryDirectory()
        let file = base.appendingPathComponent("room.flac").path
        let out = try record(["--multichannel", file])
        let decoded = base.appendingPathComponent("room.wav").path
        _ = try tool("flac", ["-s", "-d", file, "-o", decoded])
        let (info, interleaved) = try WAVFile.readSamples(path: decoded)
        #expect(info.channels == 3)
        for (k, name) in Self.speakers.enumerated() {
            let single = try samples(out.appendingPathComponent("\(name).wav").path)
            let channel = stride(from: k, to: interleaved.count, by: 3).map { interleaved[$0] }
            #expect(channel == single, "channel \(k + 1) is \(name)")
        }
        let tags = try tool("metaflac", ["--export-tags-to=-", file])
        #expect(tags.contains("ROOMTAP_CHANNELS=alice,bob,carol"), "\(tags)")
        let multichannel = try #require(try roomJSON(out)["multichannel"] as? [String: Any])
        #expect(multichannel["channels"] as? [String] == Self.speakers && multichannel["format"] as? String == "flac")
    }

    /// `export`, `timeline` and `view` read FLAC and Ogg Opus recordings as they read WAV (issue 26):
    /// a FLAC room exported to WAV is the WAV room bit for bit; an Opus room exported to WAV has
    /// the room's length and correlates >= 0.95 with it; `timeline` finds the same talk spans in the
    /// FLAC room as in the WAV room. A `--rate 16000` recording is refused in one line with nothing
    /// written.
    @Test func exportAndTimelineReadFLACAndOpusRecordings() throws {
        let flacRoom = try record(["--format", "flac"], "flacRoom")
        let opusRoom = try record(["--format", "opus", "--bitrate", "64000"], "opusRoom")
        let base = try temporaryDirectory()
        for (room, exact) in [(flacRoom, true), (opusRoom, false)] {
            let out = base.appendingPathComponent(room.lastPathComponent + "-wav")
            let outcome = try roomtap(["export", room.path, "--out", out.path], expect: 0)
            #expect(outcome.stdout.contains("LUFS"), "\(outcome.stdout)")
            for name in Self.speakers + ["mix"] {
                let reference = try samples(Self.wavRoom.appendingPathComponent("\(name).wav").path)
                let back = try samples(out.appendingPathComponent("\(name).wav").path)
                #expect(back.count == reference.count, "\(room.lastPathComponent)/\(name): \(back.count) samples")
                if exact {
                    #expect(back == reference, "\(name).flac exported is the WAV, bit for bit")
                } else {
                    let r = correlation(back, reference)
                    #expect(r >= 0.95, "\(name).opus exported correlates \(r) with the WAV")
                }
            }
        }
        func spans(_ room: URL) throws -> String {
            let svg = base.appendingPathComponent(room.lastPathComponent + ".svg").path
            let outcome = try roomtap(["timeline", room.path, "--out", svg], expect: 0)
            return String(outcome.stdout.split(separator: ":").last ?? "")
        }
        let wavSpans = try spans(Self.wavRoom)
        #expect(wavSpans.contains("3 speaker(s)"), "\(wavSpans)")
        #expect(try spans(flacRoom) == wavSpans)
        #expect(try spans(opusRoom).contains("3 speaker(s)"))

        // A FLAC file cut mid-frame (a killed recorder's, not repaired): exported up to its last
        // whole frame, with a warning that says so and what to run.
        let cut = base.appendingPathComponent("cut")
        try FileManager.default.copyItem(at: flacRoom, to: cut)
        let cutFile = cut.appendingPathComponent("alice.flac").path
        #expect(truncate(cutFile, 60_001) == 0)
        let cutOut = base.appendingPathComponent("cut-wav")
        let cutExport = try roomtap(["export", cut.path, "--out", cutOut.path], expect: 0)
        #expect(cutExport.stderr.contains("alice.flac is cut short or damaged after"), "\(cutExport.stderr)")
        #expect(cutExport.stderr.contains("roomtap repair"))
        let kept = try samples(cutOut.appendingPathComponent("alice.wav").path)
        let whole = try samples(Self.wavRoom.appendingPathComponent("alice.wav").path)
        #expect(kept.count > 0 && kept.count < whole.count && Array(whole.prefix(kept.count)) == kept)

        let lowRate = try record(["--format", "flac", "--rate", "16000"], "lowRate")
        let refusedOut = base.appendingPathComponent("refused")
        let refused = try roomtap(["export", lowRate.path, "--out", refusedOut.path], expect: 1)
        #expect(
            refused.stderrLines.count == 1 && refused.stderr.contains("is 16000 Hz; export reads 48 kHz recordings"),
            "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: refusedOut.path), "nothing written")
    }

    /// Bad values are usage errors (exit 64, one line).
    @Test(arguments: [
        ["--format", "mp3"], ["--rate", "22050"], ["--format", "opus", "--rate", "44100"], ["--bitrate", "64000"],
        ["--format", "opus", "--bitrate", "5"],
        ["--format", "flac", "--multichannel", "x.wav"],
    ])
    func badOutputOptionsAreUsageErrors(_ extra: [String]) throws {
        let out = try temporaryDirectory()
        let outcome = try roomtap(
            ["record", "--file", "alice=\(sample("alice"))", "--out", out.path] + extra, expect: 64)
        #expect(outcome.stderrLines.first?.hasPrefix("roomtap: error: ") == true, "\(outcome.stderr)")
        #expect(try listing(out).isEmpty, "nothing created")
    }

    // MARK: - Subtitles

    static let transcript = """
        {"start": 3.1, "end": 4.9, "speaker": "agent", "text": "Anything at all."}
        {"start": 1.234, "end": 2.5, "speaker": "alice", "text": "What's <for> dinner?"}

        {"start": 3661.0005, "end": 3662, "speaker": "alice+bob", "text": "Two\\nlines & more"}

        """

    func transcriptDirectory() throws -> URL {
        let dir = try temporaryDirectory()
        try Self.transcript.write(to: dir.appendingPathComponent("transcript.jsonl"), atomically: true, encoding: .utf8)
        return dir
    }

    /// WebVTT: the header, cues in start order with their times, the speakers as voices, cue text
    /// escaped and on one line; ffmpeg's WebVTT demuxer reads it back with three cues.
    @Test func transcriptAsWebVTT() throws {
        let dir = try transcriptDirectory()
        let vtt = try roomtap(["transcript", dir.path], expect: 0).stdout
        #expect(
            vtt == """
                WEBVTT

                1
                00:00:01.234 --> 00:00:02.500
                <v alice>What's &lt;for&gt; dinner?

                2
                00:00:03.100 --> 00:00:04.900
                <v agent>Anything at all.

                3
                01:01:01.001 --> 01:01:02.000
                <v alice+bob>Two lines &amp; more

                """)
        let file = dir.appendingPathComponent("t.vtt").path
        try roomtap(["transcript", dir.path, "--out", file], expect: 0)
        let srt = try tool("ffmpeg", ["-hide_banner", "-loglevel", "error", "-i", file, "-f", "srt", "-"])
        #expect(
            srt.contains("00:00:01,234 --> 00:00:02,500") && srt.contains("01:01:01,001 --> 01:01:02,000"), "\(srt)")
        // Not overwritten without --force.
        let again = try roomtap(["transcript", dir.path, "--out", file], expect: 1)
        #expect(again.stderr.contains("already exists; pass --force"))
    }

    /// SRT, text and Audacity labels of the same lines.
    @Test func transcriptAsSRTTextAndLabels() throws {
        let dir = try transcriptDirectory()
        let srt = try roomtap(["transcript", dir.path, "--format", "srt"], expect: 0).stdout
        #expect(
            srt == """
                1
                00:00:01,234 --> 00:00:02,500
                alice: What's <for> dinner?

                2
                00:00:03,100 --> 00:00:04,900
                agent: Anything at all.

                3
                01:01:01,001 --> 01:01:02,000
                alice+bob: Two lines & more

                """)
        let file = dir.appendingPathComponent("t.srt").path
        try srt.write(toFile: file, atomically: true, encoding: .utf8)
        let vtt = try tool("ffmpeg", ["-hide_banner", "-loglevel", "error", "-i", file, "-f", "webvtt", "-"])
        #expect(
            vtt.contains("00:03.100 --> 00:04.900") && vtt.contains("agent: Anything at all."),
            "ffmpeg reads the SRT: \(vtt)")
        let txt = try roomtap(["transcript", dir.path, "--format", "txt"], expect: 0).stdout
        #expect(txt.hasPrefix("[00:00:01.234] alice: What's <for> dinner?\n[00:00:03.100] agent: Anything at all.\n"))
        let labels = try roomtap(["transcript", dir.path, "--format", "audacity"], expect: 0).stdout
        #expect(labels.split(separator: "\n").first == "1.234000\t2.500000\talice: What's <for> dinner?")
        #expect(labels.split(separator: "\n").count == 3)
    }

    /// A line that is not a transcript line: exit 1, one line naming the file and line number.
    @Test func aBadTranscriptLineIsNamed() throws {
        let dir = try temporaryDirectory()
        try "{\"start\": 1, \"end\": 2, \"speaker\": \"a\", \"text\": \"ok\"}\n{\"start\": \"x\"}\n".write(
            to: dir.appendingPathComponent("transcript.jsonl"), atomically: true, encoding: .utf8)
        let outcome = try roomtap(["transcript", dir.path], expect: 1)
        #expect(outcome.stderrLines.count == 1 && outcome.stderr.contains("transcript.jsonl:2: not a transcript line"))
        try roomtap(["transcript", dir.path, "--format", "ass"], expect: 64)
    }
}

extension Int64 {
    fileprivate var asInt: Int { Int(self) }
}
