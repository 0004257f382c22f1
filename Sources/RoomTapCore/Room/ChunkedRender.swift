import Synchronization

/// Renders the source tracks of a room without mixes in chunks of ticks, each track on its own
/// (the offline path's "several ticks per hand-over"): a virtual-clock room whose tracks are all
/// sources has no reason to keep them in step every 10 ms, since no track reads another's frame.
///
/// A pass brings every source track from the room's position to a target tick. Each render
/// thread (the clock's and the pool's helpers) renders chunks of the tracks the ``RenderPlan``
/// gives it, in turn, so a track's decoder stays in one core's cache; once those are done it helps
/// with the tracks still left, taking them as they free up. A thread claims a track (one atomic
/// exchange, the happens-before edge from the thread that rendered its previous chunk), renders up
/// to ``chunkTicks`` of its ticks in a row and lets it go, until every track is done; nobody waits
/// for anybody before the pass ends. Each track's frames are the ones it renders in step: a source
/// renders the same audio for the same sequence of room samples, whatever thread calls it and
/// whatever the other tracks do.
///
/// The room's end stays exact. In a pass that may stop at the sources' end, a track stops after
/// the first tick (past the pass's first) after which its source is finished: the room, rendered
/// in step, ends after the tick in which the last source finished, which is the furthest any
/// track got. A second pass without that stop then brings every track to that furthest tick
/// (silence, for finished sources). A pass can be interrupted (a stop, a change of tracks): the
/// threads stop taking chunks, and the catch-up pass brings the tracks level again.
///
/// Thread: ``prepare(plan:from:target:stopsAtSourcesEnd:interruptible:soloActive:)`` on the room clock's
/// thread, before the pass is handed to the render threads (a releasing store they acquire);
/// ``renderChunks(thread:)`` on each render thread of the pass; ``furthestTick`` and ``allFinished`` on
/// the clock's thread once every render thread is done (acquiring). Allocates nothing.
final class ChunkedRender: @unchecked Sendable {
    /// Ticks a track renders per claim.
    let chunkTicks: Int64
    /// Asked before every chunk of an interruptible pass with the tick the asking thread's last
    /// track reached (for progress): true interrupts the pass (a stop, new routing). Any render
    /// thread; must not block or allocate.
    private let shouldInterrupt: @Sendable (Int64) -> Bool

    private let cursor = Atomic<Int>(0)
    private let remaining = Atomic<Int>(0)  // tracks not yet done in this pass
    private let interrupted = Atomic<Bool>(false)
    // Written by the clock in `prepare`, read by the render threads of the pass.
    @exclusivity(unchecked) private var plan: Unmanaged<RenderPlan>?
    @exclusivity(unchecked) private var start: Int64 = 0
    @exclusivity(unchecked) private var target: Int64 = 0
    @exclusivity(unchecked) private var stopsAtSourcesEnd = false
    @exclusivity(unchecked) private var interruptible = false
    @exclusivity(unchecked) private var soloActive = false

    /// `chunkTicks` (at least 1) per claim; `shouldInterrupt` as described there.
    init(chunkTicks: Int, shouldInterrupt: @escaping @Sendable (Int64) -> Bool) {
        self.chunkTicks = Int64(max(1, chunkTicks))
        self.shouldInterrupt = shouldInterrupt
    }

    /// Sets up a pass over the source tracks of `plan` (held alive by the caller until the pass
    /// ends): every track is at tick `from` or beyond, and goes to `target`; with
    /// `stopsAtSourcesEnd` a track also stops once its source is finished (after at least one
    /// tick); an `interruptible` pass asks `shouldInterrupt` before every chunk. Clock thread.
    func prepare(
        plan: RenderPlan, from: Int64, target: Int64, stopsAtSourcesEnd: Bool, interruptible: Bool,
        soloActive: Bool
    ) {
        self.plan = Unmanaged.passUnretained(plan)
        start = from
        self.target = target
        self.stopsAtSourcesEnd = stopsAtSourcesEnd
        self.interruptible = interruptible
        self.soloActive = soloActive
        let tracks = plan.tracks
        for i in 0..<plan.sourceCount { tracks[i].render.claimed.store(false, ordering: .relaxed) }
        cursor.store(0, ordering: .relaxed)
        interrupted.store(false, ordering: .relaxed)
        remaining.store(plan.sourceCount, ordering: .relaxed)
    }

    /// Renders chunks until the pass is done or interrupted: first the tracks `plan` gives to
    /// render thread `thread` (0 the clock's, `1..<plan.threads` the helpers), in turn, so each
    /// track's decoder stays in the cache of one core; then, when those are done or held, chunks of
    /// any track still left (the other threads' last tracks). Every render thread of the pass;
    /// spins only while the last tracks are held by other threads (one chunk at most).
    func renderChunks(thread: Int) {
        plan!._withUnsafeGuaranteedRef { plan in
            let count = plan.sourceCount
            guard count > 0 else { return }
            var reached = start
            if thread < plan.threads {
                let own = plan.byThread
                let bounds = plan.bounds[thread]..<plan.bounds[thread + 1]
                var progressed = true
                while progressed {
                    progressed = false
                    for j in bounds {
                        if mustStop(reached) { return }
                        guard let tick = claimChunk(of: own[j]) else { continue }
                        reached = tick
                        progressed = true
                    }
                }
            }
            let tracks = plan.tracks
            while remaining.load(ordering: .acquiring) > 0 {
                if mustStop(reached) { return }
                let i = Int(UInt(bitPattern: cursor.wrappingAdd(1, ordering: .relaxed).oldValue) % UInt(count))
                if let tick = claimChunk(of: tracks[i]) { reached = tick }
            }
        }
    }

    /// True when an interruptible pass is (or is now) interrupted; asks `shouldInterrupt` with the
    /// tick the caller's last track reached.
    @inline(__always)
    private func mustStop(_ reached: Int64) -> Bool {
        guard interruptible else { return false }
        if interrupted.load(ordering: .relaxed) { return true }
        guard shouldInterrupt(reached) else { return false }
        interrupted.store(true, ordering: .relaxed)
        return true
    }

    /// Claims `track` (one atomic exchange: the happens-before edge from the thread that rendered
    /// its previous chunk) and renders its next chunk; the tick it reached, or nil when another
    /// thread holds it or it is done for this pass (a done track keeps its claim).
    @inline(__always)
    private func claimChunk(of track: AudioTrack) -> Int64? {
        let state = track.render
        guard !state.claimed.exchange(true, ordering: .acquiringAndReleasing) else { return nil }
        let done = renderChunk(of: track, state: state)
        let reached = state.nextTick
        if done {
            remaining.subtract(1, ordering: .releasing)
        } else {
            state.claimed.store(false, ordering: .releasing)
        }
        return reached
    }

    /// Renders up to ``chunkTicks`` ticks of `track`; true when the track is done for this pass.
    @inline(__always)
    private func renderChunk(of track: AudioTrack, state: TrackRenderState) -> Bool {
        var tick = state.nextTick
        let end = min(target, tick + chunkTicks)
        let samplesPerTick = Int64(AudioFrame.samplesPerChannel)
        var done = tick >= target
        while tick < end {
            if stopsAtSourcesEnd && tick > start && track.source.isFinished {
                done = true
                break
            }
            track.renderFrame(at: tick * samplesPerTick, soloActive: soloActive)
            tick += 1
        }
        state.nextTick = tick
        return done || tick >= target
    }

    /// The furthest tick any source track of the pass's plan has reached. Clock thread, after the
    /// pass.
    var furthestTick: Int64 {
        plan!._withUnsafeGuaranteedRef { plan in
            var furthest = start
            for i in 0..<plan.sourceCount { furthest = max(furthest, plan.tracks[i].render.nextTick) }
            return furthest
        }
    }

    /// True when every source track of the pass's plan stands at `tick`. Clock thread, after the pass.
    func allTracks(at tick: Int64) -> Bool {
        plan!._withUnsafeGuaranteedRef { plan in
            (0..<plan.sourceCount).allSatisfy { plan.tracks[$0].render.nextTick == tick }
        }
    }
}
