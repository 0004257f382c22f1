/// Who renders what in a tick: the room's tracks (source tracks first, then derived tracks such as
/// mixes) and, for a room rendering on several threads, the fixed subset of source tracks each
/// render thread owns.
///
/// Made on the control side whenever the tracks change (it allocates there, never on the clock),
/// then taken by the room clock at the start of a tick. Immutable.
///
/// Assignment: source track `i` goes to thread `i % threads` (round-robin by the order tracks
/// were added), so equal tracks give every thread the same load, and a thread's k-th track is
/// track `t + k * threads`. Sources that decode in 20 ms steps (``StaggeredSource``) are told to
/// decode ahead on every other track of a thread, so each thread's decodes fall half on even and
/// half on odd ticks.
final class RenderPlan: Sendable {
    /// Every track: source tracks first, then derived ones, each in the order they were added.
    let tracks: [AudioTrack]
    /// Source tracks (the first `sourceCount` of ``tracks``).
    let sourceCount: Int
    /// Threads rendering the source tracks of a tick (1 ... the pool's threads).
    let threads: Int
    /// The source tracks grouped by thread: thread `t` renders `bySource[bounds[t]..<bounds[t + 1]]`.
    let byThread: [AudioTrack]
    /// `threads + 1` indices into ``byThread``.
    let bounds: [Int]
    /// Each staggered source and whether it decodes a frame ahead under this plan.
    let staggering: [(source: any StaggeredSource, ahead: Bool)]

    /// Plans `tracks` (source tracks first) for `poolThreads` render threads; the room renders on
    /// one thread below `parallelThreshold` source tracks, and never on more threads than tracks.
    init(tracks: [AudioTrack], poolThreads: Int, parallelThreshold: Int) {
        self.tracks = tracks
        let sources = tracks.firstIndex { $0.isDerived } ?? tracks.count
        sourceCount = sources
        let threads = sources >= max(2, parallelThreshold) ? max(1, min(poolThreads, sources)) : 1
        self.threads = threads
        var byThread: [AudioTrack] = []
        var bounds: [Int] = []
        var staggering: [(source: any StaggeredSource, ahead: Bool)] = []
        byThread.reserveCapacity(sources)
        for t in 0..<threads {
            bounds.append(byThread.count)
            var rank = 0
            for i in stride(from: t, to: sources, by: threads) {
                byThread.append(tracks[i])
                if let staggered = tracks[i].source as? any StaggeredSource {
                    staggering.append((staggered, rank % 2 == 1))
                }
                rank += 1
            }
        }
        bounds.append(byThread.count)
        self.byThread = byThread
        self.bounds = bounds
        self.staggering = staggering
    }
}
