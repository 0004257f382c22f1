import Foundation
import RoomTapAll
import RoomTapCLITestSupport
import RoomTapRTPTestSupport
import RoomTapSync
import RoomTapTestSupport
import Testing

/// room.json while the room runs and when things go wrong: written at the start and kept current
/// (a `kill -9` still leaves it, `repair DIR` brings it up to the files), a file that cannot be
/// written (a file size limit, as a full disk) still leaves it with the error, a listen address
/// that receives nothing is said, and progress lines that are true.
@Suite("CLI: room.json kept current", .serialized)
struct RoomJSONCurrentTests {
    /// A live recorder killed with SIGKILL: room.json is there (`"state": "recording"`) and names
    /// the track's file; `repair DIR` makes every WAV's header match its data, brings room.json
    /// up to the files (`"state": "repaired"`), and `timeline DIR` then works. A second repair
    /// changes nothing.
    @Test func aKilledRecorderLeavesRoomJSONAndRepairMakesTheDirectoryWhole() throws {
        let (out, address, sender, recorder) = try liveRecorder(
            seconds: 8, seed: 7, ssrc: 0x5EED_0001, senderStartsAfter: .milliseconds(50))
        let name = "ssrc-" + String(sender.ssrc, radix: 16)
        let wav = out.appendingPathComponent("\(name).wav").path

        // room.json names the speaker's file while the recorder runs, and the file grows (2 s).
        let listed = waitUntil(timeout: .seconds(30)) {
            let tracks = (try? roomJSON(out))?["tracks"] as? [[String: Any]] ?? []
            let size = (try? FileManager.default.attributesOfItem(atPath: wav)[.size] as? Int) ?? 0
            return tracks.contains { $0["file"] as? String == "\(name).wav" } && size > 44 + 2 * 96_000
        }
        #expect(listed, "room.json lists \(name).wav and the file grows while recording")
        recorder.signal(SIGKILL)
        let outcome = recorder.wait(timeout: 20)
        _ = sender.wait()
        #expect(outcome.status == -SIGKILL)

        let cut = try roomJSON(out)
        #expect(cut["state"] as? String == "recording", "a room.json still saying recording tells it was cut")
        #expect(roomStartTime(cut) != nil)
        let network = try #require(cut["network"] as? [String: Any])
        #expect(network["listen"] as? [String] == [address.description])
        let cutTracks = try #require(cut["tracks"] as? [[String: Any]])
        #expect(cutTracks.map { $0["file"] as? String } == ["\(name).wav"])
        #expect(!(try listing(out)).contains { $0.contains(".tmp") }, "no temporary file is left")

        let repair = try roomtap(["repair", out.path], expect: 0)
        #expect(repair.stdout.contains("room.json: updated"), "repair says it updated room.json: \(repair.stdout)")
        let file = try WAVFile.inspect(path: wav)
        #expect(file.dataSize == file.fileSize - file.dataOffset, "the header states exactly the data in the file")
        #expect(file.frameCount > 48_000, "the audio written before the kill is readable")
        let repaired = try roomJSON(out)
        #expect(repaired["state"] as? String == "repaired")
        #expect(repaired["stoppedEarly"] as? Bool == true)
        #expect(repaired["durationSamples"] as? Int == Int(file.frameCount))
        let track = try #require((repaired["tracks"] as? [[String: Any]])?.first)
        #expect(track["samples"] as? Int == Int(file.frameCount))
        #expect(track["samplesWritten"] as? Int == Int(file.frameCount))

        try roomtap(["timeline", out.path], expect: 0)
        #expect(FileManager.default.fileExists(atPath: out.appendingPathComponent("timeline.svg").path))

        let before = try Data(contentsOf: out.appendingPathComponent("room.json"))
        let again = try roomtap(["repair", out.path], expect: 0)
        #expect(again.stdout.contains("\(name).wav: intact") && again.stdout.contains("room.json: intact"))
        let after = try Data(contentsOf: out.appendingPathComponent("room.json"))
        #expect(after == before, "a second repair changes nothing")
    }

    /// A speaker who joins is in room.json as their file opens (the room's bus says so at once),
    /// not at the next refresh: with `--quiet` no progress line wakes the recorder, and the
    /// speaker starts 4 s in, after the first reception check (3 s), so without the bus the file
    /// would be unlisted until the refresh at 10 s, about 6 s later.
    @Test func aNewSpeakerIsInRoomJSONAsTheirFileOpens() throws {
        let (out, _, sender, recorder) = try liveRecorder(
            seconds: 6, seed: 11, ssrc: 0x5EED_0002, senderStartsAfter: .seconds(4))
        let name = "ssrc-" + String(sender.ssrc, radix: 16)
        let wav = out.appendingPathComponent("\(name).wav").path
        let opened = waitUntil(timeout: .seconds(30)) { FileManager.default.fileExists(atPath: wav) }
        #expect(opened, "the speaker's file opens")
        let listed = waitUntil(timeout: .seconds(4), every: .milliseconds(20)) {
            let tracks = (try? roomJSON(out))?["tracks"] as? [[String: Any]] ?? []
            return tracks.contains { $0["file"] as? String == "\(name).wav" }
        }
        #expect(listed, "room.json lists \(name).wav within 4 s of its file opening (the refresh is every 10 s)")
        _ = sender.wait()
        recorder.signal(SIGTERM)
        let outcome = recorder.wait(timeout: 30)
        #expect(outcome.status == 0, "stderr: \(outcome.stderr)")
        let tracks = try #require(try roomJSON(out)["tracks"] as? [[String: Any]])
        #expect(tracks.map { $0["file"] as? String } == ["\(name).wav"])
    }

    /// A live recorder (`--quiet`, 100 ms record delay) on a free port of its own, and a speaker
    /// (`seconds` of speech-like audio, 50 packets a second) that starts sending `after` from now,
    /// once the recorder listens.
    private func liveRecorder(
        seconds: Int, seed: UInt64, ssrc: UInt32, senderStartsAfter after: Duration
    ) throws -> (out: URL, address: ListenAddress, sender: RTPTestSender, recorder: CLIRunner.Running) {
        let out = try temporaryDirectory()
        let port = try freeUDPPort()
        let address = try #require(ListenAddress("127.0.0.1:\(port)"))
        let sender = RTPTestSender(
            pcm: TestSignal.speechLike(samples: seconds * 48_000, seed: seed), to: address, ssrc: ssrc)
        let recorder = try CLIRunner.start(
            ["record", "--listen", address.description, "--record-delay", "100", "--out", out.path, "--quiet"])
        try waitUntilListening(port: port, pid: recorder.pid)
        sender.start(startNanos: (MonotonicClock.now + after).nanoseconds)
        return (out, address, sender, recorder)
    }

    /// `repair DIR` of a directory without room.json (an older recording) repairs the WAVs and says so.
    @Test func repairOfADirectoryWithoutRoomJSONRepairsTheWAVsOnly() throws {
        let out = try temporaryDirectory()
        try roomtap(["record", "--file", "carol=\(sample("carol"))", "--out", out.path, "--quiet"], expect: 0)
        try FileManager.default.removeItem(at: out.appendingPathComponent("room.json"))
        let wav = out.appendingPathComponent("carol.wav").path
        let whole = try WAVFile.inspect(path: wav)
        // Cut as a killed recorder leaves it: the header states less than the file holds.
        let handle = try #require(FileHandle(forUpdatingAtPath: wav))
        try handle.seek(toOffset: UInt64(whole.dataOffset - 4))
        try handle.write(contentsOf: [0, 0, 0, 0] as [UInt8])
        try handle.close()
        let outcome = try roomtap(["repair", out.path], expect: 0)
        #expect(outcome.stdout.contains("carol.wav: repaired: \(whole.frameCount) samples readable"))
        #expect(outcome.stdout.contains("room.json: none"), "it says there is no room.json: \(outcome.stdout)")
        #expect(try listing(out) == ["carol.wav"])
        #expect(try WAVFile.inspect(path: wav).frameCount == whole.frameCount)
    }

    /// Files that cannot be written past 128 KiB (`ulimit -f`: EFBIG, as a full disk gives ENOSPC):
    /// exit 1 with one line, room.json (`"state": "complete"`) lists both files under `errors`,
    /// and each WAV is valid up to its last good write, with the length room.json gives it.
    @Test(.disabled(if: underThreadSanitizer, "TSan dies of SIGBUS under ulimit -f"))
    func filesThatCannotBeWrittenStillLeaveRoomJSONWithTheirErrors() throws {
        let out = try temporaryDirectory()
        let outcome = try CLIRunner.run(
            [
                "-c", "ulimit -f 256 && exec \"$0\" \"$@\"", CLIRunner.executable.path, "record",
                "--file", "alice=\(sample("alice"))", "--file", "bob=\(sample("bob"))@2.5", "--out", out.path,
                "--quiet",
            ], timeout: 60, executable: URL(fileURLWithPath: "/bin/sh"))
        #expect(outcome.status == 1, "stderr: \(outcome.stderr)")
        #expect(outcome.stderrLines.count == 1, "one line: \(outcome.stderr)")
        let line = outcome.stderrLines.first ?? ""
        #expect(line.hasPrefix("roomtap: error: ") && line.contains("File too large"), "\(line)")
        #expect(
            line.contains("2 file(s) cut short (File too large): alice.wav at ") && line.contains(", bob.wav at ")
                && line.contains("room.json lists them under errors"), "\(line)")

        let json = try roomJSON(out)
        #expect(json["state"] as? String == "complete")
        let errors = try #require(json["errors"] as? [[String: Any]])
        #expect(Set(errors.compactMap { $0["file"] as? String }) == ["alice.wav", "bob.wav"])
        #expect(errors.allSatisfy { ($0["error"] as? String)?.contains("File too large") == true })
        #expect(json["durationSamples"] as? Int == 504_000, "the room ran to its end")
        let tracks = try #require(json["tracks"] as? [[String: Any]])
        #expect(tracks.count == 2)
        for track in tracks {
            let name = try #require(track["file"] as? String)
            let file = try WAVFile.inspect(path: out.appendingPathComponent(name).path)
            #expect(file.dataSize == file.fileSize - file.dataOffset, "\(name): the header states the data")
            #expect(file.fileSize <= 128 * 1024 && file.frameCount > 48_000, "\(name): audio up to the limit")
            #expect(track["samplesWritten"] as? Int == Int(file.frameCount), "\(name): room.json gives its length")
            _ = try WAVFile.readSamples(path: out.appendingPathComponent(name).path)
        }
    }

    /// A live room whose file fails (the same limit) says so at once, keeps running to its
    /// --duration, and ends with exit 1, one error line and the error in room.json.
    @Test(.disabled(if: underThreadSanitizer, "TSan dies of SIGBUS under ulimit -f"))
    func aLiveRoomWarnsAtOnceWhenAFileFailsAndGoesOn() throws {
        let out = try temporaryDirectory()
        let port = try freeUDPPort()
        let address = try #require(ListenAddress("127.0.0.1:\(port)"))
        let sender = RTPTestSender(
            pcm: TestSignal.speechLike(samples: 250 * 960, seed: 11), to: address, ssrc: 0xF11E_0001)
        let name = "ssrc-" + String(sender.ssrc, radix: 16) + ".wav"
        let recorder = try CLIRunner.start(
            [
                "-c", "ulimit -f 256 && exec \"$0\" \"$@\"", CLIRunner.executable.path, "record",
                "--listen", address.description, "--duration", "4", "--record-delay", "100", "--out", out.path,
                "--quiet",
            ], executable: URL(fileURLWithPath: "/bin/sh"))
        try waitUntilListening(port: port, pid: recorder.pid)
        sender.start(startNanos: RealTimeClock.monotonicNow() + 50_000_000)
        let outcome = recorder.wait(timeout: 60)
        _ = sender.wait()
        #expect(outcome.status == 1, "stderr: \(outcome.stderr)")
        let warnings = outcome.stderrLines.filter { $0.hasPrefix("roomtap: warning: ") && $0.contains(name) }
        #expect(warnings.count == 1 && warnings[0].hasSuffix("; the other tracks keep recording"), "\(outcome.stderr)")
        let errors = outcome.stderrLines.filter { $0.hasPrefix("roomtap: error: ") }
        #expect(errors.count == 1 && errors[0].contains(name) && errors[0].contains("File too large"))
        let json = try roomJSON(out)
        #expect(json["state"] as? String == "complete")
        #expect((json["errors"] as? [[String: Any]])?.map { $0["file"] as? String } == [name])
        #expect(json["durationSamples"] as? Int == 4 * 48_000 + 4_800, "the room ran to its end (4 s + 100 ms)")
        let file = try WAVFile.inspect(path: out.appendingPathComponent(name).path)
        #expect(file.dataSize == file.fileSize - file.dataOffset && file.frameCount > 48_000)
    }

    /// A listen address nothing is sent to gets one warning after 3 s, and room.json gives its
    /// count (0); the address that receives gets neither.
    @Test func aListenAddressThatReceivesNothingIsSaid() throws {
        let out = try temporaryDirectory()
        let silentPort = try freeUDPPort()
        let busyPort = try freeUDPPort()
        let silent = try #require(ListenAddress("127.0.0.1:\(silentPort)"))
        let busy = try #require(ListenAddress("127.0.0.1:\(busyPort)"))
        let sender = RTPTestSender(pcm: TestSignal.speechLike(samples: 300 * 960, seed: 9), to: busy, ssrc: 0xB05E_0001)
        let recorder = try CLIRunner.start(
            [
                "record", "--listen", silent.description, "--listen", busy.description, "--duration", "4",
                "--record-delay", "100", "--out", out.path, "--quiet",
            ])
        try waitUntilListening(port: busyPort, pid: recorder.pid)
        sender.start(startNanos: RealTimeClock.monotonicNow() + 50_000_000)
        let outcome = recorder.wait(timeout: 60)
        _ = sender.wait()
        #expect(outcome.status == 0, "stderr: \(outcome.stderr)")
        #expect(
            outcome.stderrLines.filter { $0.contains("received") } == [
                "roomtap: warning: nothing received on \(silent) after 3 s; check the sender's destination and firewall"
            ])
        let network = try #require(try roomJSON(out)["network"] as? [String: Any])
        let received = try #require(network["received"] as? [[String: Any]])
        #expect(received.map { $0["listen"] as? String } == [silent.description, busy.description])
        #expect(received.first?["packets"] as? Int == 0)
        #expect((received.last?["packets"] as? Int ?? 0) > 100)
    }

    /// A control change reaches room.json while the room runs (long before the 10 s rewrite),
    /// and the final room.json says `"state": "complete"` with no errors.
    @Test func aControlChangeReachesRoomJSONWhileRecording() throws {
        let out = try temporaryDirectory()
        let env = ["ROOMTAP_CONTROL": uniqueControlPath()]
        let recorder = try CLIRunner.start(
            ["record", "--file", "alice=\(sample("alice"))", "--realtime", "--out", out.path, "--quiet"],
            environment: env)
        let started = waitUntil(timeout: .seconds(30)) {
            (try? roomJSON(out))?["state"] as? String == "recording"
        }
        #expect(started, "room.json is written when the room starts")
        let first = try roomJSON(out)
        #expect((first["tracks"] as? [[String: Any]])?.map { $0["file"] as? String } == ["alice.wav"])
        var mute: CLIRunner.Outcome?
        #expect(
            waitUntil(timeout: .seconds(20)) {
                mute = try? CLIRunner.run(["mute", "alice"], environment: env, timeout: 20)
                return mute?.status == 0
            }, "the recorder answers: \(mute?.stderr ?? "")")
        let muted = waitUntil(timeout: .seconds(30)) {
            let controls = (try? roomJSON(out))?["controls"] as? [[String: Any]] ?? []
            return controls.contains { $0["change"] as? String == "mute" && $0["track"] as? String == "alice" }
        }
        #expect(muted, "the mute is in room.json while the room runs")
        recorder.signal(SIGINT)
        let outcome = recorder.wait(timeout: 30)
        #expect(outcome.status == 0, "stderr: \(outcome.stderr)")
        let final = try roomJSON(out)
        #expect(final["state"] as? String == "complete")
        #expect((final["errors"] as? [Any])?.isEmpty == true)
    }

    /// Offline, the room runs faster than the progress is looked at: still one line per 10 %,
    /// each with its own time, never more than the length.
    @Test func offlineProgressPrintsEveryTenth() throws {
        let out = try temporaryDirectory()
        let outcome = try roomtap(
            ["record", "--file", "alice=\(sample("alice"))", "--file", "bob=\(sample("bob"))@2.5", "--out", out.path],
            expect: 0)
        let lines = outcome.stderrLines.filter { $0.hasPrefix("recording: ") }
        let expected = (0...10).map { tenth in
            "recording: \(String(format: "%.1f", Double(50_400 * tenth) / 48_000)) s of 10.5 s (\(tenth * 10)%)"
        }
        #expect(lines == expected, "\(outcome.stderr)")
    }

    /// A live room with a --duration that is not whole tenths of a second: the length is shown
    /// with the digits it needs, a line every 10 % and every 10 s, and the last says 100 % at the
    /// length, never past it (the room drains its record delay after the duration).
    @Test func liveProgressKeepsPrintingAndNeverPassesTheLength() throws {
        let out = try temporaryDirectory()
        let port = try freeUDPPort()
        let outcome = try roomtap(
            [
                "record", "--listen", "127.0.0.1:\(port)", "--duration", "10.345", "--record-delay", "100",
                "--out", out.path,
            ], expect: 0, timeout: 60)
        let lines = outcome.stderrLines.filter { $0.hasPrefix("recording: ") }
        #expect(lines.first == "recording: 0.000 s of 10.345 s (0%)", "\(outcome.stderr)")
        #expect(lines.contains("recording: 10.000 s of 10.345 s (96%)"), "a line at 10 s: \(outcome.stderr)")
        #expect(lines.last == "recording: 10.345 s of 10.345 s (100%)", "\(outcome.stderr)")
        #expect(lines.count == 12, "0 %, 10 % ... 90 %, 10 s, 100 %: \(outcome.stderr)")
        #expect(outcome.stdout == "no tracks: nothing was received, so no file was written\n", "not a bare header")
        for line in lines {
            let numbers = line.split(separator: " ").compactMap { Double($0) }
            #expect(numbers.count == 2 && numbers[0] <= numbers[1], "\(line)")
        }
    }
}

/// ThreadSanitizer's runtime dies of SIGBUS in a process started under `ulimit -f` (before its
/// report is written; seen with Swift 6.3.1's TSan on Debian 12), so the two tests that limit the
/// file size to make writes fail run in every pass but `make sanitize`'s TSan one.
let underThreadSanitizer = ProcessInfo.processInfo.environment["TSAN_OPTIONS"] != nil
