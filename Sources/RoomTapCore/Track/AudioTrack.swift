import Synchronization

/// One participant's audio in the room (or a derived stream such as a mix), with its sinks.
///
/// A track is created by ``Room/addTrack(name:source:)`` (or ``Room/addMix(name:inputs:channels:)``),
/// pulls one frame per tick from its ``FrameSource`` and hands it to every attached sink.
///
/// Thread: `addSink`, `removeSink`, `sinks` and the statistics are safe from any thread except the
/// room clock's (they may take a short lock that the clock never waits on). A sink change takes
/// effect at the next tick.
public final class AudioTrack: Sendable, CustomStringConvertible {
    /// Identity within the room.
    public let id: TrackID
    /// The name given when the track was added (not sanitised).
    public let name: String
    /// Channels of this track's frames.
    public let channels: Int
    /// Frame counts by status.
    public let statistics = TrackStatistics()
    /// What the track renders from.
    public let source: any FrameSource
    /// Derived tracks (mixes) render after every source track of the same tick.
    public let isDerived: Bool

    private let sinkList = Mutex<[any AudioTrackSink]>([])
    private let sinkGeneration = Atomic<UInt64>(0)
    /// State owned by the room clock's thread.
    nonisolated(unsafe) let render: TrackRenderState

    init(id: TrackID, name: String, source: any FrameSource, isDerived: Bool) {
        self.id = id
        self.name = name
        self.channels = source.channels
        self.source = source
        self.isDerived = isDerived
        self.render = TrackRenderState(channels: source.channels)
    }

    /// Attaches `sink`; its `onFrame` is called from the next tick on. Adding a sink that is already
    /// attached does nothing. The track keeps a strong reference until the sink is removed or the
    /// track leaves the room. Thread-safe.
    public func addSink(_ sink: any AudioTrackSink) {
        sinkList.withLock { list in
            guard !list.contains(where: { $0 === sink }) else { return }
            list.append(sink)
            sinkGeneration.add(1, ordering: .releasing)
        }
    }

    /// Detaches `sink`; no frame reaches it after the next tick starts. Removing a sink that is not
    /// attached does nothing. Thread-safe.
    public func removeSink(_ sink: any AudioTrackSink) {
        sinkList.withLock { list in
            guard let i = list.firstIndex(where: { $0 === sink }) else { return }
            list.remove(at: i)
            sinkGeneration.add(1, ordering: .releasing)
        }
    }

    /// The sinks now attached, in the order they were added.
    public var sinks: [any AudioTrackSink] { sinkList.withLock { $0 } }

    func removeAllSinks() {
        sinkList.withLock { list in
            list.removeAll()
            sinkGeneration.add(1, ordering: .releasing)
        }
    }

    public var description: String { "\(id) \(name)" }

    /// Renders the frame at `roomSample` and delivers it to the sinks. Room clock's thread only.
    func renderFrame(at roomSample: Int64) {
        let state = render
        let generation = sinkGeneration.load(ordering: .acquiring)
        if generation != state.sinkGeneration {
            // Never wait on the control side: if the lock is busy, keep the old list one more tick.
            if let list = sinkList.withLockIfAvailable({ $0 }) {
                state.sinks = list
                state.sinkGeneration = generation
            }
        }
        let buffer = state.buffer
        let status = source.render(into: buffer.samples, at: roomSample)
        buffer.roomSample = roomSample
        buffer.status = status
        statistics.record(status)
        let frame = buffer.frame
        for sink in state.sinks { sink.onFrame(frame) }
    }
}

/// The part of a track that only the room clock's thread touches: the render buffer holding this
/// tick's frame (read by mixers after the track renders) and the snapshot of the sink list.
final class TrackRenderState {
    let buffer: FrameBuffer
    var sinks: [any AudioTrackSink] = []
    var sinkGeneration: UInt64 = 0

    init(channels: Int) { buffer = FrameBuffer(channels: channels) }
}
