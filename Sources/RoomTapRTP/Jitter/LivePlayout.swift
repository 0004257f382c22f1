import RoomTapCore

/// The live playout of one stream: what is heard now (ALSA playback, the agent, `heard` taps,
/// meters). Low latency first: it starts ``targetDelay`` after the stream's first packet and
/// adapts its delay to the network, so unlike the record it may move audio (in silence only).
///
/// ## Adaptive delay
/// ``DelayEstimator`` (on the inserter) turns arrivals into the delay the stream needs: the
/// latest arrival against the timeline in the last 5 s plus 15 ms, in 10 ms steps, between
/// ``targetDelay`` and ``maxDelay``. This playout moves its delay toward it one 10 ms step at a
/// time, only where both the frame just played and the next are quiet (silence, DTX, or every
/// sample within ±``JitterBuffer/quietPeak``, or within 40 dB below the stream's recent peak
/// up to ±``JitterBuffer/quietPeakCeiling``): it repeats the quiet frame just played without
/// consuming the timeline (grow) or discards 10 ms of it (shrink, at most every
/// ``JitterBuffer/shrinkInterval`` frames). `adaptive: false` pins the delay.
///
/// ## Sender reports and drift
/// A sender-report shift (`sync`, see ``SenderClockSync``) is applied like a delay step, up to
/// 10 ms per quiet frame. Drift beyond the dead band (``JitterBuffer/driftDeadband``) is followed by dropping or repeating one
/// sample per frame at its quietest point. `lag = delay + sync + drift`.
///
/// Thread: confined to the room clock's thread. Nothing allocates after init.
final class LivePlayout {
    let targetDelay: Int64
    let maxDelay: Int64
    let isAdaptive: Bool
    let line: PlayoutDecoder
    private let state: JitterStreamState
    private let statistics: JitterStatistics
    private let senderClock: SenderClockSync?
    private let lastQuiet: UnsafeMutablePointer<Int16>  // the quiet frame just played
    private var started = false
    private var lag: Int64 = 0  // delay + sync + drift correction
    private var delay: Int64 = 0
    private var sync: Int64 = 0
    private var previousQuiet = false
    private var recentPeak = 0
    private var sinceShrink = 0
    private var correction: DriftCorrection

    init(
        targetDelay: Int64, maxDelay: Int64, adaptive: Bool, driftDeadband: Int64, senderClock: SenderClockSync?,
        line: PlayoutDecoder, state: JitterStreamState, statistics: JitterStatistics
    ) {
        self.targetDelay = targetDelay
        self.maxDelay = maxDelay
        self.isAdaptive = adaptive
        correction = DriftCorrection(deadband: driftDeadband)
        self.senderClock = senderClock
        self.line = line
        self.state = state
        self.statistics = statistics
        lastQuiet = .allocate(capacity: AudioFrame.samplesPerChannel * line.channels)
        lastQuiet.initialize(repeating: 0, count: AudioFrame.samplesPerChannel * line.channels)
    }

    deinit { lastQuiet.deallocate() }

    private var channels: Int { line.channels }
    private var playout: PlayoutBuffer { line.playout }

    /// Renders the live 10 ms at room sample `roomSample`. Room clock's thread only.
    func render(into out: UnsafeMutablePointer<Int16>, at roomSample: Int64) -> FrameStatus {
        let frames = AudioFrame.samplesPerChannel
        if !started {
            let first = state.firstSequence.load(ordering: .acquiring)
            guard first >= 0 else {
                out.update(repeating: 0, count: frames * channels)
                return .silence
            }
            started = true
            line.nextSequence = first
            delay = isAdaptive ? wantedDelay() : targetDelay
            sync = state.syncTarget.load(ordering: .relaxed)
            lag = delay + sync
            publishDelay()
            playout.reset(at: roomSample - lag)
        }
        let newest = state.highestSequence.load(ordering: .sequentiallyConsistent)
        if state.ended.load(ordering: .sequentiallyConsistent) {
            // Gone: silence on the timeline; skip whatever is left, so a return starts fresh.
            line.nextSequence = max(line.nextSequence, newest + 1)
            line.silenceFollows()
            // Silence either way: take the wanted delay and sync at once.
            let drift = lag - delay - sync
            if isAdaptive { delay = wantedDelay() }
            sync = state.syncTarget.load(ordering: .relaxed)
            lag = delay + sync + drift
            publishDelay()
            playout.reset(at: roomSample + Int64(frames) - lag)
            state.liveRead.store(line.nextSequence, ordering: .releasing)
            out.update(repeating: 0, count: frames * channels)
            return .silence
        }
        if playout.start != roomSample - lag {
            playout.reset(at: roomSample - lag)  // the room skipped frames: keep the timeline
        }
        sinceShrink += 1
        let step = adaptationStep()
        if step == 0 {
            // Measured only while a change waits.
            previousQuiet = false
            recentPeak = 0
        }
        if step > 0, let status = lengthen(by: Int(step), into: out) {
            state.liveRead.store(line.nextSequence, ordering: .releasing)
            return status
        }
        if step < 0 { shorten(by: Int(-step)) }
        let adjust = driftAdjustment()
        lag += Int64(adjust)
        line.fill(upTo: playout.start + Int64(frames - adjust))
        let status = playout.play(into: out, adjust: adjust)
        state.liveRead.store(line.nextSequence, ordering: .releasing)
        state.liveDrift.store(lag - delay - sync, ordering: .relaxed)
        if step != 0 { measure(out) }
        return status
    }

    // MARK: - Delay adaptation

    /// The change of lag this frame would like (samples; 0 when delay and sync are where they are
    /// wanted): a growing step first (a whole frame of delay, or up to a frame of sync), then a
    /// shrinking one at most every ``JitterBuffer/shrinkInterval`` frames.
    private func adaptationStep() -> Int64 {
        let frame = Int64(AudioFrame.samplesPerChannel)
        let wantedDelay = self.wantedDelay()
        let wantedSync = state.syncTarget.load(ordering: .relaxed)
        if wantedDelay > delay { return frame }
        if wantedSync > sync { return min(frame, wantedSync - sync) }
        guard sinceShrink >= JitterBuffer.shrinkInterval else { return 0 }
        if wantedDelay < delay { return -frame }
        if wantedSync < sync { return -min(frame, sync - wantedSync) }
        return 0
    }

    /// Plays `step` samples of silence before this frame's audio (the delay or the sync offset
    /// grows by `step`) when both the last frame and this one are quiet; nil (nothing played)
    /// otherwise.
    private func lengthen(by step: Int, into out: UnsafeMutablePointer<Int16>) -> FrameStatus? {
        let frames = AudioFrame.samplesPerChannel
        line.fill(upTo: playout.start + Int64(frames))
        guard previousQuiet, playout.isQuiet(frames: frames, peak: quietLimit) else {
            previousQuiet = false  // re-measured on the frame played below
            return nil
        }
        apply(Int64(step))
        out.update(from: lastQuiet, count: step * channels)
        let status = playout.play(into: out + step * channels, frames: frames - step)
        state.liveDrift.store(lag - delay - sync, ordering: .relaxed)
        measure(out)
        return status
    }

    /// Drops the next `step` samples of the timeline (the delay or the sync offset shrinks by
    /// `step`) when the last frame was quiet and they are too; else nothing.
    private func shorten(by step: Int) {
        let frames = AudioFrame.samplesPerChannel
        guard previousQuiet else { return }
        line.fill(upTo: playout.start + Int64(step + frames + 1))
        guard playout.isQuiet(frames: step, peak: quietLimit) else { return }
        playout.discard(step)
        apply(-Int64(step))
        sinceShrink = 0
    }

    /// Moves lag by `step`, booking it on the delay when the delay wants to move that way, else
    /// on the sync offset; counts the adaptation.
    private func apply(_ step: Int64) {
        let wantedDelay = self.wantedDelay()
        if (step > 0 && wantedDelay > delay) || (step < 0 && wantedDelay < delay) {
            delay += step
        } else {
            sync += step
        }
        lag += step
        statistics.adaptationCounter.add(1, ordering: .relaxed)
        publishDelay()
    }

    /// The delay arrivals call for; for a stream placed by sender reports, the largest any such
    /// stream needs (they share one delay to stay aligned).
    private func wantedDelay() -> Int64 {
        guard isAdaptive else { return delay }
        let own = state.neededDelay.load(ordering: .relaxed)
        guard let senderClock, statistics.senderReportTimingUsed else { return own }
        return min(maxDelay, max(own, senderClock.sharedDelay))
    }

    private func publishDelay() {
        let stats = statistics
        stats.delaySamples.store(delay, ordering: .relaxed)
        if delay < stats.minDelaySamples.load(ordering: .relaxed) {
            stats.minDelaySamples.store(delay, ordering: .relaxed)
        }
        if delay > stats.maxDelaySamples.load(ordering: .relaxed) {
            stats.maxDelaySamples.store(delay, ordering: .relaxed)
        }
        stats.syncSamples.store(sync, ordering: .relaxed)
        state.liveSync.store(sync, ordering: .relaxed)
        state.liveDrift.store(lag - delay - sync, ordering: .relaxed)
    }

    /// The peak below which a frame is quiet now.
    private var quietLimit: Int {
        min(JitterBuffer.quietPeakCeiling, max(JitterBuffer.quietPeak, recentPeak / 100))
    }

    /// Notes the frame just played: its peak, whether it was quiet (and keeps it if so).
    private func measure(_ out: UnsafeMutablePointer<Int16>) {
        let count = AudioFrame.samplesPerChannel * channels
        var peak = 0
        for i in 0..<count { peak = max(peak, abs(Int(out[i]))) }
        recentPeak = max(peak, recentPeak - recentPeak >> 8)
        previousQuiet = peak <= quietLimit
        if previousQuiet { lastQuiet.update(from: out, count: count) }
    }

    /// +1 (repeat a sample, lag grows), -1 (drop one, lag shrinks) or 0 for this frame.
    private func driftAdjustment() -> Int {
        let estimate = state.slide.load(ordering: .relaxed)
        guard estimate != .min else { return 0 }
        let adjust = correction.adjustment(error: delay + sync + estimate - lag)
        if adjust != 0 { line.statistics.driftCorrectionCounter.add(1, ordering: .relaxed) }
        return adjust
    }
}
