import Foundation
import RoomTapCore
import Synchronization

/// An OpenAI Realtime voice agent in the room: hears a track (through ``listenSink``), speaks a
/// track (``voice``), writes what was said to the transcript, and survives its connection.
///
/// Attach with ``attach(to:hearing:voiceName:hearsName:)`` (the voice track, a mix-minus of the
/// humans it hears with ``listenSink`` on it, a ``speakers`` sink on every human track), then
/// ``start()``; ``stop()`` at the end. The room never waits for the agent: with no connection the
/// voice track renders silence and the heard audio is dropped. The agent paces nothing itself:
/// run the room on a ``RealTimeClock`` (a virtual clock would outrun the conversation).
///
/// Barge-in: on `input_audio_buffer.speech_started` while the voice track has reply audio queued
/// or a response is active, the queue is flushed (the clock stops within one frame), a
/// `conversation.item.truncate` says how much of the item was really played (in ms, clamped to
/// what was received), and `response.cancel` goes out if a response is active.
///
/// Threads: a supervisor thread (`roomtap.agent`) connects and reconnects; the WebSocket client's
/// thread decodes server events (the "session thread": it pushes reply audio into the voice
/// track); the listen sink's thread resamples and sends heard audio. Public members are safe from
/// any thread except the room clock's.
public final class RealtimeAgent: @unchecked Sendable {
    /// The configuration given.
    public let configuration: RealtimeAgentConfiguration
    /// The agent's track source (48 kHz mono).
    public let voice: AgentVoiceSource
    /// The sink to attach to the track the agent hears.
    public let listenSink: AgentListenSink
    /// Who talks when, for transcript attribution (``hear(_:)`` attaches its sinks).
    public let speakers: SpeakerActivity

    private struct VoiceItem {
        let id: String
        let responseID: String
        let contentIndex: Int
        let start: Int64  // voice ring position of the item's first sample (48 kHz)
        var received: Int64 = 0  // 24 kHz samples received
        var audioDone = false
        var transcript: String?
        var stoppedAt: Int64?  // ring position where a barge-in cut it
        var written = false
        var end: Int64 { start + 2 * received }
    }

    private struct State {
        var settings: RealtimeSessionSettings
        var status = "idle"
        var failure: String?
        var connection: RealtimeConnection?
        var connecting: RealtimeConnection?  // while `connect` blocks, so `stop` can cancel it
        var stopRequested = false
        var fatal = false
        var responseActive = false
        var currentResponseID = ""
        var pendingSays: [String] = []
        var cancelled: Set<String> = []
        var items: [VoiceItem] = []
        var voiceBase: Int64 = 0
        var voiceInput: Int64 = 0
        var segments: [(session: Int64, room: Int64)] = []
        var sessionSamples: Int64 = 0
        var lastChunkEnd: Int64 = -1
        var humanSpeech: [String: (start: Int64?, end: Int64?)] = [:]
        var partialTranscripts: [String: String] = [:]  // agent item id → transcript deltas so far
        var recent: [(agent: Bool, text: String)] = []
        var started = false
        /// The mix-minus track the agent hears, once `attach(to:hearing:...)` made it.
        var hearing: AudioTrack?
    }

    // Atomics before the mutex: an Atomic<Bool> declared right after `state` overwrote the end of
    // `State` in release builds (docs/ARCHITECTURE.md, "Stored-property order").
    private let listening: Atomic<Bool>
    private let connected = Atomic<Bool>(false)
    private let state: Mutex<State>
    private let upsampler: Resampler  // under `state`'s lock
    private let wake = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private let audioBytes = Atomic<Int>(0)
    private let audioChunks = Atomic<Int>(0)
    private let responses = Atomic<Int>(0)
    private let bargeIns = Atomic<Int>(0)
    private let reconnects = Atomic<Int>(0)
    private let errors = Atomic<Int>(0)

    /// Creates the agent (no connection yet). Throws only if libsoxr cannot be set up.
    public init(configuration: RealtimeAgentConfiguration) throws {
        self.configuration = configuration
        voice = AgentVoiceSource(seconds: configuration.voiceBufferSeconds)
        speakers = SpeakerActivity()
        upsampler = try Resampler(inputRate: 24_000, outputRate: 48_000, maxInputSamples: 4_800)
        state = Mutex(State(settings: configuration.session))
        listening = Atomic(configuration.listening)
        let box = WeakInput()
        listenSink = try AgentListenSink(input: box, chunkMilliseconds: configuration.chunkMilliseconds)
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
            fail("no API key: set OPENAI_API_KEY to use the agent; the room records without it")
            finished.signal()
            return
        }
        let thread = Thread { [self] in
            supervise()
            finished.signal()
        }
        thread.name = "roomtap.agent"
        thread.start()
    }

    /// Ends the session (close 1000), the listen thread and the supervisor, and writes the agent's
    /// last transcript lines. Blocks until done. Idempotent. The voice track keeps playing what is
    /// queued.
    public func stop() {
        let (wasStarted, connection) = state.withLock { s -> (Bool, RealtimeConnection?) in
            s.stopRequested = true
            return (s.started, s.connection ?? s.connecting)
        }
        connection?.close(code: 1000)
        wake.signal()
        if wasStarted {
            finished.wait()
            finished.signal()
        }
        listenSink.close()
        state.withLock { s in
            s.status = s.failure == nil ? "stopped" : "failed"
            emitAgentLines(&s, final: true)
        }
    }

    /// Sends `text` as a user message and asks for a spoken answer; queued while a response is
    /// active (or while connecting) and sent after `response.done`.
    public func say(_ text: String) {
        state.withLock { s in
            if !s.responseActive, let c = s.connection, connected.load(ordering: .acquiring) {
                sendSay(text, on: c, &s)
            } else {
                s.pendingSays.append(text)
            }
        }
    }

    /// Changes the instructions now (`session.update` with only the instructions) and for later
    /// sessions.
    public func setInstructions(_ text: String) {
        state.withLock { s in
            s.settings.instructions = text
            if let c = s.connection { _ = c.send(RealtimeClientEvent.updateInstructions(text).json()) }
        }
    }

    /// Stops (false) or resumes (true) sending what the agent hears, keeping the session.
    public func setListening(_ on: Bool) { listening.store(on, ordering: .releasing) }

    /// True while heard audio is sent.
    public var isListening: Bool { listening.load(ordering: .acquiring) }

    /// The mix-minus track the agent hears, once ``attach(to:hearing:voiceName:hearsName:)`` made
    /// it. Any thread.
    var hearingTrack: AudioTrack? {
        get { state.withLock { $0.hearing } }
        set { state.withLock { $0.hearing = newValue } }
    }

    /// A snapshot of the counters.
    public var statistics: RealtimeAgentStatistics {
        let (status, failure) = state.withLock { ($0.status, $0.failure) }
        return RealtimeAgentStatistics(
            state: status, failure: failure, audioBytesSent: audioBytes.load(ordering: .relaxed),
            audioChunksSent: audioChunks.load(ordering: .relaxed), responses: responses.load(ordering: .relaxed),
            bargeIns: bargeIns.load(ordering: .relaxed), reconnects: reconnects.load(ordering: .relaxed),
            errors: errors.load(ordering: .relaxed), voiceSamples: voice.writePosition,
            voiceOverflowSamples: voice.overflowSamples, listenDroppedFrames: listenSink.droppedFrames)
    }

    // MARK: - Heard audio (listen thread)

    var wantsAudio: Bool { listening.load(ordering: .acquiring) && connected.load(ordering: .acquiring) }

    func appendAudio(_ chunk: UnsafeBufferPointer<Int16>, roomSample: Int64) {
        let connection = state.withLock { s -> RealtimeConnection? in
            guard let c = s.connection, connected.load(ordering: .acquiring) else { return nil }
            if roomSample != s.lastChunkEnd || s.segments.isEmpty {
                s.segments.append((s.sessionSamples, roomSample))
                if s.segments.count > 512 { s.segments.removeFirst(256) }
            }
            s.sessionSamples += Int64(chunk.count)
            s.lastChunkEnd = roomSample + 2 * Int64(chunk.count)
            return c
        }
        guard let connection else { return }
        if connection.send(RealtimeClientEvent.appendAudio(chunk)) {
            audioBytes.add(chunk.count * 2, ordering: .relaxed)
            audioChunks.add(1, ordering: .relaxed)
        }
    }

    /// The room sample (48 kHz) of session offset `ms` (the server's audio_start_ms/audio_end_ms).
    private func roomSample(sessionMs ms: Int, _ s: State) -> Int64? {
        let sample = Int64(max(0, ms)) * 24
        guard let seg = s.segments.last(where: { $0.session <= sample }) ?? s.segments.first else { return nil }
        return seg.room + 2 * (sample - seg.session)
    }

    // MARK: - The connection (supervisor thread)

    private func supervise() {
        var attempt = 0
        var everConnected = false
        var delay = 0.0
        supervising: while true {
            if state.withLock({ $0.stopRequested || $0.fatal }) { break }
            if attempt > 0 {
                state.withLock { $0.status = "reconnecting" }
                _ = wake.wait(timeout: .now() + delay)
                if state.withLock({ $0.stopRequested }) { break }
            }
            let life = ConnectionLife()
            let connection = RealtimeConnection(
                url: configuration.url, apiKey: configuration.apiKey,
                onText: { [weak self] text in self?.handle(text) },
                onClose: { [weak self] code, reason in
                    life.close(code: code, reason: reason)
                    self?.wake.signal()
                })
            let cancelled = state.withLock { s -> Bool in
                s.status = everConnected || attempt > 0 ? "reconnecting" : "connecting"
                s.connecting = connection
                return s.stopRequested
            }
            if cancelled { break }
            do {
                try connection.connect(redacting: configuration.apiKey)
            } catch {
                if state.withLock({ $0.stopRequested }) { break supervising }
                switch error {
                case .unauthorized(let status):
                    fail(
                        "the Realtime server refused the API key (HTTP \(status)): check OPENAI_API_KEY; the agent is off, "
                            + "the recording goes on")
                    break supervising
                case .failed(let message):
                    errors.add(1, ordering: .relaxed)
                    attempt += 1
                    delay = configuration.reconnectDelay(attempt)
                    configuration.log(
                        "roomtap: agent: cannot connect to \(Self.host(configuration.url)): \(message); retrying in "
                            + String(format: "%.1f s", delay))
                    continue supervising
                }
            }
            state.withLock { $0.connecting = nil }
            if everConnected { reconnects.add(1, ordering: .relaxed) }
            everConnected = true
            let openedAt = ContinuousClock.now
            opened(connection)
            while !life.isClosed && !state.withLock({ $0.stopRequested || $0.fatal }) {
                _ = wake.wait(timeout: .now() + .milliseconds(50))
                state.withLock { emitAgentLines(&$0, final: false) }
            }
            let stopping = state.withLock { s -> Bool in
                connected.store(false, ordering: .releasing)
                s.connection = nil
                s.responseActive = false
                return s.stopRequested || s.fatal
            }
            if stopping {
                connection.close(code: 1000)
                _ = life.wait(seconds: 1)
                break
            }
            let (code, reason) = life.closeReason
            configuration.log(
                "roomtap: agent: connection closed (\(code)\(reason.isEmpty ? "" : " \(reason)")); reconnecting")
            // A session that lasted restarts the backoff; one closed at once keeps growing it.
            attempt = ContinuousClock.now - openedAt > .seconds(30) ? 1 : attempt + 1
            delay = configuration.reconnectDelay(attempt)
        }
        state.withLock { s in
            if s.failure == nil { s.status = "stopped" }
        }
    }

    /// A fresh session: send the settings, replay recent context, send a queued `say`.
    private func opened(_ connection: RealtimeConnection) {
        state.withLock { s in
            s.connection = connection
            s.status = "connected"
            s.segments = []
            s.sessionSamples = 0
            s.lastChunkEnd = -1
            s.responseActive = false
            s.humanSpeech = [:]
            _ = connection.send(RealtimeClientEvent.sessionUpdate(s.settings).json())
            for line in s.recent {
                let event: RealtimeClientEvent = line.agent ? .assistantMessage(line.text) : .userMessage(line.text)
                _ = connection.send(event.json())
            }
            connected.store(true, ordering: .releasing)
            if !s.pendingSays.isEmpty { sendSay(s.pendingSays.removeFirst(), on: connection, &s) }
        }
    }

    private func sendSay(_ text: String, on connection: RealtimeConnection, _ s: inout State) {
        _ = connection.send(RealtimeClientEvent.userMessage(text).json())
        _ = connection.send(RealtimeClientEvent.responseCreate.json())
        s.responseActive = true
    }

    private func fail(_ message: String) {
        configuration.log("roomtap: agent: \(message)")
        state.withLock { s in
            s.failure = message
            s.status = "failed"
            s.fatal = true
        }
    }

    private static func host(_ url: String) -> String {
        URLComponents(string: url).flatMap { c in c.host.map { h in c.port.map { "\(h):\($0)" } ?? h } } ?? url
    }

    // MARK: - Server events (the WebSocket client's thread)

    private func handle(_ text: String) {
        guard let event = RealtimeServerEvent.decode(text) else {
            configuration.log(
                "roomtap: agent: ignored a message that is not a Realtime event (\(text.utf8.count) bytes)")
            return
        }
        var closeFatally: RealtimeConnection?
        state.withLock { s in
            switch event {
            case .sessionCreated, .sessionUpdated, .other:
                break
            case .error(let error):
                errors.add(1, ordering: .relaxed)
                configuration.log("roomtap: agent: server error \(error)")
                if error.isFatal {
                    s.failure = "the Realtime server refused the account (\(error.code ?? "")): \(error.message)"
                    s.status = "failed"
                    s.fatal = true
                    closeFatally = s.connection
                }
            case .speechStarted(let itemID, let ms):
                if s.humanSpeech.count >= 256 { s.humanSpeech.removeAll() }  // no transcription: stay bounded
                s.humanSpeech[itemID] = (roomSample(sessionMs: ms, s), nil)
                bargeIn(&s)
            case .speechStopped(let itemID, let ms):
                let start = s.humanSpeech[itemID]?.start
                s.humanSpeech[itemID] = (start, roomSample(sessionMs: ms, s))
            case .responseCreated(let id):
                responses.add(1, ordering: .relaxed)
                s.responseActive = true
                s.currentResponseID = id
            case .responseDone(let id, let status, let details):
                if status != "completed" && status != "cancelled" {
                    configuration.log("roomtap: agent: response \(status)\(details.map { ": \($0)" } ?? "")")
                }
                if id == s.currentResponseID || id.isEmpty || s.currentResponseID.isEmpty { s.responseActive = false }
                // An interrupted item gets no transcript.done: keep what the deltas said.
                for i in s.items.indices where s.items[i].responseID == id && s.items[i].transcript == nil {
                    s.items[i].transcript = s.partialTranscripts[s.items[i].id] ?? ""
                }
                s.partialTranscripts = s.partialTranscripts.filter { entry in
                    s.items.contains { $0.id == entry.key && $0.responseID != id }
                }
                if let c = s.connection, !s.pendingSays.isEmpty { sendSay(s.pendingSays.removeFirst(), on: c, &s) }
            case .outputAudioDelta(let responseID, let itemID, let contentIndex, let pcm):
                receiveAudio(responseID: responseID, itemID: itemID, contentIndex: contentIndex, pcm: pcm, &s)
            case .outputAudioDone(_, let itemID):
                if let i = s.items.lastIndex(where: { $0.id == itemID }) { s.items[i].audioDone = true }
                drainUpsampler(&s)
            case .outputAudioTranscriptDelta(let itemID, let delta):
                if s.partialTranscripts.count >= 64 { s.partialTranscripts.removeAll() }
                if s.partialTranscripts[itemID, default: ""].utf8.count < 65_536 {
                    s.partialTranscripts[itemID, default: ""] += delta
                }
            case .outputAudioTranscriptDone(let itemID, let transcript):
                s.partialTranscripts[itemID] = nil
                if let i = s.items.lastIndex(where: { $0.id == itemID }) {
                    s.items[i].transcript = transcript
                } else if !transcript.isEmpty {
                    // A text-only item: no audio to place; written at the current room time.
                    let now = voice.roomSample(atPosition: voice.writePosition)
                    configuration.transcript?.write(
                        startSample: now, endSample: now, speaker: "agent", text: transcript)
                    remember(&s, agent: true, transcript)
                }
            case .inputTranscriptionCompleted(let itemID, let transcript):
                let span = s.humanSpeech.removeValue(forKey: itemID)
                let now = voice.lastRenderedRoomSample + 480
                let start = span?.start ?? now
                let end = span?.end ?? max(start, now)
                let names = speakers.speakers(from: start, to: end)
                let who = names.isEmpty ? "unknown" : names.joined(separator: "+")
                configuration.transcript?.write(startSample: start, endSample: end, speaker: who, text: transcript)
                remember(&s, agent: false, "\(who): \(transcript)")
            }
            emitAgentLines(&s, final: false)
        }
        closeFatally?.close(code: 1000)
        if closeFatally != nil { wake.signal() }
    }

    private func receiveAudio(responseID: String, itemID: String, contentIndex: Int, pcm: [Int16], _ s: inout State) {
        guard !s.cancelled.contains(responseID) || responseID.isEmpty else { return }
        if let last = s.items.last, last.id == itemID {
            guard last.stoppedAt == nil else { return }
        } else {
            guard !s.items.contains(where: { $0.id == itemID }) else { return }
            s.items.append(
                VoiceItem(
                    id: itemID, responseID: responseID, contentIndex: contentIndex,
                    start: s.voiceBase + 2 * s.voiceInput))
            if s.items.count > 64 { s.items.removeFirst(s.items.count - 64) }
        }
        s.items[s.items.count - 1].received += Int64(pcm.count)
        s.voiceInput += Int64(pcm.count)
        pcm.withUnsafeBufferPointer { all in
            var i = 0
            while i < all.count {
                let n = min(upsampler.maxInputSamples, all.count - i)
                voice.push(upsampler.process(UnsafeBufferPointer(rebasing: all[i..<(i + n)])))
                i += n
            }
        }
    }

    /// Plays out the converter's tail (end of an item's audio); the next audio starts fresh.
    private func drainUpsampler(_ s: inout State) {
        while true {
            let tail = upsampler.flush()
            if tail.isEmpty { break }
            voice.push(tail)
        }
        voice.markComplete()
        s.voiceBase = voice.writePosition
        s.voiceInput = 0
    }

    /// A human started talking: if the agent is talking, stop it within a frame, tell the server
    /// what was really heard, and cancel the response.
    private func bargeIn(_ s: inout State) {
        let playing = voice.isPlaying
        guard playing || s.responseActive else { return }
        if playing {
            let stoppedAt = voice.flush()
            upsampler.reset()
            s.voiceBase = voice.writePosition
            s.voiceInput = 0
            bargeIns.add(1, ordering: .relaxed)
            for i in s.items.indices where s.items[i].stoppedAt == nil && s.items[i].end > stoppedAt {
                s.items[i].stoppedAt = max(stoppedAt, s.items[i].start)
                guard s.items[i].start <= stoppedAt else { continue }
                let played = stoppedAt - s.items[i].start
                let ms = min(played / 48, s.items[i].received / 24)
                if let c = s.connection {
                    _ = c.send(
                        RealtimeClientEvent.truncate(
                            itemID: s.items[i].id, contentIndex: s.items[i].contentIndex, audioEndMs: Int(ms)
                        ).json())
                }
            }
        }
        if s.responseActive {
            if let c = s.connection { _ = c.send(RealtimeClientEvent.responseCancel.json()) }
            if !s.currentResponseID.isEmpty { s.cancelled.insert(s.currentResponseID) }
            if s.cancelled.count > 64 { s.cancelled.removeAll() }
            // Anything still arriving for the item being cut is dropped.
            if let last = s.items.indices.last, s.items[last].stoppedAt == nil {
                s.items[last].stoppedAt = max(voice.playPosition, s.items[last].start)
            }
        }
    }

    /// Writes the transcript lines of agent items that have played out (or were cut).
    private func emitAgentLines(_ s: inout State, final: Bool) {
        let played = voice.playPosition
        for i in s.items.indices where !s.items[i].written {
            let item = s.items[i]
            guard let text = item.transcript else {
                if final { s.items[i].written = true }
                continue
            }
            let end: Int64
            if let stop = item.stoppedAt {
                end = stop
            } else if item.audioDone && played >= item.end || final {
                end = item.end
            } else {
                continue
            }
            s.items[i].written = true
            guard end > item.start, !text.isEmpty else { continue }
            configuration.transcript?.write(
                startSample: voice.roomSample(atPosition: item.start), endSample: voice.roomSample(atPosition: end),
                speaker: "agent", text: text)
            remember(&s, agent: true, text)
        }
    }

    private func remember(_ s: inout State, agent: Bool, _ text: String) {
        s.recent.append((agent, text))
        if s.recent.count > configuration.contextLines {
            s.recent.removeFirst(s.recent.count - configuration.contextLines)
        }
    }
}

/// One connection's close, signalled by the client's thread.
private final class ConnectionLife: Sendable {
    private let closed = Mutex<(Int, String)?>(nil)
    private let done = DispatchSemaphore(value: 0)

    func close(code: Int, reason: String) {
        let first = closed.withLock { c -> Bool in
            guard c == nil else { return false }
            c = (code, reason)
            return true
        }
        if first { done.signal() }
    }

    var isClosed: Bool { closed.withLock { $0 != nil } }
    var closeReason: (Int, String) { closed.withLock { $0 ?? (1006, "") } }

    func wait(seconds: Double) -> Bool {
        if isClosed { return true }
        return done.wait(timeout: .now() + seconds) == .success
    }
}

/// Breaks the cycle agent → listen sink → consumer → agent.
private final class WeakInput: AgentAudioInput, @unchecked Sendable {
    weak var target: RealtimeAgent?
    var wantsAudio: Bool { target?.wantsAudio ?? false }
    func appendAudio(_ chunk: UnsafeBufferPointer<Int16>, roomSample: Int64) {
        target?.appendAudio(chunk, roomSample: roomSample)
    }
}
