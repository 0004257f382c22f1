import Foundation
import RoomTapCore
import RoomTapSync
import Synchronization

/// An OpenAI Realtime voice agent in the room: hears a track (through ``listenSink``), speaks a
/// track (``voice``), writes what was said to the transcript, and survives its connection, hour
/// after hour.
///
/// Attach with ``attach(to:hearing:voiceName:hearsName:)`` (the voice track, a mix-minus of the
/// humans it hears with ``listenSink`` on it, a ``speakers`` sink on every human track), then
/// ``start()``; ``stop()`` at the end. The room never waits for the agent: with no connection the
/// voice track renders silence and the heard audio is dropped. The agent paces nothing itself:
/// run the room on a ``RealTimeClock`` (a virtual clock would outrun the conversation).
///
/// Its parts, each a value under one lock that decides, with every send, log line, transcript
/// write and voice flush done after the lock is released (``AgentAction``):
/// - the connection lifecycle (`RealtimeAgent+Connection.swift`): connect, back off, stop on what
///   will not heal, replace a session before it expires (a rollover, make-before-break);
/// - responses and barge-in (``ResponseTurns``, `RealtimeAgent+Events.swift`): with
///   `interrupt_response` on (the default) the server cancels its reply when someone talks; the
///   agent flushes the voice track (silent from the next frame) and truncates the item at what was
///   played, and sends `response.cancel` only when server-side interruption is off;
/// - the session clock (``SessionClock``): the server's input offsets back to room samples;
/// - transcript attribution (``TranscriptAttribution``, ``SpeakerActivity``).
///
/// Threads: a supervisor thread (`roomtap.agent`) connects, reconnects, rolls sessions over and
/// writes agent transcript lines as their audio plays out; the WebSocket client's thread of each
/// connection decodes its server events (it pushes reply audio into the voice track); the listen
/// sink's thread resamples and sends heard audio. Public members are safe from any thread except
/// the room clock's. Log lines carry no prefix (the CLI adds its own).
public final class RealtimeAgent: @unchecked Sendable {
    /// The configuration given.
    public let configuration: RealtimeAgentConfiguration
    /// The agent's track source (48 kHz mono).
    public let voice: AgentVoiceSource
    /// The sink to attach to the track the agent hears.
    public let listenSink: AgentListenSink
    /// Who talks when, for transcript attribution (``hear(_:)`` attaches its sinks).
    public let speakers: SpeakerActivity

    struct State {
        var settings: RealtimeSessionSettings
        var status = RealtimeAgentState.idle
        var failure: String?
        var lastError: String?
        var sessionWarning: String?
        var started = false
        var stopRequested = false
        var fatal = false
        /// The session in use and its generation (events of other generations are stale).
        var connection: RealtimeConnection?
        var generation = 0
        var lastGeneration = 0
        /// While `connect` blocks, so `stop` can cancel it.
        var connecting: RealtimeConnection?
        /// A rollover's next session, opened but not yet in use.
        var incoming: (generation: Int, connection: RealtimeConnection)?
        var incomingReady = false
        var incomingExpiresAt: Int?
        /// The `expires_at` of the session being opened, when its greeting came before it was taken up.
        var openingExpiresAt: Int?
        /// The session being retired by a rollover: its late transcriptions still count.
        var previous: (generation: Int, clock: SessionClock)?
        /// The server said the session ends now (`session_expired`).
        var rollNow = false
        /// When to look for a quiet moment to replace the session.
        var rolloverAt: ContinuousClock.Instant?
        /// When the session in use opened (or was moved to), and its life from then to its
        /// `expires_at` when the server gave one.
        var sessionOpenedAt = ContinuousClock.now
        var sessionLife: Duration?
        var clock = SessionClock()
        var turns = ResponseTurns()
        var transcript: TranscriptAttribution
        /// Voice ring position where the current reply audio run began, and 24 kHz samples since.
        var voiceBase: Int64 = 0
        var voiceInput: Int64 = 0
        /// `event_id`s of the `session.update`s sent (to tell their errors apart).
        var sessionUpdateIDs: [String] = []
        /// The `call_id`s of function calls taken up (a call is seen in several events).
        var handledCalls: Set<String> = []
        /// The mix-minus track the agent hears, once `attach(to:hearing:...)` made it.
        var hearing: AudioTrack?
        /// A transcription session without server turn detection: the room spans of the turns
        /// committed and not yet acknowledged (`input_audio_buffer.committed`), oldest first.
        var pendingCommits: [(start: Int64, end: Int64)] = []

        /// A session is being opened (its upgrade, or a rollover's set-up until it is ready).
        var opening = false

        var isConnected: Bool { status == .connected && connection != nil }
    }

    // Atomics before the mutex: an Atomic<Bool> declared right after `state` overwrote the end of
    // `State` in release builds (docs/ARCHITECTURE.md, "Stored-property order").
    private let listening: Atomic<Bool>
    let connected = Atomic<Bool>(false)
    private let eventCounter = Atomic<Int>(0)
    let audioBytes = Atomic<Int>(0)
    let audioChunks = Atomic<Int>(0)
    let responses = Atomic<Int>(0)
    let responsesDone = Atomic<Int>(0)
    let bargeIns = Atomic<Int>(0)
    let reconnects = Atomic<Int>(0)
    let rollovers = Atomic<Int>(0)
    let sessionsOpened = Atomic<Int>(0)
    let retries = Atomic<Int>(0)
    let errors = Atomic<Int>(0)
    let transcriptionFailures = Atomic<Int>(0)
    let textReplies = Atomic<Int>(0)
    let toolCalls = Atomic<Int>(0)
    let toolErrors = Atomic<Int>(0)
    let state: Locked<State>
    /// Runs tools off the session's threads, side by side (a slow user tool holds up no other).
    let toolQueue = DispatchQueue(label: "roomtap.agent.tools", attributes: .concurrent)
    let upsampler: Resampler  // under `state`'s lock
    let wake = DispatchSemaphore(value: 0)
    let finished = DispatchSemaphore(value: 0)

    /// Creates the agent (no connection yet). Throws only if libsoxr cannot be set up.
    public init(configuration: RealtimeAgentConfiguration) throws {
        self.configuration = configuration
        voice = AgentVoiceSource(seconds: configuration.voiceBufferSeconds)
        speakers = SpeakerActivity()
        upsampler = try Resampler(inputRate: 24_000, outputRate: 48_000, maxInputSamples: 4_800)
        state = Locked(
            State(
                settings: configuration.session,
                transcript: TranscriptAttribution(contextLines: configuration.contextLines)))
        listening = Atomic(configuration.listening)
        let box = WeakInput()
        listenSink = try AgentListenSink(
            input: box, chunkMilliseconds: configuration.chunkMilliseconds, gate: configuration.gate)
        box.target = self
    }

    // MARK: - Control

    /// Starts connecting on the agent's thread. Returns at once; failures are logged and reported
    /// in ``statistics``. With no API key: one error line and the agent stays off. Idempotent.
    public func start() {
        let first = state.withLock { s -> Bool in
            defer { s.started = true }
            return !s.started
        }
        guard first else { return }
        guard !configuration.apiKey.isEmpty else {
            fail("no API key: set \(configuration.keyName) to use the agent; the room records without it")
            finished.signal()
            return
        }
        RoomThread.start("roomtap.agent") { [self] in
            supervise()
            finished.signal()
        }
    }

    /// Ends the session (close 1000), the listen thread and the supervisor, and writes the agent's
    /// last transcript lines. Blocks until done. Idempotent. The voice track keeps playing what is
    /// queued.
    public func stop() {
        let (wasStarted, connections) = state.withLock { s -> (Bool, [RealtimeConnection]) in
            s.stopRequested = true
            return (s.started, [s.connection, s.connecting, s.incoming?.connection].compactMap { $0 })
        }
        for c in connections { c.close(code: 1000) }
        wake.signal()
        if wasStarted {
            finished.wait()
            finished.signal()
        }
        listenSink.close()
        let lines = state.withLock { s -> [AgentAction] in
            s.status = s.failure == nil ? .stopped : .failed
            return agentLines(&s, final: true)
        }
        perform(lines)
    }

    /// Sends `text` as a user message and asks for a spoken answer when it is the agent's turn:
    /// queued while a response is in progress, while someone talks, or while connecting.
    public func say(_ text: String) {
        guard configuration.transcription == nil else { return }  // a transcription session never answers
        perform(
            state.withLock { s -> [AgentAction] in
                s.turns.queue(text)
                return releaseSay(&s)
            })
    }

    /// Changes the instructions now (`session.update` with only the instructions; an empty text
    /// clears them) and for later sessions.
    public func setInstructions(_ text: String) {
        guard configuration.transcription == nil else { return }
        perform(
            state.withLock { s -> [AgentAction] in
                s.settings.instructions = text
                guard let c = s.connection else { return [] }
                return [.send(RealtimeClientEvent.updateInstructions(text).json(eventID: sessionUpdateID(&s)), on: c)]
            })
    }

    /// Stops (false) or resumes (true) sending what the agent hears, keeping the session. Stopped
    /// while someone talks, the server would wait for the end of a turn that never comes (and hold
    /// every `say`): the input buffer is cleared (`input_audio_buffer.clear`) and the turn ends.
    public func setListening(_ on: Bool) {
        listening.store(on, ordering: .releasing)
        guard !on else { return }
        perform(
            state.withLock { s -> [AgentAction] in
                guard let c = s.connection, s.isConnected, s.turns.humanTalking else { return [] }
                s.turns.speechStopped()
                return [.send(RealtimeClientEvent.clearAudio.json(eventID: nextEventID()), on: c)] + releaseSay(&s)
            })
    }

    /// True while heard audio is sent.
    public var isListening: Bool { listening.load(ordering: .acquiring) }

    /// The mix-minus track the agent hears, once ``attach(to:hearing:voiceName:hearsName:)`` made
    /// it. Any thread.
    var hearingTrack: AudioTrack? {
        get { state.withLock { $0.hearing } }
        set { state.withLock { $0.hearing = newValue } }
    }

    /// A session is being opened: an upgrade in flight, or a rollover's new session not yet
    /// set up. A virtual-time driver (``ManualAgentClock``) holds time still meanwhile, as the
    /// wall clock barely moves while it happens. Any thread.
    package var isOpeningSession: Bool { state.withLock { $0.opening } }

    /// A snapshot of the state and counters.
    public var statistics: RealtimeAgentStatistics {
        let (status, failure, lastError, warning, saysWaiting, humanTalking) = state.withLock {
            ($0.status, $0.failure, $0.lastError, $0.sessionWarning, $0.turns.waiting, $0.turns.humanTalking)
        }
        var statistics = RealtimeAgentStatistics(
            state: status, failure: failure, lastError: lastError, retries: retries.load(ordering: .relaxed),
            sessionWarning: warning, audioBytesSent: audioBytes.load(ordering: .relaxed),
            audioChunksSent: audioChunks.load(ordering: .relaxed), responses: responses.load(ordering: .relaxed),
            responsesDone: responsesDone.load(ordering: .relaxed), saysWaiting: saysWaiting, humanTalking: humanTalking,
            bargeIns: bargeIns.load(ordering: .relaxed), reconnects: reconnects.load(ordering: .relaxed),
            rollovers: rollovers.load(ordering: .relaxed), errors: errors.load(ordering: .relaxed),
            transcriptionFailures: transcriptionFailures.load(ordering: .relaxed),
            textReplies: textReplies.load(ordering: .relaxed), toolCalls: toolCalls.load(ordering: .relaxed),
            toolErrors: toolErrors.load(ordering: .relaxed), voiceSamples: voice.writePosition,
            voiceOverflowSamples: voice.overflowSamples, listenDroppedFrames: listenSink.droppedFrames)
        statistics.sessions = sessionsOpened.load(ordering: .relaxed)
        return statistics
    }

    // MARK: - Heard audio (listen thread)

    var wantsAudio: Bool { listening.load(ordering: .acquiring) && connected.load(ordering: .acquiring) }

    func appendAudio(_ chunk: UnsafeBufferPointer<Int16>, roomSample: Int64) {
        let connection = state.withLock { s -> RealtimeConnection? in
            guard let c = s.connection, s.isConnected else { return nil }
            s.clock.appended(count: chunk.count, roomSample: roomSample)
            return c
        }
        guard let connection else { return }
        if connection.send(RealtimeClientEvent.appendAudio(chunk, eventID: nextEventID())) {
            audioBytes.add(chunk.count * 2, ordering: .relaxed)
            audioChunks.add(1, ordering: .relaxed)
        }
    }

    // MARK: - Shared steps

    /// A fresh client `event_id` (`rt_N`).
    func nextEventID() -> String { "rt_\(eventCounter.add(1, ordering: .relaxed).newValue)" }

    /// A fresh `event_id` for a `session.update`, remembered to tell its errors apart.
    func sessionUpdateID(_ s: inout State) -> String {
        let id = nextEventID()
        s.sessionUpdateIDs.append(id)
        if s.sessionUpdateIDs.count > 16 { s.sessionUpdateIDs.removeFirst() }
        return id
    }

    /// Sends the next `say` if it is its turn on a connected session (not while a rollover moves
    /// to a new one: it goes to the new session).
    func releaseSay(_ s: inout State) -> [AgentAction] {
        guard let c = s.connection, s.isConnected, s.incoming == nil, let say = s.turns.nextSay() else { return [] }
        var actions: [AgentAction] = []
        if !say.itemCreated {
            actions.append(.send(RealtimeClientEvent.userMessage(say.text).json(eventID: nextEventID()), on: c))
        }
        let create = nextEventID()
        actions.append(.send(RealtimeClientEvent.responseCreate.json(eventID: create), on: c))
        s.turns.sent(say, createEventID: create)
        return actions
    }

    /// The agent transcript lines now due (decided; written by ``perform(_:)``).
    func agentLines(_ s: inout State, final: Bool) -> [AgentAction] {
        let voice = voice
        return s.transcript.agentLines(played: voice.playPosition, final: final) { voice.roomSample(atPosition: $0) }
            .map(AgentAction.transcript)
    }

    /// Does what was decided (never under the lock).
    func perform(_ actions: [AgentAction]) {
        for action in actions {
            switch action {
            case .send(let text, let c): _ = c.send(text)
            case .log(let line): configuration.log(line)
            case .transcript(let line):
                configuration.transcript?.write(
                    startSample: line.start, endSample: line.end, speaker: line.speaker, text: line.text,
                    interrupted: line.interrupted, onRecordTimeline: line.onRecordTimeline)
            case .close(let c): c.close(code: 1000)
            case .runTool(let call, let generation): runTool(call, generation: generation)
            }
        }
    }

    /// Ends the agent for good: one line, `failed`, no more retries.
    func fail(_ message: String) {
        let connection = state.withLock { s -> RealtimeConnection? in
            s.failure = message
            s.lastError = message
            s.status = .failed
            s.fatal = true
            return s.connection
        }
        configuration.log(message)
        connection?.close(code: 1000)
        wake.signal()
    }
}

/// Breaks the cycle agent → listen sink → consumer → agent.
private final class WeakInput: AgentAudioInput, @unchecked Sendable {
    weak var target: RealtimeAgent?
    var wantsAudio: Bool { target?.wantsAudio ?? false }
    func appendAudio(_ chunk: UnsafeBufferPointer<Int16>, roomSample: Int64) {
        target?.appendAudio(chunk, roomSample: roomSample)
    }
    func endOfTurn() {
        guard let target else { return }
        target.endOfTurn(trailingSilence: Int64(target.configuration.gate?.hangoverMilliseconds ?? 0) * 48)
    }
}
