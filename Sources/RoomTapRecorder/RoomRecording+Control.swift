import Foundation
import RoomTapAll

/// The control socket of a recording: opened before any file, closed after room.json.
extension RoomRecording {
    /// Closes the control socket after the recording: with `roomJSON` (room.json was written) its
    /// watchers and the client that asked to `stop` first get the event
    /// `{"event":"stopped","dir":..,"room_json":..}`; without it (the recording failed) the
    /// connections just close. Idempotent; the thread that ran ``run()``.
    /// `errors`: the files that failed (and room.json when it could not be written), which the
    /// event lists so that `roomtap stop` reports them.
    func closeControl(finished roomJSON: String?, errors: [RoomReport.Failure] = []) {
        guard let parts = assembled.current, let server = parts.controlServer else { return }
        if let roomJSON, let handler = parts.controlHandler {
            handler.publish(
                .object([
                    "event": .string("stopped"), "dir": .string(handler.directory), "room_json": .string(roomJSON),
                    "errors": RoomControlHandler.errorsJSON(errors),
                ]))
        }
        server.stop()
    }

    /// `record --dry-run`: what ``startControl(room:clock:started:)`` would refuse of the socket's
    /// directory (another user's, open to others), refused now; nothing is created.
    static func checkControl(_ options: RecordCommand.Options, environment: [String: String]) throws {
        guard options.usesRealTimeClock || options.control != nil else { return }
        let path = ControlSocketPath.forRecorder(explicit: options.control, environment: environment, pid: getpid())
        do { try ControlServer.checkDirectory(of: path, environment: environment) } catch {
            throw RuntimeError(description: "\(error)")
        }
    }

    /// Opens the control socket (docs/CONTROL-PROTOCOL.md) with a handler acting on `room`: the one
    /// named by --control or $ROOMTAP_CONTROL, else `rec-<pid>.sock` in the per-user runtime
    /// directory (after removing the sockets there that recorders killed with kill -9 left).
    func startControl(
        room: Room, clock: RealTimeClock?, started: Date
    ) throws -> (server: ControlServer, handler: RoomControlHandler) {
        let environment = plan.context.environment
        if ControlSocketPath.configured(explicit: plan.options.control, environment: environment) == nil {
            RecorderDirectory.removeStale(environment: environment)
        }
        let path = ControlSocketPath.forRecorder(
            explicit: plan.options.control, environment: environment, pid: getpid())
        let directory = URL(fileURLWithPath: plan.outDirectory).standardizedFileURL.path
        let handler = RoomControlHandler(
            room: room, controlPath: path, directory: directory, started: started, log: controlLog,
            details: { [self] track in details(of: track) },
            status: { [self] in
                let s = shared.withLock { $0 }
                return RoomControlHandler.StatusDetails(
                    sinks: room.tracks.reduce(0) { $0 + $1.sinks.count },
                    droppedFrames: s.sinks.values.reduce(0) { $0 + $1.droppedFrames }, lateTicks: clock?.lateTicks ?? 0,
                    files: s.created, upload: liveUpload?.status, errors: currentErrors(s))
            })
        let server = try ControlServer(path: path, handler: handler, environment: environment)
        handler.setPublisher { [weak server] event in server?.publish(event) }
        server.setWatchTicker { handler.levelsEvent() }
        return (server, handler)
    }

    /// The files failed so far: those the main loop has noted, and those whose writer failed since
    /// (a sink knows at once), so `status` says so without waiting for the loop.
    private func currentErrors(_ s: Shared) -> [RoomReport.Failure] {
        s.errors
            + s.sinks.sorted { $0.key < $1.key }.compactMap { id, sink in
                guard !s.failedTracks.contains(id), let failure = sink.failure else { return nil }
                return .init(file: (sink.path as NSString).lastPathComponent, error: "\(failure)")
            }
    }

    /// Where a track comes from and how it fares, for `roomtap tracks`.
    private func details(of track: AudioTrack) -> RoomControlHandler.TrackDetails {
        var details = origin(of: track)
        details.fileError = shared.withLock { $0.sinks[track.id]?.failure }.map { "\($0)" }
        return details
    }

    /// Where a track comes from, whether it is live, and its loss.
    private func origin(of track: AudioTrack) -> RoomControlHandler.TrackDetails {
        if track.isDerived { return .init(source: "mix", isLive: true, lossPercent: nil) }
        if let input = shared.withLock({ $0.inputsBySource[ObjectIdentifier(track.source)] }) {
            return .init(source: "file \(input)", isLive: !track.source.isFinished, lossPercent: nil)
        }
        let parts = assembled.current
        if let participant = parts?.live?.participants.first(where: { $0.track === track }) {
            let s = participant.buffer.statistics
            let expected = s.packets + s.lost
            // The SSRC in the one form names use (SSRCTrackName: ssrc-4d2), which the verbs take.
            let ssrc = participant.ssrc.map { SSRCTrackName.name($0) + " " } ?? ""
            let joined = parts?.join?.publishers.first { $0.stream?.participant === participant }
            return .init(
                source: joined.map { "webrtc \($0.publisherID)" } ?? "\(ssrc)port \(participant.port)",
                isLive: !participant.hasLeft,
                lossPercent: expected > 0 ? 100 * Double(s.lost) / Double(expected) : 0, packets: s.packets)
        }
        if track.role == .speakerFromMicrophone {
            return .init(source: "mic \(plan.options.mic ?? "default")", isLive: true)
        }
        if track.role == .agentVoice, let agent = parts?.agent {
            return .init(source: "agent \(agent.options.model)", isLive: true, lossPercent: nil)
        }
        return .init(source: "other", isLive: !track.source.isFinished, lossPercent: nil)
    }
}
