import Foundation
import RoomTapAll
import RoomTapCLITestSupport
import RoomTapRTPTestSupport
import RoomTapSync
import RoomTapTestSupport
import Testing

/// Issue 26, the items left after round two: room.json read by one reader with clear lines
/// (item 11), standard input and --dry-run held to the run's own rules (item 12), `watch` saying
/// the room ended (item 13), one rule for names (item 14) and `roomtap info DIR`. Through the
/// real binary.
@Suite("CLI: nothing lost, the rest of round two")
struct NothingLostRestTests {
    /// A finished recording of alice and bob (the sample room), with its room.json.
    private func recording() throws -> URL {
        let out = try temporaryDirectory()
        try roomtap(
            [
                "record", "--file", "alice=\(sample("alice"))", "--file", "bob=\(sample("bob"))@1", "--mix", "--out",
                out.path, "--quiet", "--force",
            ], expect: 0)
        return out
    }

    /// `roomtap ARGS` with `bytes` on its standard input (written from another thread, then closed).
    private func run(_ arguments: [String], feeding bytes: Data, environment: [String: String] = [:]) throws
        -> CLIRunner.Outcome
    {
        let pipe = ChildProcesses.pipe()
        let running = try CLIRunner.start(arguments, environment: environment, standardInput: pipe)
        let writer = pipe.fileHandleForWriting
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            try? writer.write(contentsOf: bytes)
            try? writer.close()
            done.signal()
        }
        let outcome = running.wait(timeout: 120)
        done.wait()
        return outcome
    }

    private func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "\(text)")
    }

    // MARK: - Item 11: room.json and Foundation's text

    @Test func aDamagedRoomJSONIsOneLineWithItsPlaceForEveryCommand() throws {
        let out = try recording()
        let roomJSON = out.appendingPathComponent("room.json")
        let good = try String(contentsOf: roomJSON, encoding: .utf8)

        // Not JSON: cut mid-file. The line the reader stopped on is named.
        let cut = String(good.prefix(good.count / 2))
        try cut.write(to: roomJSON, atomically: false, encoding: .utf8)
        let lastLine = cut.split(separator: "\n", omittingEmptySubsequences: false).count
        let exported = try temporaryDirectory()
        for command in [
            ["export", out.path, "--out", exported.appendingPathComponent("x").path], ["repair", out.path],
            ["timeline", out.path, "--out", exported.appendingPathComponent("t.svg").path], ["status", out.path],
            ["info", out.path], ["view", out.path],
        ] {
            let outcome = try roomtap(command, expect: 1)
            #expect(outcome.stderrLines.count == 1, "\(command[0]): \(outcome.stderr)")
            #expect(
                outcome.stderr.contains("\(roomJSON.path) is damaged: not valid JSON (line \(lastLine): ")
                    && outcome.stderr.contains("restore it, or move it aside"), "\(command[0]): \(outcome.stderr)")
            #expect(!outcome.stderr.contains("The data") && !outcome.stderr.contains("format."), "\(outcome.stderr)")
        }
        #expect(try String(contentsOf: roomJSON, encoding: .utf8) == cut, "room.json left as it was")
        #expect(try listing(exported).isEmpty, "nothing written")

        // JSON, but a field of the wrong kind: its line and path.
        let lines = good.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let index = try #require(lines.firstIndex { $0.hasPrefix("  \"durationSamples\"") })
        var wrong = lines
        wrong[index] = "  \"durationSamples\" : \"abc\","
        try wrong.joined(separator: "\n").write(to: roomJSON, atomically: false, encoding: .utf8)
        for command in [["export", out.path, "--out", exported.appendingPathComponent("y").path], ["info", out.path]] {
            let outcome = try roomtap(command, expect: 1)
            #expect(
                outcome.stderrLines.count == 1
                    && outcome.stderr.contains(
                        "room.json is not a roomtap room.json (line \(index + 1): durationSamples: expected a whole "
                            + "number"),
                "\(command[0]): \(outcome.stderr)")
        }
        // A field missing altogether, and a directory where room.json should be.
        try "{\"tracks\": []}".write(to: roomJSON, atomically: false, encoding: .utf8)
        let missing = try roomtap(["info", out.path], expect: 1)
        #expect(missing.stderr.contains("(line 1: no \"roomtap\" field)"), "\(missing.stderr)")
        try FileManager.default.removeItem(at: roomJSON)
        try FileManager.default.createDirectory(at: roomJSON, withIntermediateDirectories: false)
        let directory = try roomtap(["info", out.path], expect: 1)
        #expect(directory.stderr.contains("\(roomJSON.path) is a directory, not a room.json"), "\(directory.stderr)")
    }

    @Test func transcriptOnADirectoryAndWritesSayWhatIsWrongInTheUsersTerms() throws {
        let out = try temporaryDirectory()
        let transcript = out.appendingPathComponent("transcript.jsonl")
        try FileManager.default.createDirectory(at: transcript, withIntermediateDirectories: false)
        let outcome = try roomtap(["transcript", out.path], expect: 1)
        #expect(
            outcome.stderrLines.count == 1 && outcome.stderr.contains("\(transcript.path) is a directory, not a "),
            "\(outcome.stderr)")
        #expect(!outcome.stderr.contains("ioctl"), "\(outcome.stderr)")

        // A write that fails names the file asked for, never the temporary file beside it.
        let recorded = try recording()
        let target = recorded.appendingPathComponent("no-such-dir/t.svg").path
        let failed = try roomtap(["timeline", recorded.path, "--out", target], expect: 1)
        #expect(
            failed.stderrLines.count == 1 && failed.stderr.contains("cannot write \(target): ")
                && !failed.stderr.contains(".tmp"), "\(failed.stderr)")
    }

    // MARK: - Item 12: standard input, --dry-run, --json

    @Test func standardInputCutShortFailsAsTheSameFileDoesAndKeepsWhatArrived() throws {
        let whole = try Data(contentsOf: URL(fileURLWithPath: sample("alice")))
        let cut = whole.prefix(whole.count * 4 / 5)
        let file = try temporaryDirectory().appendingPathComponent("cut.opus")
        try cut.write(to: file)
        let fromFile = try roomtap(
            ["record", "--file", "alice=\(file.path)", "--out", try temporaryDirectory().path, "--quiet"], expect: 1)
        #expect(fromFile.stderr.contains("--allow-truncated"))

        let out = try temporaryDirectory()
        let piped = try run(["record", "--file", "alice=-", "--out", out.path, "--quiet"], feeding: cut)
        #expect(piped.status == 1, "refused as the file is: \(piped.stderr)")
        #expect(
            piped.stderrLines.count == 1 && piped.stderr.contains("standard input (--file alice=-) ended cut short")
                && piped.stderr.contains("pass --allow-truncated"), "\(piped.stderr)")
        // Nothing lost: what arrived is in the file, and room.json says why the run failed.
        let samples = try WAVFile.readSamples(path: out.appendingPathComponent("alice.wav").path).1
        #expect(samples.count > 48_000 * 5, "what arrived was kept: \(samples.count)")
        let report = try json(try String(contentsOf: out.appendingPathComponent("room.json"), encoding: .utf8))
        let errors = report["errors"] as? [[String: Any]] ?? []
        #expect(errors.contains { ($0["error"] as? String)?.contains("ended cut short") == true }, "\(errors)")

        let allowed = try run(
            ["record", "--file", "alice=-", "--out", try temporaryDirectory().path, "--quiet", "--allow-truncated"],
            feeding: cut)
        #expect(allowed.status == 0, "\(allowed.stderr)")
    }

    @Test func dryRunWithStandardInputSaysTheLengthIsOpenAndChecksTheControlDirectory() throws {
        let alice = try Data(contentsOf: URL(fileURLWithPath: sample("alice")))
        let out = try temporaryDirectory().appendingPathComponent("o").path
        let text = try run(
            ["record", "--file", "alice=-", "--file", "bob=\(sample("bob"))@2", "--out", out, "--dry-run"],
            feeding: alice)
        #expect(text.status == 0, "\(text.stderr)")
        // bob is 8 s from 2 s: the room is at least 10 s, however short the stream.
        #expect(text.stdout.contains("room length  until standard input ends (at least 10.000 s"), "\(text.stdout)")
        #expect(!text.stdout.contains("0.000 s (0 samples)"), "\(text.stdout)")
        let plan = try run(
            ["record", "--file", "alice=-", "--out", out, "--dry-run", "--json"], feeding: alice)
        let object = try json(plan.stdout)
        #expect(object["room_samples"] is NSNull, "\(plan.stdout)")

        // A runtime directory open to others: the run refuses it, so does the dry run (a short
        // path: a socket path is at most 107 bytes).
        var template = Array("/tmp/rt-XXXXXX".utf8CString)
        let made = try #require(mkdtemp(&template))
        let runtime = URL(fileURLWithPath: String(cString: made))
        defer { try? FileManager.default.removeItem(at: runtime) }
        let sockets = runtime.appendingPathComponent("roomtap")
        try FileManager.default.createDirectory(at: sockets, withIntermediateDirectories: false)
        chmod(sockets.path, 0o755)
        let env = ["XDG_RUNTIME_DIR": runtime.path, "ROOMTAP_CONTROL": ""]
        let arguments = ["record", "--file", "alice=\(sample("alice"))", "--realtime", "--duration", "1", "--out", out]
        let real = try CLIRunner.run(arguments + ["--quiet"], environment: env, timeout: 60)
        let dry = try CLIRunner.run(arguments + ["--dry-run"], environment: env, timeout: 60)
        #expect(real.status == 1 && dry.status == 1, "real \(real.status), dry \(dry.status): \(dry.stdout)")
        #expect(
            dry.stderrLines.count == 1 && dry.stderr.contains("other users can access it (mode 0755)"),
            "\(dry.stderr)")
        #expect(dry.stderrLines == real.stderrLines, "the same line: \(dry.stderr) / \(real.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out), "nothing made")
    }

    @Test func jsonKeepsTheNothingReceivedWarning() throws {
        let out = try temporaryDirectory()
        let outcome = try CLIRunner.run(
            [
                "record", "--listen", "127.0.0.1:0", "--duration", "3.5", "--record-delay", "100", "--json", "--out",
                out.path,
            ], timeout: 60)
        #expect(outcome.stderr.contains("nothing received on 127.0.0.1:"), "\(outcome.stderr)")
        let summary = try json(outcome.stdout)
        let warnings = summary["warnings"] as? [String] ?? []
        #expect(warnings.contains { $0.hasPrefix("nothing received on 127.0.0.1:") }, "\(outcome.stdout)")
    }

    /// `record --realtime` of the first speaker (`first`, alice's sample) and `later` (bob's, from
    /// 0.3 s), running once `later` is a track.
    private func startRoomWithALateSpeaker(first: String, out: String, _ env: [String: String]) throws
        -> CLIRunner.Running
    {
        let recorder = try CLIRunner.start(
            [
                "record", "--file", "\(first)=\(sample("alice"))", "--file", "later=\(sample("bob"))@300", "--realtime",
                "--out", out, "--quiet",
            ], environment: env)
        #expect(
            try waitUntil(timeout: .seconds(60), every: .milliseconds(50)) {
                try CLIRunner.run(["tracks", "--json"], environment: env, timeout: 20).stdout.contains("\"later\"")
            })
        return recorder
    }

    // MARK: - Item 13: watch says the room ended

    @Test func watchOnATerminalSaysTheRoomEnded() throws {
        let env = ["ROOMTAP_CONTROL": uniqueControlPath()]
        let out = try temporaryDirectory()
        let recorder = try startRoomWithALateSpeaker(first: "alice", out: out.path, env)
        defer { if recorder.isRunning { recorder.signal(SIGKILL) } }
        let watch = try TerminalSession("watch", environment: env)
        #expect(waitUntil(timeout: .seconds(60)) { watch.shown.contains("alice") }, "the view shows alice")
        let stop = try CLIRunner.run(["stop"], environment: env, timeout: 60)
        #expect(stop.status == 0, "\(stop.stderr)")
        #expect(watch.finish(), "watch ends with the room")
        let drawn = watch.shown
        #expect(
            drawn.contains("roomtap watch: the room ended; its files are in ") && !drawn.contains("did it stop?"),
            "\(drawn.suffix(400))")
        #expect(recorder.wait(timeout: 60).status == 0)

        // Not on a terminal: the same last line instead of the raw event.
        let env2 = ["ROOMTAP_CONTROL": uniqueControlPath()]
        let second = try startRoomWithALateSpeaker(first: "alice", out: try temporaryDirectory().path, env2)
        defer { if second.isRunning { second.signal(SIGKILL) } }
        let watcher = try CLIRunner.start(["watch"], environment: env2)
        #expect(waitUntil(timeout: .seconds(60)) { watcher.stdoutSoFar.contains("alice=") }, "levels stream")
        #expect(try CLIRunner.run(["stop"], environment: env2, timeout: 60).status == 0)
        let watched = watcher.wait(timeout: 60)
        let last = watched.stdout.split(separator: "\n").last.map(String.init) ?? ""
        #expect(watched.status == 0 && last.hasPrefix("the room ended; its files are in "), "\(last)")
    }

    // MARK: - Item 14: one rule for names

    @Test func oneRuleForNamesInFileNamesTheRoomFileAndTheVerbs() throws {
        let out = try temporaryDirectory().path
        let slash = try roomtap(["record", "--file", "a/b=\(sample("alice"))", "--out", out, "--dry-run"], expect: 64)
        #expect(
            slash.stderrLines.count == 1 && slash.stderr.contains("--file name 'a/b' has a '/'"), "\(slash.stderr)")
        let dots = try roomtap(["record", "--file", "..=\(sample("alice"))", "--out", out, "--dry-run"], expect: 64)
        #expect(dots.stderr.contains("--file name '..' is .."), "\(dots.stderr)")

        // The room file refuses two names that differ only in case, as --file does.
        let room = try temporaryDirectory().appendingPathComponent("room.json")
        try """
        {"participants": [
          {"name": "Alice", "port": \(try freeUDPPort())},
          {"name": "alice", "port": \(try freeUDPPort())}
        ]}
        """.write(to: room, atomically: false, encoding: .utf8)
        let clash = try CLIRunner.run(["record", "--room", room.path, "--out", out, "--dry-run"], timeout: 60)
        #expect(clash.status != 0, "\(clash.stdout)")
        #expect(
            clash.stderrLines.count == 1
                && clash.stderr.contains(
                    "room.json:3: participants[1].name: \"alice\" is already the name of participants[0] (as \"Alice\""),
            "\(clash.stderr)")
        let files = try roomtap(
            [
                "record", "--file", "Alice=\(sample("alice"))", "--file", "alice=\(sample("bob"))", "--out", out,
                "--dry-run",
            ], expect: 64)
        #expect(files.stderr.contains("differ only in case"), "\(files.stderr)")

        // The verbs find a track by any case of its name.
        let env = ["ROOMTAP_CONTROL": uniqueControlPath()]
        let recorder = try startRoomWithALateSpeaker(first: "Alice", out: try temporaryDirectory().path, env)
        defer { if recorder.isRunning { recorder.signal(SIGKILL) } }
        let muted = try CLIRunner.run(["mute", "alice"], environment: env, timeout: 20)
        #expect(muted.status == 0 && muted.stdout.hasPrefix("Alice: heard muted"), "\(muted.stdout) \(muted.stderr)")
        #expect(try CLIRunner.run(["stop"], environment: env, timeout: 60).status == 0)
        #expect(recorder.wait(timeout: 60).status == 0)
    }

    // MARK: - roomtap info DIR

    @Test func infoSummarisesARecordingFromItsRoomJSON() throws {
        let out = try recording()
        let report = try json(try String(contentsOf: out.appendingPathComponent("room.json"), encoding: .utf8))
        let samples = try #require(report["durationSamples"] as? Int)
        #expect(samples == 432_000, "alice's 9 s (bob, 8 s from 1 s, ends with her)")
        let text = try roomtap(["info", out.path], expect: 0).stdout
        #expect(text.contains("state       complete\n"), "\(text)")
        #expect(text.contains("length      9.00 s (432000 samples at 48000 Hz)"), "\(text)")
        let rows = text.split(separator: "\n").map(String.init)
        for (name, file) in [("alice", "alice.wav"), ("bob", "bob.wav"), ("mix", "mix.wav")] {
            let row = rows.first { $0.hasPrefix(name + " ") } ?? ""
            #expect(row.hasSuffix(file) && row.contains("wav 48000 Hz"), "\(name): \(text)")
        }
        #expect(rows.first { $0.hasPrefix("bob ") }?.contains(sample("bob")) == true, "bob's source: \(text)")

        let object = try json(try roomtap(["info", out.path, "--json"], expect: 0).stdout)
        #expect(object["state"] as? String == "complete")
        #expect(object["room_samples"] as? Int == samples)
        let tracks = object["tracks"] as? [[String: Any]] ?? []
        #expect(tracks.map { $0["name"] as? String ?? "" } == ["alice", "bob", "mix"], "\(tracks)")
        #expect(tracks.first?["samples"] as? Int == samples)

        // A recording cut short says so, and what to run.
        var cut = try String(contentsOf: out.appendingPathComponent("room.json"), encoding: .utf8)
        cut = cut.replacingOccurrences(of: "\"state\" : \"complete\"", with: "\"state\" : \"recording\"")
        try cut.write(to: out.appendingPathComponent("room.json"), atomically: false, encoding: .utf8)
        let cutText = try roomtap(["info", out.path], expect: 0).stdout
        #expect(cutText.contains("cut short") && cutText.contains("roomtap repair \(out.path)"), "\(cutText)")

        // Not a recording: one line each, exit 1; no directory given: usage, 64.
        let empty = try temporaryDirectory()
        let none = try roomtap(["info", empty.path], expect: 1)
        #expect(none.stderrLines.count == 1 && none.stderr.contains("is not a roomtap recording"), "\(none.stderr)")
        let file = try roomtap(["info", out.appendingPathComponent("alice.wav").path], expect: 1)
        #expect(file.stderr.contains("is a file, not a directory"), "\(file.stderr)")
        let missing = try roomtap(["info", empty.appendingPathComponent("nope").path], expect: 1)
        #expect(missing.stderr.contains("no such directory"), "\(missing.stderr)")
        _ = try roomtap(["info"], expect: 64)
    }

    // MARK: - Relative volume on the recorder's side; Ctrl-C drains, a second ends at once

    @Test func aRelativeVolumeIsOneStepOnTheRecorderSoChangesAtOnceAllApply() throws {
        let control = uniqueControlPath()
        let env = ["ROOMTAP_CONTROL": control]
        let recorder = try startRoomWithALateSpeaker(first: "alice", out: try temporaryDirectory().path, env)
        defer { if recorder.isRunning { recorder.signal(SIGKILL) } }
        // The protocol: `change_db` is applied by the recorder to the volume it has.
        let client = try ControlClient(path: control)
        let heard = try client.request("volume", ["track": "alice", "change_db": -6])
        #expect(abs((heard["volume"]?.doubleValue ?? 0) - 0.501187) < 1e-5, "\(heard)")
        let record = try client.request("volume", ["track": "alice", "change_db": 6, "scope": "record"])
        #expect(abs((record["record_volume"]?.doubleValue ?? 0) - 1.995262) < 1e-5, "\(record)")
        #expect(abs((record["volume"]?.doubleValue ?? 0) - 0.501187) < 1e-5, "the heard side kept: \(record)")
        #expect(throws: ControlClientError.self) {
            try client.request("volume", ["track": "alice", "change_db": 3, "volume": 1])
        }
        // Eight `roomtap volume alice -1.5dB` at once: every one applies (-12 dB in all).
        let runs = (0..<8).map { _ in
            try? CLIRunner.start(["volume", "alice", "-1.5dB"], environment: env)
        }
        for run in runs { #expect(run?.wait(timeout: 60).status == 0) }
        let shown = try client.request("tracks")["tracks"]?.arrayValue?.first { $0["name"]?.stringValue == "alice" }
        let expected = 0.501187 * pow(10, -12.0 / 20)
        #expect(abs((shown?["volume"]?.doubleValue ?? 0) - expected) < 1e-4, "\(String(describing: shown))")
        #expect(try CLIRunner.run(["stop"], environment: env, timeout: 60).status == 0)
        #expect(recorder.wait(timeout: 60).status == 0)
    }

    @Test func ctrlCSaysItDrainsAndASecondEndsAtOnce() throws {
        let port = try freeUDPPort()
        let address = try #require(ListenAddress("127.0.0.1:\(port)"))
        let sender = RTPTestSender(
            pcm: TestSignal.speechLike(samples: 1000 * 960, seed: 26), to: address, ssrc: 0x0000_2626)
        let out = try temporaryDirectory()
        let control = uniqueControlPath()
        // The longest record delay, so a drain that ran would take 5 s.
        let recorder = try CLIRunner.start([
            "record", "--listen", address.description, "--record-delay", "5000", "--out", out.path, "--control",
            control,
        ])
        defer { if recorder.isRunning { recorder.signal(SIGKILL) } }
        try waitUntilListening(port: port, pid: recorder.pid)
        sender.start(startNanos: RealTimeClock.monotonicNow() + 50_000_000)
        #expect(
            try waitUntil(timeout: .seconds(60), every: .milliseconds(50)) {
                try CLIRunner.run(["tracks", "--json", "--control", control], timeout: 20).stdout.contains("ssrc-2626")
            })
        let started = ContinuousClock.now
        recorder.signal(SIGINT)
        #expect(
            waitUntil(timeout: .seconds(30)) { recorder.stderrSoFar.contains("draining 5.0 s") },
            "\(recorder.stderrSoFar)")
        #expect(recorder.stderrSoFar.contains("Ctrl-C again to stop at once"))
        recorder.signal(SIGINT)
        let outcome = recorder.wait(timeout: 60)
        #expect(ContinuousClock.now - started < .seconds(4), "ended at once, not after the 5 s drain")
        #expect(outcome.status == 0, "\(outcome.stderr)")
        _ = sender.wait()
        let report = try json(try String(contentsOf: out.appendingPathComponent("room.json"), encoding: .utf8))
        #expect(report["stoppedAtOnce"] as? Bool == true && report["state"] as? String == "complete", "\(report)")
        let files = (report["tracks"] as? [[String: Any]] ?? []).compactMap { $0["file"] as? String }
        #expect(!files.isEmpty)
        for file in files {
            let samples = try WAVFile.readSamples(path: out.appendingPathComponent(file).path).1
            #expect(samples.count == report["durationSamples"] as? Int, "\(file): finalized, the room's length")
        }
    }

    /// SIGTERM (a service manager; a dying fleet worker's PR_SET_PDEATHSIG) always drains, however
    /// often it comes: only a person's second Ctrl-C ends the room at once. (A fleet worker killed
    /// with SIGKILL left its recorder stopped at once, so the audio still on its way before the
    /// take-over gap was lost.)
    @Test func sigtermAgainStillDrains() throws {
        let port = try freeUDPPort()
        let address = try #require(ListenAddress("127.0.0.1:\(port)"))
        let sender = RTPTestSender(
            pcm: TestSignal.speechLike(samples: 1000 * 960, seed: 27), to: address, ssrc: 0x0000_2727)
        let out = try temporaryDirectory()
        let control = uniqueControlPath()
        let recorder = try CLIRunner.start([
            "record", "--listen", address.description, "--record-delay", "1500", "--out", out.path,
            "--control", control,
        ])
        defer { if recorder.isRunning { recorder.signal(SIGKILL) } }
        try waitUntilListening(port: port, pid: recorder.pid)
        sender.start(startNanos: RealTimeClock.monotonicNow() + 50_000_000)
        #expect(
            try waitUntil(timeout: .seconds(60), every: .milliseconds(50)) {
                try CLIRunner.run(["tracks", "--json", "--control", control], timeout: 20).stdout.contains("ssrc-2727")
            })
        let started = ContinuousClock.now
        recorder.signal(SIGTERM)
        #expect(
            waitUntil(timeout: .seconds(30)) { recorder.stderrSoFar.contains("draining 1.5 s") },
            "\(recorder.stderrSoFar)")
        recorder.signal(SIGTERM)
        let outcome = recorder.wait(timeout: 60)
        #expect(ContinuousClock.now - started >= .milliseconds(1_400), "the drain ran its 1.5 s")
        #expect(outcome.status == 0 && !outcome.stderr.contains("Ctrl-C again"), "\(outcome.stderr)")
        _ = sender.wait()
        let report = try json(try String(contentsOf: out.appendingPathComponent("room.json"), encoding: .utf8))
        #expect(report["stoppedAtOnce"] == nil && report["state"] as? String == "complete", "\(report)")
    }

    @Test func timelineReadsAnOpusRecording() throws {
        func spans(_ format: [String]) throws -> Int {
            let out = try temporaryDirectory().appendingPathComponent("r" + format.joined())
            try roomtap(
                [
                    "record", "--file", "alice=\(sample("alice"))", "--file", "bob=\(sample("bob"))@1", "--out",
                    out.path,
                    "--quiet",
                ] + format, expect: 0)
            let drawn = try roomtap(["timeline", out.path], expect: 0).stdout
            #expect(drawn.contains(": 2 speaker(s), "), "\(drawn)")
            let count = drawn.components(separatedBy: " speaker(s), ").last?.split(separator: " ").first
            return Int(count ?? "") ?? -1
        }
        let wav = try spans([])
        let opus = try spans(["--format", "opus"])
        #expect(wav > 2 && abs(opus - wav) <= 2, "talk spans: WAV \(wav), Opus \(opus)")
    }

    /// Item 13: a stopped recorder addressed by --control (no scan to find it) is named by its
    /// pid (the socket's peer) as not answering, never "did not answer in time; is it stuck?"; a
    /// command sent to it is said to be carried out if it resumes, and is.
    @Test func aStoppedRecorderAtAnExplicitSocketIsNamedByItsPid() throws {
        let control = uniqueControlPath()
        let recorder = try CLIRunner.start([
            "record", "--file", "alice=\(sample("alice"))", "--file", "later=\(sample("bob"))@300", "--realtime",
            "--out", try temporaryDirectory().path, "--quiet", "--control", control,
        ])
        defer {
            recorder.signal(SIGCONT)
            if recorder.isRunning { recorder.signal(SIGKILL) }
        }
        #expect(
            try waitUntil(timeout: .seconds(60), every: .milliseconds(50)) {
                try CLIRunner.run(["tracks", "--json", "--control", control], timeout: 20).stdout.contains("\"later\"")
            })
        recorder.signal(SIGSTOP)
        let outcome = try CLIRunner.run(["tracks", "--control", control], timeout: 60)
        #expect(outcome.status == 1)
        #expect(
            outcome.stderrLines.count == 1 && outcome.stderr.contains("the recorder pid \(recorder.pid) (\(control))")
                && outcome.stderr.contains("does not answer")
                && outcome.stderr.contains("resume it (kill -CONT \(recorder.pid))"), "\(outcome.stderr)")
        // A command that changes the room waits in the socket: the line says it is carried out on
        // resume, and it is.
        let mute = try CLIRunner.run(["mute", "later", "--control", control], timeout: 60)
        #expect(mute.status == 1)
        #expect(
            mute.stderrLines.count == 1 && mute.stderr.contains("\"mute\" was sent and is carried out if it resumes"),
            "\(mute.stderr)")
        recorder.signal(SIGCONT)
        #expect(
            try waitUntil(timeout: .seconds(60), every: .milliseconds(50)) {
                let tracks = try CLIRunner.run(["tracks", "--json", "--control", control], timeout: 20).stdout
                let json = try? JSONSerialization.jsonObject(with: Data(tracks.utf8)) as? [String: Any]
                let later = (json?["tracks"] as? [[String: Any]])?.first { $0["name"] as? String == "later" }
                return later?["muted"] as? Bool == true
            }, "the mute sent while it was stopped is carried out on resume")
        #expect(try CLIRunner.run(["stop", "--control", control], timeout: 60).status == 0)
        #expect(recorder.wait(timeout: 60).status == 0)
    }
}
