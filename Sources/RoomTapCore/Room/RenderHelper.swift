import Foundation
import Synchronization

/// A second render thread for large live rooms: while the room clock's thread renders the even
/// source tracks of a tick, the helper renders the odd ones; the clock waits for it (spinning
/// briefly, then yielding) before the derived tracks (mixes) render. A tick of N tracks then takes
/// about the time of N/2 on a machine with two cores.
///
/// Thread: `begin` and `finish` on the room clock's thread, in pairs, once per tick; the helper's
/// own thread does the rest. The semaphore and the `pending` flag order every tick's hand-over,
/// so each track (its source and its sinks' queues) is used by one thread at a time, with a
/// happens-before edge between successive ticks. Nothing allocates per tick.
final class RenderHelper: @unchecked Sendable {
    private let go = DispatchSemaphore(value: 0)
    private let pending = Atomic<Bool>(false)
    private let quit = Atomic<Bool>(false)
    // Written by the clock before `go.signal()`, read by the helper after `go.wait()`.
    private var tracks: [AudioTrack] = []
    private var sourceCount = 0
    private var roomSample: Int64 = 0
    private var soloActive = false

    /// Starts the helper thread.
    init() {
        let thread = Thread { [self] in loop() }
        thread.name = "roomtap.render"
        thread.qualityOfService = .userInteractive
        thread.start()
    }

    /// Hands the odd source tracks of this tick to the helper. Clock thread.
    func begin(tracks: [AudioTrack], sourceCount: Int, roomSample: Int64, soloActive: Bool) {
        self.tracks = tracks
        self.soloActive = soloActive
        self.sourceCount = sourceCount
        self.roomSample = roomSample
        pending.store(true, ordering: .releasing)
        go.signal()
    }

    /// Waits until the helper has rendered its tracks. Clock thread.
    func finish() {
        var spins = 0
        while pending.load(ordering: .acquiring) {
            spins += 1
            if spins > 2_000 { sched_yield() }
        }
    }

    /// Ends the helper thread once it is idle. Idempotent.
    func stop() {
        guard !quit.exchange(true, ordering: .acquiringAndReleasing) else { return }
        go.signal()
    }

    private func loop() {
        while true {
            go.wait()
            if quit.load(ordering: .acquiring) { break }
            let tracks = self.tracks
            var i = 1
            while i < sourceCount {
                tracks[i].renderFrame(at: roomSample, soloActive: soloActive)
                i += 2
            }
            pending.store(false, ordering: .releasing)
        }
    }
}
