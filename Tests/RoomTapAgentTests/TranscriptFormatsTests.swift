import Foundation
import RoomTapAgent
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
