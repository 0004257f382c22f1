import Foundation
import RoomTapAll

/// `--sora-recording DIR`: a track per connection of the Sora recording in DIR (``SoraRecording``),
/// each made of its files' audio at their own places; every file of the room covers the whole
/// recording from its start.
extension RecordingPlan {
    /// What --sora-recording read, for the tracks, the warnings and room.json's `sora` section.
    struct SoraPlanned {
        let recording: SoraRecording
        /// The option's value as given (an `s3://` URL, or the folder).
        let given: String
        /// Each connection's track name (connections without audio have none).
        let trackNames: [String: String]
        /// One line each: every fault of the folder, of a connection, of a file.
        let warnings: [String]
        /// The recording's start on the wall clock, when the JSONs say.
        var start: Date? { recording.originMicroseconds.map { Date(timeIntervalSince1970: Double($0) / 1_000_000) } }
    }

    /// The inputs of `--sora-recording` (none without it). Names: the `--sora-name-key` value in
    /// the connection's `metadata`, else its `client_id`, else its connection id; control
    /// characters dropped, at most 100 characters, made unique against each other and the
    /// --file names (`-2`, `-3`, ... ignoring case). One-line errors from ``SoraRecording/read(directory:)``.
    static func soraInputs(
        _ options: RecordCommand.Options, naming: inout OutputNaming
    ) throws -> (inputs: [Input], planned: SoraPlanned)? {
        guard let directory = options.soraRecording else { return nil }
        let given = options.inputOrigins[directory] ?? directory
        let recording: SoraRecording
        do { recording = try SoraRecording.read(directory: directory) } catch {
            throw RuntimeError(description: "--sora-recording \(error.description)")
        }
        var taken = Set(options.files.map { $0.name.lowercased() })
        if options.mix { taken.insert("mix") }
        if options.agent != nil { taken.formUnion(["agent", "agent-hears"]) }
        if options.mic != nil { taken.insert(options.micName.lowercased()) }
        var inputs: [Input] = []
        var names: [String: String] = [:]
        var warnings = recording.problems.map { "--sora-recording \(given): \($0)" }
        for connection in recording.connections {
            guard connection.hasAudio else { continue }
            let base = trackName(connection.trackName(nameKey: options.soraNameKey), or: connection.connectionID)
            var name = base
            var n = 2
            while taken.contains(name.lowercased()) {
                name = "\(base)-\(n)"
                n += 1
            }
            taken.insert(name.lowercased())
            names[connection.connectionID] = name
            let who = "--sora-recording \(given): track \(name) (connection \(connection.connectionID))"
            warnings += connection.problems.map { "\(who): \($0)" }
            warnings += connection.files.compactMap { $0.problem.map { "\(who): \($0)" } }
            guard connection.endSamples <= maxDurationSamples else {
                throw RuntimeError(
                    description: "\(who): its files span more than 48 hours, more than roomtap records from one "
                        + "track; check their JSONs' offsets and timestamps")
            }
            let spec = FileSpec(name: name, path: directory, offsetSamples: 0)
            var input = Input(
                spec: spec, info: nil, fileName: naming.claim(name), wavPath: "", offsetSamples: 0)
            input.sora = connection
            inputs.append(input)
        }
        return (inputs, SoraPlanned(recording: recording, given: given, trackNames: names, warnings: warnings))
    }

    /// `name` made fit for a track name: control characters dropped, spaces trimmed, at most 100
    /// characters; `fallback` when nothing is left.
    static func trackName(_ name: String, or fallback: String) -> String {
        let kept = String(
            String.UnicodeScalarView(name.unicodeScalars.filter { $0.properties.generalCategory != .control }))
        let trimmed = String(kept.trimmingCharacters(in: .whitespaces).prefix(100))
        return trimmed.isEmpty ? fallback : trimmed
    }
}

extension RecordingPlan.Input {
    /// A Sora connection's track: its pieces played by a ``SegmentedRecordingSource`` to the end
    /// of its recording. The thread that builds the room.
    func soraSource(_ connection: SoraRecording.Connection, channels: Int) throws -> SegmentedRecordingSource {
        guard
            let source = SegmentedRecordingSource(
                segments: connection.segments.map { ($0.stream, $0.offset, $0.until) }, end: connection.endSamples,
                channels: channels)
        else { throw RuntimeError(description: "libopus cannot create a decoder") }
        return source
    }
}
