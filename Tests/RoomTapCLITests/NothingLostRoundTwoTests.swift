import Foundation
import RoomTapAll
import RoomTapCLITestSupport
import RoomTapMediaTestSupport
import RoomTapRTPTestSupport
import RoomTapTestSupport
import Testing

/// Issue 26, "Nothing lost, round two": the CLI's output paths against what the file system does,
/// and a DIR that a live recorder owns.
@Suite("CLI: nothing lost, round two")
struct NothingLostRoundTwoTests {
    /// A small deterministic generator (SplitMix64), so a failing case is reproduced by its seed.
    struct SplitMix: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    /// A random spelling of a missing directory below the working directory: 1-3 components
    /// (one-character ASCII and non-ASCII names weighted in), single or doubled slashes, an optional
    /// `./` in front and an optional trailing slash (or two).
    static func randomRelativePath(_ rng: inout SplitMix) -> String {
        let names = ["o", "x", "q", "é", "ü", "日", "ab", "日本語", "a b", "Ω2", "-", "_", "o.d"]
        let depth = Int.random(in: 1...3, using: &rng)
        var path = Bool.random(using: &rng) && Bool.random(using: &rng) ? "./" : ""
        for i in 0..<depth {
            if i > 0 { path += Int.random(in: 0..<4, using: &rng) == 0 ? "//" : "/" }
            path += names.randomElement(using: &rng)!
        }
        switch Int.random(in: 0..<4, using: &rng) {
        case 0: path += "/"
        case 1: path += "//"
        default: break
        }
        return path
    }

    /// The first component of a relative spelling, as the file system names the entry it creates.
    static func firstComponent(_ path: String) -> String {
        path.split(separator: "/").first { $0 != "." }.map(String.init) ?? "."
    }

    /// Item 8: `--out o` (and any missing DIR whose components are one character, or not ASCII,
    /// with trailing or doubled slashes, relative or absolute) neither crashes nor goes elsewhere:
    /// `--dry-run` exits 0 and creates nothing, the recording lands where the file system resolves
    /// DIR, and the directories it made are exactly the missing ones.
    @Test func outputDirectorySpellingsAgainstTheFileSystem() throws {
        let root = try temporaryDirectory()
        let seed = UInt64(Date().timeIntervalSince1970)
        var rng = SplitMix(state: seed)
        // The cases of the issue first, then random ones.
        var cases = ["o", "x/", "q/x", "é"].map { ($0, false) }
        for _ in 0..<24 { cases.append((Self.randomRelativePath(&rng), Bool.random(using: &rng))) }
        for (n, (relative, absolute)) in cases.enumerated() {
            let work = root.appendingPathComponent("case\(n)")
            try FileManager.default.createDirectory(at: work, withIntermediateDirectories: false)
            let out = absolute ? work.path + "/" + relative : relative
            let context = "seed \(seed), case \(n): --out '\(out)'"
            // A value that starts with '-' is written --out=VALUE, as the CLI's own error says.
            let outArguments = out.hasPrefix("-") ? ["--out=\(out)"] : ["--out", out]
            let dry = try CLIRunner.run(
                ["record", "--file", "alice=\(sample("alice"))"] + outArguments + ["--dry-run"], in: work, timeout: 60)
            #expect(dry.status == 0, "\(context): dry run exited \(dry.status), stderr: \(dry.stderr)")
            #expect(dry.stdout.contains("alice.wav"), "\(context): \(dry.stdout)")
            #expect(try listing(work).isEmpty, "\(context): --dry-run created nothing")
            // Real runs for the issue's cases and every fourth random one (each takes a second).
            guard n < 4 || n % 4 == 0 else { continue }
            let run = try CLIRunner.run(
                ["record", "--file", "alice=\(sample("alice"))"] + outArguments + ["--quiet"], in: work, timeout: 60)
            #expect(run.status == 0, "\(context): exited \(run.status), stderr: \(run.stderr)")
            // Where the file system puts DIR: the same spelling resolved from the working directory.
            let resolved = absolute ? out : work.path + "/" + out
            for name in ["alice.wav", "room.json"] {
                let file = resolved + (resolved.hasSuffix("/") ? "" : "/") + name
                #expect(FileManager.default.fileExists(atPath: file), "\(context): no \(file)")
            }
            #expect(try listing(work) == [Self.firstComponent(relative)], "\(context): only DIR's top was made")
        }
    }

    /// Item 8, failing side: a missing DIR below a regular file (one-character names) is refused in
    /// one line, dry run or not, and nothing is created.
    @Test func aMissingDirectoryBelowAFileIsRefused() throws {
        let work = try temporaryDirectory()
        try Data("not a directory\n".utf8).write(to: work.appendingPathComponent("f"))
        for out in ["f/o", "f/o/", "f/é/x"] {
            for extra in [[], ["--dry-run"]] {
                let outcome = try CLIRunner.run(
                    ["record", "--file", "alice=\(sample("alice"))", "--out", out, "--quiet"] + extra, in: work,
                    timeout: 60)
                #expect(outcome.status == 1, "--out \(out): stderr \(outcome.stderr)")
                #expect(
                    outcome.stderrLines == [
                        "roomtap: error: cannot create output directory \(out): f is not a directory; choose "
                            + "another --out"
                    ], "--out \(out)")
                #expect(try listing(work) == ["f"])
            }
        }
    }

    /// The bytes of every file in `directory`, by name.
    static func contents(_ directory: URL) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
            files[name] = try Data(contentsOf: directory.appendingPathComponent(name))
        }
        return files
    }

    /// Item 3: `--force` with a port in use refuses in one line and leaves the earlier recording
    /// as it was (the ports are bound before DIR is touched).
    @Test func forceWithAPortInUseLeavesTheEarlierRecording() throws {
        let out = try temporaryDirectory().appendingPathComponent("busy")
        try roomtap(["record", "--file", "alice=\(sample("alice"))", "--out", out.path, "--quiet"], expect: 0)
        let before = try Self.contents(out)
        #expect(before.keys.sorted() == ["alice.wav", "room.json"])
        let holder = try UDPSocket(address: ListenAddress(host: "127.0.0.1", port: 0))
        defer { holder.close() }
        for arguments in [
            ["--listen", holder.address.description],
            ["--file", "bob=\(sample("bob"))", "--listen", holder.address.description],
        ] {
            let outcome = try roomtap(
                ["record"] + arguments + ["--duration", "1", "--out", out.path, "--force"], expect: 1, timeout: 20)
            #expect(outcome.stderrLines.count == 1 && outcome.stderr.contains("already in use"), "\(outcome.stderr)")
            #expect(try Self.contents(out) == before, "the earlier recording is untouched")
        }
    }

    /// Item 1: a DIR that a live recorder writes into is refused by another `record` (even with
    /// `--force`), by `repair` and by `export`, naming the recorder's pid; its files go on
    /// untouched. Once it stops, or dies by SIGKILL, DIR is free again.
    @Test func aDirectoryALiveRecorderOwnsIsRefusedEvenWithForce() throws {
        let out = try temporaryDirectory().appendingPathComponent("busy")
        for ending in [SIGINT, SIGKILL] {
            let live = try CLIRunner.start([
                "record", "--listen", "127.0.0.1:0", "--out", out.path, "--quiet", "--force",
            ])
            // DIR is the live recorder's once its lock names it and room.json is its own ("recording":
            // an earlier run's is "complete", and --force removes that run's files before it is written).
            let lockFile = out.appendingPathComponent(".roomtap.lock")
            #expect(
                try waitUntil(timeout: .seconds(30), every: .milliseconds(20)) {
                    (try? String(contentsOf: lockFile, encoding: .utf8)) == "\(live.pid)\n"
                        && (try? roomJSON(out))?["state"] as? String == "recording"
                })
            let message = "recorder pid \(live.pid) is recording into \(out.path)"
            let before = try listing(out)
            for arguments in [
                ["record", "--file", "alice=\(sample("alice"))", "--out", out.path, "--force"],
                ["record", "--file", "alice=\(sample("alice"))", "--out", out.path, "--force", "--dry-run"],
                ["record", "--file", "alice=\(sample("alice"))", "--out", out.path],
                ["repair", out.path], ["export", out.path, "--out", out.path + "-export"],
            ] {
                let outcome = try roomtap(arguments, expect: 1)
                #expect(
                    outcome.stderrLines.count == 1 && outcome.stderr.contains(message),
                    "\(arguments): \(outcome.stderr)")
            }
            #expect(live.isRunning, "the live recorder goes on")
            #expect(try listing(out) == before, "its files untouched")
            #expect(try roomJSON(out)["state"] as? String == "recording", "room.json is still the live recorder's")
            #expect(!FileManager.default.fileExists(atPath: out.path + "-export"))
            live.signal(ending)
            _ = live.wait(timeout: 60)
            if ending == SIGINT {
                #expect(
                    !FileManager.default.fileExists(atPath: out.appendingPathComponent(".roomtap.lock").path),
                    "a recorder that stops leaves no lock file")
            }
            // Free again: a dead recorder's lock went with it.
            try roomtap(
                ["record", "--file", "alice=\(sample("alice"))", "--out", out.path, "--force", "--quiet"], expect: 0)
            #expect(FileManager.default.fileExists(atPath: out.appendingPathComponent("alice.wav").path))
        }
    }

    /// Item 9: what does not reach standard output (a full disk: /dev/full) fails the command
    /// with one line and exit 1, as coreutils do; a recording still ends whole.
    @Test func aFullStandardOutputIsAFailure() throws {
        let out = try temporaryDirectory().appendingPathComponent("room")
        for arguments in [
            ["--version"], ["help", "record"], ["help"],
            ["record", "--file", "alice=\(sample("alice"))", "--out", out.path, "--json", "--quiet"],
        ] {
            let outcome = try CLIRunner.run(
                ["-c", "exec \"$0\" \"$@\" > /dev/full", CLIRunner.executable.path] + arguments,
                executable: URL(fileURLWithPath: "/bin/sh"))
            #expect(outcome.status == 1, "\(arguments): exited \(outcome.status)")
            // The reason when stdio still knows it (what it had buffered failed at the end).
            #expect(
                outcome.stderrLines.count == 1
                    && outcome.stderr.hasPrefix("roomtap: error: cannot write to standard output"),
                "\(arguments): \(outcome.stderr)")
        }
        #expect(try WAVFile.inspect(path: out.appendingPathComponent("alice.wav").path).frameCount > 0)
    }
}

extension NothingLostRoundTwoTests {
    /// Item 2: `--multichannel` is checked against every other output of the run, and its
    /// directory, before anything is written; a relative path is relative to DIR (record's --out,
    /// export's OUT). Each refusal is one line, exit 1, and the earlier recording stays byte for byte.
    @Test func multichannelIsCheckedAgainstEveryOutputBeforeAnythingIsWritten() throws {
        let base = try temporaryDirectory()
        let out = base.appendingPathComponent("mc")
        let files = ["--file", "alice=\(sample("alice"))", "--file", "bob=\(sample("bob"))"]
        try roomtap(["record"] + files + ["--out", out.path, "--mix", "--quiet"], expect: 0)
        let before = try Self.contents(out)
        for (given, says) in [
            ("alice.wav", "would be \(out.path)/alice.wav, the file of track alice"),
            ("ALICE.wav", "would be \(out.path)/alice.wav, the file of track alice"),
            ("room.json", "would be \(out.path)/room.json, the room's report"),
            ("mix.wav", "the mix"),
            ("./bob.wav", "the file of track bob"),
            (out.path + "/alice.wav", "the file of track alice"),
            ("mc/alice.wav", "the directory \(out.path)/mc does not exist"),
            ("sub/all.wav", "the directory \(out.path)/sub does not exist"),
            (".", "is a directory"),
        ] {
            for extra in [[], ["--dry-run"]] {
                let outcome = try roomtap(
                    ["record"] + files + ["--out", out.path, "--mix", "-f", "--multichannel", given] + extra,
                    expect: 1)
                #expect(
                    outcome.stderrLines.count == 1 && outcome.stderr.hasPrefix("roomtap: error: --multichannel ")
                        && outcome.stderr.contains(says), "\(given) \(extra): \(outcome.stderr)")
                if !given.hasPrefix("/") {
                    #expect(outcome.stderr.contains("(a relative path is relative to \(out.path))"), "\(given)")
                }
                #expect(try Self.contents(out) == before, "\(given) \(extra): the earlier recording is intact")
            }
        }
        // A missing DIR: a relative name lands in it, created with it; room.json says it as given.
        let fresh = base.appendingPathComponent("new/room")
        try roomtap(["record"] + files + ["--out", fresh.path, "--multichannel", "all.wav", "--quiet"], expect: 0)
        let (info, _) = try WAVFile.readSamples(path: fresh.appendingPathComponent("all.wav").path)
        #expect(info.channels == 2)
        let multichannel = try #require(try roomJSON(fresh)["multichannel"] as? [String: Any])
        #expect(multichannel["file"] as? String == "all.wav")
        #expect(!FileManager.default.fileExists(atPath: FileManager.default.currentDirectoryPath + "/all.wav"))

        // export: relative to OUT; a clash with a converted file or the report is refused first.
        let exported = base.appendingPathComponent("ex")
        for (given, says) in [
            ("alice.wav", "would be \(exported.path)/alice.wav, the file of track alice"),
            ("room.json", "the report"),
            ("ex/alice.wav", "the directory \(exported.path)/ex does not exist"),
        ] {
            let outcome = try roomtap(
                ["export", out.path, "--out", exported.path, "--multichannel", given], expect: 1)
            #expect(
                outcome.stderrLines.count == 1 && outcome.stderr.contains(says), "export \(given): \(outcome.stderr)")
            #expect(!FileManager.default.fileExists(atPath: exported.path), "export \(given): nothing written")
        }
        // In DIR itself (OUT defaults to DIR): the recording's own files are inputs.
        let inPlace = try roomtap(["export", out.path, "--format", "flac", "--multichannel", "bob.wav"], expect: 1)
        #expect(inPlace.stderr.contains("the recording of track bob"), "\(inPlace.stderr)")
        #expect(try Self.contents(out) == before)
        try roomtap(["export", out.path, "--out", exported.path, "--multichannel", "all.wav"], expect: 0)
        #expect(try WAVFile.readSamples(path: exported.appendingPathComponent("all.wav").path).0.channels == 2)
    }
}

extension NothingLostRoundTwoTests {
    /// Item 4: controls on the mix apply to what is heard only. `mute mix` and `volume mix 0`
    /// change nothing in mix.wav (byte for byte the offline mix of the same speakers, over the
    /// same length); `--scope record` or `all` on the mix is refused in one line; and `watch` on a
    /// terminal opens on a speaker, so its first `m` mutes a speaker, never the mix.
    @Test func controlsOnTheMixShapeWhatIsHeardOnly() throws {
        let base = try temporaryDirectory()
        let out = base.appendingPathComponent("live")
        let control = uniqueControlPath()
        // `later` (at 300 s, silent until then) keeps the room running until it is stopped, and is
        // the first speaker: watch's key mutes it without changing mix.wav (a speaker's heard mute is
        // in mix.wav by design: it holds the mix that was heard).
        let recorder = try CLIRunner.start(
            [
                "record", "--file", "later=\(sample("carol"))@300", "--file", "alice=\(sample("alice"))",
                "--file", "bob=\(sample("bob"))@2.5", "--realtime", "--mix", "--out", out.path, "--quiet",
                "--control", control,
            ])
        defer { if recorder.isRunning { recorder.signal(SIGKILL) } }
        #expect(
            try waitUntil(timeout: .seconds(60), every: .milliseconds(50)) {
                try CLIRunner.run(["tracks", "--json", "--control", control], timeout: 20).stdout.contains("\"later\"")
            })
        // watch on a terminal (script(1) gives it one): its first key acts on a speaker.
        let watch = try CLIRunner.run(
            ["-c", "printf mq | script -qec \"$0 watch --control $1\" /dev/null", CLIRunner.executable.path, control],
            timeout: 60, executable: URL(fileURLWithPath: "/bin/sh"))
        #expect(watch.status == 0, "watch: \(watch.stderr)")
        func tracks() throws -> [String: [String: Any]] {
            let outcome = try CLIRunner.run(["tracks", "--json", "--control", control], timeout: 20)
            let json = try JSONSerialization.jsonObject(with: Data(outcome.stdout.utf8)) as? [String: Any]
            let list = json?["tracks"] as? [[String: Any]] ?? []
            return Dictionary(list.map { ($0["name"] as? String ?? "", $0) }, uniquingKeysWith: { a, _ in a })
        }
        var now = try tracks()
        #expect(now["mix"]?["muted"] as? Bool == false, "watch's first key left the mix alone")
        #expect(now["later"]?["muted"] as? Bool == true, "watch's first key muted the first speaker")
        #expect(now["mix"]?["kind"] as? String == "mix" && now["alice"]?["kind"] as? String == "speaker")
        #expect(now["mix"]?["role"] as? String == "mix" && now["alice"]?["role"] as? String == "speaker-file")
        // What is heard of the mix: muted, turned down, a solo. None of it reaches mix.wav.
        try roomtap(["mute", "mix"] + ["--control", control], expect: 0)
        try roomtap(["volume", "mix", "0"] + ["--control", control], expect: 0)
        for scope in ["record", "all"] {
            for verb in [["mute", "mix"], ["unmute", "mix"], ["volume", "mix", "0.5"]] {
                let refused = try roomtap(verb + ["--scope", scope] + ["--control", control], expect: 1)
                #expect(
                    refused.stderrLines.count == 1
                        && refused.stderr.contains(
                            "its controls change what is heard only, and its file is the mix "
                                + "of the record"),
                    "\(verb) --scope \(scope): \(refused.stderr)")
            }
        }
        now = try tracks()
        #expect(now["mix"]?["muted"] as? Bool == true && now["mix"]?["record_muted"] as? Bool == false)
        // Let the room run past 1.5 s (mix.wav's size says how far it got) so the comparison below
        // covers the speakers talking under those controls, however fast the steps above ran.
        let mixPath = out.appendingPathComponent("mix.wav").path
        #expect(
            try waitUntil(timeout: .seconds(60), every: .milliseconds(50)) {
                ((try? FileManager.default.attributesOfItem(atPath: mixPath))?[.size] as? Int ?? 0) > 44 + 2 * 72_000
            })
        _ = try roomtap(["stop"] + ["--control", control], expect: 0)
        #expect(recorder.wait(timeout: 60).status == 0)

        // The offline mix of the same speakers, over the length the live room ran.
        let offline = base.appendingPathComponent("offline")
        try roomtap(
            [
                "record", "--file", "alice=\(sample("alice"))", "--file", "bob=\(sample("bob"))@2.5", "--mix",
                "--out", offline.path, "--quiet",
            ], expect: 0)
        let (_, live) = try WAVFile.readSamples(path: out.appendingPathComponent("mix.wav").path)
        let (_, reference) = try WAVFile.readSamples(path: offline.appendingPathComponent("mix.wav").path)
        let length = min(live.count, reference.count)
        #expect(length > 48_000, "the live room ran \(live.count) samples")
        let differs = (0..<length).first { live[$0] != reference[$0] }
        #expect(differs == nil, "mix.wav is the mix of the record; it differs from sample \(differs ?? -1)")
    }
}

extension NothingLostRoundTwoTests {
    /// `tool ARGS` (flac, opusdec, ...): its status and output together.
    static func tool(_ name: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let path = try #require(WAVFixtures.tool(name), "\(name) is not installed; make deps installs it")
        return try WAVFixtures.run(path, arguments)
    }

    /// Item 5: an offline room on a disk that fills (a tmpfs of its own, in a mount namespace of
    /// its own) prints its summary whole (`--json` one document with `errors`), ends with one line
    /// naming each file cut and where and telling to run `roomtap repair DIR`, and exits 1. After
    /// repair every file (WAV and FLAC) is valid and holds exactly the room's first samples, byte
    /// for byte what the same room records on a disk with space.
    @Test(arguments: ["wav", "flac"])
    func aFullDiskInAnOfflineRoomSaysWhatWasCut(_ format: String) throws {
        let base = try temporaryDirectory("full-disk-\(format)")
        let files = [
            "--file", "alice=\(sample("alice"))", "--file", "bob=\(sample("bob"))@2.5", "--file",
            "carol=\(sample("carol"))", "--mix", "--format", format,
        ]
        let whole = base.appendingPathComponent("whole")
        try roomtap(["record"] + files + ["--out", whole.path, "--quiet"], expect: 0)
        let mount = base.appendingPathComponent("disk")
        let copy = base.appendingPathComponent("copy")
        try FileManager.default.createDirectory(at: mount, withIntermediateDirectories: false)
        // Room for about a third of the room's files; everything else on that disk fails.
        let wholeSize = try Self.contents(whole).values.reduce(0) { $0 + $1.count }
        let script = """
            mount -t tmpfs -o size=\(wholeSize / 3) roomtap-full "$1" || exit 99
            "$0" record \(files.map { "'\($0)'" }.joined(separator: " ")) --out "$1/room" --json > "$1.json" 2> "$1.err"
            status=$?
            cp -a "$1/room" "$2"
            exit $status
            """
        let outcome = try CLIRunner.run(
            ["-m", "sh", "-c", script, CLIRunner.executable.path, mount.path, copy.path],
            timeout: 120, executable: URL(fileURLWithPath: "/usr/bin/unshare"))
        #expect(outcome.status == 1, "exit \(outcome.status): \(outcome.stderr)")
        let stderr = try String(contentsOf: URL(fileURLWithPath: mount.path + ".err"), encoding: .utf8)
        let errorLines = stderr.split(separator: "\n").filter { $0.hasPrefix("roomtap: error: ") }
        #expect(errorLines.count == 1, "one error line: \(stderr)")
        let line = String(errorLines.first ?? "")
        #expect(line.contains("cut short (No space left on device): "), "\(line)")
        #expect(line.contains("then run roomtap repair \(mount.path)/room"), "\(line)")
        // --json: one whole document naming the files that failed.
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: mount.path + ".json")))
                as? [String: Any])
        let errors = try #require(json["errors"] as? [[String: Any]])
        let failed = Set(errors.compactMap { $0["file"] as? String })
        #expect(!failed.isEmpty && (json["tracks"] as? [[String: Any]])?.count == 4, "\(json)")
        for file in failed where file != "room.json" {
            #expect(line.contains("\(file) at "), "\(file) named with its cut: \(line)")
        }

        // repair, then every file is whole up to its cut and the same audio as on a disk with space.
        try roomtap(["repair", copy.path], expect: 0)
        for name in ["alice", "bob", "carol", "mix"] {
            let cut = copy.appendingPathComponent("\(name).\(format)").path
            var decoded = cut
            if format == "flac" {
                let test = try Self.tool("flac", ["-t", "-s", cut])
                #expect(test.status == 0, "\(name).flac passes flac -t after repair: \(test.output)")
                decoded = base.appendingPathComponent("\(name)-cut.wav").path
                _ = try Self.tool("flac", ["-d", "-s", "-f", cut, "-o", decoded])
                let full = base.appendingPathComponent("\(name)-whole.wav").path
                _ = try Self.tool(
                    "flac", ["-d", "-s", "-f", whole.appendingPathComponent("\(name).flac").path, "-o", full])
                let (_, got) = try WAVFile.readSamples(path: decoded)
                let (_, want) = try WAVFile.readSamples(path: full)
                #expect(
                    got.count <= want.count && Array(want.prefix(got.count)) == got, "\(name): the room's first samples"
                )
            } else {
                let (_, got) = try WAVFile.readSamples(path: decoded)
                let (_, want) = try WAVFile.readSamples(path: whole.appendingPathComponent("\(name).wav").path)
                #expect(
                    got.count <= want.count && Array(want.prefix(got.count)) == got, "\(name): the room's first samples"
                )
            }
        }
    }
}

extension NothingLostRoundTwoTests {
    /// Item 6: `repair DIR` of a killed `--format opus` or `--format flac` recording repairs every
    /// file: Ogg Opus cut after its last whole page and marked end-of-stream (opusdec decodes it
    /// without complaint, to the length repair reports), FLAC's STREAMINFO set (`flac -t` passes);
    /// room.json's length is what the files hold, not a stale rewrite's; the audio is the room's
    /// first samples, the same as an offline recording of the same files. A second repair changes
    /// nothing.
    @Test(arguments: ["opus", "flac"])
    func repairOfAKilledOpusOrFLACRecording(_ format: String) throws {
        let base = try temporaryDirectory("killed-\(format)")
        let out = base.appendingPathComponent("killed")
        let files = ["--file", "alice=\(sample("alice"))", "--file", "bob=\(sample("bob"))@2.5", "--format", format]
        let recorder = try CLIRunner.start(
            ["record"] + files + ["--realtime", "--out", out.path, "--quiet", "--control", uniqueControlPath()])
        let alice = out.appendingPathComponent("alice.\(format)").path
        // Killed once well over a second is in the files (and before the 10.5 s room ends): Opus at
        // 32 kbit/s writes about 4 kB a second, FLAC of speech about 40 kB.
        let killAt = format == "opus" ? 12_000 : 60_000
        #expect(
            try waitUntil(timeout: .seconds(60), every: .milliseconds(20)) {
                ((try? FileManager.default.attributesOfItem(atPath: alice)[.size] as? Int) ?? 0) > killAt
            })
        recorder.signal(SIGKILL)
        #expect(recorder.wait(timeout: 20).status == -SIGKILL)

        let repair = try roomtap(["repair", out.path], expect: 0)
        #expect(!repair.stderr.contains("not a readable"), "\(repair.stderr)")
        let json = try roomJSON(out)
        #expect(json["state"] as? String == "repaired")
        let duration = try #require(json["durationSamples"] as? Int)
        let whole = base.appendingPathComponent("whole")
        try roomtap(["record"] + files + ["--out", whole.path, "--quiet"], expect: 0)
        for name in ["alice", "bob"] {
            let path = out.appendingPathComponent("\(name).\(format)").path
            let decoded = base.appendingPathComponent("\(name).wav").path
            let reference = base.appendingPathComponent("\(name)-whole.wav").path
            let wholePath = whole.appendingPathComponent("\(name).\(format)").path
            if format == "opus" {
                let decode = try Self.tool("opusdec", ["--quiet", "--rate", "48000", path, decoded])
                #expect(decode.status == 0, "\(name): \(decode.output)")
                _ = try Self.tool("opusdec", ["--quiet", "--rate", "48000", wholePath, reference])
            } else {
                let test = try Self.tool("flac", ["-t", "-s", path])
                #expect(test.status == 0 && test.output.isEmpty, "\(name): \(test.output)")
                _ = try Self.tool("flac", ["-d", "-s", "-f", path, "-o", decoded])
                _ = try Self.tool("flac", ["-d", "-s", "-f", wholePath, "-o", reference])
            }
            let (_, got) = try WAVFile.readSamples(path: decoded)
            let (_, want) = try WAVFile.readSamples(path: reference)
            #expect(got.count > 48_000, "\(name): \(got.count) samples after repair")
            #expect(
                got.count <= want.count && Array(want.prefix(got.count)) == got, "\(name): the room's first samples")
            let track = (json["tracks"] as? [[String: Any]])?.first { $0["name"] as? String == name }
            #expect(track?["samples"] as? Int == got.count, "\(name): room.json gives what the file holds")
            #expect(duration >= got.count)
        }
        let again = try roomtap(["repair", out.path], expect: 0)
        #expect(!again.stdout.contains("repaired:") && again.stdout.contains("intact"), "\(again.stdout)")
    }
}

extension NothingLostRoundTwoTests {
    /// Item 7: a file that fails in a `--realtime` room (files that may not grow past 128 KiB:
    /// `ulimit -f`, EFBIG, as a full disk) is said at once: a warning on the recorder's stderr while
    /// it runs, `status` lists it, `tracks` marks the track; `stop` then reports the failure (exit 1)
    /// and the recorder's last line gives the cut at the room time the file really holds.
    @Test(.disabled(if: underThreadSanitizer, "TSan dies of SIGBUS under ulimit -f"))
    func aFileThatFailsInARealtimeRoomIsReportedAtOnce() throws {
        let out = try temporaryDirectory().appendingPathComponent("room")
        let control = uniqueControlPath()
        let recorder = try CLIRunner.start(
            [
                "-c", "ulimit -f 256 && exec \"$0\" \"$@\"", CLIRunner.executable.path, "record",
                "--file", "alice=\(sample("alice"))", "--file", "later=\(sample("bob"))@300", "--realtime",
                "--out", out.path, "--quiet", "--control", control,
            ], executable: URL(fileURLWithPath: "/bin/sh"))
        defer { if recorder.isRunning { recorder.signal(SIGKILL) } }
        func json(_ verb: String) throws -> [String: Any] {
            let outcome = try CLIRunner.run([verb, "--json", "--control", control], timeout: 20)
            return (try? JSONSerialization.jsonObject(with: Data(outcome.stdout.utf8)) as? [String: Any]) ?? [:]
        }
        // 128 KiB is 1.4 s of a mono 48 kHz WAV: the room runs on (to 300 s) long after.
        var errors: [[String: Any]] = []
        #expect(
            try waitUntil(timeout: .seconds(60), every: .milliseconds(100)) {
                errors = try json("status")["errors"] as? [[String: Any]] ?? []
                return errors.count == 2
            }, "status lists the failed files: \(errors)")
        #expect(Set(errors.compactMap { $0["file"] as? String }) == ["alice.wav", "later.wav"])
        #expect(errors.allSatisfy { ($0["error"] as? String)?.contains("File too large") == true })
        #expect(recorder.isRunning, "the room goes on")
        #expect(
            try waitUntil(timeout: .seconds(20), every: .milliseconds(50)) {
                recorder.stderrSoFar.contains("alice.wav") && recorder.stderrSoFar.contains("later.wav")
            }, "warned at once: \(recorder.stderrSoFar)")
        let tracks = try json("tracks")["tracks"] as? [[String: Any]] ?? []
        #expect(tracks.filter { $0["file_error"] is String }.count == 2, "\(tracks)")
        let table = try roomtap(["tracks", "--control", control], expect: 0)
        #expect(table.stdout.contains("live, FILE FAILED"), "\(table.stdout)")
        let text = try roomtap(["status", "--control", control], expect: 0)
        #expect(text.stdout.contains("FAILED      ") && text.stdout.contains("File too large"), "\(text.stdout)")

        let stop = try roomtap(["stop", "--control", control], expect: 1)
        #expect(stop.stdout.hasPrefix("stopped the recorder of "), "\(stop.stdout)")
        #expect(
            stop.stderrLines.count == 1
                && stop.stderr.contains("ended with 2 failed file(s) (alice.wav, later.wav): "), "\(stop.stderr)")
        let ended = recorder.wait(timeout: 60)
        #expect(ended.status == 1)
        let line = ended.stderrLines.last ?? ""
        let frames = try WAVFile.inspect(path: out.appendingPathComponent("alice.wav").path).frameCount
        #expect(line.contains(String(format: "alice.wav at %.2f s", Double(frames) / 48_000)), "\(line)")
    }
}

extension NothingLostRoundTwoTests {
    /// Item 10: `--play-track NAME` in a room of files (every name known) must name one of its
    /// tracks: one line naming them, exit 64, nothing created, dry run or not.
    @Test func playTrackOfNobodyIsRefused() throws {
        let base = try temporaryDirectory()
        let out = base.appendingPathComponent("room")
        for extra in [["--dry-run"], []] {
            let outcome = try roomtap(
                [
                    "record", "--file", "alice=\(sample("alice"))", "--file", "bob=\(sample("bob"))", "--play",
                    "null", "--play-track", "nobody", "--out", out.path,
                ] + extra, expect: 64)
            #expect(
                outcome.stderrLines == [
                    "roomtap: error: --play-track nobody: the room has no track of that name (its tracks: alice, bob); "
                        + "name one of them, or leave --play-track out to play the mix (see 'roomtap record --help')"
                ], "\(outcome.stderr)")
            #expect(try listing(base).isEmpty)
        }
    }
}

extension NothingLostRoundTwoTests {
    /// Item 15: one exit status per kind of mistake. A missing input file is bad input (exit 1),
    /// `--file` or `--agent-instructions` alike; `repair` of a directory that holds no recording is
    /// a failure (exit 1, one line), not "nothing to do".
    @Test func missingInputsAndEmptyRepairsExitOne() throws {
        let base = try temporaryDirectory()
        let missing = base.appendingPathComponent("missing.txt").path
        let instructions = try roomtap(
            [
                "record", "--file", "alice=\(sample("alice"))", "--agent", "--agent-instructions", missing, "--out",
                base.appendingPathComponent("room").path, "--dry-run",
            ], expect: 1)
        #expect(
            instructions.stderrLines == [
                "roomtap: error: cannot read --agent-instructions \(missing): No such file or directory; give a "
                    + "text file of instructions"
            ], "\(instructions.stderr)")
        let file = try roomtap(
            ["record", "--file", "alice=\(missing)", "--out", base.path + "/room", "--dry-run"], expect: 1)
        #expect(file.stderrLines.count == 1, "\(file.stderr)")
        let empty = base.appendingPathComponent("empty")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: false)
        let repair = try roomtap(["repair", empty.path], expect: 1)
        #expect(
            repair.stderrLines == [
                "roomtap: error: \(empty.path) holds no recording (no WAV, FLAC or Ogg Opus file, no room.json); give "
                    + "the directory roomtap record --out wrote, or the files to repair"
            ], "\(repair.stderr)")
    }
}

extension NothingLostRoundTwoTests {
    /// What users reach for: `volume NAME` shows the volume; a signed dB level is relative (as in
    /// pactl), an unsigned one absolute; `mute a b` and `mute --all` (every speaker, never the mix).
    @Test func volumeShownRelativeDecibelsAndMuteOfSeveral() throws {
        let control = uniqueControlPath()
        let recorder = try CLIRunner.start([
            "record", "--file", "later=\(sample("carol"))@300", "--file", "alice=\(sample("alice"))", "--realtime",
            "--mix", "--out", try temporaryDirectory().path, "--quiet", "--control", control,
        ])
        defer { if recorder.isRunning { recorder.signal(SIGKILL) } }
        func verb(_ arguments: [String], expect status: Int32 = 0) throws -> CLIRunner.Outcome {
            try roomtap(arguments + ["--control", control], expect: status)
        }
        #expect(
            try waitUntil(timeout: .seconds(60), every: .milliseconds(50)) {
                try CLIRunner.run(["tracks", "--json", "--control", control], timeout: 20).stdout.contains("\"later\"")
            })
        #expect(
            try verb(["volume", "alice"]).stdout
                == "alice: heard volume 1.00 (+0.0 dB); record volume 1.00 (+0.0 dB)\n")
        #expect(try verb(["volume", "alice", "-6dB"]).stdout.contains("heard unmuted, volume 0.50"))
        #expect(try verb(["volume", "alice", "+3dB"]).stdout.contains("heard unmuted, volume 0.71"))
        #expect(try verb(["volume", "alice", "+3dB"]).stdout.contains("heard unmuted, volume 1.00"))
        #expect(try verb(["volume", "alice", "0.25"]).stdout.contains("volume 0.25"))
        #expect(try verb(["volume", "alice", "0dB"]).stdout.contains("volume 1.00"), "unsigned dB is absolute")
        #expect(
            try verb(["volume", "alice", "-6dB", "--scope", "record"]).stdout.contains("record unmuted, volume 0.50"))
        #expect(try verb(["volume", "alice"]).stdout.contains("record volume 0.50 (-6.0 dB)"))
        let nobody = try verb(["volume", "nobody"], expect: 1)
        #expect(nobody.stderrLines == ["roomtap: error: no track named 'nobody' (tracks: mix, later, alice)"])

        let both = try verb(["mute", "alice", "later"])
        #expect(both.stdout.split(separator: "\n").count == 2 && both.stdout.contains("later: heard muted"))
        let unmuted = try verb(["unmute", "--all"])
        #expect(unmuted.stdout.split(separator: "\n").count == 2 && !unmuted.stdout.contains("mix:"))
        _ = try verb(["mute", "--all"])
        let tracks = try verb(["tracks", "--json"]).stdout
        let list = (try JSONSerialization.jsonObject(with: Data(tracks.utf8)) as? [String: Any])?["tracks"]
        let muted = Dictionary(
            ((list as? [[String: Any]]) ?? []).map { ($0["name"] as? String ?? "", $0["muted"] as? Bool ?? false) },
            uniquingKeysWith: { a, _ in a })
        #expect(muted == ["mix": false, "later": true, "alice": true])
        _ = try verb(["mute", "--all", "alice"], expect: 64)
        _ = try verb(["stop"])
        #expect(recorder.wait(timeout: 60).status == 0)
    }
}

extension NothingLostRoundTwoTests {
    /// What users reach for: `--file PATH` names the track after the file (`bob.opus@2.5` is bob
    /// at 2.5 s), and `--listen localhost:PORT` takes a host name as the room file does (resolved
    /// once; a name that does not resolve is one line, exit 64).
    @Test func fileNamedAfterItsFileAndListenOnAHostName() throws {
        let base = try temporaryDirectory()
        let out = base.appendingPathComponent("room")
        try roomtap(
            ["record", "--file", sample("alice"), "--file", sample("bob") + "@2.5", "--out", out.path, "--quiet"],
            expect: 0)
        #expect(try listing(out) == ["alice.wav", "bob.wav", "room.json"])
        let tracks = try #require(try roomJSON(out)["tracks"] as? [[String: Any]])
        let bob = try #require(tracks.first { $0["name"] as? String == "bob" })
        #expect((bob["source"] as? [String: Any])?["offsetSamples"] as? Int == 120_000)

        let plan = try roomtap(
            ["record", "--listen", "localhost:0", "--out", out.path + "-live", "--dry-run"], expect: 0)
        #expect(plan.stdout.contains("rtp 127.0.0.1:0"), "\(plan.stdout)")
        let unknown = try roomtap(
            ["record", "--listen", "no-such-host.invalid:5004", "--out", out.path + "-live", "--dry-run"], expect: 64)
        #expect(
            unknown.stderrLines.count == 1
                && unknown.stderr.contains("the host name no-such-host.invalid does not resolve"), "\(unknown.stderr)")
    }
}

extension NothingLostRoundTwoTests {
    /// Item 14: names. An undescribed stream `ssrc-4d2` also answers to `ssrc-000004d2` and
    /// `0x000004d2` (as its SOURCE shows it); `tracks` keeps NAME the name alone (a solo is under
    /// STATE); a control character in a `--file` name is refused as the room file refuses it.
    @Test func namesFollowOneRule() throws {
        let control = uniqueControlPath()
        let port = try freeUDPPort()
        let address = try #require(ListenAddress("127.0.0.1:\(port)"))
        let sender = RTPTestSender(
            pcm: TestSignal.speechLike(samples: 250 * 960, seed: 14), to: address, ssrc: 0x0000_04D2)
        let recorder = try CLIRunner.start([
            "record", "--listen", address.description, "--record-delay", "100", "--out",
            try temporaryDirectory().path, "--quiet", "--control", control,
        ])
        defer { if recorder.isRunning { recorder.signal(SIGKILL) } }
        try waitUntilListening(port: port, pid: recorder.pid)
        sender.start(startNanos: RealTimeClock.monotonicNow() + 50_000_000)
        #expect(
            try waitUntil(timeout: .seconds(30), every: .milliseconds(50)) {
                try CLIRunner.run(["tracks", "--json", "--control", control], timeout: 20).stdout.contains("ssrc-4d2")
            })
        for spelling in ["ssrc-000004d2", "0x000004D2", "ssrc-4d2"] {
            let muted = try roomtap(["mute", spelling, "--control", control], expect: 0)
            #expect(muted.stdout.hasPrefix("ssrc-4d2: heard muted"), "\(spelling): \(muted.stdout)")
        }
        _ = try roomtap(["solo", "ssrc-4d2", "--control", control], expect: 0)
        let table = try roomtap(["tracks", "--control", control], expect: 0).stdout
        let row = table.split(separator: "\n").first { $0.hasPrefix("ssrc-4d2 ") }.map(String.init) ?? ""
        #expect(row.contains(" live, solo ") && !row.hasPrefix("ssrc-4d2 solo"), "\(table)")
        _ = try roomtap(["stop", "--control", control], expect: 0)
        _ = sender.wait()

        let refused = try roomtap(
            ["record", "--file", "a\u{1}b=\(sample("alice"))", "--out", try temporaryDirectory().path, "--dry-run"],
            expect: 64)
        #expect(
            refused.stderrLines.count == 1 && refused.stderr.contains("has a control character"), "\(refused.stderr)")
    }
}

extension NothingLostRoundTwoTests {
    /// Item 13: a recorder stopped with SIGSTOP is not "no recorder": `tracks`, `stop` and
    /// `status DIR` say it does not answer, with its pid and how to resume it (exit 1); resumed,
    /// it answers again.
    @Test func aStoppedRecorderIsSaidNotToAnswer() throws {
        let runtime = try temporaryDirectory()
        let env = ["XDG_RUNTIME_DIR": runtime.path, "ROOMTAP_CONTROL": ""]
        let out = try temporaryDirectory()
        let recorder = try CLIRunner.start(
            [
                "record", "--file", "alice=\(sample("alice"))", "--file", "later=\(sample("bob"))@300", "--realtime",
                "--out", out.path, "--quiet",
            ], environment: env)
        defer {
            recorder.signal(SIGCONT)
            if recorder.isRunning { recorder.signal(SIGKILL) }
        }
        #expect(
            try waitUntil(timeout: .seconds(60), every: .milliseconds(50)) {
                try CLIRunner.run(["tracks", "--json"], environment: env, timeout: 20).stdout.contains("\"later\"")
            })
        recorder.signal(SIGSTOP)
        for verb in [["tracks"], ["stop"], ["status", out.path]] {
            let outcome = try CLIRunner.run(verb, environment: env, timeout: 30)
            #expect(outcome.status == 1)
            #expect(
                outcome.stderrLines.count == 1 && outcome.stderr.contains("the recorder pid \(recorder.pid) ")
                    && outcome.stderr.contains("does not answer")
                    && outcome.stderr.contains("resume it (kill -CONT \(recorder.pid))"), "\(verb): \(outcome.stderr)")
        }
        recorder.signal(SIGCONT)
        let stop = try CLIRunner.run(["stop"], environment: env, timeout: 60)
        #expect(stop.status == 0, "\(stop.stderr)")
        #expect(recorder.wait(timeout: 60).status == 0)
    }
}

extension NothingLostRoundTwoTests {
    /// What users reach for: a live room's progress counts its speakers, not the mix.
    @Test func progressDoesNotCountTheMix() throws {
        let port = try freeUDPPort()
        let address = try #require(ListenAddress("127.0.0.1:\(port)"))
        let sender = RTPTestSender(
            pcm: TestSignal.speechLike(samples: 600 * 960, seed: 15), to: address, ssrc: 0x0000_0515)
        let recorder = try CLIRunner.start([
            "record", "--listen", address.description, "--mix", "--record-delay", "100", "--out",
            try temporaryDirectory().path,
        ])
        defer { if recorder.isRunning { recorder.signal(SIGKILL) } }
        try waitUntilListening(port: port, pid: recorder.pid)
        sender.start(startNanos: RealTimeClock.monotonicNow() + 50_000_000)
        // Without --duration a live room reports every 10 s of room time, with its track count.
        #expect(
            try waitUntil(timeout: .seconds(60), every: .milliseconds(50)) {
                recorder.stderrSoFar.components(separatedBy: " track(s)\n").count > 2
            })
        recorder.signal(SIGINT)
        let outcome = recorder.wait(timeout: 90)
        _ = sender.wait()
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let lines = outcome.stderrLines.filter { $0.hasPrefix("recording: ") }
        #expect(lines.count >= 2 && lines[1].hasSuffix(" s, 1 track(s)"), "\(lines)")
        #expect(!lines.contains { $0.hasSuffix(", 2 track(s)") }, "\(lines)")
    }
}
