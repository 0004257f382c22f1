import Foundation
import RoomTap
import Synchronization

/// Runs one room: a track per input file and per live participant, a WAV sink attached to each
/// track when it is added (the Sora SDK's add-stream handler) and closed when it is removed, a mix
/// track with --mix, progress while the clock runs, and the numbers for room.json.
///
/// Offline (files only) the room runs on a ``VirtualClock`` as fast as the CPU allows and ends with
/// its longest file; sinks wait rather than drop. Live (--listen/--sdp/--room, or --realtime) it
/// runs on a ``RealTimeClock`` until SIGINT/SIGTERM or --duration; sinks drop (and count) rather
/// than ever hold the clock.
final class RoomRecording: Sendable {
    let plan: RecordingPlan

    /// One track's outcome.
    struct TrackOutcome {
        let track: AudioTrack
        let path: String
        let source: OggOpusFileSource?
        let live: LiveParticipant?
        let samplesWritten: Int64
        let droppedFrames: Int
    }

    struct Result {
        let report: RoomReport
        let outcomes: [TrackOutcome]
        let roomSamples: Int64
        let warnings: [String]
        let plan: RecordingPlan

        func summaryTable() -> String { SummaryTable.render(outcomes: outcomes, roomSamples: roomSamples) }
    }

    private struct Shared {
        var pathsBySource: [ObjectIdentifier: String] = [:]
        var mixPath: String?
        var mixer: Mixer?
        var naming: OutputNaming
        var sinks: [TrackID: WAVFileSink] = [:]
        var outcomes: [TrackOutcome] = []
        var errors: [String] = []
        var created: [String] = []
        /// The input file of each file track's source.
        var inputsBySource: [ObjectIdentifier: String] = [:]
    }

    private let shared: Mutex<Shared>
    private let liveRoom = Mutex<LiveRoom?>(nil)
    private let controlHandler = Mutex<RoomControlHandler?>(nil)
    private let playback = Mutex<ALSAPlayback?>(nil)
    private let roomAgent = Mutex<RoomAgent?>(nil)
    private let controlServer = Mutex<ControlServer?>(nil)
    /// Every control change, for room.json.
    let controlLog: ControlLog

    /// Queue length of an offline room's WAV files, in 10 ms frames.
    static let offlineQueueFrames = 32

    init(plan: RecordingPlan) {
        self.plan = plan
        controlLog = ControlLog(recordLag: Double(plan.options.timing.recordDelayFrames) / 100)
        shared = Mutex(Shared(naming: plan.naming))
    }

    func run() throws -> Result {
        let options = plan.options
        let startTime = Date()
        let writerOptions = {
            var o = WAVWriter.Options()
            o.overwrite = options.force
            o.roomStartTime = startTime
            return o
        }()
        let realTimeClock = options.usesRealTimeClock ? RealTimeClock() : nil
        // Decoding is most of a tick: render on every core (--threads), never more threads than
        // tracks. Offline rooms split from two files on; live rooms from eight tracks (below that a
        // 10 ms tick is short enough on one thread).
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let room = Room(
            clock: realTimeClock ?? VirtualClock() as any RoomClock, endsWhenSourcesFinish: !options.isLive,
            renderThreads: options.threads ?? (options.isLive ? cores : min(cores, max(1, plan.inputs.count))),
            parallelThreshold: realTimeClock == nil ? 2 : Room.defaultParallelThreshold,
            timing: options.timing,
            // The meters are read over the control socket only.
            metersTracks: options.usesRealTimeClock || options.control != nil)
        let policy: OverflowPolicy = realTimeClock == nil ? .wait : .drop
        room.setEvents(
            RoomEvents(
                onTrackAdded: { [self] track in attachSink(to: track, options: writerOptions, policy: policy) },
                onTrackRemoved: { [self] track in closeSink(of: track) }))

        // The control socket before any file: a second recorder on the same socket fails here,
        // having created nothing.
        if options.usesRealTimeClock || options.control != nil {
            do {
                let server = try startControl(room: room, clock: realTimeClock)
                controlServer.withLock { $0 = server }
            } catch {
                abandon(room)
                throw RuntimeError(description: "\(error)")
            }
        }
        // The mix first, so that every track added later (files now, live participants whenever
        // they appear) joins it in onTrackAdded.
        if let device = options.play {
            do {
                let player = try ALSAPlayback(device: device, channels: options.channels)
                playback.withLock { $0 = player }
            } catch {
                abandon(room)
                throw RuntimeError(description: "\(error)")
            }
        }
        var microphone: ALSACapture?
        if let device = options.mic {
            do {
                microphone = try ALSACapture(device: device, channels: options.channels)
            } catch {
                abandon(room)
                throw RuntimeError(description: "\(error)")
            }
        }
        // The control socket, --play and --mic are open (the plan checked the API key): only now are
        // DIR made and, with --force, the earlier recording removed, just before the first file.
        do { try plan.prepareOutputs() } catch {
            microphone?.close()
            abandon(room)
            throw error
        }
        if options.needsMix {
            shared.withLock { $0.mixPath = plan.mixPath }
            room.addMix(name: "mix", inputs: [], channels: options.channels)
        }
        for input in plan.inputs {
            let source: OggOpusFileSource
            do {
                source = try OggOpusFileSource(
                    path: input.spec.path, channels: options.channels, offset: input.spec.offsetSamples)
            } catch {
                abandon(room)
                throw RuntimeError(description: error.description)
            }
            shared.withLock {
                $0.pathsBySource[ObjectIdentifier(source)] = input.wavPath
                $0.inputsBySource[ObjectIdentifier(source)] = input.spec.path
            }
            room.addTrack(name: input.spec.name, source: source)
        }
        if let microphone { room.addTrack(name: options.micName, source: microphone) }
        if let agentOptions = options.agent, let transcriptPath = plan.transcriptPath {
            do {
                let agent = try RoomAgent(
                    options: agentOptions, transcriptPath: transcriptPath,
                    environment: ProcessInfo.processInfo.environment,
                    recordLagSamples: Int64(options.timing.recordDelayFrames * AudioFrame.samplesPerChannel))
                shared.withLock { $0.created.append(transcriptPath) }
                roomAgent.withLock { $0 = agent }
                controlHandler.withLock { $0 }?.setAgentHandler { agent.handle($0) }
                agent.attach(to: room, humans: room.tracks.filter { !$0.isDerived })
            } catch {
                abandon(room)
                throw error
            }
        }
        if options.hasNetwork, let realTimeClock {
            var liveOptions = LiveRoom.Options()
            liveOptions.listen = options.listen
            liveOptions.description = plan.description
            liveOptions.maxTracks = options.maxTracks
            liveOptions.jitterMilliseconds = options.jitterMilliseconds
            liveOptions.jitterMaxMilliseconds = options.jitterMaxMilliseconds
            liveOptions.jitterFixed = options.jitterFixed
            liveOptions.recordDelayMilliseconds = options.recordDelayMilliseconds
            liveOptions.livePlayout = options.hasLiveConsumer
            liveOptions.channels = options.channels
            liveOptions.leaveAfter = options.leaveAfter
            do {
                let live = try LiveRoom(room: room, clock: realTimeClock, options: liveOptions)
                liveRoom.withLock { $0 = live }
            } catch {
                abandon(room)
                throw RuntimeError(description: error.description)
            }
        }
        if let firstError = shared.withLock({ $0.errors.first }) {
            abandon(room)
            throw RuntimeError(description: firstError)
        }
        // A network room's record runs `drain` behind what arrives: at a stop (--duration, a
        // signal) reception ends and the room runs that much longer, so no file loses the audio
        // it was still waiting to place.
        let drain = options.drainSamples
        let receiveUntil = options.duration.map { Int64(($0 * 48_000).rounded()) }
        if let receiveUntil { room.stop(atSample: receiveUntil + drain) }
        let server = controlServer.withLock { $0 }

        let interrupted = Atomic<Bool>(false)
        let signals = installStopSignals {
            interrupted.store(true, ordering: .relaxed)
            if drain > 0 { room.stop(atSample: room.position + drain) } else { room.stop() }
        }
        let expected = options.duration.map { Int64($0 * 48_000) } ?? (options.isLive ? 0 : plan.expectedSamples)
        let progress = ProgressReporter(total: expected, quiet: options.quiet)
        room.start()
        microphone?.start()
        let agent = roomAgent.withLock { $0 }
        agent?.start()
        let live = liveRoom.withLock { $0 }
        live?.start()
        while room.isRunning {
            progress.update(room.position, tracks: room.tracks.count)
            if drain > 0, interrupted.load(ordering: .relaxed) || room.position >= receiveUntil ?? .max {
                live?.stop()  // draining: nothing more is received
            }
            usleep(drain > 0 ? 10_000 : 100_000)
        }
        live?.stop()
        microphone?.close()
        agent?.stop()
        room.waitUntilFinished()
        server?.stop()
        var playbackStats: RoomReport.Playback?
        if let player = playback.withLock({ $0 }) {
            do { try player.close() } catch { shared.withLock { $0.errors.append("\(error)") } }
            playbackStats = RoomReport.Playback(
                device: options.play ?? "default", track: options.playTrack ?? "mix", underruns: player.underruns,
                droppedFrames: player.dropped)
        }
        progress.finish(room.position, tracks: room.tracks.count)
        for source in signals { source.cancel() }

        let state = shared.withLock { $0 }
        if let firstError = state.errors.first { throw RuntimeError(description: firstError) }
        var warnings: [String] = []
        if interrupted.load(ordering: .relaxed) && !options.isLive {
            warnings.append(
                String(
                    format: "stopped early at %.2f s of %.2f s; every file is complete up to there",
                    Double(room.position) / 48_000, Double(plan.expectedSamples) / 48_000))
        }
        if let realTimeClock, realTimeClock.lateTicks > 0 {
            warnings.append(
                "\(realTimeClock.lateTicks) tick(s) of the room clock ran late (worst "
                    + "\(realTimeClock.maxLatenessNanoseconds / 1_000_000) ms); no frame was skipped")
        }
        for outcome in state.outcomes {
            if let source = outcome.source, source.holes + source.decodeErrors > 0 {
                warnings.append(
                    "\(outcome.track.name): \(source.holes) damaged stretch(es) and \(source.decodeErrors) "
                        + "undecodable packet(s) concealed (\(source.concealedSamples / 48) ms)")
            }
            if outcome.droppedFrames > 0 {
                warnings.append("\(outcome.track.name): \(outcome.droppedFrames) frame(s) could not be written")
            }
        }
        let outcomes = state.outcomes.sorted {
            ($0.track.isDerived ? 1 : 0, $0.track.id) < ($1.track.isDerived ? 1 : 0, $1.track.id)
        }
        let report = RoomReport.make(
            plan: plan, startTime: startTime, roomSamples: room.position, outcomes: outcomes,
            interrupted: interrupted.load(ordering: .relaxed), clock: realTimeClock, live: live,
            controls: server == nil ? nil : controlLog.all, playback: playbackStats, agent: agent?.report)
        return Result(report: report, outcomes: outcomes, roomSamples: room.position, warnings: warnings, plan: plan)
    }

    // MARK: - Room event handlers (on the thread that adds or removes tracks)

    private func attachSink(to track: AudioTrack, options: WAVWriter.Options, policy: OverflowPolicy) {
        let agent = roomAgent.withLock { $0 }
        let agentOwned = agent?.owns(track) == true
        let isOurMix = track.isDerived && track.name == "mix" && !agentOwned
        let path: String = shared.withLock { s in
            if track.isDerived { return isOurMix && s.mixer == nil ? s.mixPath ?? "" : "" }
            s.mixer?.addInput(track)
            if agentOwned { return plan.agentPath ?? "" }
            if let path = s.pathsBySource[ObjectIdentifier(track.source)] { return path }
            if let path = plan.describedPaths[track.name] { return path }
            return RecordingPlan.livePath(
                for: track.name, naming: &s.naming, in: plan.outDirectory, force: plan.options.force)
        }
        if isOurMix, let mixer = track.source as? Mixer { shared.withLock { $0.mixer = mixer } }
        agent?.trackAdded(track)
        if let player = playback.withLock({ $0 }),
            track.name == (plan.options.playTrack ?? "mix") && track.isDerived == (plan.options.playTrack == nil)
        {
            track.addSink(player, tap: .heard)
        }
        if let handler = controlHandler.withLock({ $0 }) {
            handler.publish(.object(["event": .string("track_added"), "track": handler.describe(track)]))
        }
        guard !path.isEmpty else { return }
        var options = options
        options.description = "roomtap track \(track.name)"
        do {
            // Live rooms: 1 s of queue per file (the writer pool drains it every 50 ms; a disk stalled
            // longer drops frames, counted and warned), so a 1000-track room holds ~94 MiB less.
            // Offline rooms wait for a full queue rather than drop, so a short one loses nothing:
            // 32 frames (30 KiB a speaker), a few milliseconds of a fast room's rendering.
            let sink = try WAVFileSink(
                path: path, channels: track.channels, options: options, policy: policy,
                capacity: policy == .drop ? 100 : Self.offlineQueueFrames)
            track.addSink(sink)
            shared.withLock {
                $0.sinks[track.id] = sink
                $0.created.append(path)
            }
        } catch {
            shared.withLock { $0.errors.append(error.description) }
        }
    }

    private func closeSink(of track: AudioTrack) {
        if let handler = controlHandler.withLock({ $0 }) {
            handler.publish(.object(["event": .string("track_removed"), "track": .string(track.name)]))
        }
        guard let sink = shared.withLock({ $0.sinks.removeValue(forKey: track.id) }) else { return }
        var closeError: String?
        do { try sink.close() } catch { closeError = "\(error)" }
        let live = liveRoom.withLock { $0 }?.participants.first { $0.track === track }
        let outcome = TrackOutcome(
            track: track, path: sink.path, source: track.source as? OggOpusFileSource, live: live,
            samplesWritten: sink.samplesWritten, droppedFrames: sink.droppedFrames)
        shared.withLock { s in
            s.outcomes.append(outcome)
            if let closeError { s.errors.append(closeError) }
        }
    }

    // MARK: - The control socket

    /// Opens the control socket (docs/CONTROL-PROTOCOL.md) with a handler acting on `room`.
    private func startControl(room: Room, clock: RealTimeClock?) throws -> ControlServer {
        let path = ControlSocketPath.resolve(
            explicit: plan.options.control, environment: ProcessInfo.processInfo.environment)
        let handler = RoomControlHandler(
            room: room, controlPath: path, log: controlLog,
            details: { [self] track in details(of: track) },
            status: { [self] in
                let s = shared.withLock { $0 }
                return RoomControlHandler.StatusDetails(
                    sinks: room.tracks.reduce(0) { $0 + $1.sinks.count },
                    droppedFrames: s.sinks.values.reduce(0) { $0 + $1.droppedFrames }, lateTicks: clock?.lateTicks ?? 0,
                    files: s.created)
            })
        let server = try ControlServer(path: path, handler: handler)
        handler.setPublisher { [weak server] event in server?.publish(event) }
        server.setWatchTicker { handler.levelsEvent() }
        controlHandler.withLock { $0 = handler }
        return server
    }

    /// Where a track comes from and how it fares, for `roomtap tracks`.
    private func details(of track: AudioTrack) -> RoomControlHandler.TrackDetails {
        if track.isDerived { return .init(source: "mix", isLive: true, lossPercent: nil) }
        if let input = shared.withLock({ $0.inputsBySource[ObjectIdentifier(track.source)] }) {
            return .init(source: "file \(input)", isLive: !track.source.isFinished, lossPercent: nil)
        }
        if let participant = liveRoom.withLock({ $0 })?.participants.first(where: { $0.track === track }) {
            let s = participant.buffer.statistics
            let expected = s.packets + s.lost
            let ssrc = participant.ssrc.map { String(format: "ssrc 0x%08x ", $0) } ?? ""
            return .init(
                source: "\(ssrc)port \(participant.port)", isLive: !participant.hasLeft,
                lossPercent: expected > 0 ? 100 * Double(s.lost) / Double(expected) : 0)
        }
        if track.source is ALSACapture { return .init(source: "mic \(plan.options.mic ?? "default")", isLive: true) }
        if let agent = roomAgent.withLock({ $0 }), agent.owns(track) {
            return .init(source: "agent \(agent.options.model)", isLive: true, lossPercent: nil)
        }
        return .init(source: "other", isLive: !track.source.isFinished, lossPercent: nil)
    }

    /// Set-up failed before the clock started: close what was opened and delete the files this
    /// run created, so nothing is left half-made.
    private func abandon(_ room: Room) {
        controlServer.withLock { $0 }?.stop()
        liveRoom.withLock { $0 }?.stop()
        room.stop()
        room.waitUntilFinished()
        for path in shared.withLock({ $0.created }) { unlink(path) }
    }
}

/// Turns SIGINT/SIGTERM into a call of `stop` (on a dispatch queue, never in signal context).
func installStopSignals(_ stop: @escaping @Sendable () -> Void) -> [any DispatchSourceSignal] {
    [SIGINT, SIGTERM].map { number in
        signal(number, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
        source.setEventHandler(handler: stop)
        source.resume()
        return source
    }
}
