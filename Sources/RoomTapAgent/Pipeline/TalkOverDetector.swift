import Foundation
public import RoomTapCore
import Synchronization

/// The pipeline agent's ears for barge-in: a sink on the mix-minus of the humans that counts
/// moments someone starts talking — a run of `frames` consecutive 10 ms frames at or above a
/// level — so the agent stops speaking within a few hundred milliseconds, before the speaker's
/// turn is even transcribed.
///
/// Thread: `onFrame` on the room clock's thread (no allocation, no lock, no log: a counter and a
/// run length); ``onsets`` from any thread.
public final class TalkOverDetector: AudioTrackSink, @unchecked Sendable {
    /// Talk onsets so far (each run of voiced frames reaching the length counts once).
    public var onsets: Int { count.load(ordering: .acquiring) }

    private let count = Atomic<Int>(0)
    private let thresholdPower: Double
    private let frames: Int
    // Room clock's thread only:
    private var run = 0

    /// Counts an onset after `duration` of frames at or above `thresholdDBFS` (RMS).
    public init(duration: Duration, thresholdDBFS: Double) {
        let ms = Int(duration.components.seconds) * 1_000 + Int(duration.components.attoseconds / 1_000_000_000_000_000)
        frames = max(1, ms / 10)
        let rms = 32_768 * pow(10, thresholdDBFS / 20)
        thresholdPower = rms * rms
    }

    public func onFrame(_ frame: AudioFrame) {
        guard !frame.status.isZero else {
            run = 0
            return
        }
        var sum = 0.0
        for s in frame.samples { sum += Double(s) * Double(s) }
        if sum / Double(max(1, frame.samples.count)) >= thresholdPower {
            run += 1
            if run == frames { count.add(1, ordering: .releasing) }
        } else {
            run = 0
        }
    }
}
