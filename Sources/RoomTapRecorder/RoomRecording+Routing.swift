import Foundation
import RoomTapAll
import RoomTapFiles
import RoomTapSync

/// Output routing: what each track of the room is written to, by its role (a speaker's file, the
/// mix's, the agent's voice; nothing for the agent's hearing), opened when the track joins and
/// finished when it leaves, as the Sora SDK's add-stream / remove-stream handlers do.
///
/// Thread: the room's event handlers, on the thread that adds or removes the track (the control
/// side: the CLI's main thread, the live room's control thread, a join's thread).
extension RoomRecording {
    /// Routes a track that joined: its file (by role), the mix, the agent, the speakers'
    /// transcription, `--play`, the control socket's `track_added`. `parts`: the room's parts made
    /// before its tracks (``assembleParts(room:clock:startTime:)``).
    func attachSink(
        to track: AudioTrack, parts: RoomParts, options: WAVWriter.Options, policy: OverflowPolicy,
        failureBus: RoomBus
    ) {
        let agent = parts.agent
        let path: String = shared.withLock { s in
            switch track.role {
            case .mix: return s.mixer == nil ? s.mixPath ?? "" : ""
            case .agentHearing: return ""
            case .agentVoice:
                s.mixer?.addInput(track)
                return plan.agentPath ?? ""
            case .speaker, .speakerFromFile, .speakerFromNetwork, .speakerFromMicrophone: s.mixer?.addInput(track)
            }
            if let path = s.pathsBySource[ObjectIdentifier(track.source)] { return path }
            if let path = plan.describedPaths[track.name] { return path }
            return RecordingPlan.livePath(
                for: track.name, naming: &s.naming, in: plan.outDirectory, force: plan.options.force,
                dotExtension: plan.options.output.dotExtension)
        }
        if track.role == .mix, let mixer = track.mixer { shared.withLock { $0.mixer = mixer } }
        agent?.trackAdded(track)
        parts.transcriber?.trackAdded(track)
        if let player = parts.playback,
            plan.options.playTrack.map({ track.name == $0 && !track.isDerived }) ?? (track.role == .mix)
        {
            track.addSink(player, tap: .heard)
        }
        if let handler = parts.controlHandler {
            handler.publish(.object(["event": .string("track_added"), "track": handler.describe(track)]))
        }
        guard !path.isEmpty else { return }
        var options = options
        options.description = "roomtap track \(track.name)"
        do {
            // Live rooms: 1 s of queue per file (the writer pool drains it every 50 ms; a disk stalled
            // longer drops frames, counted and warned), so a 1000-track room holds ~94 MiB less.
            // Offline rooms write on the render threads (no deadline to keep): no queue, no copy,
            // no writer thread, nothing lost.
            let writer: any AudioFileWriter
            if plan.options.output.isDefault && !plan.options.loudness {
                writer = try WAVWriter(path: path, channels: track.channels, options: options)
            } else {
                let metadata = AudioFileMetadata(
                    roomStartTime: options.roomStartTime, timelineOrigin: options.timelineOrigin,
                    title: options.description)
                writer = try EncodedFileWriter(
                    path: path, channels: track.channels,
                    options: plan.options.output.writerOptions(
                        overwrite: options.overwrite, metadata: metadata, loudness: plan.options.loudness))
            }
            let sink = AudioFileSink(
                writer: writer, channels: track.channels, policy: policy, capacity: 100,
                delivery: policy == .drop ? .pool(.shared) : .renderThread, failureBus: failureBus)
            track.addSink(sink)
            liveUpload?.attach(track, fileName: path, policy: policy)
            shared.withLock {
                $0.sinks[track.id] = sink
                $0.created.append(path)
            }
        } catch {
            shared.withLock {
                $0.errors.append(.init(file: (path as NSString).lastPathComponent, error: "\(error)"))
            }
        }
        noteReportDue()
    }

    /// Finishes the file of a track that left and keeps its outcome for room.json; the control
    /// socket's `track_removed`.
    func closeSink(of track: AudioTrack, parts: RoomParts) {
        liveUpload?.detach(track)
        if let handler = parts.controlHandler {
            handler.publish(.object(["event": .string("track_removed"), "track": .string(track.name)]))
        }
        guard let sink = shared.withLock({ $0.sinks.removeValue(forKey: track.id) }) else { return }
        var closeError: String?
        do { try sink.close() } catch { closeError = "\(error)" }
        // The live room is the last part made: looked up in the finished parts.
        let live = assembled.current?.live?.participants.first { $0.track === track }
        let outcome = TrackOutcome(
            track: track, path: sink.path, source: track.source as? OggOpusFileSource, live: live,
            samplesWritten: sink.samplesWritten, droppedFrames: sink.droppedFrames,
            loudness: (sink.writer as? EncodedFileWriter)?.loudness)
        shared.withLock { s in
            s.outcomes.append(outcome)
            if s.cutReason == nil, let code = Self.errno(of: sink.failure) {
                s.cutReason = String(cString: strerror(code))
            }
            if let closeError, s.failedTracks.insert(track.id).inserted {
                s.errors.append(.init(file: (sink.path as NSString).lastPathComponent, error: closeError))
            }
        }
        noteReportDue()
    }
}
