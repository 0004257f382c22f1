public import RoomTapCore
import RoomTapSync
import Synchronization

/// Who talked when: one small sink per human track records, per 10 ms frame, whether the frame's
/// RMS was above a threshold; ``speakers(from:to:)`` names the tracks that were talking during a
/// span of room time (to attribute a transcribed utterance).
///
/// Storage is a preallocated ring per track (``capacitySeconds`` of history, one byte per frame).
///
/// Thread: the sinks' `onFrame` on the room clock's thread (no allocation, no lock; one sink per
/// track, so two render threads never share one); `sink(for:)` and `speakers(from:to:)` from any
/// other thread.
public final class SpeakerActivity: Sendable {
    /// History kept per track, in seconds.
    public let capacitySeconds: Int
    /// RMS (in sample units) above which a frame counts as talking.
    public let threshold: Double
    private let sinks = Locked<[ActivitySink]>([])

    /// `threshold` defaults to an RMS of 300 (about −40 dBFS).
    public init(capacitySeconds: Int = 3_600, threshold: Double = 300) {
        self.capacitySeconds = max(1, capacitySeconds)
        self.threshold = threshold
    }

    /// The sink to attach to `track`, a human's (after the track's controls, so a muted speaker is
    /// not talking). Keyed by the track's id: asking twice for a track returns the same sink, and
    /// two tracks with the same name get a sink each (one sink on two render threads would race).
    public func sink(for track: AudioTrack) -> any AudioTrackSink { sink(id: track.id, name: track.name) }

    /// The sink of the track `id`, named `name` in the transcript; see ``sink(for:)``.
    public func sink(id: TrackID, name: String) -> any AudioTrackSink {
        sinks.withLock { list in
            if let existing = list.first(where: { $0.id == id }) { return existing }
            let sink = ActivitySink(id: id, name: name, frames: capacitySeconds * 100, threshold: threshold)
            list.append(sink)
            return sink
        }
    }

    /// The names of the tracks talking in room samples `[start, end)`: every track talking at least
    /// half as many frames as the most talkative one (and at least 3), in the order the sinks were
    /// made, each name once. Empty when nobody talked.
    public func speakers(from start: Int64, to end: Int64) -> [String] {
        let list = sinks.snapshot(\.self)
        let first = max(0, start / 480)
        let last = max(first + 1, (end + 479) / 480)
        let counts = list.map { $0.talkingFrames(from: first, to: last) }
        guard let top = counts.max(), top >= 3 else {
            // A very short span: whoever talked at all.
            return Self.unique(zip(list, counts).filter { $0.1 > 0 && $0.1 == counts.max() }.map(\.0.name))
        }
        return Self.unique(zip(list, counts).filter { $0.1 * 2 >= top }.map(\.0.name))
    }

    private static func unique(_ names: [String]) -> [String] {
        var seen = Set<String>()
        return names.filter { seen.insert($0).inserted }
    }
}

/// One track's talking flags.
final class ActivitySink: AudioTrackSink, @unchecked Sendable {
    let id: TrackID
    let name: String
    private let capacity: Int
    private let flags: UnsafeMutablePointer<UInt8>
    private let thresholdSquaredSum: Double
    private let written = Atomic<Int64>(-1)  // last frame index written

    init(id: TrackID, name: String, frames: Int, threshold: Double) {
        self.id = id
        self.name = name
        capacity = frames
        flags = .allocate(capacity: frames)
        flags.initialize(repeating: 0, count: frames)
        thresholdSquaredSum = threshold * threshold
    }

    deinit { flags.deallocate() }

    func onFrame(_ frame: AudioFrame) {
        var sum: Int64 = 0
        if !frame.status.isZero {
            for s in frame.samples {
                let v = Int64(s)
                sum &+= v * v
            }
        }
        let index = frame.index
        guard index >= 0 else { return }
        let talking = Double(sum) / Double(frame.samples.count) > thresholdSquaredSum
        flags[Int(index % Int64(capacity))] = talking ? 1 : 0
        written.store(index, ordering: .releasing)
    }

    /// Talking frames among frame indexes `[first, last)` still in the history.
    func talkingFrames(from first: Int64, to last: Int64) -> Int {
        let newest = written.load(ordering: .acquiring)
        let lo = max(first, newest - Int64(capacity) + 1)
        let hi = min(last, newest + 1)
        guard lo < hi else { return 0 }
        var n = 0
        for i in lo..<hi where flags[Int(i % Int64(capacity))] != 0 { n += 1 }
        return n
    }
}
