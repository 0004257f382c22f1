import Synchronization

/// Counters of one track, written by the room clock's thread, readable from any thread.
///
/// Counts are in frames (10 ms each), by the status of the track's recording (a frame silenced by a
/// control scoped to the recording counts as muted). Reads are lock-free and may be one frame behind.
public final class TrackStatistics: Sendable {
    private let normal = Atomic<Int>(0)
    private let concealed = Atomic<Int>(0)
    private let silence = Atomic<Int>(0)
    private let muted = Atomic<Int>(0)

    init() {}

    /// Frames rendered with the given status.
    public func frames(_ status: FrameStatus) -> Int {
        switch status {
        case .normal: normal.load(ordering: .relaxed)
        case .concealed: concealed.load(ordering: .relaxed)
        case .silence: silence.load(ordering: .relaxed)
        case .muted: muted.load(ordering: .relaxed)
        }
    }

    /// Frames rendered in all.
    public var totalFrames: Int { FrameStatus.allCases.reduce(0) { $0 + frames($1) } }

    /// Called on the room clock's thread after each frame.
    func record(_ status: FrameStatus) {
        switch status {
        case .normal: normal.add(1, ordering: .relaxed)
        case .concealed: concealed.add(1, ordering: .relaxed)
        case .silence: silence.add(1, ordering: .relaxed)
        case .muted: muted.add(1, ordering: .relaxed)
        }
    }
}
