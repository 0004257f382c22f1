import Foundation
import RoomTapSync
import Synchronization

/// A call room: tracks on one timeline, driven by one room clock.
///
/// Every tick (10 ms of room time) the clock's thread pulls one frame from every track's source,
/// in the order tracks were added (source tracks first, then derived tracks such as mixes), and
/// hands each frame to that track's sinks. Tracks and sinks are added and removed from any other
/// thread; the clock picks up the new routing at the start of its next tick without waiting on a
/// lock.
///
/// Thread: all public members are safe from any thread except the room clock's own (calling
/// `removeTrack` or `waitUntilFinished` from a sink would deadlock).
public final class Room: Sendable {
    /// The clock that drives this room.
    public let clock: any RoomClock
    /// When true the room stops by itself after the tick in which every source track became
    /// finished (offline rooms of files). Live rooms run until ``stop()``.
    public let endsWhenSourcesFinish: Bool

    private struct Control {
        var tracks: [AudioTrack] = []
        var nextID: UInt32 = 1
        var events = RoomEvents()
        var started = false
        var finished = false
    }

    private let appliedGeneration = Atomic<UInt64>(0)
    private let applyWaiters = Atomic<Int>(0)  // control threads in waitForClock
    private let framesRendered = Atomic<Int64>(0)
    private let stopRequested = Atomic<Bool>(false)
    private let stopPosition = Atomic<Int64>(.max)
    private let clockRunning = Atomic<Bool>(false)
    private let soloActive = Atomic<Bool>(false)
    private let soloList = Locked<[AudioTrack]>([])
    private let control = Locked(Control())
    private let routing: PublishedSnapshot<RenderPlan>
    /// The room clock's thread, once started (joined by ``waitUntilFinished()``).
    private let clockThread = Locked<RoomThread?>(nil)
    /// The room's bus (see ``RoomBus``): the clock posts ``RoomBus/Event/clockStopped`` on it as
    /// its last act; the application's sinks, control and joins post theirs. Drained by the
    /// application's one supervising thread (nobody drains it in a room that has none: events
    /// beyond its capacity are refused and counted, and cost nothing).
    public let bus = RoomBus(capacity: 64)
    private let clockApplied = DispatchSemaphore(value: 0)  // signalled when a waiter exists
    /// State owned by the room clock's thread.
    nonisolated(unsafe) private let clockSide: ClockSide

    private final class ClockSide {
        var plan: RenderPlan
        var generation: UInt64 = 0
        var pool: RenderPool?
        var chunks: ChunkedRender?
        /// The stop position a chunked pass started under (a change interrupts it).
        var stopPositionOfPass: Int64 = .max
        init(plan: RenderPlan) { self.plan = plan }
    }

    /// The SCHED_FIFO priority of the clock's thread and the render helpers; nil: normal.
    public let realtimePriority: Int32?
    /// Render threads per tick, the clock's included (1 ... 64; see ``RenderPool``).
    public let renderThreads: Int
    /// Source tracks from which the room renders on more than one thread.
    public let parallelThreshold: Int
    /// How the record relates to the live playout (network rooms record later than they play).
    public let timing: RoomTiming
    /// Whether every track's ``AudioTrack/meter`` is measured each frame (a pass over its samples):
    /// true unless the room was made without, e.g. offline with nobody to read the meters.
    public let metersTracks: Bool
    /// On a ``VirtualClock``, while the room has no derived tracks (mixes): ticks a source track
    /// renders in a row before another takes its turn (1: every track renders every tick in step).
    /// See ``ChunkedRender``.
    public let chunkTicks: Int
    /// The default ``parallelThreshold``: where splitting a live tick starts to pay.
    public static let defaultParallelThreshold = 8
    /// The most render threads a room uses.
    public static let maxRenderThreads = 64

    /// Creates a room driven by `clock`. With `renderThreads` above 1 (clamped to 1 ... 64) a room
    /// of at least `parallelThreshold` source tracks renders them on that many threads each tick
    /// (never more threads than source tracks; see ``RenderPool``): offline rooms on every core,
    /// live rooms to keep a large tick short. `timing` says how late the record is against the
    /// live playout (see ``RoomTiming``; the default: the record is the live audio). With
    /// `metersTracks` false the tracks' meters are not measured (they read as silence). With
    /// `realtimePriority` the clock's thread and the render helpers run under SCHED_FIFO at that
    /// priority (see ``RealtimeScheduling``; check it is permitted first: a thread that is refused
    /// stays at normal priority). With `chunkTicks` above 1, a room on a ``VirtualClock`` without
    /// mixes does not keep its tracks in step every tick: each source track renders up to that
    /// many ticks at a time, the tracks dealt to the render threads as they free up (no hand-over
    /// per tick; every file the same, and the room as long, as in step; see ``ChunkedRender``).
    /// Its tracks are then at different room times while it runs: leave it at 1 when controls
    /// or routing changes must land on one tick across tracks.
    public init(
        clock: any RoomClock = VirtualClock(), endsWhenSourcesFinish: Bool = true, events: RoomEvents = RoomEvents(),
        renderThreads: Int = 1, parallelThreshold: Int = Room.defaultParallelThreshold,
        timing: RoomTiming = RoomTiming(), metersTracks: Bool = true, realtimePriority: Int32? = nil,
        chunkTicks: Int = 1
    ) {
        self.chunkTicks = max(1, chunkTicks)
        self.realtimePriority = realtimePriority
        self.clock = clock
        self.metersTracks = metersTracks
        self.timing = timing
        self.renderThreads = max(1, min(Self.maxRenderThreads, renderThreads))
        self.parallelThreshold = max(2, parallelThreshold)
        self.endsWhenSourcesFinish = endsWhenSourcesFinish
        let empty = RenderPlan(tracks: [], poolThreads: 1, parallelThreshold: 2)
        routing = PublishedSnapshot(empty)
        clockSide = ClockSide(plan: empty)
        control.withLock { $0.events = events }
    }

    /// Replaces the lifecycle handlers. Set them before adding tracks.
    public func setEvents(_ events: RoomEvents) { control.withLock { $0.events = events } }

    /// Adds a participant's track (or the agent's voice) in `role`, which must not be derived
    /// (mixes come from ``addMix(name:inputs:channels:role:)``). `onTrackAdded` runs on this thread
    /// before the track's first frame, so sinks attached there see every frame. Takes effect at
    /// the next tick.
    @discardableResult
    public func addTrack(name: String, source: any FrameSource, role: TrackRole = .speaker) -> AudioTrack {
        precondition(!role.isDerived, "addTrack: \(role) is a derived role; use addMix")
        return add(name: name, source: source, role: role, mixer: nil)
    }

    /// Adds a mix of `inputs` (tracks of this room) as a derived track in `role` (``TrackRole/mix``
    /// or ``TrackRole/agentHearing``) with sinks of its own. Returns the track; its
    /// ``AudioTrack/mixer`` changes the inputs later.
    @discardableResult
    public func addMix(name: String, inputs: [AudioTrack], channels: Int = 1, role: TrackRole = .mix) -> AudioTrack {
        precondition(role.isDerived, "addMix: \(role) is not a derived role; use addTrack")
        let mixer = Mixer(inputs: inputs, channels: channels)
        return add(name: name, source: mixer, role: role, mixer: mixer)
    }

    private func add(name: String, source: any FrameSource, role: TrackRole, mixer: Mixer?) -> AudioTrack {
        let (track, handler) = control.withLock { c -> (AudioTrack, (@Sendable (AudioTrack) -> Void)?) in
            let track = AudioTrack(
                id: TrackID(c.nextID), name: name, source: source, role: role, mixer: mixer, timing: timing,
                metered: metersTracks)
            c.nextID += 1
            c.tracks.append(track)
            return (track, c.events.onTrackAdded)
        }
        handler?(track)
        publishRouting()
        bus.post(.trackAdded(track.id))
        return track
    }

    /// Removes a track: after this returns no sink of the track receives another frame, the
    /// sinks are detached and `onTrackRemoved` has run (on this thread). Removing a track that is
    /// not in the room does nothing. Mixers that listed it stop hearing it.
    public func removeTrack(_ track: AudioTrack) {
        let found = control.withLock { c -> Bool in
            guard let i = c.tracks.firstIndex(where: { $0 === track }) else { return false }
            c.tracks.remove(at: i)
            return true
        }
        guard found else { return }
        let mixers = tracks.compactMap(\.mixer)
        for mixer in mixers { mixer.removeInput(track) }
        let generation = publishRouting()
        waitForClock(toApply: generation)
        for mixer in mixers { mixer.releaseRetiredInputs() }
        retire(track)
    }

    /// Solo: from the next tick, mixes and playback hear only `tracks` (their own mute and volume
    /// still apply); recordings are untouched. An empty list ends the solo. Any thread; idempotent.
    public func solo(_ tracks: [AudioTrack]) {
        soloList.withLock { list in
            list = tracks
            for track in self.tracks { track.controls.setSoloed(tracks.contains { $0 === track }) }
            soloActive.store(!tracks.isEmpty, ordering: .releasing)
        }
    }

    /// Ends the solo: every track is heard again. Any thread; idempotent.
    public func unsolo() { solo([]) }

    /// The soloed tracks (empty when no solo is in force).
    public var soloedTracks: [AudioTrack] { soloList.snapshot(\.self) }

    /// The tracks in the room, in the order they were added.
    public var tracks: [AudioTrack] { control.snapshot(\.tracks) }

    /// Room time rendered so far, in samples at 48 kHz.
    public var position: Int64 { framesRendered.load(ordering: .relaxed) * Int64(AudioFrame.samplesPerChannel) }

    /// True between ``start()`` and the end of the clock's run.
    public var isRunning: Bool { clockRunning.load(ordering: .acquiring) }

    /// Starts the room clock on a thread of its own. Calling it again does nothing.
    public func start() {
        let first = control.withLock { c -> Bool in
            defer { c.started = true }
            return !c.started
        }
        guard first else { return }
        clockRunning.store(true, ordering: .releasing)
        // Stored under the lock it is started in: a concurrent waitUntilFinished joins it.
        clockThread.withLock { stored in
            stored = RoomThread.start("roomtap.clock", policy: .realtime(orNormal: realtimePriority)) { [self] in
                if renderThreads > 1 {
                    clockSide.pool = RenderPool(threadCount: renderThreads, realtimePriority: realtimePriority)
                }
                if chunkTicks > 1 && clock is VirtualClock {
                    // Render threads ask this during a pass, while the clock's thread renders too (so
                    // nothing writes the clock side's fields they read).
                    clockSide.chunks = ChunkedRender(chunkTicks: chunkTicks) { [unowned self] reached in
                        framesRendered.max(reached, ordering: .relaxed)
                        return stopRequested.load(ordering: .acquiring)
                            || stopPosition.load(ordering: .acquiring) != clockSide.stopPositionOfPass
                            || routing.isNewer(than: clockSide.generation)
                    }
                    runChunked()
                } else {
                    clock.run { index in tick(index) }
                }
                clockSide.pool?.stop()
                clockRunning.store(false, ordering: .releasing)
                if applyWaiters.load(ordering: .acquiring) > 0 { clockApplied.signal() }
                bus.post(.clockStopped)
            }
        }
    }

    /// Asks the clock to stop after the tick in progress. Idempotent, any thread, never blocks.
    public func stop() { stopRequested.store(true, ordering: .releasing) }

    /// Makes the room end exactly at room sample `position` (rounded up to a whole frame): the
    /// frame that would start there is not rendered. Any thread; the earliest position given wins.
    public func stop(atSample position: Int64) {
        var current = stopPosition.load(ordering: .relaxed)
        while position < current {
            let (exchanged, original) = stopPosition.compareExchange(
                expected: current, desired: position, ordering: .acquiringAndReleasing)
            if exchanged { break }
            current = original
        }
    }

    /// Blocks until the clock has stopped, then removes every track (firing `onTrackRemoved` for
    /// each, on this thread) and fires `onFinished`. Idempotent: later calls return at once.
    public func waitUntilFinished() {
        let (started, alreadyFinished) = control.withLock { ($0.started, $0.finished) }
        guard !alreadyFinished else { return }
        if started { clockThread.withLock { $0 }?.join() }
        let (remaining, onFinished) = control.withLock { c -> ([AudioTrack], (@Sendable () -> Void)?) in
            guard !c.finished else { return ([], nil) }
            c.finished = true
            defer { c.tracks.removeAll() }
            return (c.tracks, c.events.onFinished)
        }
        publishRouting()
        routing.releaseRetired()
        for track in remaining { retire(track) }
        onFinished?()
    }

    /// Starts the room and waits for it to end (``start()`` then ``waitUntilFinished()``).
    public func run() {
        start()
        waitUntilFinished()
    }

    // MARK: - Control side

    @discardableResult
    private func publishRouting() -> UInt64 {
        let ordered = control.withLock { c in c.tracks.filter { !$0.isDerived } + c.tracks.filter { $0.isDerived } }
        let plan = RenderPlan(tracks: ordered, poolThreads: renderThreads, parallelThreshold: parallelThreshold)
        return routing.update { r in
            r = plan
            return true
        }
    }

    /// Waits until the clock has taken routing `generation` (or has stopped), then releases the
    /// plans it let go of, on this thread. Sleeps on a semaphore the clock signals after taking a
    /// new plan while someone waits (rechecked every 100 ms, so two waiters sharing one signal
    /// cost at most that).
    private func waitForClock(toApply generation: UInt64) {
        applyWaiters.add(1, ordering: .sequentiallyConsistent)
        while clockRunning.load(ordering: .acquiring)
            && appliedGeneration.load(ordering: .sequentiallyConsistent) < generation
        {
            _ = clockApplied.wait(timeout: .now() + .milliseconds(100))
        }
        applyWaiters.subtract(1, ordering: .sequentiallyConsistent)
        routing.releaseRetired()
    }

    private func retire(_ track: AudioTrack) {
        track.removeAllSinks()
        let handler = control.withLock { $0.events.onTrackRemoved }
        handler?(track)
        bus.post(.trackRemoved(track.id))
    }

    // MARK: - The room clock's thread

    /// Takes a new plan, if any and the lock is free; the one replaced is freed on the control side.
    private func takeRouting(_ side: ClockSide) {
        if routing.take(into: &side.plan, generation: &side.generation) {
            for entry in side.plan.staggering { entry.source.decodeAhead(entry.ahead) }
            appliedGeneration.store(side.generation, ordering: .sequentiallyConsistent)
            if applyWaiters.load(ordering: .sequentiallyConsistent) > 0 { clockApplied.signal() }
        }
    }

    /// The virtual clock of a room with ``chunkTicks`` above 1: chunked passes (see
    /// ``ChunkedRender``) while the plan has only source tracks, ticks in step otherwise. Every
    /// track stands at the same tick between passes, where stops and new plans are taken.
    private func runChunked() {
        let side = clockSide
        guard let chunks = side.chunks else { return }
        let samplesPerTick = Int64(AudioFrame.samplesPerChannel)
        var index: Int64 = 0
        while true {
            if stopRequested.load(ordering: .acquiring) { return }
            let stopAt = stopPosition.load(ordering: .acquiring)
            // Ticks below `cap` may render (a tick starting at or past the stop position may not).
            let cap = stopAt == .max ? Int64.max : (stopAt + samplesPerTick - 1) / samplesPerTick
            if index >= cap { return }
            takeRouting(side)
            let plan = side.plan
            guard plan.sourceCount > 0, plan.sourceCount == plan.tracks.count else {
                guard tick(index) else { return }
                index += 1
                continue
            }
            side.stopPositionOfPass = stopAt
            let solo = soloActive.load(ordering: .acquiring)
            for i in 0..<plan.sourceCount { plan.tracks[i].render.nextTick = index }
            chunks.prepare(
                plan: plan, from: index, target: cap, stopsAtSourcesEnd: endsWhenSourcesFinish, interruptible: true,
                soloActive: solo)
            runPass(chunks, of: plan)
            // Tracks that stopped at their source's end (or at an interruption) catch up with the
            // furthest: the room, in step, would have rendered them that far.
            let furthest = chunks.furthestTick
            if !chunks.allTracks(at: furthest) {
                chunks.prepare(
                    plan: plan, from: index, target: furthest, stopsAtSourcesEnd: false, interruptible: false,
                    soloActive: solo)
                runPass(chunks, of: plan)
            }
            index = furthest
            framesRendered.store(index, ordering: .relaxed)
            if endsWhenSourcesFinish && (0..<plan.sourceCount).allSatisfy({ plan.tracks[$0].source.isFinished }) {
                return
            }
        }
    }

    private func runPass(_ chunks: ChunkedRender, of plan: RenderPlan) {
        if plan.threads > 1, let pool = clockSide.pool {
            pool.run(chunks, threads: plan.threads)
        } else {
            chunks.renderChunks(thread: 0)
        }
    }

    private func tick(_ index: Int64) -> Bool {
        if stopRequested.load(ordering: .acquiring) { return false }
        if index * Int64(AudioFrame.samplesPerChannel) >= stopPosition.load(ordering: .acquiring) { return false }
        let side = clockSide
        takeRouting(side)
        let roomSample = index * Int64(AudioFrame.samplesPerChannel)
        let plan = side.plan
        let tracks = plan.tracks
        let sources = plan.sourceCount
        let solo = soloActive.load(ordering: .acquiring)
        if plan.threads > 1, let pool = side.pool {
            pool.render(plan, at: roomSample, soloActive: solo)
        } else {
            for i in 0..<sources { tracks[i].renderFrame(at: roomSample, soloActive: solo) }
        }
        for i in sources..<tracks.count { tracks[i].renderFrame(at: roomSample, soloActive: solo) }
        var allSourcesFinished = true
        for i in 0..<sources where !tracks[i].source.isFinished { allSourcesFinished = false }
        framesRendered.store(index + 1, ordering: .relaxed)
        return !(endsWhenSourcesFinish && allSourcesFinished)
    }
}
