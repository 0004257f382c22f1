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
/// It is the shell of a pure reducer, ``AgentSession`` (the connection lifecycle, responses and
/// barge-in, the session clock, transcript attribution): every input (a server event, a chunk of
/// heard audio, an upgrade's outcome, a close, a tool's result, a deadline, a `say`, `stop`) is
/// fed to it under one lock with the time and the voice track's positions read just before; the
/// ``AgentAction``s it returns (sends, log and transcript lines, closes, tools, the voice's writes)
/// are done after the lock is released. Nothing polls: the supervisor sleeps until the reducer's
/// ``AgentSession/nextDeadline`` or until an input moved it earlier.
///
/// Threads: a supervisor thread (`roomtap.agent`) opens connections (the upgrade blocks) and acts
/// on deadlines (backoff, rollover, agent transcript lines as their audio plays out); the WebSocket
/// client's thread of each connection feeds its server events and performs what they decide (it
/// resamples reply audio into the voice track under the voice's own lock, never the session's);
/// the listen sink's thread resamples and sends heard audio. Public members are safe from any
/// thread except the room clock's. Log lines carry no prefix (the CLI adds its own).
public final class RealtimeAgent: @unchecked Sendable {
    /// The configuration given.
    public let configuration: RealtimeAgentConfiguration
    /// The agent's track source (48 kHz mono).
    public let voice: AgentVoiceSource
    /// The sink to attach to the track the agent hears.
    public let listenSink: AgentListenSink
    /// Who talks when, for transcript attribution (``hear(_:)`` attaches its sinks).
    public let speakers: SpeakerActivity

    /// What the session lock guards: the reducer, the connection of each generation it named,
    /// and the mix-minus track.
    struct Shell {
        var session: AgentSession
        var links: [Int: Link] = [:]
        var hearing: AudioTrack?
        /// The clock is held while a session is being opened (``AgentClock/hold(_:by:)``).
        var holding = false
        /// ``finishTranscription(timeout:)`` waits for inputs (`inputs` is signalled after each).
        var finishing = false
    }

    /// One connection and its close.
    struct Link {
        let connection: RealtimeConnection
        let life: ConnectionLife
    }

    // Atomics before the mutex: an Atomic<Bool> declared right after `state` overwrote the end of
    // `State` in release builds (docs/ARCHITECTURE.md, "Stored-property order").
    private let listening: Atomic<Bool>
    private let started = Atomic<Bool>(false)
    /// Mirrors ``AgentSession/isConnected`` for the listen thread's per-frame question.
    let connected = Atomic<Bool>(false)
    /// What the sends of heard audio achieved (the reducer decides them, the socket takes them).
    let audioBytes = Atomic<Int>(0)
    let audioChunks = Atomic<Int>(0)
    let state: Locked<Shell>
    /// The voice track's one writer at a time: reply audio resampled 24 → 48 kHz and queued, the
    /// end of a run, the barge-in flush. Never taken with `state` held, and `state` is never held
    /// while it is: resampling holds up no session input.
    let voiceWriter: Locked<Resampler>
    /// Runs tools off the session's threads, side by side (a slow user tool holds up no other).
    let toolQueue = DispatchQueue(label: "roomtap.agent.tools", attributes: .concurrent)
    let wake = DispatchSemaphore(value: 0)
    let finished = DispatchSemaphore(value: 0)
    /// Signalled after each input while ``finishTranscription(timeout:)`` waits.
    let inputs = DispatchSemaphore(value: 0)

    /// Creates the agent (no connection yet). Throws only if libsoxr cannot be set up.
    public init(configuration: RealtimeAgentConfiguration) throws {
        self.configuration = configuration
        voice = AgentVoiceSource(seconds: configuration.voiceBufferSeconds)
        let speakers = SpeakerActivity()
        self.speakers = speakers
        voiceWriter = Locked(try Resampler(inputRate: 24_000, outputRate: 48_000, maxInputSamples: 4_800))
        state = Locked(
            Shell(
                session: AgentSession(
                    configuration: configuration,
                    speakersBetween: { speakers.speakers(from: $0, to: $1) })))
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
        guard started.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
        else { return }
        feed(.start)
        guard !configuration.apiKey.isEmpty else {
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
        feed(.stop)
        configuration.clock.wake(wake)
        if started.load(ordering: .acquiring) {
            finished.wait()
            finished.signal()
        }
        listenSink.close()
        feed(.finish)
    }

    /// Sends `text` as a user message and asks for a spoken answer when it is the agent's turn:
    /// queued while a response is in progress, while someone talks, or while connecting.
    public func say(_ text: String) { feed(.say(text)) }

    /// Changes the instructions now (`session.update` with only the instructions; an empty text
    /// clears them) and for later sessions.
    public func setInstructions(_ text: String) { feed(.setInstructions(text)) }

    /// Stops (false) or resumes (true) sending what the agent hears, keeping the session. Stopped
    /// while someone talks, the server would wait for the end of a turn that never comes (and hold
    /// every `say`): the input buffer is cleared (`input_audio_buffer.clear`) and the turn ends.
    public func setListening(_ on: Bool) {
        listening.store(on, ordering: .releasing)
        if !on { feed(.stopListening) }
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
    package var isOpeningSession: Bool { state.withLock { $0.session.isOpeningSession } }

    /// A snapshot of the state and counters.
    public var statistics: RealtimeAgentStatistics {
        let (s, c) = state.withLock { ($0.session, $0.session.counts) }
        var statistics = RealtimeAgentStatistics(
            state: s.status, failure: s.failure, lastError: s.lastError, retries: c.retries,
            sessionWarning: s.sessionWarning, audioBytesSent: audioBytes.load(ordering: .relaxed),
            audioChunksSent: audioChunks.load(ordering: .relaxed), responses: c.responses,
            responsesDone: c.responsesDone, saysWaiting: s.turns.waiting, humanTalking: s.turns.humanTalking,
            bargeIns: c.bargeIns, reconnects: c.reconnects, rollovers: c.rollovers, errors: c.errors,
            transcriptionFailures: c.transcriptionFailures, textReplies: c.textReplies, toolCalls: c.toolCalls,
            toolErrors: c.toolErrors, voiceSamples: voice.writePosition,
            voiceOverflowSamples: voice.overflowSamples, listenDroppedFrames: listenSink.droppedFrames)
        statistics.sessions = c.sessionsOpened
        return statistics
    }

    // MARK: - Heard audio (listen thread)

    var wantsAudio: Bool { listening.load(ordering: .acquiring) && connected.load(ordering: .acquiring) }

    func appendAudio(_ chunk: UnsafeBufferPointer<Int16>, roomSample: Int64) {
        feed(.audioChunk(samples: chunk.count, roomSample: roomSample), chunk: chunk)
    }

    // MARK: - The shell

    /// The time and the voice track's positions, read before the lock.
    func observe() -> SessionNow {
        let clock = configuration.clock
        return SessionNow(
            instant: clock.now, unixTime: clock.unixTime,
            voice: VoicePlayout(
                writePosition: voice.writePosition, playPosition: voice.playPosition,
                lastRenderedRoomSample: voice.lastRenderedRoomSample))
    }

    /// Feeds `input` to the reducer under the lock, wakes the supervisor when the reducer wants
    /// it sooner than before (or is done), then does what was decided. `chunk`: the heard audio
    /// of an ``SessionInput/audioChunk(samples:roomSample:)``. Any thread but the room clock's.
    ///
    /// The wake is given before the lock is released: a virtual clock (``ManualAgentClock``)
    /// forgets the supervisor's old deadline before anyone can see the new state, so a driver
    /// never moves time to a deadline that no longer stands.
    func feed(_ input: SessionInput, chunk: UnsafeBufferPointer<Int16>? = nil) {
        let now = observe()
        let (actions, finishing) = state.withLock { s -> ([(AgentAction, RealtimeConnection?)], Bool) in
            let before = s.session.nextDeadline
            let wasDone = s.session.isDone
            let decided = s.session.handle(input, now: now)
            connected.store(s.session.isConnected, ordering: .releasing)
            let resolved = decided.map { action -> (AgentAction, RealtimeConnection?) in
                switch action {
                case .send(_, _, let g), .sendAudio(_, let g), .close(let g): (action, s.links[g]?.connection)
                default: (action, nil)
                }
            }
            switch input {
            case .closed(let g, _, _), .connectFailed(let g, _): s.links[g] = nil
            default: break
            }
            let after = s.session.nextDeadline
            if s.session.isOpeningSession != s.holding {
                s.holding = s.session.isOpeningSession
                configuration.clock.hold(s.holding, by: wake)
            }
            // Sooner by more than a tick: the playout deadlines move by up to 10 ms with each input
            // as the voice plays (a wake for those would be a poll); a virtual clock reads the
            // deadline live anyway.
            if (s.session.isDone && !wasDone)
                || after.map({ a in before.map { a < $0 - .milliseconds(10) } ?? true }) ?? false
            {
                configuration.clock.wake(wake)
            }
            return (resolved, s.finishing)
        }
        if finishing { inputs.signal() }
        perform(actions, chunk: chunk)
    }

    /// Does what was decided (never under the session lock).
    private func perform(_ actions: [(AgentAction, RealtimeConnection?)], chunk: UnsafeBufferPointer<Int16>?) {
        for (action, connection) in actions {
            switch action {
            case .open(let g): open(g)
            case .send(let event, let eventID, _): _ = connection?.send(event.json(eventID: eventID))
            case .sendAudio(let eventID, _):
                guard let connection, let chunk else { break }
                if connection.send(RealtimeClientEvent.appendAudio(chunk, eventID: eventID)) {
                    audioBytes.add(chunk.count * 2, ordering: .relaxed)
                    audioChunks.add(1, ordering: .relaxed)
                }
            case .close: connection?.close(code: 1000)
            case .log(let line): configuration.log(line)
            case .transcript(let line): write(line)
            case .runTool(let call, let generation): runTool(call, generation: generation)
            case .play(let pcm): play(pcm)
            case .endVoiceRun:
                voiceWriter.withLock { upsampler in
                    while true {
                        let tail = upsampler.flush()
                        if tail.isEmpty { break }
                        voice.push(tail)
                    }
                    voice.markComplete()
                }
            case .flushVoice:
                let stoppedAt = voiceWriter.withLock { upsampler -> Int64 in
                    upsampler.reset()
                    return voice.flush()
                }
                feed(.voiceFlushed(stoppedAt: stoppedAt))
            }
        }
    }

    /// Reply audio (24 kHz) resampled to 48 kHz onto the voice track, under the voice's lock.
    private func play(_ pcm: [Int16]) {
        voiceWriter.withLock { upsampler in
            pcm.withUnsafeBufferPointer { all in
                var i = 0
                while i < all.count {
                    let n = min(upsampler.maxInputSamples, all.count - i)
                    voice.push(upsampler.process(UnsafeBufferPointer(rebasing: all[i..<(i + n)])))
                    i += n
                }
            }
        }
    }

    /// Writes a transcript line; an agent line's voice ring positions become room samples here.
    private func write(_ line: PendingTranscriptLine) {
        guard let writer = configuration.transcript else { return }
        let start = line.onVoiceRing ? voice.roomSample(atPosition: line.start) : line.start
        let end = line.onVoiceRing ? voice.roomSample(atPosition: line.end) : line.end
        writer.write(
            startSample: start, endSample: end, speaker: line.speaker, text: line.text,
            interrupted: line.interrupted, onRecordTimeline: line.onRecordTimeline)
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
