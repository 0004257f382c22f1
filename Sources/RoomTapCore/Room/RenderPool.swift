import Foundation
import RoomTapSync
import Synchronization

/// The render threads of a room: the room clock's own thread and `threadCount - 1` helper threads
/// ("roomtap.render"). Each tick, every thread renders the fixed subset of source tracks the
/// ``RenderPlan`` gives it; the clock's thread waits for the helpers before the derived tracks
/// (mixes) render, so a mix always hears its inputs' frames of the same tick. A tick of N equal
/// tracks then takes about the time of N / threads.
///
/// Hand-over, without locks or allocation: the clock publishes the tick's parameters and bumps
/// ``epoch`` (releasing); a helper that sees the new epoch (acquiring) renders its tracks and
/// counts ``pending`` down (acquiring and releasing); the clock goes on once ``pending`` is 0
/// (acquiring). Each side spins briefly, then sleeps (``Parker``), so idle helpers leave the cores
/// to the WAV writers. Every track is rendered by one thread per tick, with a happens-before edge
/// between successive ticks whatever thread renders it next.
///
/// Thread: ``render(_:at:soloActive:)`` and ``stop()`` on the room clock's thread; the helpers run
/// on their own threads.
final class RenderPool: @unchecked Sendable {
    /// Render threads, the clock's included.
    let threadCount: Int
    /// Spins before a waiting thread sleeps (tens of microseconds: on a VM, waking a sleeping core
    /// takes about as long as a small room's tick): `ROOMTAP_RENDER_SPINS` in the
    /// environment overrides it (read once, for measuring the hand-over; 0 sleeps at once).
    let spins: Int
    static let defaultSpins = 50_000

    /// The tick's hand-over word: a count of ticks (shifted left 8) and the helpers taking part in
    /// the latest one (the low 8 bits), read together so a helper never mixes two ticks.
    private let epoch = Atomic<UInt64>(0)
    @exclusivity(unchecked) private var ticks: UInt64 = 0  // clock thread
    private let pending = Atomic<Int>(0)
    private let quit = Atomic<Bool>(false)
    private let helperParkers: [Parker]
    private let clockParker = Parker()
    // Written by the clock before `epoch` is bumped; read by the active helpers after.
    @exclusivity(unchecked) private var plan: Unmanaged<RenderPlan>?
    @exclusivity(unchecked) private var roomSample: Int64 = 0
    @exclusivity(unchecked) private var soloActive = false
    /// Set for a chunked pass (``run(_:threads:)``), nil for a tick.
    @exclusivity(unchecked) private var pass: Unmanaged<ChunkedRender>?

    /// Starts `threadCount - 1` helper threads (1 ... 64 threads in all), under SCHED_FIFO at
    /// `realtimePriority` when given.
    init(threadCount: Int, realtimePriority: Int32? = nil) {
        self.threadCount = max(1, min(64, threadCount))
        spins =
            ProcessInfo.processInfo.environment["ROOMTAP_RENDER_SPINS"].flatMap { Int($0) }.map { max(0, $0) }
            ?? Self.defaultSpins
        helperParkers = (1..<self.threadCount).map { _ in Parker() }
        for index in 1..<self.threadCount {
            RoomThread.start("roomtap.render", policy: .realtime(orNormal: realtimePriority)) { [self] in
                helperLoop(index)
            }
        }
    }

    /// Renders the source tracks of `plan` for the frame at `roomSample` on `plan.threads`
    /// threads and returns when all are done. `plan` must stay alive until then (the room clock
    /// holds it). Clock thread; allocates nothing.
    func render(_ plan: RenderPlan, at roomSample: Int64, soloActive: Bool) {
        let helpers = plan.threads - 1
        self.plan = Unmanaged.passUnretained(plan)
        self.roomSample = roomSample
        self.soloActive = soloActive
        pass = nil
        handOver(helpers: helpers)
        Self.renderShare(of: plan, thread: 0, at: roomSample, soloActive: soloActive)
        clockParker.park(spins: spins) { pending.load(ordering: .acquiring) == 0 }
    }

    /// Runs a chunked pass (prepared by the caller) on `threads` render threads (the clock's and
    /// `threads - 1` helpers, at most the pool's) and returns when every one is done. `pass` must
    /// stay alive until then. Clock thread; allocates nothing.
    func run(_ pass: ChunkedRender, threads: Int) {
        let helpers = max(0, min(threadCount, threads) - 1)
        self.pass = Unmanaged.passUnretained(pass)
        handOver(helpers: helpers)
        pass.renderChunks(thread: 0)
        clockParker.park(spins: spins) { pending.load(ordering: .acquiring) == 0 }
    }

    /// Publishes the work set up in the stored properties to the first `helpers` helpers.
    @inline(__always)
    private func handOver(helpers: Int) {
        pending.store(helpers, ordering: .relaxed)
        ticks += 1
        epoch.store(ticks << 8 | UInt64(helpers), ordering: .releasing)
        for h in 0..<helpers { helperParkers[h].unpark() }
    }

    /// Ends the helper threads once they are idle. Idempotent; clock thread.
    func stop() {
        guard !quit.exchange(true, ordering: .acquiringAndReleasing) else { return }
        ticks += 1
        epoch.store(ticks << 8, ordering: .releasing)
        for parker in helperParkers { parker.unpark() }
    }

    @inline(__always)
    private static func renderShare(of plan: RenderPlan, thread: Int, at roomSample: Int64, soloActive: Bool) {
        let tracks = plan.byThread
        for i in plan.bounds[thread]..<plan.bounds[thread + 1] {
            tracks[i].renderFrame(at: roomSample, soloActive: soloActive)
        }
    }

    private func helperLoop(_ index: Int) {
        let parker = helperParkers[index - 1]
        var seen: UInt64 = 0
        while true {
            parker.park(spins: spins) { epoch.load(ordering: .acquiring) != seen }
            seen = epoch.load(ordering: .acquiring)
            if quit.load(ordering: .acquiring) { break }
            // Helpers beyond this tick's plan sit it out (and are not waited for).
            guard index <= Int(seen & 0xFF) else { continue }
            if let pass {
                pass._withUnsafeGuaranteedRef { $0.renderChunks(thread: index) }
            } else {
                plan!._withUnsafeGuaranteedRef { plan in
                    Self.renderShare(of: plan, thread: index, at: roomSample, soloActive: soloActive)
                }
            }
            if pending.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 { clockParker.unpark() }
        }
    }
}
