/// Who renders what in a tick: the room's tracks (source tracks first, then derived tracks such as
/// mixes) and, for a room rendering on several threads, the fixed subset of source tracks each
/// render thread owns.
///
/// Made on the control side whenever the tracks change (it allocates there, never on the clock),
/// then taken by the room clock at the start of a tick. Immutable.
///
/// Assignment: when no source says how much work it is, source track `i` goes to thread
/// `i % threads` (round-robin by the order tracks were added), so equal tracks give every thread
/// the same load. When some are ``SizedSource``s (files), the tracks are dealt out largest first,
/// each to the thread with the least work so far (a track of unknown size counts as the average
/// known one), so a room of long and short files keeps every thread busy to the end. A thread
/// renders its tracks in the order they were added. Sources that decode in 20 ms steps
/// (``StaggeredSource``) are told to decode ahead on every other track of a thread, so each
/// thread's decodes fall half on even and half on odd ticks.
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
        let shares = Self.shares(of: tracks.prefix(sources), threads: threads)
        var byThread: [AudioTrack] = []
        var bounds: [Int] = []
        var staggering: [(source: any StaggeredSource, ahead: Bool)] = []
        byThread.reserveCapacity(sources)
        for share in shares {
            bounds.append(byThread.count)
            var rank = 0
            for i in share {
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

    /// The indices of `sources` each of `threads` threads renders, each share in increasing order.
    static func shares(of sources: ArraySlice<AudioTrack>, threads: Int) -> [[Int]] {
        let work = sources.map { ($0.source as? any SizedSource)?.renderWork }
        let known = work.compactMap { $0 }
        guard threads > 1, !known.isEmpty else {
            return (0..<threads).map { t in Array(stride(from: t, to: sources.count, by: threads)) }
        }
        let average = max(1, known.reduce(0, +) / Int64(known.count))
        let weights = work.map { max(1, $0 ?? average) }
        var shares = [[Int]](repeating: [], count: threads)
        var loads = [Int64](repeating: 0, count: threads)
        // Largest first (ties in the order added), each to the least loaded thread (ties: lowest).
        for i in weights.indices.sorted(by: { weights[$0] != weights[$1] ? weights[$0] > weights[$1] : $0 < $1 }) {
            let t = loads.indices.min { loads[$0] != loads[$1] ? loads[$0] < loads[$1] : $0 < $1 }!
            shares[t].append(i)
            loads[t] += weights[i]
        }
        return shares.map { $0.sorted() }
    }
}
