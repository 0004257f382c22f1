import Foundation
import RoomTapAll
import RoomTapJSON
import RoomTapSync

/// What the review page shows, as the JSON embedded in it (`<script id="roomtap-data">`): the
/// room, one lane per track (speakers in room.json order, then the agent, then the mix), each
/// with its level (``LanePeaks``, base64), talk spans, stretches without sound, mutes and volume
/// changes; the room's gaps; the transcript. Times are seconds of room time, to the millisecond.
///
/// Built once by ``make(directory:room:)``, which reads every track's file from start to end.
/// Thread: a value.
struct ViewModel: Encodable {
    struct Lane: Encodable {
        var name: String
        /// "speaker", "agent" or "mix".
        var kind: String
        /// The file's name in the recording's directory (the page plays it from there).
        var file: String
        var format: String
        var sampleRate: Int
        var channels: Int
        var wav: LaneAudio.WAVLayout?
        /// ``LanePeaks`` bytes, base64; empty when the level could not be read (``note`` says why).
        var peaks: String
        /// Talk spans (``ActivityDetector``), `[start, end]`.
        var spans: [[Double]]
        /// Where the file holds exact zeros, `[start, end]` (at least 0.1 s).
        var silent: [[Double]]
        /// Muted for what is heard (`[start, end]`), and off the record, from room.json's controls.
        var heardMuted: [[Double]]
        var recordMuted: [[Double]]
        var concealedMs: Int
        var holes: Int
        /// Why the lane lacks something ("file missing: alice.wav", a read error); nil when whole.
        var note: String?
    }

    struct Control: Encodable {
        var time: Double
        var change: String
        var track: String?
        var tracks: [String]?
        /// What the page's tooltip says: "alice muted (heard)", "solo bob".
        var text: String
    }

    struct Gap: Encodable {
        var from: Double
        var to: Double
        var reason: String
    }

    struct Line: Encodable {
        var start: Double
        var end: Double
        var speaker: String
        var text: String
    }

    var title: String
    var state: String
    var startTime: String
    var duration: Double
    var peaksPerSecond: Int
    var lanes: [Lane]
    var controls: [Control]
    var gaps: [Gap]
    var transcript: [Line]
    /// Why the transcript is left out, when transcript.jsonl is there but unreadable.
    var transcriptNote: String?

    /// Reads the recording in `directory` (its room.json already read as `room`): every track's
    /// file once, start to end, and transcript.jsonl if there is one. Never fails: a track whose
    /// file is missing or unreadable becomes a lane with a ``Lane/note``, an unreadable transcript
    /// a ``transcriptNote``.
    static func make(directory: String, room: TimelineRoom) -> ViewModel {
        let ordered =
            room.tracks.filter { kind(of: $0, in: room) == "speaker" }
            + room.tracks.filter { kind(of: $0, in: room) == "agent" }
            + room.tracks.filter { kind(of: $0, in: room) == "mix" }
        // Stretches still open at the end run to the end of the room (a cut-short room.json's
        // duration lags its files: the end is then the longest file's, see below).
        let marks = TimelineSVG(lanes: [], duration: .greatestFiniteMagnitude, controls: room.controls)
        let made = ordered.map { track in
            Lane(
                name: track.name, kind: kind(of: track, in: room), file: track.file,
                format: AudioFileFormat.fromExtension(of: track.file)?.rawValue ?? "wav", sampleRate: 48_000,
                channels: track.channels ?? 1, wav: nil, peaks: "", spans: [], silent: [],
                heardMuted: marks.stretches(of: track.name, muted: \.leavesHeardMuted).map { [ms($0.0), ms($0.1)] },
                recordMuted: marks.stretches(of: track.name, muted: \.leavesRecordMuted).map { [ms($0.0), ms($0.1)] },
                concealedMs: track.concealedMs ?? 0, holes: track.holes ?? 0, note: nil)
        }
        // Every file is read start to end, one per core at a time (the reads are CPU-bound).
        let read = Locked([Int: (Lane, Double)]())
        DispatchQueue.concurrentPerform(iterations: made.count) { i in
            let result = readFile(of: made[i], in: directory)
            read.withLock { $0[i] = result }
        }
        let results = read.withLock { all in made.indices.map { all[$0] ?? (made[$0], 0) } }
        var lanes = results.map(\.0)
        let longest = results.map(\.1).max() ?? 0
        let duration = max(room.durationSeconds ?? 0, longest)
        // Every lane spans the room: a file that ends early (a killed recording's, before or after
        // repair) is drawn silent to the room's end, so the lanes stay aligned.
        let peakCounts = lanes.map { Data(base64Encoded: $0.peaks)?.count ?? 0 }
        let roomPeaks = max(Int((duration * Double(LanePeaks.perSecond)).rounded(.up)), peakCounts.max() ?? 0)
        for i in lanes.indices where !lanes[i].peaks.isEmpty && peakCounts[i] < roomPeaks {
            var bytes = Data(base64Encoded: lanes[i].peaks) ?? Data()
            bytes.append(contentsOf: repeatElement(LanePeaks.code(0), count: roomPeaks - peakCounts[i]))
            lanes[i].peaks = bytes.base64EncodedString()
        }
        for i in lanes.indices {
            lanes[i].heardMuted = lanes[i].heardMuted.map { [$0[0], min($0[1], ms(duration))] }
            lanes[i].recordMuted = lanes[i].recordMuted.map { [$0[0], min($0[1], ms(duration))] }
        }
        let names = Set(lanes.map(\.name))
        let controls = room.controls.map { c in
            Control(
                time: ms(c.roomTime), change: c.change, track: c.track, tracks: c.tracks,
                text: TimelineSVG.describe(c) + (c.track.map { names.contains($0) ? "" : " (no lane)" } ?? ""))
        }
        var transcript: [Line] = []
        var transcriptNote: String?
        let transcriptPath = RecordingPlan.join(directory, "transcript.jsonl")
        if let data = FileManager.default.contents(atPath: transcriptPath) {
            do {
                transcript = try TranscriptLine.parse(String(decoding: data, as: UTF8.self), source: transcriptPath)
                    .map { Line(start: ms($0.start), end: ms($0.end), speaker: $0.speaker, text: $0.text) }
            } catch {
                transcriptNote = error.description
            }
        }
        let name = URL(fileURLWithPath: directory).standardizedFileURL.lastPathComponent
        return ViewModel(
            title: name, state: room.state ?? "unknown", startTime: room.startTime ?? "",
            duration: ms(duration), peaksPerSecond: LanePeaks.perSecond, lanes: lanes,
            controls: controls,
            gaps: room.gaps.map { Gap(from: ms($0.from), to: ms($0.to), reason: $0.reason ?? "gap") },
            transcript: transcript, transcriptNote: transcriptNote)
    }

    /// `lane` with what its file holds: format and layout, level, talk spans, stretches of
    /// zeros (or a ``Lane/note`` saying why not), and the file's length in seconds (0 unread).
    /// Any thread; reads the file from start to end.
    private static func readFile(of lane: Lane, in directory: String) -> (Lane, Double) {
        var lane = lane
        let path = RecordingPlan.join(directory, lane.file)
        guard FileManager.default.fileExists(atPath: path) else {
            lane.note = "file missing: \(lane.file)"
            return (lane, 0)
        }
        do {
            let audio = try LaneAudio(path: path)
            lane.format = audio.format
            lane.sampleRate = audio.sampleRate
            lane.channels = audio.channels
            lane.wav = audio.wav
            var peaks = LanePeaks(sampleRate: audio.sampleRate, channels: audio.channels)
            var detector = ActivityDetector(sampleRate: audio.sampleRate, channels: audio.channels)
            try audio.forEachChunk { chunk in
                peaks.feed(chunk)
                detector.feed(chunk)
            }
            lane.peaks = Data(peaks.finish()).base64EncodedString()
            lane.spans = detector.finish().map { [ms($0.start), ms($0.end)] }
            lane.silent = detector.silentRuns.filter { $0.end - $0.start >= 0.1 }.map { [ms($0.start), ms($0.end)] }
            return (lane, audio.duration)
        } catch {
            lane.note = "\(error)"
            return (lane, 0)
        }
    }

    /// "mix" for mixes, "agent" for the agent's voice (its role; in a room.json written before
    /// roles, the track named `agent` of a room with an agent), else "speaker".
    static func kind(of track: TimelineRoom.Track, in room: TimelineRoom) -> String {
        if track.kind == "mix" { return "mix" }
        if let role = track.role { return role == TrackRole.agentVoice.rawValue ? "agent" : "speaker" }
        if room.hasAgent && track.name == "agent" { return "agent" }
        return "speaker"
    }

    /// The JSON (compact, keys sorted, by the one writer), safe inside a `<script>` element:
    /// every `<` is written `\u003c` (only strings can hold one), so no `</script>` or `<!--` can
    /// end or change it. Throws a one-line error for a value JSON cannot hold.
    func scriptJSON() throws -> String {
        let text: String
        do { text = try JSONNodeEncoder().encode(self).jsonText } catch {
            throw RuntimeError(description: "cannot write the page's data: \(error)")
        }
        return text.replacingOccurrences(of: "<", with: "\\u003c")
    }

    /// Seconds rounded to the millisecond.
    private static func ms(_ seconds: Double) -> Double { (seconds * 1000).rounded() / 1000 }
}
