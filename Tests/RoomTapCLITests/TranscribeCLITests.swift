import Foundation
import RoomTapAgentTestSupport
import RoomTapAll
import RoomTapCLITestSupport
import RoomTapMediaTestSupport
import Testing

/// `record --transcribe` through the real CLI against the stand-in's transcription sessions: one
/// session per speaker, every line attributed to the speaker whose file holds the words, silence
/// never sent, room.json's numbers, and the errors a user can make.
@Suite("CLI: per-speaker transcription", .serialized)
struct TranscribeCLITests {
    static let key = "sk-test-TRANSCRIBE-0123456789"
    static let tones: [Double] = [300, 500, 700]

    /// An Ogg Opus file of `seconds`, a tone of `frequency` from `from` to `to` s, silence elsewhere.
    private func speaker(
        _ dir: URL, _ name: String, _ frequency: Double, from: Double, to: Double, seconds: Double = 3.5
    )
        throws -> String
    {
        let pcm = (0..<Int(seconds * 48_000)).map { n -> Int16 in
            let t = Double(n) / 48_000
            guard t >= from && t < to else { return 0 }
            return Int16((8_000 * sin(2 * Double.pi * frequency * t)).rounded())
        }
        let path = dir.appendingPathComponent("\(name).opus").path
        try OggOpusWriter().encode(pcm).write(to: path)
        return path
    }

    private func json(_ path: String) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
    }

    private func transcript(_ dir: URL) throws -> [[String: Any]] {
        let text = try String(contentsOfFile: dir.appendingPathComponent("transcript.jsonl").path, encoding: .utf8)
        return text.split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
        }
    }

    @Test func threeSpeakersGiveThreeSessionsAndEveryLineIsTheSpeakers() throws {
        let server = try FakeRealtimeServer(
            expectedKey: Self.key, transcribe: FakeRealtimeServer.namingTones(Self.tones))
        defer { server.stop() }
        let inputs = try temporaryDirectory()
        let out = try temporaryDirectory().appendingPathComponent("room")
        let alice = try speaker(inputs, "alice", 300, from: 0.5, to: 1.5)
        let bob = try speaker(inputs, "bob", 500, from: 1.2, to: 2.4)  // over alice's end
        let carol = try speaker(inputs, "carol", 700, from: 9, to: 9)  // silent
        let outcome = try CLIRunner.start(
            [
                "record", "--file", "alice=\(alice)", "--file", "bob=\(bob)", "--file", "carol=\(carol)",
                "--transcribe", "--transcribe-url", server.transcriptionURL, "--transcribe-language", "en",
                "--out", out.path, "--quiet",
            ], environment: ["OPENAI_API_KEY": Self.key]
        ).wait(timeout: 120)
        #expect(outcome.status == 0, "stderr: \(outcome.stderr)")
        #expect(!outcome.stderr.contains(Self.key) && !outcome.stderr.contains("transcribe"), "\(outcome.stderr)")
        #expect(server.transcriptionConnections.count == 3, "one transcription session per speaker")
        #expect(server.events(ofType: "error").isEmpty)

        let lines = try transcript(out)
        let said = Set(lines.map { "\($0["speaker"] as? String ?? "?"): \($0["text"] as? String ?? "?")" })
        #expect(said == ["alice: tone 300", "bob: tone 500"], "\(lines)")
        for line in lines {
            let start = line["start"] as? Double ?? -1
            let end = line["end"] as? Double ?? -1
            let (from, to) = line["speaker"] as? String == "alice" ? (0.5, 1.5) : (1.2, 2.4)
            // The server keeps 0.3 s before speech; the end is where the speaker stopped.
            #expect(abs(start - (from - 0.3)) <= 0.1 && abs(end - to) <= 0.1, "\(line)")
        }

        let room = try json(out.appendingPathComponent("room.json").path)
        #expect(room["transcriptLines"] as? Int == 2)
        let t = try #require(room["transcription"] as? [String: Any], "\(room.keys)")
        #expect(t["model"] as? String == "gpt-4o-mini-transcribe" && t["language"] as? String == "en")
        #expect((t["url"] as? String)?.contains("intent=transcription") == true)
        let speakers = try #require(t["speakers"] as? [[String: Any]])
        let byName = Dictionary(uniqueKeysWithValues: speakers.map { ($0["name"] as? String ?? "", $0) })
        #expect(Set(byName.keys) == ["alice", "bob", "carol"])
        #expect(byName["carol"]?["secondsSent"] as? Double == 0, "silence costs nothing")
        for (name, talk) in [("alice", 1.0), ("bob", 1.2)] {
            let sent = byName[name]?["secondsSent"] as? Double ?? 0
            let share = byName[name]?["shareOfRoom"] as? Double ?? 1
            // The talk, 0.3 s of pre-roll and 1 s of hangover.
            #expect(
                sent >= talk && sent <= talk + 1.35 && share < 0.75, "\(name): \(sent) s sent, \(share) of the room")
            #expect(byName[name]?["sessions"] as? Int == 1 && byName[name]?["state"] as? String == "stopped")
        }
        let roomJSON = try String(contentsOfFile: out.appendingPathComponent("room.json").path, encoding: .utf8)
        #expect(!roomJSON.contains(Self.key))

        // The per-speaker lines as subtitles: one cue per line, the speaker as the WebVTT voice,
        // in start order (alice, then bob) at the times transcript.jsonl holds.
        let ordered = lines.sorted { ($0["start"] as? Double ?? 0) < ($1["start"] as? Double ?? 0) }
        func stamp(_ seconds: Double, _ separator: String) -> String {
            let ms = Int((seconds * 1000).rounded())
            return String(format: "00:00:%02d%@%03d", ms / 1000, separator, ms % 1000)
        }
        let vtt = try roomtap(["transcript", out.path, "--format", "vtt"], expect: 0).stdout
        let srt = try roomtap(["transcript", out.path, "--format", "srt"], expect: 0).stdout
        var vttCues: [String] = []
        var srtCues: [String] = []
        for (n, line) in ordered.enumerated() {
            let (start, end) = (line["start"] as? Double ?? -1, line["end"] as? Double ?? -1)
            let (who, text) = (line["speaker"] as? String ?? "?", line["text"] as? String ?? "?")
            vttCues.append("\(n + 1)\n\(stamp(start, ".")) --> \(stamp(end, "."))\n<v \(who)>\(text)\n")
            srtCues.append("\(n + 1)\n\(stamp(start, ",")) --> \(stamp(end, ","))\n\(who): \(text)\n")
        }
        #expect(ordered.map { $0["speaker"] as? String } == ["alice", "bob"])
        #expect(vtt == "WEBVTT\n\n" + vttCues.joined(separator: "\n"), "\(vtt)")
        #expect(srt == srtCues.joined(separator: "\n"), "\(srt)")
        print(
            "transcribe: room \(t["roomSeconds"] ?? 0) s, sent \(t["secondsSent"] ?? 0) s: "
                + speakers.map { "\($0["name"] ?? "") \($0["secondsSent"] ?? 0) s" }.joined(separator: ", "))
    }

    @Test func withTheAgentTheHumansLinesComeFromTheirOwnSessions() throws {
        let server = try FakeRealtimeServer(
            expectedKey: Self.key, transcribe: FakeRealtimeServer.namingTones(Self.tones))
        defer { server.stop() }
        let inputs = try temporaryDirectory()
        let out = try temporaryDirectory().appendingPathComponent("room")
        let alice = try speaker(inputs, "alice", 300, from: 0.5, to: 1.3)
        let bob = try speaker(inputs, "bob", 500, from: 0.7, to: 1.6)
        let outcome = try CLIRunner.start(
            [
                "record", "--file", "alice=\(alice)", "--file", "bob=\(bob)", "--duration", "3.5", "--agent",
                "--agent-url", server.url, "--transcribe", "--transcribe-url", server.transcriptionURL,
                "--out", out.path, "--quiet",
            ], environment: ["OPENAI_API_KEY": Self.key]
        ).wait(timeout: 120)
        #expect(outcome.status == 0, "stderr: \(outcome.stderr)")
        #expect(server.transcriptionConnections.count == 2, "the agent's voice is not transcribed")
        let update = try #require(
            server.events(ofType: "session.update").first {
                $0.object["session"].flatMap { $0 as? [String: Any] }?["type"] as? String == "realtime"
            })
        let input =
            ((update.object["session"] as? [String: Any])?["audio"] as? [String: Any])?["input"] as? [String: Any]
        #expect(input?["transcription"] == nil, "the agent's session does not transcribe the mix too")
        let lines = try transcript(out)
        let said = Set(lines.map { "\($0["speaker"] as? String ?? "?"): \($0["text"] as? String ?? "?")" })
        #expect(said == ["alice: tone 300", "bob: tone 500"], "no unknown or alice+bob lines: \(lines)")
    }

    @Test func badTranscriptionOptionsAreOneLineAndNothingIsMade() throws {
        let out = try temporaryDirectory().appendingPathComponent("room")
        let base = ["record", "--file", "alice=\(sample("alice"))", "--out", out.path]
        expectUsageErrors(
            base,
            [
                (["--transcribe-language", "en"], "--transcribe-* options need --transcribe"),
                (["--transcribe", "--transcribe-language", "english"], "ISO-639-1"),
                (["--transcribe", "--transcribe-url", "http://x/"], "must be a ws:// or wss:// URL"),
                (["--transcribe", "--transcribe-url", "wss://x/v1/realtime?api-key=abc"], "must not carry a key"),
                (
                    ["--transcribe", "--transcribe-url", "wss://x/v1/realtime?model=gpt-realtime"],
                    "must not name a model="
                ),
            ], environment: ["OPENAI_API_KEY": Self.key])
        let missing = InProcessCLI.run(base + ["--transcribe"], environment: ["OPENAI_API_KEY": ""])
        #expect(
            missing.status == 1 && missing.stderr.contains("--transcribe needs an OpenAI API key"), "\(missing.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out.path), "nothing created")
    }
}
