import Foundation
public import RoomTapCore
import RoomTapSync
import Synchronization

/// The pipeline agent (`record --agent-pipeline`): it knows who is speaking. Every finished human
/// turn — a line of a speaker's own transcription session in transcript.jsonl — becomes a chat
/// message carrying the speaker's name; after ``PipelineAgentConfiguration/turnSilence`` without a
/// new turn (at once when addressed by name) a streamed chat completion is asked for, and its text
/// is spoken sentence by sentence through the speech endpoint while the rest still streams, into
/// ``voice`` (the `agent` track, 24 kHz resampled to 48 kHz as the Realtime agent's replies are).
///
/// Barge-in: a human turn, or talk on the mix-minus (``TalkOverDetector``), while the agent speaks
/// stops its audio within a frame; the history and the transcript keep what was said aloud.
/// Failures are one log line each, retried with backoff or the turn dropped; a fatal one (a
/// refused key, quota, an unknown model) ends the agent — never the room.
///
/// Threads: two of its own, `roomtap.pipeline` (decides when to answer, streams the chat) and
/// `roomtap.pipeline.speech` (streams speech into ``voice``, its only writer, and follows the
/// playout); the control calls from any thread but the room clock's; the transcript observer on
/// the writer's thread (it only queues).
public final class PipelineAgent: @unchecked Sendable {
    public let configuration: PipelineAgentConfiguration
    /// The agent's voice: add it to the room as a track (``attach(to:hearing:voiceName:hearsName:)``).
    public let voice: AgentVoiceSource
    /// Barge-in by level, on the mix-minus of the humans.
    public let talkOver: TalkOverDetector

    struct Sentence {
        var generation: UInt64
        var text: String
    }

    /// A reply from the decision to answer until its audio has played (or was cut).
    struct Reply {
        var generation: UInt64
        var turnArrival: MonotonicClock.Instant
        var answeredAt: MonotonicClock.Instant
        var generated = ""
        var chatDone = false
        /// Spoken sentences: text and ring positions of their audio.
        var spoken: [(text: String, start: Int64, end: Int64)] = []
        var firstPosition: Int64?
        var firstAudioAt: MonotonicClock.Instant?
        var talkMark: Int
        var leaveAfter = false
    }

    struct State {
        var started = false
        var stopRequested = false
        var stats = PipelineAgentStatistics()
        var history: ChatHistory
        var instructions: String
        var names = true
        var pending: [ChatMessage] = []
        var lastTurnAt: MonotonicClock.Instant?
        var addressed = false
        var reply: Reply?
        var sentences: [Sentence] = []
        var turnLatencies: [Double] = []
        var answerLatencies: [Double] = []
        var hearing: AudioTrack?
    }

    let state: Locked<State>
    /// The reply allowed to go on; bumping it cancels the one in flight (barge-in, stop).
    let generation = Atomic<UInt64>(0)
    let listening = Atomic<Bool>(true)
    let wake = DispatchSemaphore(value: 0)
    let speechWake = DispatchSemaphore(value: 0)
    let finished = DispatchSemaphore(value: 0)
    /// The speech thread's only (why the class is `@unchecked Sendable`).
    let upsampler: Resampler

    /// Creates the agent (nothing runs yet). Throws only if libsoxr cannot be set up.
    public init(configuration: PipelineAgentConfiguration) throws {
        self.configuration = configuration
        voice = AgentVoiceSource(seconds: configuration.voiceBufferSeconds)
        talkOver = TalkOverDetector(
            duration: configuration.bargeIn > .zero ? configuration.bargeIn : .seconds(3_600),
            thresholdDBFS: configuration.bargeInThresholdDBFS)
        upsampler = try Resampler(inputRate: SpeechClient.sampleRate, outputRate: 48_000, maxInputSamples: 4_800)
        state = Locked(
            State(
                history: ChatHistory(recentLimit: configuration.recentMessages),
                instructions: configuration.instructions))
    }

    // MARK: - Room

    /// Adds the voice track (`voiceName`) and a mix-minus of `humans` (`hearsName`, derived) with
    /// ``talkOver`` on it to `room`. Control side, before ``start()``.
    @discardableResult
    public func attach(
        to room: Room, hearing humans: [AudioTrack], voiceName: String = "agent", hearsName: String = "agent-hears"
    ) -> AgentTracks {
        let tracks = AgentTracks.add(
            to: room, voice: voice, listener: talkOver, voiceName: voiceName, hearsName: hearsName)
        state.withLock { $0.hearing = tracks.hears }
        for track in humans { hear(track) }
        return tracks
    }

    /// Puts `track` (a human) in the mix-minus whose talk barges in. Idempotent; refuses the
    /// agent's own tracks.
    public func hear(_ track: AudioTrack) {
        guard let hears = state.withLock({ $0.hearing }), track.role.isSpeaker, !isOwn(track) else { return }
        hears.mixer?.addInput(track)
    }

    /// True for the voice track and the mix-minus.
    public func isOwn(_ track: AudioTrack) -> Bool {
        track.source === voice || state.withLock { $0.hearing } === track
    }

    // MARK: - Control

    /// Starts the two threads and follows the transcript. Idempotent.
    public func start() {
        let first = state.withLock { s -> Bool in
            defer { s.started = true }
            if !s.started { s.stats.state = "running" }
            return !s.started
        }
        guard first else { return }
        configuration.transcript?.observe { [weak self] entry in self?.hearTurn(entry) }
        RoomThread.start("roomtap.pipeline") { [self] in
            decideLoop()
            finished.signal()
        }
        RoomThread.start("roomtap.pipeline.speech") { [self] in
            speechLoop()
            finished.signal()
        }
    }

    /// Ends both threads (a request in flight is aborted; what is queued in the voice keeps
    /// playing) and writes the last reply's line. Blocks until done. Idempotent.
    public func stop() {
        let started = state.withLock { s -> Bool in
            s.stopRequested = true
            if s.stats.failure == nil { s.stats.state = s.started ? "stopped" : "idle" }
            return s.started
        }
        generation.add(1, ordering: .acquiringAndReleasing)
        wake.signal()
        speechWake.signal()
        guard started else { return }
        finished.wait()
        finished.wait()
        finished.signal()
        finished.signal()
    }

    /// A turn from the room's operator (`roomtap agent say`): the agent answers it at once.
    public func say(_ text: String) {
        queue(
            ChatMessage(role: .system, content: "The room's operator asks you to say this now: \(text)"),
            addressed: true)
    }

    /// Changes the system prompt from the next request on.
    public func setInstructions(_ text: String) { state.withLock { $0.instructions = text } }

    /// Off: turns are not heard (not answered, no barge-in) until on again.
    public func setListening(_ on: Bool) { listening.store(on, ordering: .releasing) }

    public var isListening: Bool { listening.load(ordering: .acquiring) }

    public var statistics: PipelineAgentStatistics {
        state.withLock { s in
            var stats = s.stats
            stats.turnToFirstAudioMs = .init(s.turnLatencies)
            stats.answerToFirstAudioMs = .init(s.answerLatencies)
            return stats
        }
    }

    /// The messages the next request would start with (the system prompt, the summary, the recent
    /// turns and replies), for tests and status.
    public var history: [ChatMessage] { state.withLock { $0.history.messages(instructions: $0.instructions) } }

    // MARK: - Turns

    /// A transcript line: a human's finished turn (the agent's own lines are skipped).
    func hearTurn(_ entry: TranscriptEntry) {
        guard entry.speaker != configuration.speakerName, isListening, configuration.hears(entry.speaker) else {
            return
        }
        let text = entry.text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty else { return }
        let name = ChatMessage.sanitizedName(entry.speaker)
        queue(ChatMessage(role: .user, name: name, content: text), addressed: addresses(text))
    }

    private func queue(_ message: ChatMessage, addressed: Bool) {
        let bargeIn = state.withLock { s -> Bool in
            guard !s.stopRequested else { return false }
            if message.role == .user { s.stats.turns += 1 }
            s.pending.append(message)
            s.lastTurnAt = configuration.clock.now
            s.addressed = s.addressed || addressed
            return s.reply != nil
        }
        if bargeIn { generation.add(1, ordering: .acquiringAndReleasing) }
        wake.signal()
        speechWake.signal()
    }

    /// True when `text` names the agent (a whole word, any case).
    func addresses(_ text: String) -> Bool {
        let words = text.lowercased().split { !$0.isLetter && !$0.isNumber }
        return configuration.names.contains { name in words.contains(Substring(name.lowercased())) }
    }

    // MARK: - Deciding and chatting (the `roomtap.pipeline` thread)

    private enum Decision {
        case answer(UInt64, [ChatMessage], Bool)
        case wait(MonotonicClock.Instant)
        case exit
    }

    private func decideLoop() {
        let clock = configuration.clock
        while true {
            let decision = state.withLock { s -> Decision in
                if s.stopRequested { return .exit }
                let now = clock.now
                guard s.reply == nil, !s.pending.isEmpty, let last = s.lastTurnAt else {
                    return .wait(now + .seconds(1))
                }
                let due = last + configuration.turnSilence
                guard s.addressed || now >= due else { return .wait(due) }
                for message in s.pending { s.history.append(message) }
                s.pending.removeAll()
                s.addressed = false
                let next = generation.add(1, ordering: .acquiringAndReleasing).newValue
                s.reply = Reply(generation: next, turnArrival: last, answeredAt: now, talkMark: talkOver.onsets)
                return .answer(next, s.history.messages(instructions: s.instructions), s.names)
            }
            switch decision {
            case .exit: return
            case .wait(let deadline): _ = clock.wait(wake, until: deadline)
            case .answer(let generation, let messages, let names): answer(generation, messages: messages, names: names)
            }
        }
    }

    private func isCancelled(_ generation: UInt64) -> Bool {
        self.generation.load(ordering: .acquiring) != generation
    }

    /// Streams the completion of `messages`, sentences to the speech thread as they complete;
    /// runs tool calls (up to three rounds); retries what failed before anything was said.
    private func answer(_ generation: UInt64, messages first: [ChatMessage], names useNames: Bool) {
        var messages = first
        var names = useNames
        var attempt = 0
        var rounds = 0
        var splitter = SentenceSplitter()
        var generated = ""
        var enqueued = false
        while true {
            do throws(PipelineFailure) {
                let reply = try configuration.chat.complete(
                    messages: messages, names: names, tools: configuration.tools,
                    isCancelled: { [self] in isCancelled(generation) },
                    onText: { [self] text in
                        generated += text
                        for sentence in splitter.append(text) {
                            enqueued = true
                            enqueue(sentence, generation)
                        }
                    })
                if !reply.toolCalls.isEmpty && rounds < 3, let runner = configuration.toolRunner {
                    rounds += 1
                    var call = ChatMessage(role: .assistant, content: reply.text)
                    call.toolCalls = reply.toolCalls
                    messages.append(call)
                    for c in reply.toolCalls {
                        let result = runner(c)
                        var output = ChatMessage(role: .tool, content: result.output)
                        output.toolCallID = c.callID
                        messages.append(output)
                        state.withLock { s in
                            s.stats.toolCalls += 1
                            if result.endsAgent, s.reply?.generation == generation { s.reply?.leaveAfter = true }
                        }
                    }
                    continue
                }
                break
            } catch {
                switch error.action {
                case .cancelled:
                    break
                case .nameRejected where names:
                    names = false
                    state.withLock {
                        $0.names = false
                        $0.stats.namesInContent = true
                    }
                    configuration.log("the chat server refuses message names; speakers go in the content from now on")
                    continue
                case .retry where attempt < configuration.retries && !enqueued && generated.isEmpty:
                    let wait = configuration.backoff * (1 << attempt)
                    attempt += 1
                    note(error, retry: true)
                    configuration.log("\(error.message); retrying in \(wait)")
                    if configuration.clock.wait(wake, until: configuration.clock.now + wait) { wake.signal() }
                    if isCancelled(generation) || state.withLock({ $0.stopRequested }) { break }
                    continue
                case .fatal:
                    fail(error.message)
                default:
                    note(error, retry: false)
                    configuration.log("\(error.message); the turn is dropped")
                }
            }
            break
        }
        if let rest = splitter.finish(), !isCancelled(generation) { enqueue(rest, generation) }
        state.withLock { s in
            guard s.reply?.generation == generation else { return }
            s.reply?.generated = generated
            s.reply?.chatDone = true
        }
        speechWake.signal()
    }

    private func enqueue(_ sentence: String, _ generation: UInt64) {
        state.withLock { $0.sentences.append(Sentence(generation: generation, text: sentence)) }
        speechWake.signal()
    }

    func note(_ error: PipelineFailure, retry: Bool) {
        state.withLock { s in
            s.stats.errors += 1
            s.stats.lastError = error.message
            if retry { s.stats.retries += 1 } else { s.stats.droppedTurns += 1 }
        }
    }

    /// A fatal failure: one line, the agent ends (the room goes on).
    func fail(_ message: String) {
        let first = state.withLock { s -> Bool in
            guard s.stats.failure == nil else { return false }
            s.stats.failure = message
            s.stats.lastError = message
            s.stats.errors += 1
            s.stats.state = "failed"
            s.stopRequested = true
            return true
        }
        guard first else { return }
        configuration.log("stopped: \(message); the recording goes on without the agent")
        generation.add(1, ordering: .acquiringAndReleasing)
        wake.signal()
        speechWake.signal()
    }
}

extension Duration {
    /// In milliseconds, as a Double.
    var milliseconds: Double {
        Double(components.seconds) * 1_000 + Double(components.attoseconds) / 1e15
    }
}
