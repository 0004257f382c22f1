import Foundation
import RoomTapJSON

/// A transcript.jsonl that cannot be read: one line naming the file and line.
public struct TranscriptError: Error, CustomStringConvertible, Sendable {
    public let description: String
}

/// One line of transcript.jsonl (docs/AGENT.md): room time in seconds, who spoke, what was said.
/// Parsed from outside input (a file anyone may hand `roomtap transcript`): fuzzed.
public struct TranscriptLine: Equatable, Sendable {
    public var start: Double
    public var end: Double
    public var speaker: String
    public var text: String

    public init(start: Double, end: Double, speaker: String, text: String) {
        self.start = start
        self.end = end
        self.speaker = speaker
        self.text = text
    }

    /// Parses transcript.jsonl: one JSON object per line, blank lines skipped. Throws a one-line
    /// error naming the line for anything else. The lines come back ordered by start time (stable),
    /// an end before its start raised to the start.
    public static func parse(_ text: String, source: String) throws(TranscriptError) -> [TranscriptLine] {
        var lines: [TranscriptLine] = []
        for (number, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty { continue }
            guard let object = try? JSONValue(parsing: String(line)), object.objectValue != nil,
                let start = object["start"]?.doubleValue, start >= 0, start < 1e9,
                let end = object["end"]?.doubleValue, end < 1e9,
                let text = object["text"]?.stringValue
            else {
                throw TranscriptError(
                    description: "\(source):\(number + 1): not a transcript line (want {\"start\": s, \"end\": s, "
                        + "\"speaker\": name, \"text\": words}); fix or remove that line")
            }
            let speaker = object["speaker"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 } ?? "unknown"
            lines.append(TranscriptLine(start: start, end: max(start, end), speaker: speaker, text: text))
        }
        return lines.enumerated().sorted { ($0.element.start, $0.offset) < ($1.element.start, $1.offset) }.map(
            \.element)
    }
}

/// The subtitle and label formats `roomtap transcript` writes. Thread: values, any thread.
public enum TranscriptFormat: String, CaseIterable, Sendable {
    /// WebVTT (https://www.w3.org/TR/webvtt1/): a cue per line, the speaker as a voice span.
    case vtt
    /// SubRip: numbered cues, `HH:MM:SS,mmm`, the speaker as a prefix.
    case srt
    /// Plain text: `[HH:MM:SS.mmm] speaker: text`.
    case txt
    /// Audacity label track (File > Import > Labels): start, end, label; tab separated, seconds.
    case audacity

    /// The file name extension of the format.
    public var fileExtension: String { self == .audacity ? "txt" : rawValue }

    /// The lines in this format (a whole document).
    public func render(_ lines: [TranscriptLine]) -> String {
        switch self {
        case .vtt:
            var out = "WEBVTT\n"
            for (i, line) in lines.enumerated() {
                out += "\n\(i + 1)\n\(Self.clock(line.start, ".")) --> \(Self.clock(line.end, "."))\n"
                out += "<v \(Self.voice(line.speaker))>\(Self.escaped(Self.oneLine(line.text)))\n"
            }
            return out
        case .srt:
            var out = ""
            for (i, line) in lines.enumerated() {
                if i > 0 { out += "\n" }
                out += "\(i + 1)\n\(Self.clock(line.start, ",")) --> \(Self.clock(line.end, ","))\n"
                out += "\(line.speaker): \(Self.oneLine(line.text))\n"
            }
            return out
        case .txt:
            return lines.map { "[\(Self.clock($0.start, "."))] \($0.speaker): \(Self.oneLine($0.text))\n" }.joined()
        case .audacity:
            return lines.map {
                String(format: "%.6f\t%.6f\t", $0.start, $0.end) + "\($0.speaker): \(Self.oneLine($0.text))\n"
            }.joined()
        }
    }

    /// `HH:MM:SS<separator>mmm`, rounded to the millisecond.
    static func clock(_ seconds: Double, _ separator: String) -> String {
        let ms = Int64((seconds * 1000).rounded())
        let h = ms / 3_600_000
        let m = ms / 60_000 % 60
        let s = ms / 1000 % 60
        return String(format: "%02lld:%02lld:%02lld%@%03lld", h, m, s, separator, ms % 1000)
    }

    /// Line breaks inside a cue would end it (VTT, SRT) or split a label: spaces instead.
    static func oneLine(_ text: String) -> String {
        text.split(whereSeparator: \.isNewline).joined(separator: " ")
    }

    /// WebVTT cue text escapes (§4.2.2): &, <, >.
    static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
    }

    /// A voice annotation may not hold '>' or a line break, and is escaped like cue text.
    static func voice(_ name: String) -> String { escaped(oneLine(name)) }
}
