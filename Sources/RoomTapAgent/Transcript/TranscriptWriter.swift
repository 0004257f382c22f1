import Foundation
import RoomTapJSON
import RoomTapSync
import Synchronization

/// Writes `transcript.jsonl`: one JSON object per utterance and line,
/// `{"start": 1.234, "end": 2.5, "speaker": "alice+bob", "text": "…"}` (an agent reply a barge-in
/// cut adds `"interrupted": true`: it played until `end`, and `text` is all the model generated for
/// it), times in seconds of room time (to the millisecond) where the speech is in the files,
/// `speaker` `agent` or the human track name(s) joined with `+`. In a room whose record follows
/// its live audio (network streams, see `RoomTiming`) utterances are heard live and written
/// `recordLagSamples` later, so the times match the WAVs.
///
/// Every line is written through at once (a `kill -9` loses no finished line).
///
/// Thread: safe from any thread (a lock orders the lines); never called on the room clock's.
public final class TranscriptWriter: Sendable {
    /// The file's path.
    public let path: String
    /// Added to every time written (samples at 48 kHz): how much later the record holds the audio
    /// than it was heard.
    public let recordLagSamples: Int64
    private let lines = Atomic<Int>(0)
    private let handle: Locked<FileHandle?>
    private let observers = Locked<[@Sendable (TranscriptEntry) -> Void]>([])

    /// Errors opening the file.
    public struct OpenError: Error, CustomStringConvertible {
        public let description: String
    }

    /// Creates (or truncates) the file at `path`; times are shifted by `recordLagSamples`.
    public init(path: String, recordLagSamples: Int64 = 0) throws {
        self.path = path
        self.recordLagSamples = recordLagSamples
        guard FileManager.default.createFile(atPath: path, contents: nil),
            let h = FileHandle(forWritingAtPath: path)
        else {
            throw OpenError(description: "cannot create \(path): check that the directory exists and is writable")
        }
        handle = Locked(h)
    }

    /// Lines written.
    public var lineCount: Int { lines.load(ordering: .relaxed) }

    /// Calls `observer` with every line written from now on (after it is in the file), on the
    /// writing thread (a session's or the agent's, never the room clock's), in file order. The
    /// observer must not block: hand the line to a thread of its own. Used by the pipeline agent
    /// (who said what) and Sora's streaming responses.
    public func observe(_ observer: @escaping @Sendable (TranscriptEntry) -> Void) {
        observers.withLock { $0.append(observer) }
    }

    /// Appends one utterance; room samples are 48 kHz, as heard (``recordLagSamples`` is added)
    /// unless `onRecordTimeline` (a speaker's record, already where the files hold it). Ignored
    /// after ``close()`` and after a line that could not be written (which closes the file).
    public func write(
        startSample: Int64, endSample: Int64, speaker: String, text: String, interrupted: Bool = false,
        onRecordTimeline: Bool = false
    ) {
        let lag = onRecordTimeline ? 0 : recordLagSamples
        let line = Self.line(
            startSample: startSample + lag, endSample: endSample + lag, speaker: speaker, text: text,
            interrupted: interrupted)
        let record = TranscriptEntry(
            startSample: max(0, startSample + lag), endSample: max(startSample + lag, endSample + lag, 0),
            speaker: speaker, text: text, interrupted: interrupted, json: line)
        handle.withLock { h in
            guard let file = h else { return }
            do {
                try file.write(contentsOf: Data(line.utf8))
                lines.add(1, ordering: .relaxed)
                for observer in observers.withLock({ $0 }) { observer(record) }
            } catch {
                // A full disk or a lost file ends the transcript (``lineCount`` says how far it
                // got); the recording goes on.
                try? file.close()
                h = nil
            }
        }
    }

    /// The JSON line (with its newline) for one utterance: the fields in the documented order,
    /// written by the one writer (``JSONValue/writeOrderedObject(_:to:)``), times in seconds to the
    /// millisecond (`1.234`, `2.5`, `3`). Any thread; pure.
    static func line(
        startSample: Int64, endSample: Int64, speaker: String, text: String, interrupted: Bool = false
    ) -> String {
        var members: [(key: String, value: JSONValue)] = [
            ("start", .number(seconds(max(0, startSample)))),
            ("end", .number(seconds(max(startSample, endSample, 0)))),
            ("speaker", .string(speaker)),
            ("text", .string(text)),
        ]
        if interrupted { members.append(("interrupted", .bool(true))) }
        var bytes: [UInt8] = []
        JSONValue.writeOrderedObject(members, to: &bytes)
        bytes.append(0x0A)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Samples at 48 kHz as seconds, rounded to the millisecond.
    private static func seconds(_ samples: Int64) -> Double { (Double(samples) / 48).rounded() / 1000 }

    /// Closes the file. Idempotent.
    public func close() {
        handle.withLock { h in
            try? h?.close()
            h = nil
        }
    }
}

/// One line of the transcript as it is written (``TranscriptWriter/observe(_:)``).
///
/// Thread: a value.
public struct TranscriptEntry: Sendable, Equatable {
    /// Room samples at 48 kHz, on the record's timeline (where the files hold the words).
    public var startSample: Int64
    public var endSample: Int64
    /// `agent` or the human track name(s) joined with `+`.
    public var speaker: String
    public var text: String
    /// An agent reply a barge-in cut.
    public var interrupted: Bool
    /// The JSON line as in transcript.jsonl, with its newline.
    public var json: String
}
