import Foundation
import RoomTapAll
import RoomTapCLITestSupport
import RoomTapTestSupport
import Testing

/// The declarative option parser (CommandTable + Arguments), `record --json` and `record --dry-run`,
/// through the real CLI.
@Suite("CLI: option parser, --json, --dry-run")
struct OptionParserTests {
    /// A usage error: exit 64, one line naming the problem and pointing at the command's help,
    /// nothing on stdout.
    private func expectUsageError(_ arguments: [String], _ message: String, help: String = "record") throws {
        let outcome = try roomtap(arguments, expect: 64)
        #expect(outcome.stderrLines.count == 1, "stderr: \(outcome.stderr)")
        #expect(outcome.stderr.hasPrefix("roomtap: error: "), "stderr: \(outcome.stderr)")
        #expect(outcome.stderr.contains(message), "stderr: \(outcome.stderr)")
        let helpCommand = help.isEmpty ? "roomtap --help" : "roomtap \(help) --help"
        #expect(outcome.stderr.contains("(see '\(helpCommand)')"), "stderr: \(outcome.stderr)")
        #expect(outcome.stdout.isEmpty)
    }

    @Test func aValueIsNeverDashDashNorAnotherOption() throws {
        let directory = try temporaryDirectory()
        let alice = "alice=\(sample("alice"))"
        try expectUsageError(["record", "--file", alice, "--out", "--", "x"], "option '--out' needs a value, not '--'")
        try expectUsageError(
            ["record", "--file", alice, "--out", "--mix"], "option '--out' needs a value, not the option '--mix'")
        try expectUsageError(["record", "--file", alice, "-o", "-q"], "option '-o' needs a value, not the option '-q'")
        try expectUsageError(["record", "--out", directory.path, "--file", "--mix"], "option '--file' needs a value")
        #expect(try listing(directory).isEmpty)
        #expect(!FileManager.default.fileExists(atPath: "--"))
    }

    @Test func shortOptionsWorkLikeTheLongOnes() throws {
        let directory = try temporaryDirectory()
        let out = directory.appendingPathComponent("short")
        let first = try roomtap(["record", "--file", "alice=\(sample("alice"))", "-o", out.path, "-q"], expect: 0)
        #expect(first.stdout.isEmpty, "-q prints no summary table")
        #expect(first.stderr.isEmpty, "-q prints no progress: \(first.stderr)")
        #expect(try listing(out) == ["alice.wav", "room.json"])
        // Again without -f: refused; with -f: replaced.
        let refused = try roomtap(["record", "--file", "alice=\(sample("alice"))", "-o", out.path, "-q"], expect: 1)
        #expect(refused.stderr.contains("already exists; pass --force"))
        try roomtap(["record", "--file", "bob=\(sample("bob"))", "-o", out.path, "-q", "-f"], expect: 0)
        #expect(try listing(out) == ["bob.wav", "room.json"])
        // --name=value is the same as --name value.
        let equals = directory.appendingPathComponent("equals")
        try roomtap(["record", "--file=alice=\(sample("alice"))", "--out=\(equals.path)", "--quiet"], expect: 0)
        #expect(try listing(equals) == ["alice.wav", "room.json"])
    }

    @Test(arguments: [
        (["record", "--file", "a=x.opus", "--out", "x", "--loud"], "unknown option '--loud' for 'roomtap record'"),
        (["record", "--file", "a=x.opus", "--out", "x", "-x"], "unknown option '-x' for 'roomtap record'"),
        (["record", "--file", "a=x.opus", "--out", "x", "--mix=yes"], "option '--mix' takes no value"),
        (["record", "--file", "a=x.opus", "-o", "x", "--out", "y"], "option '--out' given 2 times; give it once"),
        (["record", "--file", "a=x.opus", "--out", "x", "--play", "--play=hw:1"], "option '--play' given 2 times"),
        (["record", "--file", "a=x.opus", "--out", "x", "--channels", "1", "--channels=2"], "given 2 times"),
        (["record", "--file", "a=x.opus", "--out", "x", "--play="], "--play= names no device"),
    ])
    func parserUsageErrors(arguments: [String], message: String) throws {
        try expectUsageError(arguments, message)
    }

    @Test func controlVerbsRefuseOptionsTheyDoNotTake() throws {
        try expectUsageError(
            ["tracks", "--scope", "record"], "unknown option '--scope' for 'roomtap tracks'", help: "tracks")
        try expectUsageError(["mute", "bob", "--scope"], "option '--scope' needs a value", help: "mute")
        try expectUsageError(["timeline", "dir", "-q"], "unknown option '-q' for 'roomtap timeline'", help: "timeline")
        try expectUsageError(["--bogus"], "unknown option '--bogus' for 'roomtap'", help: "")
    }

    @Test func negativeLevelsAreValuesNotOptions() throws {
        // No recorder at this socket: the command gets as far as connecting, so -6dB was taken as the level.
        let socket = FileManager.default.temporaryDirectory.appendingPathComponent("none-\(UUID().uuidString).sock")
        let outcome = try roomtap(["volume", "bob", "-6dB", "--control", socket.path], expect: 1)
        #expect(outcome.stderr.contains("no recorder at"), "stderr: \(outcome.stderr)")
    }

    @Test func playFollowedByAnotherOptionTakesTheDefaultDevice() throws {
        // --play then --dry-run: the device is "default" and --dry-run stays an option (the plan is
        // printed, nothing is played or created).
        let directory = try temporaryDirectory()
        let out = directory.appendingPathComponent("room")
        let outcome = try roomtap(
            ["record", "--file", "alice=\(sample("alice"))", "--out", out.path, "--play", "--dry-run"], expect: 0)
        #expect(outcome.stdout.contains(out.appendingPathComponent("alice.wav").path))
        #expect(outcome.stdout.contains("playback     default (the mix)"), "\(outcome.stdout)")
        #expect(!FileManager.default.fileExists(atPath: out.path))
        let device = try roomtap(
            ["record", "--file", "alice=\(sample("alice"))", "--out", out.path, "--play", "hw:9", "--dry-run"],
            expect: 0)
        #expect(device.stdout.contains("playback     hw:9 (the mix)"), "\(device.stdout)")
        // --play with a device and then a value that is not an option's: the device is taken, the
        // stray argument is not (record takes no positional arguments).
        try expectUsageError(
            [
                "record", "--file", "alice=\(sample("alice"))", "--out", out.path, "--play", "hw:9", "stray",
                "--dry-run",
            ],
            "unexpected argument 'stray'")
    }

    @Test func helpListsExactlyTheTablesCommands() throws {
        let outcome = try roomtap(["help"], expect: 0)
        let listed = outcome.stdout.split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("  "), !line.hasPrefix("   "), let word = line.split(separator: " ").first,
                !word.hasPrefix("-")
            else { return nil }
            return String(word)
        }
        #expect(
            listed == [
                "record", "repair", "timeline", "view", "export", "info", "transcript", "upload", "tracks", "status",
                "mute", "unmute",
                "volume", "solo", "unsolo", "watch", "agent", "list", "stop", "worker", "submit", "jobs", "cancel",
                "help",
                "version",
            ], "listed: \(listed)")
        for command in listed {
            let viaHelp = try roomtap(["help", command], expect: 0)
            let viaOption = try roomtap([command, "--help"], expect: 0)
            let viaShort = try roomtap([command, "-h"], expect: 0)
            #expect(viaHelp.stdout == viaOption.stdout, "help \(command)")
            #expect(viaOption.stdout == viaShort.stdout, "\(command) -h")
            #expect(viaHelp.stdout.contains("-h, --help"), "help \(command)")
        }
        let unknown = try roomtap(["frobnicate"], expect: 64)
        #expect(unknown.stderr.contains("the commands are " + listed.joined(separator: ", ")), "\(unknown.stderr)")
    }

    @Test func helpShowsShortFormsAndEveryRecordOption() throws {
        let text = try roomtap(["record", "--help"], expect: 0).stdout
        for label in ["-o, --out DIR", "-q, --quiet", "-f, --force", "--json", "--dry-run", "--play [DEVICE]"] {
            #expect(text.contains("  \(label)"), "missing \(label)")
        }
        for section in ["OPTIONS:", "LIVE OPTIONS:", "AGENT OPTIONS", "CONTROL AND PLAYBACK:", "EXAMPLES:"] {
            #expect(text.contains(section), "missing \(section)")
        }
    }

    @Test func recordJSONMatchesTheWAVs() throws {
        let directory = try temporaryDirectory()
        let out = directory.appendingPathComponent("room")
        let outcome = try roomtap(
            [
                "record", "--file", "alice=\(sample("alice"))", "--file", "bob=\(sample("bob"))@1.5", "--mix",
                "-o", out.path, "--json",
            ], expect: 0)
        let document = try #require(
            try JSONSerialization.jsonObject(with: Data(outcome.stdout.utf8)) as? [String: Any],
            "stdout: \(outcome.stdout)")
        #expect(document["out"] as? String == out.path)
        let roomSamples = try #require(document["room_samples"] as? Int)
        let tracks = try #require(document["tracks"] as? [[String: Any]])
        #expect(tracks.compactMap { $0["name"] as? String }.sorted() == ["alice", "bob", "mix"])
        for track in tracks {
            let file = try #require(track["file"] as? String)
            let wav = try WAVFile.inspect(path: file)
            #expect(track["samples"] as? Int == Int(wav.readableDataSize / 2), "\(file)")
            #expect(track["samples"] as? Int == roomSamples, "\(file)")
        }
        let report = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: out.appendingPathComponent("room.json")))
                as? [String: Any])
        #expect(report["durationSamples"] as? Int == roomSamples)
        #expect(!outcome.stdout.contains("TRACK"), "no table with --json")
        #expect(outcome.stdout.split(separator: "\n").count == 1, "one JSON document, nothing else on stdout")
    }

    @Test func dryRunCreatesNothingAndNamesEveryFile() throws {
        let directory = try temporaryDirectory()
        let out = directory.appendingPathComponent("new/room")
        let outcome = try roomtap(
            [
                "record", "--file", "alice=\(sample("alice"))", "--file", "bob=\(sample("bob"))@2", "--mix",
                "--out", out.path, "--dry-run",
            ], expect: 0)
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("new").path))
        for name in ["alice.wav", "bob.wav", "mix.wav", "room.json"] {
            #expect(outcome.stdout.contains(out.appendingPathComponent(name).path), "missing \(name)")
        }
        #expect(outcome.stdout.contains(sample("alice")))
        #expect(outcome.stdout.contains("2.000 s"), "bob's offset")
        #expect(outcome.stdout.contains("room length"))

        let json = try roomtap(
            ["record", "--file", "alice=\(sample("alice"))", "--out", out.path, "--dry-run", "--json"], expect: 0)
        let plan = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(plan["dry_run"] as? Bool == true)
        #expect(plan["creates_out"] as? Bool == true)
        #expect((plan["room_samples"] as? Int ?? 0) > 0)
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("new").path))
    }

    @Test func dryRunWithForceRemovesNothing() throws {
        let directory = try temporaryDirectory()
        let out = directory.appendingPathComponent("room")
        try roomtap(["record", "--file", "alice=\(sample("alice"))", "--out", out.path, "--quiet"], expect: 0)
        let before = try listing(out)
        let sizes = try before.map {
            try FileManager.default.attributesOfItem(atPath: out.appendingPathComponent($0).path)[.size] as? Int
        }
        // Without --force the dry run refuses, like the run would.
        let refused = try roomtap(
            ["record", "--file", "bob=\(sample("bob"))", "--out", out.path, "--dry-run"], expect: 1)
        #expect(refused.stderr.contains("already exists"), "stderr: \(refused.stderr)")
        let outcome = try roomtap(
            ["record", "--file", "bob=\(sample("bob"))", "--out", out.path, "--dry-run", "-f"], expect: 0)
        #expect(outcome.stdout.contains("removes \(out.appendingPathComponent("alice.wav").path)"), "\(outcome.stdout)")
        #expect(outcome.stdout.contains("removes \(out.appendingPathComponent("room.json").path)"))
        #expect(outcome.stdout.contains(out.appendingPathComponent("bob.wav").path))
        #expect(try listing(out) == before)
        #expect(
            try before.map {
                try FileManager.default.attributesOfItem(atPath: out.appendingPathComponent($0).path)[.size] as? Int
            } == sizes)
    }

    @Test func dryRunOfALiveRoomBindsNoSocket() throws {
        let directory = try temporaryDirectory()
        let out = directory.appendingPathComponent("live")
        let port = try freeUDPPort()
        let control = uniqueControlPath()
        let outcome = try roomtap(
            [
                "record", "--listen", "127.0.0.1:\(port)", "--out", out.path, "--control", control, "--dry-run",
            ], expect: 0)
        #expect(outcome.stdout.contains("until stopped"), "\(outcome.stdout)")
        #expect(outcome.stdout.contains("127.0.0.1:\(port)"))
        #expect(!FileManager.default.fileExists(atPath: control))
        #expect(!FileManager.default.fileExists(atPath: out.path))
    }
}
