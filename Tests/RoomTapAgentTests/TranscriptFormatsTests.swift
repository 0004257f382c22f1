import Foundation
import RoomTapAgent
import RoomTapSync
import RoomTapTestSupport
import Testing

/// transcript.jsonl is outside input to `roomtap transcript`: hostile lines are refused with the
/// line's number and never crash; what parses renders in every format (also under the fuzzer).
@Suite("Transcript: parsing and subtitle formats")
struct TranscriptFormatsTests {
    @Test(arguments: [
        "{\"start\": 1e300, \"end\": 2, \"speaker\": \"a\", \"text\": \"x\"}",
        "{\"start\": -1, \"end\": 2, \"speaker\": \"a\", \"text\": \"x\"}",
        "{\"start\": 1, \"end\": 1e300, \"speaker\": \"a\", \"text\": \"x\"}",
        "{\"start\": 1, \"end\": 2, \"speaker\": \"a\"}",
        "{\"start\": \"1\", \"end\": 2, \"text\": \"x\"}",
        "[1, 2, 3]", "{", "null", "\u{0}\u{1}\u{FFFF}", String(repeating: "[", count: 10_000),
    ])
    func hostileLinesAreRefusedWithTheirNumber(_ line: String) {
        let text = "{\"start\": 0, \"end\": 1, \"speaker\": \"a\", \"text\": \"ok\"}\n" + line + "\n"
        #expect(throws: TranscriptError.self) { try TranscriptLine.parse(text, source: "t.jsonl") }
        do {
            _ = try TranscriptLine.parse(text, source: "t.jsonl")
        } catch {
            #expect(error.description.hasPrefix("t.jsonl:2: not a transcript line"))
        }
    }

    /// Order by start (stable for equal starts), an end before its start raised, a missing
    /// speaker "unknown"; every format renders every cue.
    @Test func linesAreOrderedAndEveryFormatHasEveryCue() throws {
        let text = """
            {"start": 2, "end": 1, "speaker": "b", "text": "second"}
            {"start": 0.5, "end": 1, "text": "first"}
            {"start": 2, "end": 3, "speaker": "c", "text": "third"}
            """
        let lines = try TranscriptLine.parse(text, source: "t")
        #expect(lines.map(\.text) == ["first", "second", "third"])
        #expect(lines[0].speaker == "unknown" && lines[1].end == 2)
        for format in TranscriptFormat.allCases {
            let rendered = format.render(lines)
            #expect(["first", "second", "third"].allSatisfy(rendered.contains), "\(format)")
        }
        #expect(TranscriptFormat.vtt.render(lines).contains("00:00:02.000 --> 00:00:02.000\n<v b>second"))
    }
}

/// What the writer writes, the parser (`roomtap transcript`, the review page) reads back: times to
/// the millisecond, and any speaker or text (quotes, control characters, slashes, line
/// separators, characters beyond the BMP) exactly.
@Suite("Transcript: written lines read back")
struct TranscriptRoundTripTests {
    @Test func everyWrittenLineParsesBackToWhatWasSaid() throws {
        let dir = try TemporaryDirectory()
        let writer = try TranscriptWriter(path: dir.file("transcript.jsonl"))
        let said: [(start: Int64, end: Int64, speaker: String, text: String)] = [
            (0, 48, "alice", "hi"),
            (24, 72_024, "alice+bob", "say \"cheese\"\n/ok\\"),
            (48_000, 47_000, "bob", "\u{0}\u{1}\u{8}\u{C}\t\r\u{1F}\u{7F} \u{2028}\u{2029}"),
            (172_800_000, 172_800_001, "é e\u{301} 😀 𝄞", "</script> & 日本語 🇯🇵"),
        ]
        for line in said {
            writer.write(startSample: line.start, endSample: line.end, speaker: line.speaker, text: line.text)
        }
        writer.write(startSample: 200_000_000, endSample: 200_000_480, speaker: "agent", text: "cut", interrupted: true)
        writer.close()
        let text = try String(contentsOfFile: dir.file("transcript.jsonl"), encoding: .utf8)
        #expect(text.split(separator: "\n").count == said.count + 1, "one line each")
        let lines = try TranscriptLine.parse(text, source: "transcript.jsonl")
        let expected =
            said.map { line in
                TranscriptLine(
                    start: (Double(line.start) / 48).rounded() / 1000,
                    end: (Double(max(line.start, line.end)) / 48).rounded() / 1000, speaker: line.speaker,
                    text: line.text)
            } + [TranscriptLine(start: 4166.667, end: 4166.677, speaker: "agent", text: "cut")]
        #expect(lines == expected)
        #expect(text.hasPrefix(#"{"start": 0, "end": 0.001, "speaker": "alice", "text": "hi"}"#))
        #expect(
            text.hasSuffix(
                #"{"start": 4166.667, "end": 4166.677, "speaker": "agent", "text": "cut", "interrupted": true}"# + "\n")
        )
    }
}

/// The writer's observers see every line after it is in the file, in file order, with the same
/// text the file holds (the pipeline agent and Sora's streaming responses rely on it).
@Suite("Transcript: observed lines")
struct TranscriptObserverTests {
    @Test func observersSeeEveryLineAsWrittenInOrder() throws {
        let dir = try TemporaryDirectory()
        let writer = try TranscriptWriter(path: dir.file("transcript.jsonl"), recordLagSamples: 480)
        let seen = Locked<[TranscriptEntry]>([])
        writer.observe { entry in
            let inFile = (try? String(contentsOfFile: writer.path, encoding: .utf8)) ?? ""
            #expect(inFile.hasSuffix(entry.json), "observed after the line is in the file")
            seen.withLock { $0.append(entry) }
        }
        writer.write(startSample: 48_000, endSample: 96_000, speaker: "alice", text: "hello \"bob\"")
        writer.write(startSample: 100, endSample: 50, speaker: "agent", text: "hi", interrupted: true)
        writer.write(startSample: 0, endSample: 480, speaker: "bob", text: "x", onRecordTimeline: true)
        writer.close()
        writer.write(startSample: 0, endSample: 1, speaker: "late", text: "after close")
        let entries = seen.withLock { $0 }
        #expect(entries.map(\.speaker) == ["alice", "agent", "bob"])
        #expect(entries[0].startSample == 48_480 && entries[0].endSample == 96_480, "the record lag added")
        #expect(entries[1].endSample == entries[1].startSample && entries[1].interrupted)
        #expect(entries[2].startSample == 0 && entries[2].endSample == 480, "on the record timeline: no lag")
        let file = try String(contentsOfFile: dir.file("transcript.jsonl"), encoding: .utf8)
        #expect(entries.map(\.json).joined() == file)
        let parsed = try TranscriptLine.parse(file, source: "t")
        #expect(parsed.map(\.text).sorted() == ["hello \"bob\"", "hi", "x"])
    }
}
