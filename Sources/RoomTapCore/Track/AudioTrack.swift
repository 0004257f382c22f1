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
    /// What the track is (a speaker and where from, the mix, the agent's voice or hearing), set
    /// when it was added.
    public let role: TrackRole
    /// The mixer a derived track renders (its inputs are the mix's membership); nil for the others.
    public let mixer: Mixer?
    /// Derived tracks (mixes) render after every source track of the same tick. Their own controls
    /// apply to what is heard of them only (``SinkTap/heard``): neither solo nor a record control
    /// changes their record (`mix.wav` is the mix of the record). The role's ``TrackRole/isDerived``.
    public var isDerived: Bool { role.isDerived }
    /// Mute and volume (Sora's `audioEnabled` and `remoteAudioVolume`), settable from any thread.
    public let controls = TrackControls()
    /// Level and talking, measured on the raw audio (in a room that meters its tracks: see
    /// ``Room/metersTracks``; otherwise it reads as silence).
    public let meter = TrackMeter()
    /// Whether ``meter`` is measured every frame.
    let metered: Bool

    private let sinkList = PublishedSnapshot<[SinkEntry]>([])
    /// State owned by the room clock's thread.
    nonisolated(unsafe) let render: TrackRenderState

    init(
        id: TrackID, name: String, source: any FrameSource, role: TrackRole, mixer: Mixer? = nil,
        timing: RoomTiming = RoomTiming(), metered: Bool = true
    ) {
        self.id = id
        self.metered = metered
        self.name = name
        self.channels = source.channels
        self.source = source
        self.role = role
        self.mixer = mixer
        self.render = TrackRenderState(source: source, timing: timing)
    }

    /// Attaches `sink`; its `onFrame` is called from the next tick on with the track's audio as
    /// `tap` says (by default the track's recording: raw unless a control is scoped to the
    /// recording). Adding a sink that is already attached does nothing. The track keeps a strong
    /// reference until the sink is removed or the track leaves the room. Thread-safe.
    public func addSink(_ sink: any AudioTrackSink, tap: SinkTap = .recorded) {
        sinkList.update { list in
            guard !list.contains(where: { $0.sink === sink }) else { return false }
            list.append(SinkEntry(sink: sink, tap: tap))
            return true
        }
    }

    /// Detaches `sink`; no frame reaches it after the next tick starts. Removing a sink that is not
    /// attached does nothing. Thread-safe.
    public func removeSink(_ sink: any AudioTrackSink) {
        sinkList.update { list in
            guard let i = list.firstIndex(where: { $0.sink === sink }) else { return false }
            list.remove(at: i)
            return true
        }
    }

    /// The sinks now attached, in the order they were added.
    public var sinks: [any AudioTrackSink] { sinkList.value.map(\.sink) }

    /// Detaches every sink. Control side, once the track has left the clock's plan (the clock holds
    /// no sink list of it any more), so the sinks are released here, not on the clock.
    func removeAllSinks() {
        sinkList.update { list in
            list.removeAll()
            return true
        }
        sinkList.releaseRetired()
    }

    /// Sink lists replaced and still kept for the clock (tests).
    var retiredSinkLists: Int { sinkList.retiredCount }

    public var description: String { "\(id) \(name)" }

    /// Renders the frame at `roomSample` (the record, and the live view when it differs; see
    /// ``RoomTiming``), applies the controls (ramped across the frame) and delivers it to the
    /// sinks. `soloActive` says whether any track of the room is soloed. Room clock's thread only;
    /// allocates nothing.
    func renderFrame(at roomSample: Int64, soloActive: Bool) {
        let state = render
        // Never waits on the control side (a busy lock keeps the old list one more tick), never
        // frees the list it replaces (see PublishedSnapshot).
        _ = sinkList.take(into: &state.sinks, generation: &state.sinkGeneration)
        let controlState = TrackControls.decode(controls.packed, soloed: controls.isSoloed)
        // A derived track (a mix) is made of tracks whose controls and solo it already applies:
        // its own controls shape what is heard of it only, and its record is the mix of the record.
        let heardNow = controlState.heardGain(soloActive: soloActive && !isDerived)
        let recordedNow = isDerived ? 1 : controlState.recordedGain
        state.liveHeardGain.advance(to: heardNow)
        if let gains = state.gainDelay {
            let delayed = gains.pass(heard: heardNow, recorded: recordedNow)
            state.recordMixGain.advance(to: delayed.heard * delayed.recorded)
            state.recordedGain.advance(to: delayed.recorded)
        } else {
            state.recordMixGain.advance(to: heardNow * recordedNow)
            state.recordedGain.advance(to: recordedNow)
        }

        let buffer = state.buffer
        let live = state.live
        let status: FrameStatus
        switch state.mode {
        case .single:
            status = source.render(into: buffer.samples, at: roomSample)
        case .dual(let dual):
            status = source.render(into: buffer.samples, at: roomSample)
            live.status = dual.renderLive(into: live.samples, at: roomSample)
        case .delayed(let line):
            live.status = source.render(into: live.samples, at: roomSample)
            status = line.pass(live, to: buffer)
        }
        buffer.roomSample = roomSample
        buffer.status = status
        live.roomSample = roomSample
        // Counted as recorded: a frame silenced off the record (scope record) counts as muted.
        statistics.record(state.recordedGain.isSilent && !status.isZero ? .muted : status)
        if metered {
            meter.measure(
                live.samples, status: live.status, frameIndex: roomSample / Int64(AudioFrame.samplesPerChannel))
        }
        guard !state.sinks.isEmpty else { return }
        var heardReady = false
        var recordedReady = false
        for entry in state.sinks {
            switch entry.tap {
            case .raw:
                entry.sink.onFrame(buffer.frame)
            case .live:
                entry.sink.onFrame(live.frame)
            case .recorded where state.recordedGain.isUnity:
                entry.sink.onFrame(buffer.frame)
            case .heard where state.liveHeardGain.isUnity:
                entry.sink.onFrame(live.frame)
            case .recorded:
                if !recordedReady {
                    state.recorded.fill(from: buffer, ramp: state.recordedGain)
                    recordedReady = true
                }
                entry.sink.onFrame(state.recorded.frame)
            case .heard:
                if !heardReady {
                    state.heard.fill(from: live, ramp: state.liveHeardGain)
                    heardReady = true
                }
                entry.sink.onFrame(state.heard.frame)
            }
        }
    }
}

/// A sink attached to a track, with the view of the track's audio it gets.
struct SinkEntry {
    let sink: any AudioTrackSink
    let tap: SinkTap
}

/// A gain that moves linearly across one frame from its previous value to a new target.
/// Room clock's thread.
struct GainRamp {
    /// Gain at the start of the frame (the previous frame's end).
    private(set) var start: Float = 1
    /// Gain at the end of the frame.
    private(set) var end: Float = 1

    private var primed = false

    /// Starts the next frame's ramp toward `target`. The first frame starts at its target: a
    /// track muted before it plays is silent from its first sample, not faded out.
    mutating func advance(to target: Float) {
        start = primed ? end : target
        end = target
        primed = true
    }

    /// True when the frame passes through unchanged.
    var isUnity: Bool { start == 1 && end == 1 }
    /// True when the frame is silent throughout.
    var isSilent: Bool { start == 0 && end == 0 }

    /// The gain of sample frame `n` (0..<480): reaches `end` on the last sample.
    @inline(__always) func gain(at n: Int) -> Float {
        start + (end - start) * Float(n + 1) / Float(AudioFrame.samplesPerChannel)
    }
}

extension AudioTrack {
    /// What a mix reads of this track this tick: the frame (live, or the record's) and the gain it
    /// is mixed with (what is heard now, or heard times recorded on the record's time). The one
    /// view a mixer has of another track's render state, whose other parts stay the track's own.
    struct MixView {
        let frame: FrameBuffer
        let gain: GainRamp
    }

    /// This tick's ``MixView`` of the live audio (`live`) or of the record. The room clock's
    /// thread (or the render thread of the mix), after this track rendered the tick: the room
    /// renders a mix's inputs before the mix. Allocates nothing.
    @inline(__always)
    func mixView(live: Bool) -> MixView {
        live
            ? MixView(frame: render.live, gain: render.liveHeardGain)
            : MixView(frame: render.buffer, gain: render.recordMixGain)
    }
}

extension FrameBuffer {
    /// Copies `source` through `ramp`, saturating at full scale; a frame silenced by the ramp is
    /// marked `.muted`. Allocates nothing.
    func fill(from source: FrameBuffer, ramp: GainRamp) {
        roomSample = source.roomSample
        if source.status.isZero || ramp.isSilent {
            samples.update(repeating: 0)
            status = source.status.isZero ? source.status : .muted
            return
        }
        status = source.status
        let channels = source.channels
        let src = source.samples
        for i in 0..<src.count {
            let v = Float(src[i]) * ramp.gain(at: i / channels)
            samples[i] = Int16(max(-32768, min(32767, v.rounded())))
        }
    }
}

/// The part of a track that only the room clock's thread touches: the render buffer holding this
/// tick's record frame (read by record mixes after the track renders), the live frame (read by
/// live mixes; the same buffer when the live view is the record), the frames after the controls,
/// the gain ramps (record and live) and the snapshot of the sink list.
final class TrackRenderState {
    /// How the live view and the record of a track are made.
    enum Mode {
        /// One render: the live view is the record.
        case single
        /// The source renders both (``LivePlayoutSource``).
        case dual(any LivePlayoutSource)
        /// The source renders live; the record is that, ``RoomTiming/recordDelayFrames`` later.
        case delayed(FrameDelayLine)
    }

    let mode: Mode
    /// The record frame of this tick.
    let buffer: FrameBuffer
    /// The live frame of this tick (`buffer` itself in ``Mode/single``).
    let live: FrameBuffer
    let heard: FrameBuffer
    let recorded: FrameBuffer
    // Touched every frame by the one thread rendering the track: exclusivity is not checked at
    // run time (`@exclusivity(unchecked)`, see docs/notes/offline-path.md).
    /// What is heard times what is recorded, on the record's time (mixes of the record use it: a
    /// track off the record is not in the recorded mix either).
    @exclusivity(unchecked) var recordMixGain = GainRamp()
    @exclusivity(unchecked) var recordedGain = GainRamp()
    /// What is heard now (`.heard` taps and live mixes).
    @exclusivity(unchecked) var liveHeardGain = GainRamp()
    /// Carries control changes to the record's time; nil when the record is the live audio.
    let gainDelay: GainDelayLine?
    @exclusivity(unchecked) var sinks: [SinkEntry] = []
    @exclusivity(unchecked) var sinkGeneration: UInt64 = 0
    /// Chunked rendering (``ChunkedRender``): the next tick this track renders, and whether a
    /// render thread holds the track (taking it is the happens-before edge from the thread that
    /// rendered its previous chunk).
    @exclusivity(unchecked) var nextTick: Int64 = 0
    let claimed = Atomic<Bool>(false)

    init(source: any FrameSource, timing: RoomTiming) {
        let channels = source.channels
        buffer = FrameBuffer(channels: channels)
        heard = FrameBuffer(channels: channels)
        recorded = FrameBuffer(channels: channels)
        if let dual = source as? any LivePlayoutSource {
            mode = timing.livePlayout && dual.hasLivePlayout ? .dual(dual) : .single
        } else if timing.recordDelayFrames > 0 {
            mode = .delayed(FrameDelayLine(delay: timing.recordDelayFrames, channels: channels))
        } else {
            mode = .single
        }
        if case .single = mode { live = buffer } else { live = FrameBuffer(channels: channels) }
        gainDelay = timing.recordDelayFrames > 0 ? GainDelayLine(delay: timing.recordDelayFrames) : nil
    }
}
