import Foundation
import RoomTapAll
import RoomTapMediaTestSupport
import RoomTapTestSupport
import Testing

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// `roomtap timeline DIR`: who spoke when, as an SVG, from a finished recording.
@Suite("CLI: timeline")
struct TimelineTests {
    /// What the SVG says, read back with an XML parser (so it must be well-formed XML).
    struct Drawing {
        struct Span: Equatable {
            var start: Double
            var end: Double
        }
        var rootName = ""
        var namespace = ""
        var lanes: [String] = []
        var spans: [String: [Span]] = [:]
        /// Off the record (`rect.muted`): silence in the file.
        var muted: [String: [Span]] = [:]
        /// Muted for what is heard only (`rect.heard-muted`).
        var heardMuted: [String: [Span]] = [:]
        var controls: [(change: String, time: Double, track: String?, title: String)] = []
        var talkTitles: [String] = []
    }

    private final class Reader: NSObject, XMLParserDelegate {
        var drawing = Drawing()
        private var lane: String?
        private var stack: [String] = []  // element names, with "control" for control groups
        private var text = ""

        func parser(
            _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
            attributes: [String: String] = [:]
        ) {
            if stack.isEmpty {
                drawing.rootName = name
                drawing.namespace = attributes["xmlns"] ?? ""
            }
            let cls = attributes["class"] ?? ""
            if name == "g" && cls == "lane", let track = attributes["data-track"] {
                lane = track
                drawing.lanes.append(track)
            }
            if name == "rect", let lane,
                let start = attributes["data-start"].flatMap(Double.init),
                let end = attributes["data-end"].flatMap(Double.init)
            {
                switch cls {
                case "talk": drawing.spans[lane, default: []].append(.init(start: start, end: end))
                case "muted": drawing.muted[lane, default: []].append(.init(start: start, end: end))
                case "heard-muted": drawing.heardMuted[lane, default: []].append(.init(start: start, end: end))
                default: break
                }
            }
            if name == "g" && cls == "control" {
                drawing.controls.append(
                    (
                        attributes["data-change"] ?? "", attributes["data-time"].flatMap(Double.init) ?? -1,
                        attributes["data-track"], ""
                    ))
            }
            stack.append(name == "g" || name == "rect" ? name + "." + cls : name)
            text = ""
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) { text += string }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            let element = stack.removeLast()
            if element == "title", let parent = stack.last {
                if parent == "g.control" { drawing.controls[drawing.controls.count - 1].title = text }
                if parent == "rect.talk" { drawing.talkTitles.append(text) }
            }
            if element == "g.lane" { lane = nil }
        }
    }

    static func read(_ path: String) throws -> Drawing {
        let parser = try #require(XMLParser(contentsOf: URL(fileURLWithPath: path)))
        let reader = Reader()
        parser.delegate = reader
        parser.shouldProcessNamespaces = false
        #expect(parser.parse(), "\(path) is not well-formed XML: \(String(describing: parser.parserError))")
        return reader.drawing
    }

    /// Records the sample room (alice, bob @2.5, carol; with the mix) into a fresh directory.
    static func recordSampleRoom() throws -> URL {
        let out = try temporaryDirectory()
        try roomtap(
            [
                "record", "--file", "alice=\(sample("alice"))", "--file", "bob=\(sample("bob"))@2.5",
                "--file", "carol=\(sample("carol"))", "--out", out.path, "--mix", "--quiet",
            ], expect: 0)
        return out
    }

    @Test func theSampleRoomShowsWhereEachSpeakerTalks() throws {
        let room = try Self.recordSampleRoom()
        let outcome = try roomtap(["timeline", room.path], expect: 0)
        let svg = room.appendingPathComponent("timeline.svg").path
        #expect(outcome.stdout.contains("timeline.svg: 3 speaker(s)"), "stdout: \(outcome.stdout)")
        #expect(outcome.stderr.isEmpty)
        let drawing = try Self.read(svg)
        #expect(drawing.rootName == "svg" && drawing.namespace == "http://www.w3.org/2000/svg")
        #expect(drawing.lanes == ["alice", "bob", "carol"], "one lane per speaker, the mix left out")
        #expect(drawing.controls.isEmpty, "room.json has no controls: no markers, no failure")

        // Samples/room/README.md: alice talks 0.30-3.70 and 5.20-8.61 s; bob (file offset 2.5 s)
        // 3.00-5.98 and 6.50-10.20 s; carol 0.10-3.80 s, then leaves.
        let alice = try #require(drawing.spans["alice"])
        let bob = try #require(drawing.spans["bob"])
        let carol = try #require(drawing.spans["carol"])
        #expect(abs(alice.first!.start - 0.30) < 0.03 && abs(alice.last!.end - 8.61) < 0.03, "\(alice)")
        #expect(!alice.contains { $0.start < 5.1 && $0.end > 3.8 }, "alice's pause 3.7-5.2 s is no talk: \(alice)")
        #expect(bob.allSatisfy { $0.start >= 2.5 }, "nothing before bob joins at 2.5 s: \(bob)")
        #expect(abs(bob.first!.start - 3.00) < 0.03 && abs(bob.last!.end - 10.20) < 0.03, "\(bob)")
        #expect(!bob.contains { $0.start < 6.4 && $0.end > 6.1 }, "bob's pause 5.98-6.50 s: \(bob)")
        #expect(abs(carol.first!.start - 0.10) < 0.03 && carol.allSatisfy { $0.end < 3.85 }, "\(carol)")
        for lane in [alice, bob, carol] {
            #expect(zip(lane, lane.dropFirst()).allSatisfy { $0.end < $1.start }, "spans in order, apart")
        }
        #expect(drawing.talkTitles.count == alice.count + bob.count + carol.count)
        #expect(drawing.talkTitles.first == "alice: 0:00.30 – 0:00.96 (0.66 s)", "a tooltip with start–end")
    }

    @Test func anExistingFileIsKeptWithoutForce() throws {
        let room = try Self.recordSampleRoom()
        let custom = room.appendingPathComponent("who.svg").path
        try roomtap(["timeline", room.path, "--out", custom], expect: 0)
        #expect(!FileManager.default.fileExists(atPath: room.appendingPathComponent("timeline.svg").path))
        try Data("mine".utf8).write(to: URL(fileURLWithPath: custom))
        let refused = try roomtap(["timeline", room.path, "--out", custom], expect: 1)
        #expect(refused.stderrLines == ["roomtap: error: \(custom) already exists; pass --force to overwrite it"])
        #expect(try Data(contentsOf: URL(fileURLWithPath: custom)) == Data("mine".utf8), "untouched")
        try roomtap(["timeline", "--force", room.path, "--out", custom], expect: 0)
        #expect(try Self.read(custom).lanes == ["alice", "bob", "carol"])
    }

    @Test func aDirectoryWithoutRoomJSONIsOneClearLine() throws {
        let empty = try temporaryDirectory()
        let outcome = try roomtap(["timeline", empty.path], expect: 1)
        #expect(outcome.stderrLines.count == 1)
        #expect(outcome.stderr.hasPrefix("roomtap: error: \(empty.path)/room.json not found"), "\(outcome.stderr)")
        #expect(try listing(empty).isEmpty, "nothing written")
        let missing = try roomtap(["timeline", empty.appendingPathComponent("nope").path], expect: 1)
        #expect(missing.stderrLines.count == 1 && missing.stderr.contains("no such directory"))
    }

    @Test(arguments: [
        ([], "no directory"), (["a", "b"], "unexpected argument 'b'"), (["a", "--loud"], "unknown option '--loud'"),
        (["a", "--out"], "needs a value"),
    ])
    func usageErrorsExit64(arguments: [String], message: String) throws {
        let outcome = try roomtap(["timeline"] + arguments, expect: 64)
        #expect(outcome.stderrLines.count == 1 && outcome.stderr.contains(message), "\(outcome.stderr)")
        #expect(outcome.stderr.contains("roomtap timeline --help"))
    }

    @Test func helpDescribesTheCommand() throws {
        let a = try roomtap(["timeline", "--help"], expect: 0)
        let b = try roomtap(["help", "timeline"], expect: 0)
        #expect(a.stdout == b.stdout && a.stdout.contains("USAGE: roomtap timeline DIR [--out FILE] [--force]"))
        #expect(try roomtap(["--help"], expect: 0).stdout.contains("  timeline "))
    }

    // MARK: - The activity detector, on synthetic signals

    /// `bursts` (seconds) of a -20 dBFS tone over -65 dBFS noise, `seconds` long, at 48 kHz.
    static func bursts(_ bursts: [(Double, Double)], seconds: Double, channels: Int = 1) -> [Int16] {
        let count = Int(seconds * 48_000)
        let noise = TestSignal.noise(samples: count, amplitude: 0.00056, channels: channels, seed: 5)
        var out = noise
        for (start, end) in bursts {
            for i in Int(start * 48_000)..<min(count, Int(end * 48_000)) {
                let v = Int16(0.1 * 32_767 * 1.414 * sin(2 * .pi * 440 * Double(i) / 48_000))
                for c in 0..<channels { out[i * channels + c] = v }
            }
        }
        return out
    }

    /// A recording directory written by hand: WAVs and a room.json with `controls`.
    static func handMadeRoom(controls: String, offTheRecord: [(Double, Double)] = []) throws -> URL {
        let dir = try temporaryDirectory()
        var a = bursts([(0.503, 1.2), (2.0, 2.05), (3.0, 3.5), (3.65, 4.0), (5.0, 5.3), (5.55, 5.9)], seconds: 6)
        // Exact zeros, as the recorder writes a speaker off the record (the rest has a noise floor).
        for (start, end) in offTheRecord {
            for i in Int((start * 48_000).rounded())..<Int((end * 48_000).rounded()) { a[i] = 0 }
        }
        try WAVFixtures.write(a, channels: 1, to: dir.appendingPathComponent("a.wav").path)
        try WAVFixtures.write(
            bursts([(1.0, 1.12), (4.417, 5.999)], seconds: 6, channels: 2), channels: 2,
            to: dir.appendingPathComponent("b.wav").path)
        try WAVFixtures.write(
            bursts([(0, 6)], seconds: 6), channels: 1, to: dir.appendingPathComponent("mix.wav").path)
        let json = """
            {"durationSeconds": 6.0, "tracks": [
              {"name": "a", "kind": "speaker", "file": "a.wav"},
              {"name": "b<&>'\\"", "kind": "speaker", "file": "b.wav"},
              {"name": "mix", "kind": "mix", "file": "mix.wav"}],
             "controls": \(controls)}
            """
        try Data(json.utf8).write(to: dir.appendingPathComponent("room.json"))
        return dir
    }

    @Test func toneBurstsBecomeSpansWithin20Milliseconds() throws {
        let dir = try Self.handMadeRoom(controls: "[]")
        try roomtap(["timeline", dir.path], expect: 0)
        let drawing = try Self.read(dir.appendingPathComponent("timeline.svg").path)
        #expect(drawing.lanes == ["a", "b<&>'\""], "names escaped in the file, intact when parsed")
        // a: the 50 ms burst is too short; the 150 ms gap is bridged, the 250 ms one is not.
        let expectedA: [(Double, Double)] = [(0.503, 1.2), (3.0, 4.0), (5.0, 5.3), (5.55, 5.9)]
        let a = try #require(drawing.spans["a"])
        #expect(a.count == expectedA.count, "\(a)")
        for (span, (start, end)) in zip(a, expectedA) {
            #expect(abs(span.start - start) <= 0.02 && abs(span.end - end) <= 0.02, "\(span) vs \(start)-\(end)")
        }
        // b (stereo): both bursts, the last one running to the end of the room.
        let b = try #require(drawing.spans["b<&>'\""])
        #expect(b.count == 2, "\(b)")
        #expect(abs(b[0].start - 1.0) <= 0.02 && abs(b[0].end - 1.12) <= 0.02)
        #expect(abs(b[1].start - 4.417) <= 0.02 && abs(b[1].end - 5.999) <= 0.02)
    }

    @Test func controlsAreDrawnAsMarkersAndMutedStretches() throws {
        let controls = """
            [{"roomTime": 3.21, "track": "a", "change": "mute", "muted": true, "scope": "heard"},
             {"roomTime": 4.5, "track": "a", "change": "unmute", "muted": false, "scope": "heard"},
             {"roomTime": 1.5, "track": "a", "change": "volume", "volume": 0.5, "scope": "record"},
             {"roomTime": 5.0, "change": "solo", "tracks": ["b<&>'\\""]},
             {"roomTime": 5.5, "change": "unsolo"},
             {"roomTime": "soon", "change": "mute", "track": "a"}]
            """
        let dir = try Self.handMadeRoom(controls: controls)
        let outcome = try roomtap(["timeline", dir.path, "--out", dir.appendingPathComponent("t.svg").path], expect: 0)
        #expect(outcome.stdout.contains("5 control(s)"), "the malformed entry is skipped: \(outcome.stdout)")
        let drawing = try Self.read(dir.appendingPathComponent("t.svg").path)
        let titles = drawing.controls.map(\.title)
        #expect(drawing.controls.map(\.change) == ["volume", "mute", "unmute", "solo", "unsolo"])
        #expect(
            titles == [
                "0:01.50 a volume 50% (record)", "0:03.21 a muted (heard)", "0:04.50 a unmuted (heard)",
                "0:05.00 solo b<&>'\"", "0:05.50 unsolo",
            ])
        #expect(drawing.controls.prefix(3).allSatisfy { $0.track == "a" })
        #expect(drawing.heardMuted["a"] == [.init(start: 3.21, end: 4.5)])
        #expect(drawing.muted.isEmpty, "a heard mute is not in the file: never drawn as off the record")
    }

    /// Issue 10, 8: the stretch off the record is what the file holds. The log of a recording made
    /// before the record had controls of its own (the scope stuck to the track): off the record at
    /// 1.3 s, back on it at 2.0 s by a heard volume change (the file has sound again there), then a
    /// heard unmute at 4.1 s that never closed the record mute. Then the log of today: off the
    /// record at 2.2 s through a heard volume change until an unmute at 2.8 s.
    @Test func offTheRecordStretchesAreDrawnFromTheFilesFramesAndLabelledFromTheLog() throws {
        let old = """
            [{"roomTime": 1.3, "track": "a", "change": "mute", "muted": true, "volume": 1, "scope": "record"},
             {"roomTime": 1.5, "track": "a", "change": "volume", "muted": true, "volume": 0.5, "scope": "record"},
             {"roomTime": 2.0, "track": "a", "change": "volume", "muted": true, "volume": 0.5, "scope": "heard"},
             {"roomTime": 4.1, "track": "a", "change": "unmute", "muted": false, "volume": 0.5, "scope": "heard"}]
            """
        let before = try Self.handMadeRoom(controls: old, offTheRecord: [(1.31, 2.0)])
        try roomtap(["timeline", before.path], expect: 0)
        let drawnBefore = try Self.read(before.appendingPathComponent("timeline.svg").path)
        #expect(drawnBefore.muted["a"] == [.init(start: 1.31, end: 2.0)], "not to the room's end: \(drawnBefore.muted)")
        #expect(drawnBefore.heardMuted["a"] == [.init(start: 1.3, end: 4.1)])

        let now = """
            [{"roomTime": 2.2, "track": "a", "change": "mute", "muted": false, "volume": 1, "recordMuted": true,
              "recordVolume": 1, "scope": "record"},
             {"roomTime": 2.4, "track": "a", "change": "volume", "muted": false, "volume": 0.5, "recordMuted": true,
              "recordVolume": 1, "scope": "heard"},
             {"roomTime": 2.8, "track": "a", "change": "unmute", "muted": false, "volume": 0.5, "recordMuted": false,
              "recordVolume": 1, "scope": "all"}]
            """
        let after = try Self.handMadeRoom(controls: now, offTheRecord: [(2.21, 2.8)])
        try roomtap(["timeline", after.path], expect: 0)
        let svg = try String(contentsOfFile: after.appendingPathComponent("timeline.svg").path, encoding: .utf8)
        let drawnAfter = try Self.read(after.appendingPathComponent("timeline.svg").path)
        #expect(drawnAfter.muted["a"] == [.init(start: 2.21, end: 2.8)], "\(drawnAfter.muted)")
        #expect(drawnAfter.heardMuted.isEmpty, "never muted for what is heard")
        #expect(
            svg.contains(
                "a off the record (silence in the file) 0:02.21 – 0:02.80; a muted (record) at 0:02.20; "
                    + "a unmuted (all) at 0:02.80"))
    }
}
