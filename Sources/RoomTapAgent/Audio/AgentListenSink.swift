public import RoomTapCore
import Synchronization

/// Where an ``AgentListenSink`` hands its 24 kHz chunks (the agent's session, or a benchmark).
///
/// Thread: both members are called on the listen sink's own thread, never the room clock's.
public protocol AgentAudioInput: AnyObject, Sendable {
    /// False while nobody wants the audio (not listening, no session): frames are dropped unheard
    /// and the converter restarts when audio is wanted again. Asked once per frame.
    var wantsAudio: Bool { get }
    /// One chunk of 24 kHz mono PCM whose first sample is at room sample `roomSample` (48 kHz).
    /// The samples are valid only during the call.
    func appendAudio(_ chunk: UnsafeBufferPointer<Int16>, roomSample: Int64)
    /// The ``VoiceGate`` closed: the speaker's turn ended (its last chunk was handed over).
    func endOfTurn()
}

extension AgentAudioInput {
    /// Nothing to do at the end of a turn by default.
    public func endOfTurn() {}
}

/// What the agent hears: attach it to the mix-minus track of the humans it listens to.
///
/// `onFrame` (room clock's thread) only copies the frame into a bounded queue (a ``QueuedSink``
/// that drops and counts when full); the sink's own thread resamples 48 → 24 kHz with libsoxr and
/// hands chunks of ``chunkMilliseconds`` to the session, each with the room sample of its first
/// sample (the session maps the server's `audio_start_ms`/`audio_end_ms` onto room time with it).
/// A gap in the frames (queue overflow, listening paused) restarts the converter and is reported
/// as a discontinuity through the chunk's room sample. With a ``VoiceGate`` (a transcription
/// session's sink) only voiced audio, with its pre-roll and hangover, is converted and sent.
///
/// Thread: `onFrame` on the room clock's thread; `close` and the counters from any other thread.
public final class AgentListenSink: AudioTrackSink, @unchecked Sendable {
    /// Chunk length handed to the session, in milliseconds (20–100).
    public let chunkMilliseconds: Int
    private let queued: QueuedSink
    private let counters: ListenCounters

    /// A sink handing chunks of `chunkMilliseconds` (clamped to 20–100) to `input`, with a queue of
    /// `capacityFrames` 10 ms frames; with `gate`, only what the gate lets through. Throws only if
    /// libsoxr cannot be set up.
    public init(
        input: any AgentAudioInput, chunkMilliseconds: Int = 40, capacityFrames: Int = 256,
        gate: VoiceGate.Settings? = nil
    ) throws {
        let ms = max(20, min(100, chunkMilliseconds))
        self.chunkMilliseconds = ms
        let counters = ListenCounters()
        self.counters = counters
        let consumer = try ListenConsumer(
            input: input, chunkSamples: ms * 24, gate: gate.map { VoiceGate(settings: $0) }, counters: counters)
        queued = QueuedSink(
            consumer: consumer, channels: 1, capacity: capacityFrames, wakeThreshold: 1, policy: .drop,
            threadName: "roomtap.agent.listen")
    }

    public func onFrame(_ frame: AudioFrame) { queued.onFrame(frame) }

    /// Frames dropped because the queue was full (or after `close`).
    public var droppedFrames: Int { queued.droppedFrames }
    /// Frames taken by the listen thread.
    public var consumedFrames: Int { queued.consumedFrames }
    /// Frames handed on to be sent (all that were wanted, or what the gate let through).
    public var passedFrames: Int { counters.passed.load(ordering: .relaxed) }
    /// Frames the gate held back (silence; never sent).
    public var gatedFrames: Int { counters.gated.load(ordering: .relaxed) }

    /// Ends the listen thread (what is queued is still handed over). Idempotent; any thread but the
    /// room clock's.
    public func close() { try? queued.close() }
}

/// What the listen thread counts, read from any thread.
final class ListenCounters: Sendable {
    let passed = Atomic<Int>(0)
    let gated = Atomic<Int>(0)
}

/// The listen sink's thread: gate, resample, chunk, hand over.
final class ListenConsumer: FrameConsumer {
    private let input: any AgentAudioInput
    private var gate: VoiceGate?
    private let counters: ListenCounters
    private let resampler: Resampler
    private let chunk: UnsafeMutableBufferPointer<Int16>
    private var filled = 0
    private var chunkRoomSample: Int64 = 0
    /// Room sample of output sample 0 of the current continuous segment.
    private var segmentRoomSample: Int64 = 0
    /// Output samples produced in the current segment.
    private var segmentOutput: Int64 = 0
    private var expectedRoomSample: Int64 = -1

    init(input: any AgentAudioInput, chunkSamples: Int, gate: VoiceGate? = nil, counters: ListenCounters) throws {
        self.input = input
        self.gate = gate
        self.counters = counters
        resampler = try Resampler(
            inputRate: 48_000, outputRate: 24_000, maxInputSamples: AudioFrame.samplesPerChannel, lowLatency: true)
        chunk = .allocate(capacity: chunkSamples)
        chunk.initialize(repeating: 0)
    }

    deinit { chunk.deallocate() }

    func consume(_ frame: AudioFrame) throws {
        guard input.wantsAudio else {
            sendPartial()
            expectedRoomSample = -1
            gate?.reset()
            return
        }
        guard gate != nil else {
            pass(frame)
            return
        }
        let before = counters.passed.load(ordering: .relaxed)
        let closed = gate!.admit(frame) { pass($0) }
        if counters.passed.load(ordering: .relaxed) == before { counters.gated.add(1, ordering: .relaxed) }
        if closed {
            sendPartial()  // the turn's last audio goes now, not at the next word
            input.endOfTurn()
        }
    }

    /// One frame on to the converter and the chunks.
    private func pass(_ frame: AudioFrame) {
        counters.passed.add(1, ordering: .relaxed)
        if frame.roomSample != expectedRoomSample {
            sendPartial()
            resampler.reset()
            segmentRoomSample = frame.roomSample
            segmentOutput = 0
        }
        expectedRoomSample = frame.roomSample + Int64(AudioFrame.samplesPerChannel)
        let out = resampler.process(frame.samples)
        for sample in out {
            if filled == 0 { chunkRoomSample = segmentRoomSample + 2 * segmentOutput }
            chunk[filled] = sample
            filled += 1
            segmentOutput += 1
            if filled == chunk.count { sendPartial() }
        }
    }

    private func sendPartial() {
        guard filled > 0 else { return }
        input.appendAudio(UnsafeBufferPointer(rebasing: chunk[0..<filled]), roomSample: chunkRoomSample)
        filled = 0
    }

    func drained() throws {}

    func finish() throws { sendPartial() }
}
