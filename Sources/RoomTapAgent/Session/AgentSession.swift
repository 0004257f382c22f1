package import RoomTapSync

/// The agent's session as a pure reducer: `(input, now) → actions`, and ``nextDeadline``, the
/// earliest time it wants to be woken. It holds everything the agent decides (the connection
/// lifecycle, responses and barge-in, the session clock, transcript attribution, the counters)
/// and does nothing itself: no I/O, no lock, no clock read, no thread. ``RealtimeAgent`` is its
/// shell: it keeps it under one lock, feeds it inputs with the time and the voice track's
/// positions read just before, performs the ``AgentAction``s after releasing the lock, and its
/// supervisor thread sleeps until ``nextDeadline`` or a wake.
///
/// The connection lifecycle (`AgentSession+Connection.swift`), the server's events
/// (`AgentSession+Events.swift`) and the rest of the inputs (here) are extensions of this one
/// value. Table tests drive it with no socket and no thread (`AgentSessionReducerTests`).
///
/// Thread: a value; the shell keeps it under its lock.
package struct AgentSession {
    /// The configuration (its closures are not called here but for ``RealtimeAgentConfiguration/
    /// reconnectDelay``, a pure function of the attempt but for its jitter).
    package let configuration: RealtimeAgentConfiguration
    /// Who talked in a room span (``SpeakerActivity/speakers(from:to:)``), for a human line.
    let speakersBetween: @Sendable (Int64, Int64) -> [String]

    // MARK: Status

    package internal(set) var settings: RealtimeSessionSettings
    package internal(set) var status = RealtimeAgentState.idle
    package internal(set) var failure: String?
    package internal(set) var lastError: String?
    package internal(set) var sessionWarning: String?
    package internal(set) var counts = SessionCounts()
    var started = false
    var stopRequested = false
    var fatal = false

    // MARK: Connections (by generation)

    var lastGeneration = 0
    /// The generation whose events count (set as its connection is attempted).
    package internal(set) var generation = 0
    /// The session in use, once its connection opened.
    package internal(set) var current: Int?
    /// A first connection or a reconnect being opened (the supervisor blocks in its upgrade).
    var connecting: Int?
    /// The session in use until it answered its set-up (`session.updated`, or an error naming
    /// the update): a virtual-time driver holds time still meanwhile.
    var settingUp: Int?
    /// The connecting session closed before its upgrade was reported.
    var connectingClosed: (code: Int, reason: String)?
    /// A rollover's next session.
    var incoming: Incoming?
    /// Sessions replaced by a rollover, closed a few seconds later (their late transcriptions count).
    var retiring: [(generation: Int, at: MonotonicClock.Instant)] = []
    /// The session being retired by a rollover: its late transcriptions still count.
    var previous: (generation: Int, clock: SessionClock)?

    // MARK: Lifecycle

    var attempt = 0
    var rejectedOnce = false
    var everConnected = false
    var rollingOver = false
    var quickEnds = 0
    var lastAttempt: MonotonicClock.Instant?
    /// When the next connection attempt is due (nil: none planned); the floor applies on top.
    var retryAt: MonotonicClock.Instant?
    /// When to look for a quiet moment to replace the session.
    var rolloverAt: MonotonicClock.Instant?
    /// When the session in use opened, and its life from then to its `expires_at` when given.
    var sessionOpenedAt: MonotonicClock.Instant?
    var sessionLife: Duration?
    /// The `expires_at` of the session being opened, when its greeting came before its upgrade was reported.
    var openingExpiresAt: Int?

    // MARK: The conversation

    var clock = SessionClock()
    package internal(set) var turns = ResponseTurns()
    var transcript: TranscriptAttribution
    /// Voice ring position where the current reply audio run began, and 24 kHz samples since;
    /// `rebaseVoice`: the next run starts at the ring's write position then (after a flush or
    /// the end of an item).
    var voiceBase: Int64 = 0
    var voiceInput: Int64 = 0
    var rebaseVoice = true
    /// `event_id`s of the `session.update`s sent (to tell their errors apart).
    var sessionUpdateIDs: [String] = []
    /// The `call_id`s of function calls taken up (a call is seen in several events).
    var handledCalls: Set<String> = []
    /// A transcription session without server turn detection: the room spans of the turns
    /// committed and not yet acknowledged (`input_audio_buffer.committed`), oldest first.
    var pendingCommits: [(start: Int64, end: Int64)] = []
    var eventCounter = 0

    /// The last time and voice positions given.
    package internal(set) var now = SessionNow()

    /// A reducer for `configuration`, idle until ``SessionInput/start``.
    package init(
        configuration: RealtimeAgentConfiguration,
        speakersBetween: @escaping @Sendable (Int64, Int64) -> [String] = { _, _ in [] }
    ) {
        self.configuration = configuration
        self.speakersBetween = speakersBetween
        settings = configuration.session
        transcript = TranscriptAttribution(contextLines: configuration.contextLines)
    }

    /// A rollover's next session, from its upgrade to the move.
    struct Incoming {
        enum Phase: Equatable {
            /// The upgrade is under way (the supervisor blocks in it).
            case connecting
            /// Set up (`session.update` sent); waits for `session.updated` until then.
            case settingUp(until: MonotonicClock.Instant)
            /// Ready: moves at the first quiet moment, or gives up then.
            case moving(patience: MonotonicClock.Instant)
        }
        var generation: Int
        var phase = Phase.connecting
        var ready = false
        var closed = false
        var expiresAt: Int?
    }

    // MARK: - Reading

    /// A session is open and in use: heard audio goes to it.
    package var isConnected: Bool { status == .connected && current != nil }
    /// Nothing more will happen but ``SessionInput/finish`` (stopped or failed).
    package var isDone: Bool { stopRequested || fatal }
    /// A session is being opened: an upgrade in flight, a new session in use that has not
    /// answered its `session.update` yet, or a rollover's new session not yet set up.
    package var isOpeningSession: Bool {
        if connecting != nil || settingUp != nil { return true }
        guard let incoming else { return false }
        if case .moving = incoming.phase { return false }
        return true
    }
    /// Utterances and client-committed turns whose transcription has not come yet.
    package var pendingTranscriptions: Int { transcript.pendingUtterances + pendingCommits.count }

    /// The earliest time the reducer wants ``SessionInput/timer``: the next connection attempt
    /// (backoff, then the floor after the last attempt), the rollover, a rollover's set-up
    /// deadline or patience, a retired session's close, or when the voice will have played what
    /// a transcript line or the rollover's quiet moment waits for. Nil: only inputs move it.
    package var nextDeadline: MonotonicClock.Instant? {
        guard !isDone else { return nil }
        var deadline: MonotonicClock.Instant?
        func consider(_ t: MonotonicClock.Instant?) {
            if let t, deadline.map({ t < $0 }) ?? true { deadline = t }
        }
        if current == nil, connecting == nil, let retryAt {
            consider(max(retryAt, lastAttempt.map { $0 + configuration.minimumConnectionInterval } ?? retryAt))
        }
        if current != nil {
            if let incoming {
                switch incoming.phase {
                case .connecting: break
                case .settingUp(let until): consider(until)
                case .moving(let patience):
                    consider(patience)
                    if conversationQuiet { consider(playoutCheck) }
                }
            } else if let rolloverAt {
                if now.instant < rolloverAt {
                    consider(rolloverAt)
                } else if conversationQuiet {
                    consider(now.voice.isPlaying ? playoutCheck : now.instant)
                }
            }
        }
        consider(retiring.map(\.at).min())
        if transcript.waitsForPlayout(played: now.voice.playPosition) { consider(playoutCheck) }
        return deadline
    }

    /// No reply in progress and nobody talking (the voice may still play).
    var conversationQuiet: Bool { !turns.active && !turns.humanTalking }
    /// A quiet moment: no reply in progress or playing, nobody talking.
    var quiet: Bool { conversationQuiet && !now.voice.isPlaying }

    /// When the voice will have played what is queued now, at its 10 ms pace (at least 10 ms on).
    var playoutCheck: MonotonicClock.Instant {
        let queued = max(0, now.voice.writePosition - now.voice.playPosition)
        return now.instant + .milliseconds(max(10, Int(queued / 48) + 1))
    }

    // MARK: - Inputs

    /// Takes one input at `now`; returns what to do, in order. Idempotent where the input is
    /// (a second ``SessionInput/start`` or ``SessionInput/stop`` does nothing).
    package mutating func handle(_ input: SessionInput, now: SessionNow) -> [AgentAction] {
        self.now = now
        var actions: [AgentAction]
        switch input {
        case .start:
            actions = start()
        case .stop:
            actions = stop()
        case .finish:
            status = failure == nil ? .stopped : .failed
            return agentLines(final: true)
        case .timer:
            actions = []
        case .connected(let generation):
            actions = connected(generation)
        case .connectFailed(let generation, let error):
            actions = connectFailed(generation, error)
        case .closed(let generation, let code, let reason):
            actions = closed(generation, code: code, reason: reason)
        case .server(let event, let generation):
            actions = decide(event, generation: generation)
        case .audioChunk(let samples, let roomSample):
            guard let c = current, isConnected else { return [] }
            clock.appended(count: samples, roomSample: roomSample)
            return [.sendAudio(eventID: nextEventID(), on: c)]
        case .voiceFlushed(let stoppedAt):
            actions = cutPlayback(at: stoppedAt)
        case .toolFinished(let call, let result, let generation):
            actions = toolFinished(call, result, generation: generation)
        case .say(let text):
            guard configuration.transcription == nil else { return [] }
            turns.queue(text)
            actions = releaseSay()
        case .setInstructions(let text):
            guard configuration.transcription == nil else { return [] }
            settings.instructions = text
            guard let c = current else { return [] }
            actions = [.send(.updateInstructions(text), eventID: sessionUpdateID(), on: c)]
        case .stopListening:
            guard let c = current, isConnected, turns.humanTalking else { return [] }
            turns.speechStopped()
            actions = [.send(.clearAudio, eventID: nextEventID(), on: c)] + releaseSay()
        case .endOfTurn(let trailingSilence):
            guard let transcription = configuration.transcription, !transcription.serverTurnDetection,
                let c = current, isConnected, let span = clock.takeTurn()
            else { return [] }
            pendingCommits.append((span.start, max(span.start, span.end - trailingSilence)))
            if pendingCommits.count > 64 { pendingCommits.removeFirst() }
            return [.send(.commitAudio, eventID: nextEventID(), on: c)]
        case .commitAudio:
            guard let c = current, isConnected else { return [] }
            return [.send(.commitAudio, eventID: nextEventID(), on: c)]
        case .fail(let message):
            return fail(message)
        }
        if case .timer = input {
            actions += timersDue()
        } else {
            actions += moveIfReady()
        }
        return actions + agentLines(final: false)
    }

    // MARK: - Shared steps

    /// A fresh client `event_id` (`rt_N`).
    mutating func nextEventID() -> String {
        eventCounter += 1
        return "rt_\(eventCounter)"
    }

    /// A fresh `event_id` for a `session.update`, remembered to tell its errors apart.
    mutating func sessionUpdateID() -> String {
        let id = nextEventID()
        sessionUpdateIDs.append(id)
        if sessionUpdateIDs.count > 16 { sessionUpdateIDs.removeFirst() }
        return id
    }

    /// Sends the next `say` if it is its turn on a connected session (not while a rollover moves
    /// to a new one: it goes to the new session).
    mutating func releaseSay() -> [AgentAction] {
        guard let c = current, isConnected, incoming == nil, let say = turns.nextSay() else { return [] }
        var actions: [AgentAction] = []
        if !say.itemCreated { actions.append(.send(.userMessage(say.text), eventID: nextEventID(), on: c)) }
        let create = nextEventID()
        actions.append(.send(.responseCreate, eventID: create, on: c))
        turns.sent(say, createEventID: create)
        return actions
    }

    /// The agent transcript lines now due (their times are voice ring positions).
    mutating func agentLines(final: Bool) -> [AgentAction] {
        transcript.agentLines(played: now.voice.playPosition, final: final) { $0 }.map { line in
            var line = line
            line.onVoiceRing = true
            return .transcript(line)
        }
    }

    /// A tool's result came back: its output goes to the session that asked, then one
    /// follow-up response when it is the model's turn. A result for another session is dropped.
    mutating func toolFinished(
        _ call: RealtimeFunctionCall, _ result: RealtimeToolResult, generation: Int
    ) -> [AgentAction] {
        counts.toolCalls += 1
        if result.isError { counts.toolErrors += 1 }
        guard generation == self.generation, let c = current, isConnected, !stopRequested else {
            return [.log("the result of \(call.name) came after its session ended; dropped")]
        }
        var actions: [AgentAction] = [
            .send(.functionCallOutput(callID: call.callID, output: result.output), eventID: nextEventID(), on: c)
        ]
        if result.isError { actions.append(.log("tool \(call.name): \(result.output)")) }
        guard !result.endsAgent else { return actions }
        turns.queueToolFollowUp()
        return actions + releaseSay()
    }

    /// The calls of `calls` not taken up yet, to be run.
    mutating func takeUp(_ calls: [RealtimeFunctionCall], generation: Int) -> [AgentAction] {
        var actions: [AgentAction] = []
        for call in calls where !handledCalls.contains(call.callID) {
            if handledCalls.count > 1_024 { handledCalls.removeAll() }
            handledCalls.insert(call.callID)
            actions.append(.runTool(call, generation: generation))
        }
        return actions
    }
}

/// What ``AgentSession`` takes.
///
/// Thread: a value.
package enum SessionInput {
    /// ``RealtimeAgent/start()``: connect now. Idempotent.
    case start
    /// ``RealtimeAgent/stop()``: close every connection; nothing more happens. Idempotent.
    case stop
    /// After the stop: the last agent lines, and the final state.
    case finish
    /// A deadline passed (or the supervisor was woken): timers due are acted on.
    case timer
    /// The upgrade of session `generation` succeeded.
    case connected(generation: Int)
    /// The upgrade of session `generation` failed.
    case connectFailed(generation: Int, RealtimeConnection.ConnectError)
    /// The connection of session `generation` closed (code 1006 when it dropped).
    case closed(generation: Int, code: Int, reason: String)
    /// A server event on the connection of session `generation`.
    case server(RealtimeServerEvent, generation: Int)
    /// `samples` 24 kHz samples of heard audio, from room sample `roomSample` on, are ready.
    case audioChunk(samples: Int, roomSample: Int64)
    /// A ``AgentAction/flushVoice`` stopped playback at voice ring position `stoppedAt`.
    case voiceFlushed(stoppedAt: Int64)
    /// A tool run for session `generation` returned.
    case toolFinished(RealtimeFunctionCall, RealtimeToolResult, generation: Int)
    /// ``RealtimeAgent/say(_:)``.
    case say(String)
    /// ``RealtimeAgent/setInstructions(_:)``.
    case setInstructions(String)
    /// ``RealtimeAgent/setListening(_:)`` off: a turn in progress ends.
    case stopListening
    /// The listen sink's voice gate closed (a transcription session that commits its own turns).
    case endOfTurn(trailingSilence: Int64)
    /// Commit the input audio now (a turn the room's end cut off).
    case commitAudio
    /// The agent ends for good with `message` (no API key, ...).
    case fail(String)
}

/// The time and the voice track's positions as the shell read them just before an input.
///
/// Thread: a value.
package struct SessionNow: Sendable, Equatable {
    /// Monotonic now (``AgentClock/now``).
    package var instant: MonotonicClock.Instant
    /// Unix time in seconds (to read a session's `expires_at`).
    package var unixTime: Double
    /// The voice track's positions.
    package var voice: VoicePlayout

    package init(instant: MonotonicClock.Instant = .now, unixTime: Double = 0, voice: VoicePlayout = VoicePlayout()) {
        self.instant = instant
        self.unixTime = unixTime
        self.voice = voice
    }
}

/// Where the agent's voice track is (``AgentVoiceSource``): ring positions in 48 kHz samples.
///
/// Thread: a value.
package struct VoicePlayout: Sendable, Equatable {
    /// Samples pushed so far.
    package var writePosition: Int64
    /// Samples played or flushed so far.
    package var playPosition: Int64
    /// Room sample of the last frame rendered (-480 before the first).
    package var lastRenderedRoomSample: Int64

    package init(writePosition: Int64 = 0, playPosition: Int64 = 0, lastRenderedRoomSample: Int64 = -480) {
        self.writePosition = writePosition
        self.playPosition = playPosition
        self.lastRenderedRoomSample = lastRenderedRoomSample
    }

    /// Queued audio waits to be played.
    package var isPlaying: Bool { writePosition > playPosition }
}

/// The counters the reducer keeps (``RealtimeAgentStatistics``).
///
/// Thread: a value.
package struct SessionCounts: Sendable, Equatable {
    package var responses = 0
    package var responsesDone = 0
    package var bargeIns = 0
    package var reconnects = 0
    package var rollovers = 0
    package var sessionsOpened = 0
    package var retries = 0
    package var errors = 0
    package var transcriptionFailures = 0
    package var textReplies = 0
    package var toolCalls = 0
    package var toolErrors = 0
}
