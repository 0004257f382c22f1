import Foundation
import RoomTapAll
import RoomTapCLITestSupport
import RoomTapMediaTestSupport
import Testing

/// `record` never writes through a link, never overwrites one of its inputs, leaves the disk as
/// it was when it cannot start, refuses track names that collide, and with `--force` replaces the
/// whole earlier recording in DIR and nothing else (docs/CLI.md, "Safety").
@Suite("CLI: record's outputs never damage anything")
struct OutputSafetyTests {
    /// Runs roomtap, expecting `status` and exactly `line` on stderr.
    @discardableResult
    func expectRefusal(
        _ arguments: [String], status: Int32 = 1, line: String, environment: [String: String] = [:]
    ) throws -> CLIRunner.Outcome {
        let outcome = InProcessCLI.run(arguments, environment: environment)
        #expect(outcome.status == status, "stderr: \(outcome.stderr)")
        #expect(outcome.stderrLines == [line])
        return outcome
    }

    /// A private copy of a sample (an input the test may watch for damage).
    func copyOfSample(_ name: String, in directory: URL) throws -> URL {
        let url = directory.appendingPathComponent("\(name).opus")
        try FileManager.default.copyItem(atPath: sample(name), toPath: url.path)
        return url
    }

    func isSymbolicLink(_ url: URL) -> Bool {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: url.path)) != nil
    }

    // MARK: 1. Never through a link

    @Test func forceNeverWritesThroughASymbolicLink() throws {
        let root = try temporaryDirectory()
        let victim = root.appendingPathComponent("victim.txt")
        let precious = Data("precious, not a recording\n".utf8)
        try precious.write(to: victim)
        let out = root.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: false)
        for name in ["alice.wav", "mix.wav", "room.json"] {
            let link = out.appendingPathComponent(name)
            try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: "../victim.txt")
            try expectRefusal(
                ["record", "--file", "alice=\(sample("alice"))", "--mix", "--out", out.path, "--force", "--quiet"],
                line: "roomtap: error: \(link.path) is a symbolic link; roomtap never writes through a link: "
                    + "remove it or choose another --out")
            #expect(try Data(contentsOf: victim) == precious, "the link's target is untouched")
            #expect(isSymbolicLink(link), "the link itself is left alone")
            #expect(try listing(out) == [name], "nothing else is created")
            try FileManager.default.removeItem(at: link)
        }
        #expect(try listing(root) == ["out", "victim.txt"])
    }

    // MARK: 2. Never an input

    @Test func forceNeverOverwritesTheRoomFile() throws {
        let out = try temporaryDirectory()
        let roomFile = out.appendingPathComponent("room.json")
        let original = Data(#"{"listen": "127.0.0.1", "participants": [{"name": "alice", "port": 9}]}"#.utf8)
        try original.write(to: roomFile)
        for force in [[], ["--force"]] {
            try expectRefusal(
                ["record", "--room", roomFile.path, "--out", out.path, "--duration", "1", "--quiet"] + force,
                line:
                    "roomtap: error: \(roomFile.path) is the same file as an input (--room \(roomFile.path)); "
                    + "recording there would overwrite it: choose another --out")
            #expect(try Data(contentsOf: roomFile) == original)
            #expect(try listing(out) == ["room.json"])
        }
    }

    @Test func aHardLinkToAnInputIsTheInput() throws {
        let root = try temporaryDirectory()
        let input = try copyOfSample("carol", in: root)
        let before = try Data(contentsOf: input)
        let out = root.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: false)
        let wav = out.appendingPathComponent("carol.wav")
        try FileManager.default.linkItem(atPath: input.path, toPath: wav.path)
        try expectRefusal(
            ["record", "--file", "carol=\(input.path)", "--out", out.path, "--force", "--quiet"],
            line:
                "roomtap: error: \(wav.path) is the same file as an input (--file carol \(input.path)); "
                + "recording there would overwrite it: choose another --out")
        #expect(try Data(contentsOf: input) == before)
        #expect(try listing(out) == ["carol.wav"])
    }

    @Test func forceNeverOverwritesTheAgentInstructions() throws {
        let out = try temporaryDirectory()
        let instructions = out.appendingPathComponent("transcript.jsonl")
        let original = Data("Be brief.\n".utf8)
        try original.write(to: instructions)
        try expectRefusal(
            [
                "record", "--file", "alice=\(sample("alice"))", "--agent", "--agent-instructions", instructions.path,
                "--agent-url", "ws://127.0.0.1:9/", "--out", out.path, "--force", "--quiet",
            ],
            line: "roomtap: error: \(instructions.path) is the same file as an input (--agent-instructions "
                + "\(instructions.path)); recording there would overwrite it: choose another --out",
            environment: ["OPENAI_API_KEY": "sk-test"])
        #expect(try Data(contentsOf: instructions) == original)
        #expect(try listing(out) == ["transcript.jsonl"])
    }

    // MARK: 3. A failed start leaves the disk as it was

    /// Runs a recorder that must fail to start into a DIR three levels below a fresh directory,
    /// and checks that none of those levels is left behind.
    func expectNothingLeft(
        _ arguments: [String], line: String? = nil, mentioning fragment: String = "",
        environment: [String: String] = [:]
    ) throws {
        let root = try temporaryDirectory()
        let out = root.appendingPathComponent("a/b/out")
        let outcome = InProcessCLI.run(arguments + ["--out", out.path], environment: environment)
        #expect(outcome.status == 1, "stderr: \(outcome.stderr)")
        if let line {
            #expect(outcome.stderrLines == [line])
        } else {
            #expect(outcome.stderrLines.count == 1 && outcome.stderr.contains(fragment), "stderr: \(outcome.stderr)")
        }
        #expect(try listing(root).isEmpty, "DIR and its parents are not left behind")
    }

    @Test func aMissingAPIKeyLeavesNoDirectory() throws {
        try expectNothingLeft(
            ["record", "--file", "alice=\(sample("alice"))", "--agent", "--agent-url", "ws://127.0.0.1:9/"],
            line: "roomtap: error: --agent needs an OpenAI API key: export OPENAI_API_KEY=... (it is never printed "
                + "or written anywhere)",
            environment: ["OPENAI_API_KEY": ""])
    }

    @Test func missingALSADevicesLeaveNoDirectory() throws {
        let alsa = try ALSATestConfig()
        try expectNothingLeft(
            ["record", "--file", "alice=\(sample("alice"))", "--realtime", "--play", "nosuchdevice"],
            line: "roomtap: error: cannot open ALSA playback device \"nosuchdevice\": No such file or directory",
            environment: alsa.environment)
        try expectNothingLeft(
            ["record", "--file", "alice=\(sample("alice"))", "--mic", "nosuchdevice"],
            mentioning: "\"nosuchdevice\"", environment: alsa.environment)
    }

    @Test func controlSocketFailuresLeaveNoDirectory() throws {
        let long = "/tmp/" + String(repeating: "x", count: 120) + ".sock"
        try expectNothingLeft(
            ["record", "--file", "alice=\(sample("alice"))", "--realtime", "--control", long],
            line: "roomtap: error: control socket path is \(long.utf8.count) bytes, more than the 107 a Unix socket "
                + "allows: \(long) (choose a shorter --control path)")

        let runtime = try temporaryDirectory()
        let open = runtime.appendingPathComponent("roomtap")
        try FileManager.default.createDirectory(
            at: open, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
        try expectNothingLeft(
            ["record", "--file", "alice=\(sample("alice"))", "--realtime"],
            line: "roomtap: error: cannot use \(open.path) for the control socket: other users can access it "
                + "(mode 0755); run chmod 700 \(open.path)",
            environment: ["XDG_RUNTIME_DIR": runtime.path, "ROOMTAP_CONTROL": ""])
    }

    @Test func aSecondRecorderOnALiveSocketLeavesNoDirectory() throws {
        let env = ["ROOMTAP_CONTROL": uniqueControlPath()]
        let first = try temporaryDirectory()
        let recorder = try CLIRunner.start(
            [
                "record", "--file", "alice=\(sample("alice"))", "--realtime", "--duration", "4", "--out", first.path,
                "--quiet",
            ],
            environment: env)
        let deadline = Date().addingTimeInterval(20)
        while InProcessCLI.run(["status"], environment: env).status != 0 {
            try #require(Date() < deadline, "the first recorder never answered on its control socket")
        }
        try expectNothingLeft(
            ["record", "--file", "alice=\(sample("alice"))", "--realtime", "--duration", "1"],
            line: "roomtap: error: another recorder is running at \(env["ROOMTAP_CONTROL"]!) (stop it or choose "
                + "another --control path)",
            environment: env)
        #expect(recorder.wait(timeout: 30).status == 0)
    }

    // MARK: 4. Names

    @Test func trackNamesMustBeUnique() throws {
        let root = try temporaryDirectory()
        let out = root.appendingPathComponent("out")
        let (a, b, c) = (sample("alice"), sample("bob"), sample("carol"))
        let help = " (see 'roomtap record --help')"
        try expectRefusal(
            [
                "record", "--file", "alice=\(a)", "--file", "alice=\(b)", "--file", "mix=\(c)", "--mix", "--out",
                out.path,
            ],
            status: 64,
            line: "roomtap: error: --file name 'alice' is given twice; give each track a name of its own"
                + help)
        try expectRefusal(
            ["record", "--file", "Alice=\(a)", "--file", "alice=\(b)", "--out", out.path], status: 64,
            line: "roomtap: error: --file names 'Alice' and 'alice' differ only in case (a file system may take them "
                + "for one file); give each track a name of its own" + help)
        try expectRefusal(
            ["record", "--file", "alice=\(a)", "--file", "MIX=\(b)", "--mix", "--out", out.path], status: 64,
            line: "roomtap: error: --file name 'MIX' is taken by roomtap's own mix track (with --mix or --play); "
                + "give the track another name" + help)
        try expectRefusal(
            ["record", "--file", "agent-hears=\(a)", "--agent", "--out", out.path], status: 64,
            line: "roomtap: error: --file name 'agent-hears' is taken by roomtap's own agent tracks (with --agent); "
                + "give the track another name" + help, environment: ["OPENAI_API_KEY": "sk-test"])
        try expectRefusal(
            ["record", "--file", "desk=\(a)", "--mic", "--mic-name", "Desk", "--out", out.path], status: 64,
            line: "roomtap: error: --file name 'desk' and --mic-name 'Desk' differ only in case (a file system may "
                + "take them for one file); give each track a name of its own" + help)
        #expect(try listing(root).isEmpty)
        // Without a mix, "mix" is an ordinary name.
        try roomtap(["record", "--file", "mix=\(a)", "--out", out.path, "--quiet"], expect: 0)
        #expect(try listing(out) == ["mix.wav", "room.json"])
    }

    // MARK: 5. --force replaces the earlier recording

    @Test func forceReplacesTheWholeEarlierRecordingAndNothingElse() throws {
        let root = try temporaryDirectory()
        let out = root.appendingPathComponent("out")
        try roomtap(
            [
                "record", "--file", "alice=\(sample("alice"))", "--file", "bob=\(sample("bob"))", "--mix", "--out",
                out.path, "--quiet",
            ], expect: 0)
        let notes = Data("my notes\n".utf8)
        try notes.write(to: out.appendingPathComponent("notes.txt"))
        try notes.write(to: out.appendingPathComponent("dave.wav"))
        try roomtap(
            ["record", "--file", "carol=\(sample("carol"))", "--out", out.path, "--force", "--quiet"], expect: 0)
        #expect(try listing(out) == ["carol.wav", "dave.wav", "notes.txt", "room.json"])
        #expect(try Data(contentsOf: out.appendingPathComponent("notes.txt")) == notes)
        #expect(try Data(contentsOf: out.appendingPathComponent("dave.wav")) == notes, "not the earlier recording's")
        let report = try JSONSerialization.jsonObject(with: Data(contentsOf: out.appendingPathComponent("room.json")))
        let files = ((report as? [String: Any])?["tracks"] as? [[String: Any]])?.compactMap { $0["file"] as? String }
        #expect(files == ["carol.wav"])
    }

    @Test func forceRemovesNothingAnEarlierReportDoesNotOwn() throws {
        let root = try temporaryDirectory()
        let victim = root.appendingPathComponent("victim.txt")
        let precious = Data("precious\n".utf8)
        try precious.write(to: victim)
        let out = root.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: false)
        let roomJSON = out.appendingPathComponent("room.json")
        let carol = ["record", "--file", "carol=\(sample("carol"))", "--out", out.path, "--force", "--quiet"]

        // A report naming a file outside DIR.
        try Data(#"{"tracks": [{"name": "x", "file": "../victim.txt"}]}"#.utf8).write(to: roomJSON)
        try expectRefusal(
            carol,
            line: "roomtap: error: \(roomJSON.path) lists '../victim.txt', not a file roomtap writes in DIR; "
                + "--force removes only an earlier recording's own files: remove room.json or choose another --out")
        // A report naming a link.
        try Data(#"{"tracks": [{"name": "x", "file": "x.wav"}]}"#.utf8).write(to: roomJSON)
        try FileManager.default.createSymbolicLink(
            atPath: out.appendingPathComponent("x.wav").path, withDestinationPath: "../victim.txt")
        try expectRefusal(
            carol,
            line: "roomtap: error: \(out.path)/x.wav is a symbolic link; roomtap never writes through a link: "
                + "remove it or choose another --out")
        // Not a report at all.
        try Data("not json".utf8).write(to: roomJSON)
        try expectRefusal(
            carol,
            line: "roomtap: error: \(roomJSON.path) is not a roomtap report, so --force cannot tell which files "
                + "were the earlier recording's: remove it or choose another --out")
        #expect(try Data(contentsOf: victim) == precious)
        #expect(try listing(out) == ["room.json", "x.wav"])
    }
}
