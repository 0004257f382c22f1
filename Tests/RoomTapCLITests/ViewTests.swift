import Foundation
import RoomTapAll
import RoomTapCLITestSupport
import Testing

/// `roomtap view DIR`: the review page, written by the CLI and driven in real headless Chromium
/// (Tests/Browser/view-check.py, the DevTools protocol): lanes, transcript, playback from a
/// click, solo through the page's audio graph, a screenshot.
@Suite("CLI: view", .serialized)
struct ViewTests {
    /// What view-check.py saw (its JSON), or the test fails with its stderr.
    static func browse(_ page: URL, _ arguments: [String] = [], timeout: Double = 180) throws -> [String: Any] {
        let script = repositoryRoot.appendingPathComponent("Tests/Browser/view-check.py").path
        let outcome = try CLIRunner.run(
            [script, "--url", page.absoluteString] + arguments, timeout: timeout,
            executable: URL(fileURLWithPath: "/usr/bin/python3"))
        try #require(
            outcome.status == 0,
            "view-check.py exited \(outcome.status) (Chromium: apt-get install chromium, or make deps): \(outcome.stderr)"
        )
        let object = try JSONSerialization.jsonObject(with: Data(outcome.stdout.utf8))
        return try #require(object as? [String: Any], "view-check.py printed \(outcome.stdout)")
    }

    /// The data the page embeds (`<script id="roomtap-data">`), decoded.
    static func embeddedData(_ page: URL) throws -> [String: Any] {
        let html = try String(contentsOf: page, encoding: .utf8)
        let open = try #require(html.range(of: "<script id=\"roomtap-data\" type=\"application/json\">"))
        let close = try #require(html.range(of: "</script>", range: open.upperBound..<html.endIndex))
        let json = try JSONSerialization.jsonObject(with: Data(html[open.upperBound..<close.lowerBound].utf8))
        return try #require(json as? [String: Any])
    }

    /// `count` samples of a mono 16-bit WAV from sample `first`.
    static func wavSamples(_ path: String, from first: Int, count: Int) throws -> [Int] {
        let wav = try WAVFile.inspect(path: path)
        let handle = try #require(FileHandle(forReadingAtPath: path))
        defer { try? handle.close() }
        try handle.seek(toOffset: UInt64(wav.dataOffset) + UInt64(2 * first))
        let data = try #require(try handle.read(upToCount: 2 * count))
        return data.withUnsafeBytes { raw in
            (0..<(data.count / 2)).map {
                Int(Int16(littleEndian: raw.loadUnaligned(fromByteOffset: 2 * $0, as: Int16.self)))
            }
        }
    }

    static func lanes(_ data: [String: Any]) -> [[String: Any]] { data["lanes"] as? [[String: Any]] ?? [] }

    /// An agent's transcript of the sample room, as RoomTapAgent's TranscriptWriter writes one:
    /// what each speaker says, at the room times of Samples/room/README.md.
    static let transcript = """
        {"start": 0.100, "end": 3.800, "speaker": "carol", "text": "Morning, all. Staging is green. I have to leave early."}
        {"start": 0.300, "end": 3.700, "speaker": "alice", "text": "Good morning. Yesterday I finished the login page refactor."}
        {"start": 3.000, "end": 5.980, "speaker": "bob", "text": "Sorry I'm late. I'm still fixing the flaky build."}
        {"start": 5.200, "end": 8.610, "speaker": "alice", "text": "Today I'm writing tests for the payment flow. No blockers."}
        {"start": 6.500, "end": 10.200, "speaker": "bob", "text": "Should be done by lunch. Alice, can you review my pull request?"}

        """

    @Test func theSampleRoomPlaysInChromium() throws {
        let room = try TimelineTests.recordSampleRoom()
        try Self.transcript.write(
            to: room.appendingPathComponent("transcript.jsonl"), atomically: true, encoding: .utf8)
        let outcome = try roomtap(["view", room.path], expect: 0)
        let page = room.appendingPathComponent("index.html")
        #expect(
            outcome.stdout.hasPrefix(page.path + ": 3 speaker lane(s), mix, 5 transcript line(s)"), "\(outcome.stdout)")
        #expect(outcome.stderr.isEmpty, "\(outcome.stderr)")

        // The page carries Resources/view/ as it is (ViewPageAssets.swift is up to date: make view-assets).
        let html = try String(contentsOf: page, encoding: .utf8)
        for name in ["view.js", "view.css"] {
            let file = try String(
                contentsOf: repositoryRoot.appendingPathComponent("Resources/view/\(name)"), encoding: .utf8)
            #expect(html.contains(file.trimmingCharacters(in: .newlines)), "index.html lacks Resources/view/\(name)")
        }
        #expect(!html.contains("http://") && !html.contains("https://"), "the page names nothing on the network")

        let shot = room.appendingPathComponent("view.png")
        let seen = try Self.browse(
            page,
            [
                "--search", "lunch", "--samples", "bob:5.0:4800", "--click", "alice:5.0", "--solo", "bob",
                "--keys", "--screenshot", shot.path,
            ])
        #expect((seen["consoleErrors"] as? [String]) == [], "console: \(seen["consoleErrors"] ?? "")")
        #expect((seen["pageErrors"] as? [String]) == [], "page: \(seen["pageErrors"] ?? "")")
        let lanes = try #require(seen["lanes"] as? [[String: Any]])
        #expect(
            lanes.filter { $0["kind"] as? String == "speaker" }.compactMap { $0["name"] as? String } == [
                "alice", "bob", "carol",
            ])
        #expect(lanes.map { $0["kind"] as? String } == ["speaker", "speaker", "speaker", "mix"])
        // 10.5 s at 100 peaks a second; talk spans found in every speaker's lane.
        #expect(lanes.allSatisfy { $0["peaks"] as? Int == 1050 && ($0["spans"] as? Int ?? 0) > 0 }, "\(lanes)")
        #expect((seen["transcript"] as? [Any])?.count == 5)
        let hits = try #require(seen["searchHits"] as? [[String: Any]])
        #expect(hits.map { $0["start"] as? Double } == [6.5], "searching 'lunch' finds bob's last line: \(hits)")

        // What playback reads is the file, to the sample: bob.wav from 5.0 s (room sample 240000).
        let played = try #require(seen["samples"] as? [Int])
        #expect(played.count == 4800 && played.contains { $0 != 0 }, "\(played.prefix(8))")
        #expect(
            played == (try Self.wavSamples(room.appendingPathComponent("bob.wav").path, from: 240_000, count: 4800)))

        // Clicking alice's lane at 5.0 s plays the room from there (one pixel is 10 ms here).
        let startedAt = try #require(seen["startedAt"] as? Double)
        #expect(abs(startedAt - 5.0) < 0.03, "started at \(startedAt)")
        #expect(seen["audioState"] as? String == "running")
        let later = try #require(seen["currentTimeLater"] as? Double)
        #expect(later > startedAt + 0.2 && later < startedAt + 5, "the play head moves: \(later)")

        // Solo bob: every other lane's gain is 0, in the page's state and on its gain nodes, and
        // what the graph carries after the gains is bob alone (he talks 3.00-5.98 s).
        let gains = try #require(seen["gains"] as? [String: Double])
        #expect(gains == ["alice": 0, "bob": 1, "carol": 0, "mix": 0], "\(gains)")
        let graph = try #require(seen["graphGains"] as? [String: Double])
        #expect(graph == ["alice": 0, "bob": 1, "carol": 0, "mix": 0], "\(graph)")
        let levels = try #require(seen["levels"] as? [String: Double])
        #expect((levels["bob"] ?? 0) > 0.001 && levels["alice"] == 0 && levels["carol"] == 0, "\(levels)")

        // Keys: space pauses, ArrowLeft goes back 5 s, space plays from there (and presses no button).
        let pausedAt = try #require(seen["pausedAt"] as? Double)
        #expect(abs((seen["afterArrowLeft"] as? Double ?? -1) - max(0, pausedAt - 5)) < 0.001)
        #expect(abs((seen["playingAgainFrom"] as? Double ?? -1) - max(0, pausedAt - 5)) < 0.001)
        #expect(seen["gainsKeptBySpace"] as? Bool == true, "space did not press the solo button again")

        let png = try Data(contentsOf: shot)
        #expect(
            png.starts(with: [0x89, 0x50, 0x4E, 0x47]) && png.count > 10_000, "a PNG screenshot: \(png.count) bytes")
    }

    /// Opened from disk in a browser that forbids such a page to read files (Chromium as a user
    /// starts it): one probe of alice.wav is refused, and each lane plays through an <audio>
    /// element instead, with mute and solo as its volume.
    @Test func fromDiskWithoutFileAccessItPlaysThroughMediaElements() throws {
        let room = try TimelineTests.recordSampleRoom()
        try roomtap(["view", room.path], expect: 0)
        let seen = try Self.browse(
            room.appendingPathComponent("index.html"), ["--no-file-access", "--click", "bob:4.0", "--solo", "bob"])
        #expect(seen["mode"] as? String == "media")
        let errors = try #require(seen["consoleErrors"] as? [String])
        #expect(errors.count <= 2 && errors.allSatisfy { $0.contains("alice.wav") }, "only the probe: \(errors)")
        let startedAt = try #require(seen["startedAt"] as? Double)
        #expect(abs(startedAt - 4.0) < 0.03)
        // The play head moves from where the click put it (a pixel is 10 ms, so 3.99x is a start).
        #expect((seen["currentTimeLater"] as? Double ?? 0) > startedAt + 0.2, "the play head moves")
        #expect(seen["graphGains"] as? [String: Double] == ["alice": 0, "bob": 1, "carol": 0, "mix": 0])
        #expect((seen["drift"] as? Double ?? 1) < 0.25, "lanes kept together: \(seen["drift"] ?? "")")
    }

    /// The data the page is drawn from: mutes and volume changes as a live recorder logs them in
    /// room.json's `controls` (recordTime), a failover's `gaps`, and an HTML-looking transcript
    /// line kept as text, not markup.
    @Test func controlsGapsAndTranscriptReachThePage() throws {
        let room = try TimelineTests.recordSampleRoom()
        let json = room.appendingPathComponent("room.json")
        var object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: json)) as? [String: Any])
        object["controls"] = [
            ["roomTime": 1.0, "recordTime": 3.0, "change": "mute", "track": "alice", "muted": true, "scope": "heard"],
            ["roomTime": 4.0, "recordTime": 6.0, "change": "unmute", "track": "alice", "muted": false, "scope": "all"],
            [
                "roomTime": 5.0, "change": "mute", "track": "bob", "muted": true, "recordMuted": true,
                "scope": "record",
            ],
            ["roomTime": 7.5, "change": "volume", "track": "carol", "volume": 0.5, "scope": "heard"],
            ["roomTime": 8.0, "change": "solo", "tracks": ["bob"]],
        ]
        object["gaps"] = [["from": 9.0, "to": 9.5, "reason": "worker died"]]
        // An agent's voice is the track of role `agent-voice`: a lane after the speakers, before the
        // mix (bob's audio stands in for its voice here).
        try FileManager.default.copyItem(
            at: room.appendingPathComponent("bob.wav"), to: room.appendingPathComponent("agent.wav"))
        var tracks = try #require(object["tracks"] as? [[String: Any]])
        var agent = tracks[1]
        agent["name"] = "agent"
        agent["file"] = "agent.wav"
        agent["id"] = 99
        agent["role"] = "agent-voice"
        tracks.insert(agent, at: 0)
        object["tracks"] = tracks
        object["agent"] = ["model": "gpt-realtime"]
        try JSONSerialization.data(withJSONObject: object).write(to: json)
        let odd = #"{"start": 3.000, "end": 5.980, "speaker": "bob", "text": "I will taste it <now> & tell you."}"#
        try (Self.transcript + odd + "\n").write(
            to: room.appendingPathComponent("transcript.jsonl"), atomically: true, encoding: .utf8)
        try roomtap(["view", room.path], expect: 0)
        let page = room.appendingPathComponent("index.html")
        let data = try Self.embeddedData(page)
        #expect(Self.lanes(data).map { $0["name"] as? String } == ["alice", "bob", "carol", "agent", "mix"])
        #expect(Self.lanes(data).map { $0["kind"] as? String } == ["speaker", "speaker", "speaker", "agent", "mix"])
        let lanes = Dictionary(uniqueKeysWithValues: Self.lanes(data).map { ($0["name"] as? String ?? "", $0) })
        #expect(lanes["alice"]?["heardMuted"] as? [[Double]] == [[3.0, 6.0]], "\(lanes["alice"] ?? [:])")
        #expect(lanes["bob"]?["recordMuted"] as? [[Double]] == [[5.0, 10.5]])
        #expect(
            (data["controls"] as? [[String: Any]])?.map { $0["text"] as? String } == [
                "alice muted (heard)", "bob muted (record)", "alice unmuted (all)", "carol volume 50% (heard)",
                "solo bob",
            ])
        #expect((data["gaps"] as? [[String: Any]])?.first?["reason"] as? String == "worker died")
        let html = try String(contentsOf: page, encoding: .utf8)
        #expect(!html.contains("<now>"), "transcript text is escaped in the page's JSON")
        let seen = try Self.browse(page)
        #expect((seen["consoleErrors"] as? [String]) == [], "console: \(seen["consoleErrors"] ?? "")")
        let lines = try #require(seen["transcript"] as? [[String: Any]])
        #expect(lines.map { $0["text"] as? String }.contains("I will taste it <now> & tell you."))
    }

    /// A recorder killed with SIGKILL leaves room.json saying "recording" and WAV headers behind
    /// the data: the page is drawn and plays from what is on disk, and after `repair` roomtap
    /// brings its own page up to date without --force.
    @Test func aKilledThenRepairedRecordingIsViewed() throws {
        let out = try temporaryDirectory()
        let process = try startLongRoom(out: out, untilFileHas: 3_000_000)
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()

        try roomtap(["view", out.path], expect: 0)
        let page = out.appendingPathComponent("index.html")
        let cut = try Self.embeddedData(page)
        #expect(cut["state"] as? String == "recording")
        #expect(Self.lanes(cut).map { $0["name"] as? String } == ["alice", "carol", "mix"])
        let seen = try Self.browse(page, ["--click", "alice:1.0"])
        #expect((seen["consoleErrors"] as? [String]) == [], "console: \(seen["consoleErrors"] ?? "")")
        #expect((seen["pageErrors"] as? [String]) == [])
        #expect(abs((seen["startedAt"] as? Double ?? -1) - 1.0) < 0.5)

        try roomtap(["repair", out.path], expect: 0)
        try roomtap(["view", out.path], expect: 0)
        let repaired = try Self.embeddedData(page)
        #expect(repaired["state"] as? String == "repaired")
        let peaks = Self.lanes(repaired).compactMap { ($0["peaks"] as? String).flatMap { Data(base64Encoded: $0) } }
        #expect(peaks.count == 3 && Set(peaks.map(\.count)).count == 1, "every lane as long as the others")
    }

    /// 64 speakers: 64 lanes, no console error, and a click on the last lane plays.
    @Test func sixtyFourSpeakers() throws {
        let out = try temporaryDirectory()
        let names = ["alice", "bob", "carol"]
        var arguments = ["record", "--out", out.path, "--mix", "--quiet"]
        for i in 0..<64 {
            arguments += ["--file", "s\(i)=\(sample(names[i % 3]))@\(Double(i % 8) * 0.25)"]
        }
        try roomtap(arguments, expect: 0, timeout: 300)
        let outcome = try roomtap(["view", out.path], expect: 0)
        #expect(outcome.stdout.contains(": 64 speaker lane(s), mix"), "\(outcome.stdout)")
        let seen = try Self.browse(
            out.appendingPathComponent("index.html"), ["--click", "s63:2.0", "--height", "900"])
        #expect((seen["consoleErrors"] as? [String]) == [], "console: \(seen["consoleErrors"] ?? "")")
        #expect((seen["pageErrors"] as? [String]) == [])
        #expect((seen["lanes"] as? [Any])?.count == 65)
        #expect(abs((seen["startedAt"] as? Double ?? -1) - 2.0) < 0.05)
    }

    @Test func badInputGetsOneClearLine() throws {
        let usage = try roomtap(["view"], expect: 64)
        #expect(usage.stderr.contains("no directory: give the directory of a recording"), "\(usage.stderr)")

        let missing = try temporaryDirectory().appendingPathComponent("nowhere")
        let gone = try roomtap(["view", missing.path], expect: 1)
        #expect(
            gone.stderrLines == [
                "roomtap: error: \(missing.path): no such directory (give a directory roomtap record wrote)"
            ])
        #expect(!FileManager.default.fileExists(atPath: missing.path), "nothing is created")

        let empty = try temporaryDirectory()
        let notRecording = try roomtap(["view", empty.path], expect: 1)
        #expect(notRecording.stderrLines.count == 1 && notRecording.stderr.contains("is not a roomtap recording"))
        #expect(try listing(empty).isEmpty, "nothing written into a directory that is not a recording")

        let room = try TimelineTests.recordSampleRoom()
        let page = room.appendingPathComponent("index.html")
        let theirs = Data("<html>my own page</html>\n".utf8)
        try theirs.write(to: page)
        let refused = try roomtap(["view", room.path], expect: 1)
        #expect(
            refused.stderrLines == [
                "roomtap: error: \(page.path) already exists and roomtap did not write it; pass --force to overwrite it"
            ], "\(refused.stderr)")
        #expect(try Data(contentsOf: page) == theirs, "the page is untouched")
        #expect(try listing(room).filter { $0.contains("index.html") } == ["index.html"], "no temporary left")

        try roomtap(["view", room.path, "--force"], expect: 0)
        #expect(
            try String(contentsOf: page, encoding: .utf8).contains("<meta name=\"generator\" content=\"roomtap view\">")
        )
        try roomtap(["view", room.path], expect: 0)  // its own page: brought up to date without --force
    }
}
