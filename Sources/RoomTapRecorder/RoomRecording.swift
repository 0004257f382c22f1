import Foundation
import RoomTapAll
import RoomTapFiles
import RoomTapSync
import Synchronization

/// Runs one room: a track per input file and per live participant, a WAV sink attached to each
/// track when it is added (the Sora SDK's add-stream handler) and closed when it is removed, a mix
/// track with --mix, progress while the clock runs, and the numbers for room.json.
///
/// Offline (files only) the room runs on a ``VirtualClock`` as fast as the CPU allows and ends with
/// its longest file; sinks wait rather than drop. Live (--listen/--sdp/--room, or --realtime) it
/// runs on a ``RealTimeClock`` until SIGINT/SIGTERM or --duration; sinks drop (and count) rather
/// than ever hold the clock.
///
/// room.json is written when the clock starts (`"state": "recording"`), rewritten by the main
/// loop (never the clock's thread) at every track join or leave, every control change, every
/// file that fails and at least every ``reportInterval``, and written a last time at the end
/// (`"state": "complete"`), also when files failed (their errors under `errors`).
///
/// A file that cannot be written (disk full, EIO, a file size limit) keeps the audio written
/// until then in a valid WAV; the other tracks keep recording (a live room warns at once); the
/// run ends as usual and then fails (exit 1) with the error, room.json listing every such file.
final class RoomRecording: Sendable {
    let plan: RecordingPlan

    /// Longest wait between two rewrites of room.json while the room runs.
    static let reportInterval: Duration = .seconds(10)
    /// Room time after which a listen address that has received nothing is reported (a warning
    /// per address; room.json `network.received`).
    static let nothingReceivedAfter: Int64 = 3 * 48_000

    /// One track's outcome.
    struct TrackOutcome {
        let track: AudioTrack
        let path: String
        let source: OggOpusFileSource?
        let live: LiveParticipant?
        let samplesWritten: Int64
        let droppedFrames: Int
        /// With --loudness, once the file is finished.
        var loudness: LoudnessMeter.Result? = nil
    }

    struct Result {
        /// The final room.json (already written).
        let report: RoomReport
        let outcomes: [TrackOutcome]
        let roomSamples: Int64
        let warnings: [String]
        /// Files that could not be created or written (also in room.json `errors`).
        let errors: [RoomReport.Failure]
        let plan: RecordingPlan
        /// Why files were cut (``Shared/cutReason``).
        var cutReason: String? = nil
        /// Warnings printed while the room ran (``Shared/liveWarnings``), for --json.
        var liveWarnings: [String] = []

        func summaryTable() -> String { SummaryTable.render(outcomes: outcomes, roomSamples: roomSamples) }

        /// The run's one error line when files failed (nil when none did). Files cut short (a full
        /// disk, EIO, a size limit) are named with the room time of their cut and why; the line
        /// says whether room.json was written, and to run `roomtap repair DIR` when it is needed (FLAC
        /// and Ogg Opus files cut short, or room.json not written): repair makes each file whole up to
        /// its cut and room.json say so. A WAV keeps a valid header through its cut.
        func failureLine() -> String? {
            guard let first = errors.first else { return nil }
            let roomJSONFailure = errors.first { $0.file == "room.json" }
            // In the room's track order, whichever order the writers failed in.
            let cut = errors.compactMap { failure -> (order: Int, text: String)? in
                guard let file = failure.file, file != "room.json" else { return nil }
                let order = report.tracks.firstIndex { $0.file == file } ?? .max
                let written = order == .max ? nil : report.tracks[order].samplesWritten
                return (order, file + (written.map { String(format: " at %.2f s", Double($0) / 48_000) } ?? ""))
            }.sorted { $0.order < $1.order }.map(\.text)
            guard !cut.isEmpty || roomJSONFailure != nil else {
                let more = errors.count - 1
                return first.error
                    + (more > 0 ? " (and \(more) more error(s): see errors in \(plan.roomJSONPath))" : "")
            }
            var line = ""
            if !cut.isEmpty {
                line =
                    "\(cut.count) file(s) cut short" + (cutReason.map { " (\($0))" } ?? "") + ": "
                    + cut.joined(separator: ", ")
                    + (plan.options.output.format == .wav ? "" : " (each kept up to its last whole frame before that)")
                    + "; "
            }
            let needsRepair = roomJSONFailure != nil || plan.options.output.format != .wav
            if let roomJSONFailure {
                line += "room.json was not brought up to date (\(roomJSONFailure.error)); "
            } else {
                line += "\(plan.roomJSONPath) lists them under errors; "
            }
            return line
                + (needsRepair
                    ? "make room on the disk, then run roomtap repair \(plan.outDirectory) (each file is kept up to its cut)"
                    : "each file keeps what was written up to its cut")
        }
    }

    /// What the room's event handlers, the main loop and the control socket share (under `shared`).
    struct Shared {
        var pathsBySource: [ObjectIdentifier: String] = [:]
        var mixPath: String?
        var mixer: Mixer?
        var naming: OutputNaming
        var sinks: [TrackID: AudioFileSink] = [:]
        var outcomes: [TrackOutcome] = []
        var errors: [RoomReport.Failure] = []
        /// Tracks whose file failed, with the failure already in `errors`.
        var failedTracks: Set<TrackID> = []
        /// Why the first file was cut (strerror of its errno: "No space left on device"), for the
        /// run's last line.
        var cutReason: String?
        var created: [String] = []
        /// The input file of each file track's source.
        var inputsBySource: [ObjectIdentifier: String] = [:]
        /// Warnings printed while the room ran (nothing received on an address), kept for --json.
        var liveWarnings: [String] = []
    }

    let shared: Locked<Shared>
    /// The room's parts once assembled (``RoomParts``), for what was made before them.
    let assembled = AssembledParts()
    /// Every control change, for room.json.
    let controlLog: ControlLog
    /// Set when a track joins or leaves or a file fails: room.json is due for a rewrite.
    private let reportDue = Atomic<Bool>(false)

    /// room.json is due at the supervisor's next turn (a file was added or failed). Any thread.
    func noteReportDue() { reportDue.store(true, ordering: .releasing) }

    /// Whether room.json was due, and now no longer is. The supervisor.
    func takeReportDue() -> Bool { reportDue.exchange(false, ordering: .acquiringAndReleasing) }

    /// Ticks a speaker renders in a row in an offline room without mixes (see `Room.chunkTicks`):
    /// 0.5 s of audio, a fraction of a millisecond of decoding, so the last chunk of a room keeps
    /// the other render threads waiting no longer than that.
    static let offlineChunkTicks = 50

    /// Seconds from `record`'s start to room sample 0 on the real-time clock (0.1): more than the
    /// set-up takes (17 ms alone, up to 60 ms seen at a load of 15 on 2 cores), so the clock
    /// starts on time instead of catching up in a burst.
    static let setUpAllowance = 0.1

    /// --upload: the segments of every file's track, and the final upload (nil: none).
    let liveUpload: LiveUpload?

    init(plan: RecordingPlan, liveUpload: LiveUpload? = nil) {
        self.plan = plan
        self.liveUpload = liveUpload
        controlLog = ControlLog(recordLag: Double(plan.options.timing.recordDelayFrames) / 100)
        shared = Locked(Shared(naming: plan.naming))
    }

    func run() throws -> Result {
        let options = plan.options
        // Room sample 0 is fixed now, ``setUpAllowance`` ahead: the real-time clock's origin and
        // startTime are read together, so startTime (room.json, the files' BWF time) is the
        // wall-clock time of room sample 0 and a packet's place (its kernel receive time on that
        // clock) agrees with it, however long the set-up below takes. The clock waits for the
        // origin; a set-up longer than the allowance (a loaded machine) is caught up at once,
        // which a small queue (--play's is 8 frames) may not take whole.
        // Recordings with wall-clock times (Janus .mjr) fix when the room started.
        let allowance = options.usesRealTimeClock ? Self.setUpAllowance : 0
        let origin = MonotonicClock.now.nanoseconds + UInt64(allowance * 1e9)
        let now = Date().addingTimeInterval(allowance)
        let startTime = options.isLive ? now : plan.recordedStart ?? now
        // A file size limit (ulimit -f) then fails a write with EFBIG, handled like a full disk,
        // instead of killing the process before it could write room.json.
        signal(SIGXFSZ, SIG_IGN)
        let writerOptions = {
            var o = WAVWriter.Options()
            o.overwrite = options.force
            o.roomStartTime = startTime
            return o
        }()
        let realTimeClock = options.usesRealTimeClock ? RealTimeClock(startInstant: origin) : nil
        // Decoding is most of a tick: render on every core (--threads), never more threads than
        // tracks. Offline rooms split from two files on; live rooms from eight tracks (below that a
        // 10 ms tick is short enough on one thread).
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let priority = options.realtimePriority.flatMap { realtimePriority($0) }
        let room = Room(
            clock: realTimeClock ?? VirtualClock() as any RoomClock, endsWhenSourcesFinish: !options.isLive,
            renderThreads: options.threads ?? (options.isLive ? cores : min(cores, max(1, plan.inputs.count))),
            parallelThreshold: realTimeClock == nil ? 2 : Room.defaultParallelThreshold,
            timing: options.timing,
            // The meters are read over the control socket only.
            metersTracks: options.usesRealTimeClock || options.control != nil, realtimePriority: priority,
            // Offline and without a control socket (whose changes must land on one tick across
            // tracks), the speakers need not render in step: each in chunks, on whichever thread is
            // free. The files are the same.
            chunkTicks: realTimeClock == nil && options.control == nil ? Self.offlineChunkTicks : 1)
        controlLog.postChanges(to: room.bus)
        // The parts that take no track (cleaned up on a failure), then the tracks, routed by the
        // handlers as they join, then the live room; published once the room is whole.
        var parts = try assembleParts(room: room, clock: realTimeClock, startTime: startTime)
        let policy: OverflowPolicy = realTimeClock == nil ? .wait : .drop
        room.setEvents(
            RoomEvents(
                onTrackAdded: { [self, parts, bus = room.bus] track in
                    attachSink(to: track, parts: parts, options: writerOptions, policy: policy, failureBus: bus)
                },
                onTrackRemoved: { [self, parts] track in closeSink(of: track, parts: parts) }))
        do { try addTracks(to: &parts) } catch {
            abandon(parts)
            throw error
        }
        assembled.publish(parts)
        // A network room's record runs `drain` behind what arrives: at a stop (--duration, a
        // signal) reception ends and the room runs that much longer, so no file loses the audio
        // it was still waiting to place.
        let drain = options.drainSamples
        let receiveUntil = options.duration.map { Int64(($0 * 48_000).rounded()) }
        if let receiveUntil { room.stop(atSample: receiveUntil + drain) }
        let handler = parts.controlHandler
        let stop = RoomStop(
            room: room, handler: handler, drain: drain, console: options.quiet ? nil : plan.context.console)
        let signals =
            plan.context.handlesStopSignals
            ? installStopSignals { signal in stop.stop(interactive: signal == SIGINT) } : []
        handler?.setStopAction { stop.stop(interactive: false) }
        let streamed = plan.inputs.contains { $0.stream != nil }  // its length is known when it ends
        let expected =
            options.duration.map { Int64($0 * 48_000) } ?? (options.isLive || streamed ? 0 : plan.expectedSamples)
        let progress = ProgressReporter(
            total: expected, quiet: options.quiet, everyTenSeconds: realTimeClock != nil, console: plan.context.console)
        let (microphone, agent, live, join) = (parts.microphone, parts.agent, parts.live, parts.join)
        let roomJSON = RoomJSONWriter(path: plan.roomJSONPath)
        let currentReport = { [parts] (state: RoomReport.State) in
            self.report(state: state, parts: parts, stop: stop)
        }
        room.start()
        microphone?.start()
        agent?.start()
        live?.start()
        // room.json as the clock starts: from now on DIR says which file is whose. A room that cannot have it does not record.
        do { try roomJSON.write(currentReport(.recording), overwrite: options.force) } catch {
            agent?.stop()
            for source in signals { source.cancel() }
            abandon(parts)
            throw error
        }
        // Port 0 asked the kernel for a port: say which one, once, before anything arrives (the fleet's
        // worker reads this line; room.json's `listen` says it too).
        if let live, options.listen.contains(where: { $0.port == 0 }) {
            for socket in live.receiver.sockets {
                plan.context.console.error("roomtap: listening on \(socket.address)\n")
            }
        }
        let reception = supervise(
            SupervisedRoom(
                room: room, live: live, join: join, soraStreaming: parts.soraStreaming, progress: progress,
                drain: drain, receiveUntil: receiveUntil,
                roomJSON: roomJSON, isInterrupted: { stop.interrupted },
                currentReport: { currentReport(.recording) }, stop: { stop.stop(interactive: false) }))
        handler?.noteStopping()
        join?.stop()
        parts.soraStreaming?.stop()
        printSoraStreamingWarnings(parts.soraStreaming)
        live?.stop()
        microphone?.close()
        agent?.stop()
        room.waitUntilFinished()
        // Every speaker's last words: their sessions finish side by side (bounded), then the
        // transcript is complete.
        parts.transcriber?.finish()
        parts.transcript?.close()
        // The control socket stays open until the recording is written (``closeControl(finished:)``),
        // so that `roomtap stop` hears when it is done.
        if let live, !reception.checked {
            // A room shorter than the wait: what its reception got, said once it ended.
            let received = reception.end ?? min(room.position, receiveUntil ?? .max)
            warnNothingReceived(live, seconds: Double(received) / 48_000)
        }
        if let player = parts.playback {
            do { try player.close() } catch {
                shared.withLock { $0.errors.append(.init(file: nil, error: "\(error)")) }
            }
        }
        progress.finish(room.position, tracks: room.tracks.count { !$0.isDerived })
        for source in signals { source.cancel() }
        if !options.allowTruncated { noteCutStandardInput() }
        var report = currentReport(.complete)
        if let multichannel = plan.multichannelPath, let given = options.multichannel {
            do {
                report.multichannel = try MultichannelFile.write(
                    to: multichannel, named: given, speakersOf: report, plan: plan, startTime: startTime)
            } catch {
                let failure = RoomReport.Failure(file: (multichannel as NSString).lastPathComponent, error: "\(error)")
                shared.withLock { $0.errors.append(failure) }
                report.errors = (report.errors ?? []) + [failure]
            }
        }
        do {
            try roomJSON.write(report, overwrite: true)
        } catch {
            // A full disk: the summary still goes out, naming what was cut (RecordCommand).
            shared.withLock { $0.errors.append(.init(file: "room.json", error: "\(error)")) }
        }

        let state = shared.withLock { $0 }
        let warnings = lastWarnings(
            state, room: room, clock: realTimeClock, interrupted: stop.interrupted,
            streamed: streamed)
        return Result(
            report: report, outcomes: Self.ordered(state.outcomes), roomSamples: room.position, warnings: warnings,
            errors: state.errors, plan: plan, cutReason: state.cutReason, liveWarnings: state.liveWarnings)
    }

    /// The run's warnings after the summary: a stop before the end of an offline room, late ticks
    /// of the real-time clock, damaged input concealed, frames a file could not take (a file that
    /// failed is an error instead). The room's thread, once the room has finished.
    private func lastWarnings(
        _ state: Shared, room: Room, clock: RealTimeClock?, interrupted: Bool, streamed: Bool
    ) -> [String] {
        var warnings: [String] = []
        if interrupted && !plan.options.isLive {
            let of = streamed ? "" : String(format: " of %.2f s", Double(plan.expectedSamples) / 48_000)
            warnings.append(
                String(format: "stopped early at %.2f s", Double(room.position) / 48_000)
                    + "\(of); every file is complete up to there")
        }
        if let clock, clock.lateTicks > 0 {
            warnings.append(
                "\(clock.lateTicks) tick(s) of the room clock ran late (worst "
                    + "\(clock.maxLatenessNanoseconds / 1_000_000) ms); no frame was skipped")
        }
        for outcome in state.outcomes {
            if let source = outcome.source, source.holes + source.decodeErrors > 0 {
                warnings.append(
                    "\(outcome.track.name): \(source.holes) damaged stretch(es) and \(source.decodeErrors) "
                        + "undecodable packet(s) concealed (\(source.concealedSamples / 48) ms)")
            }
            if outcome.droppedFrames > 0 && !state.failedTracks.contains(outcome.track.id) {
                warnings.append("\(outcome.track.name): \(outcome.droppedFrames) frame(s) could not be written")
            }
        }
        return warnings
    }

    /// A `--file NAME=-` stream that ended cut short (mid-page, or without its end-of-stream page)
    /// fails the run, as the same file on disk is refused before it starts: an error (room.json
    /// `errors`, exit 1) saying what arrived and was kept, unless --allow-truncated. Main thread.
    private func noteCutStandardInput() {
        shared.withLock { s in
            for outcome in s.outcomes {
                guard let source = outcome.source, source.info.isStream, source.isTruncated else { continue }
                let error =
                    "standard input (--file \(outcome.track.name)=-) ended cut short (mid-page or without an "
                    + "end-of-stream page): did its sender stop early? "
                    + String(format: "What arrived (%.2f s) is in ", Double(outcome.samplesWritten) / 48_000)
                    + "\(outcome.path); pass --allow-truncated to accept a stream cut short"
                s.errors.append(.init(file: nil, error: error))
            }
        }
    }

    // MARK: - room.json

    /// The report as things stand: the tracks that have left with their final figures, the
    /// tracks still in the room with their figures so far. Main thread (not the clock's).
    private func report(state: RoomReport.State, parts: RoomParts, stop: RoomStop) -> RoomReport {
        let (room, live) = (parts.room, parts.live)
        let participants = Dictionary(
            (live?.participants ?? []).map { (ObjectIdentifier($0.track), $0) }, uniquingKeysWith: { a, _ in a })
        let s = shared.withLock { $0 }
        var outcomes = s.outcomes
        for track in room.tracks {
            guard let sink = s.sinks[track.id] else { continue }
            outcomes.append(
                TrackOutcome(
                    track: track, path: sink.path, source: track.source as? OggOpusFileSource,
                    live: participants[ObjectIdentifier(track)], samplesWritten: sink.samplesWritten,
                    droppedFrames: sink.droppedFrames))
        }
        let playback = parts.playback.map { player in
            RoomReport.Playback(
                device: plan.options.play ?? "default", track: plan.options.playTrack ?? "mix",
                underruns: player.underruns, droppedFrames: player.dropped)
        }
        var report = RoomReport.make(
            plan: plan, state: state, startTime: parts.startTime, roomSamples: room.position,
            outcomes: Self.ordered(outcomes), interrupted: stop.interrupted, clock: parts.clock, live: live,
            controls: parts.controlServer != nil ? controlLog.all : nil, playback: playback,
            agent: parts.agent?.report, errors: s.errors)
        report.join = parts.join.map(RoomReport.JoinReport.init)
        report.soraAudioStreaming = parts.soraStreaming.map(RoomReport.SoraStreamingReport.init)
        report.transcription = parts.transcriber?.report(roomSeconds: Double(room.position) / 48_000)
        report.transcriptLines = parts.transcript?.lineCount
        if stop.stoppedAtOnce { report.stoppedAtOnce = true }
        return report
    }

    /// Speakers first, then derived tracks (the mix), each by id.
    private static func ordered(_ outcomes: [TrackOutcome]) -> [TrackOutcome] {
        outcomes.sorted { ($0.track.isDerived ? 1 : 0, $0.track.id) < ($1.track.isDerived ? 1 : 0, $1.track.id) }
    }

    /// The `errno` of a file's write failure: an ``OutputFileError`` (FLAC, Ogg Opus, the WAV
    /// encoder) or a ``WAVError`` (``WAVWriter``); nil for any other error or none.
    static func errno(of failure: (any Error)?) -> Int32? {
        (failure as? OutputFileError)?.errno ?? (failure as? WAVError)?.errno
    }

    /// Moves the failure of every file whose writing has stopped (disk full, EIO) into the
    /// errors, once per file, and makes room.json due. `announce`: also a warning line each (a
    /// live room, which may go on for hours). Main thread.
    func noteFailedFiles(announce: Bool) {
        let found: [RoomReport.Failure] = shared.withLock { s in
            var found: [RoomReport.Failure] = []
            for (id, sink) in s.sinks where !s.failedTracks.contains(id) {
                guard let failure = sink.failure else { continue }
                s.failedTracks.insert(id)
                if s.cutReason == nil, let code = Self.errno(of: failure) {
                    s.cutReason = String(cString: strerror(code))
                }
                found.append(.init(file: (sink.path as NSString).lastPathComponent, error: "\(failure)"))
            }
            s.errors += found
            return found
        }
        guard !found.isEmpty else { return }
        noteReportDue()
        guard announce else { return }
        for failure in found { plan.context.console.printWarning("\(failure.error); the other tracks keep recording") }
    }

    /// --realtime-priority: the SCHED_FIFO priority when permitted (memory locked too when that is
    /// safe), nil when not; one warning line for what could not be had.
    private func realtimePriority(_ priority: Int32) -> Int32? {
        if let reason = RealtimeScheduling.unavailableReason(priority: priority) {
            plan.context.console.printWarning("--realtime-priority: \(reason); running at normal priority")
            return nil
        }
        if let reason = RealtimeScheduling.lockMemory() {
            plan.context.console.printWarning("--realtime-priority: \(reason); SCHED_FIFO \(priority) in force")
        }
        return priority
    }

    /// One warning per listen address that has received nothing in `seconds` of the room.
    func warnNothingReceived(_ live: LiveRoom, seconds: Double) {
        let after = seconds == seconds.rounded() ? String(Int(seconds)) : String(format: "%.1f", seconds)
        for socket in live.receiver.sockets where socket.datagramsReceived == 0 {
            let warning =
                "nothing received on \(socket.address) after \(after) s; check the sender's destination and firewall"
            plan.context.console.printWarning(warning)
            shared.withLock { $0.liveWarnings.append(warning) }
        }
    }
}

/// Turns SIGINT/SIGTERM into a call of `stop` (on a dispatch queue, never in signal context).
func installStopSignals(_ stop: @escaping @Sendable (_ signal: Int32) -> Void) -> [any DispatchSourceSignal] {
    [SIGINT, SIGTERM].map { number in
        signal(number, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
        source.setEventHandler { stop(number) }
        source.resume()
        return source
    }
}
