import Foundation
import RoomTap
import Synchronization

/// Runs one offline room: a track per input file, a WAV sink attached to each track when it is
/// added (the Sora SDK's add-stream handler) and closed when it is removed, a mix track with
/// --mix, progress while the virtual clock runs, and the numbers for room.json.
final class RoomRecording: Sendable {
    let plan: RecordingPlan

    /// One track's outcome.
    struct TrackOutcome {
        let track: AudioTrack
        let path: String
        let source: OggOpusFileSource?
        let samplesWritten: Int64
        let droppedFrames: Int
    }

    struct Result {
        let report: RoomReport
        let outcomes: [TrackOutcome]
        let warnings: [String]
        let plan: RecordingPlan

        func summaryTable() -> String { SummaryTable.render(outcomes: outcomes, directory: plan.outDirectory) }
    }

    private struct Shared {
        var pathsBySource: [ObjectIdentifier: String] = [:]
        var mixPath: String?
        var sinks: [TrackID: WAVFileSink] = [:]
        var outcomes: [TrackOutcome] = []
        var errors: [String] = []
        var created: [String] = []
    }

    private let shared = Mutex(Shared())

    init(plan: RecordingPlan) { self.plan = plan }

    func run() throws -> Result {
        let options = plan.options
        let startTime = Date()
        let writerOptions = {
            var o = WAVWriter.Options()
            o.overwrite = options.force
            o.roomStartTime = startTime
            return o
        }()

        let room = Room(clock: VirtualClock(), endsWhenSourcesFinish: true)
        room.setEvents(
            RoomEvents(
                onTrackAdded: { [self] track in attachSink(to: track, options: writerOptions) },
                onTrackRemoved: { [self] track in closeSink(of: track) }))

        var sources: [OggOpusFileSource] = []
        for input in plan.inputs {
            let source: OggOpusFileSource
            do {
                source = try OggOpusFileSource(
                    path: input.spec.path, channels: options.channels, offset: input.spec.offsetSamples)
            } catch {
                abandon(room)
                throw RuntimeError(description: error.description)
            }
            sources.append(source)
            shared.withLock { $0.pathsBySource[ObjectIdentifier(source)] = input.wavPath }
            room.addTrack(name: input.spec.name, source: source)
        }
        if let mixPath = plan.mixPath {
            shared.withLock { $0.mixPath = mixPath }
            room.addMix(name: "mix", inputs: room.tracks, channels: options.channels)
        }
        if let firstError = shared.withLock({ $0.errors.first }) {
            abandon(room)
            throw RuntimeError(description: firstError)
        }

        let interrupted = Atomic<Bool>(false)
        let signals = installStopSignals {
            interrupted.store(true, ordering: .relaxed)
            room.stop()
        }
        let progress = ProgressReporter(total: plan.expectedSamples, quiet: options.quiet)
        room.start()
        while room.isRunning {
            progress.update(room.position)
            usleep(100_000)
        }
        room.waitUntilFinished()
        progress.finish(room.position)
        for source in signals { source.cancel() }

        let state = shared.withLock { $0 }
        if let firstError = state.errors.first { throw RuntimeError(description: firstError) }
        var warnings: [String] = []
        if interrupted.load(ordering: .relaxed) {
            warnings.append(
                String(
                    format: "stopped early at %.2f s of %.2f s; every file is complete up to there",
                    Double(room.position) / 48_000, Double(plan.expectedSamples) / 48_000))
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
        let outcomes = state.outcomes.sorted { $0.track.id < $1.track.id }
        let report = RoomReport.make(
            plan: plan, startTime: startTime, roomSamples: room.position, outcomes: outcomes,
            interrupted: interrupted.load(ordering: .relaxed))
        return Result(report: report, outcomes: outcomes, warnings: warnings, plan: plan)
    }

    // MARK: - Room event handlers (on the thread that adds or removes tracks)

    private func attachSink(to track: AudioTrack, options: WAVWriter.Options) {
        let path: String? = shared.withLock { s in
            track.isDerived ? s.mixPath : s.pathsBySource[ObjectIdentifier(track.source)]
        }
        guard let path else { return }
        var options = options
        options.description = "roomtap track \(track.name)"
        do {
            let sink = try WAVFileSink(path: path, channels: track.channels, options: options, policy: .wait)
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
        guard let sink = shared.withLock({ $0.sinks.removeValue(forKey: track.id) }) else { return }
        var closeError: String?
        do { try sink.close() } catch { closeError = "\(error)" }
        let outcome = TrackOutcome(
            track: track, path: sink.path, source: track.source as? OggOpusFileSource,
            samplesWritten: sink.samplesWritten, droppedFrames: sink.droppedFrames)
        shared.withLock { s in
            s.outcomes.append(outcome)
            if let closeError { s.errors.append(closeError) }
        }
    }

    /// Set-up failed before the clock started: close what was opened and delete the files this
    /// run created, so nothing is left half-made.
    private func abandon(_ room: Room) {
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
