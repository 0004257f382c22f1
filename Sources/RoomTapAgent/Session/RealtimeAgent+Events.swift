import Foundation
import RoomTapJSON

/// Server events (on each connection's WebSocket thread): decided under the lock, acted on after.
extension RealtimeAgent {
    /// Codes of a failed response that retrying cannot heal: the agent ends.
    static let fatalResponseCodes: Set<String> = RealtimeError.fatalCodes.union([
        "model_not_found", "invalid_model", "billing_not_active",
    ])

    /// One message of the session `generation`.
    func handle(_ text: String, generation: Int) {
        guard let event = RealtimeServerEvent.decode(text) else {
            configuration.log("ignored a message that is not a Realtime event (\(text.utf8.count) bytes)")
            return
        }
        var flush = false
        var actions = state.withLock { s -> [AgentAction] in
            var actions = decide(event, generation: generation, &s, flush: &flush)
            actions += agentLines(&s, final: false)
            return actions
        }
        if flush {
            // The clock applies the flush at its next tick (within 10 ms); the wait is outside the lock.
            let stoppedAt = voice.flush()
            actions += state.withLock { s in cutPlayback(at: stoppedAt, &s) }
        }
        perform(actions)
        if state.withLock({ $0.fatal || $0.rollNow }) { wake.signal() }
    }

    private func decide(
        _ event: RealtimeServerEvent, generation: Int, _ s: inout State, flush: inout Bool
    ) -> [AgentAction] {
        let current = generation == s.generation
        let incoming = s.incoming?.generation == generation
        let previousClock = s.previous?.generation == generation ? s.previous?.clock : nil
        switch event {
        case .sessionCreated(let expiresAt):
            if incoming {
                s.incomingExpiresAt = expiresAt
            } else if current, s.connecting != nil {
                s.openingExpiresAt = expiresAt  // the greeting came before the supervisor took the session up
            } else if current, let expiresAt {
                planRollover(expiresAt: expiresAt, &s)
            }
            return []
        case .sessionUpdated:
            if incoming {
                s.incomingReady = true
                wake.signal()  // the rollover waits for it (on whatever clock)
            }
            return []
        case .error(let error):
            guard current || incoming else { return [] }
            return serverError(error, incoming: incoming, &s)
        case .speechStarted(let itemID, let ms):
            guard current || previousClock != nil else { return [] }
            s.transcript.speechStarted(itemID: itemID, at: (previousClock ?? s.clock).roomSample(sessionMs: ms))
            guard current else { return [] }
            return bargeIn(&s, flush: &flush)
        case .speechStopped(let itemID, let ms):
            guard current || previousClock != nil else { return [] }
            s.transcript.speechStopped(itemID: itemID, at: (previousClock ?? s.clock).roomSample(sessionMs: ms))
            guard current else { return [] }
            s.turns.speechStopped()
            return releaseSay(&s)
        case .committed(let itemID):
            // A turn the client committed (a transcription model without turn detection): its
            // room span is the one kept when it was committed.
            guard current, configuration.transcription?.serverTurnDetection == false, !s.pendingCommits.isEmpty
            else { return [] }
            let span = s.pendingCommits.removeFirst()
            s.transcript.speechStarted(itemID: itemID, at: span.start)
            s.transcript.speechStopped(itemID: itemID, at: span.end)
            return []
        case .responseCreated(let id):
            guard current else { return [] }
            responses.add(1, ordering: .relaxed)
            s.turns.created(id)
            return []
        case .functionCall(_, let call):
            guard current else { return [] }
            return takeUp([call], generation: generation, &s)
        case .responseDone(let id, let status, let details, let calls):
            guard current else { return [] }
            let tools = takeUp(calls, generation: generation, &s)
            responsesDone.add(1, ordering: .relaxed)
            s.turns.done(id)
            s.transcript.responseDone(id)
            var actions: [AgentAction] = []
            if status == "failed" || status == "incomplete" {
                let (code, message) = Self.failure(in: details)
                if status == "failed", let code, Self.fatalResponseCodes.contains(code) {
                    let model = configuration.session.model ?? RealtimeSessionSettings.defaultModel
                    let line =
                        ["model_not_found", "invalid_model"].contains(code)
                        ? "the Realtime service has no model '\(model)' (\(code)\(message.isEmpty ? "" : ": \(message)")): "
                            + "it may be retired; give a current one with --agent-model (default "
                            + "\(RealtimeSessionSettings.defaultModel)); the agent is off, the recording goes on"
                        : "the Realtime service refused to answer (\(code)): \(message); the agent is off, the "
                            + "recording goes on"
                    s.failure = line
                    s.lastError = line
                    s.status = .failed
                    s.fatal = true
                    connected.store(false, ordering: .releasing)
                    if let c = s.connection { actions.append(.close(c)) }
                    return actions + [.log(line)]
                }
                let line = "response \(status)\(code.map { " (\($0))" } ?? "")\(message.isEmpty ? "" : ": \(message)")"
                if status == "failed" {
                    errors.add(1, ordering: .relaxed)
                    s.lastError = line
                }
                actions.append(.log(line))
            }
            return tools + actions + releaseSay(&s)
        case .outputAudioDelta(let responseID, let itemID, let contentIndex, let pcm):
            guard current, !s.turns.isCancelled(responseID) else { return [] }
            receiveAudio(responseID: responseID, itemID: itemID, contentIndex: contentIndex, pcm: pcm, &s)
            return []
        case .outputAudioDone(_, let itemID):
            guard current else { return [] }
            s.transcript.audioDone(itemID: itemID)
            drainUpsampler(&s)
            return []
        case .outputAudioTranscriptDelta(let itemID, let delta):
            guard current else { return [] }
            s.transcript.transcriptDelta(itemID: itemID, delta)
            return []
        case .outputAudioTranscriptDone(let itemID, let transcript):
            guard current else { return [] }
            s.transcript.transcriptDone(itemID: itemID, transcript)
            return []
        case .outputTextDone(_, let text):
            guard current, !text.isEmpty else { return [] }
            textReplies.add(1, ordering: .relaxed)
            let now = voice.roomSample(atPosition: voice.writePosition)
            s.transcript.remember(agent: true, text)
            return [
                .log("the model answered in text, not speech (nothing is spoken; it is in the transcript)"),
                .transcript(PendingTranscriptLine(start: now, end: now, speaker: "agent", text: text)),
            ]
        case .inputTranscriptionCompleted(let itemID, let transcript):
            guard current || previousClock != nil else { return [] }
            if let speaker = configuration.speaker {
                // A transcription session hears one speaker's record: the line is theirs, on the
                // files' timeline.
                let now = (previousClock ?? s.clock).lastRoomSample ?? 0
                let span = s.transcript.utterance(itemID: itemID, now: now)
                guard !transcript.isEmpty else { return [] }
                return [
                    .transcript(
                        PendingTranscriptLine(
                            start: span.start, end: span.end, speaker: speaker, text: transcript,
                            onRecordTimeline: true))
                ]
            }
            let span = s.transcript.utterance(itemID: itemID, now: voice.lastRenderedRoomSample + 480)
            let names = speakers.speakers(from: span.start, to: span.end)
            let who = names.isEmpty ? "unknown" : names.joined(separator: "+")
            s.transcript.remember(agent: false, "\(who): \(transcript)")
            return [
                .transcript(PendingTranscriptLine(start: span.start, end: span.end, speaker: who, text: transcript))
            ]
        case .inputTranscriptionFailed(let itemID, let message):
            guard current || previousClock != nil else { return [] }
            _ = s.transcript.utterance(itemID: itemID, now: 0)
            transcriptionFailures.add(1, ordering: .relaxed)
            return [.log("an utterance could not be transcribed\(message.isEmpty ? "" : ": \(message)")")]
        case .other:
            return []
        }
    }

    /// An `error` event: benign ones pass quietly, a refused `session.update` is a warning, a
    /// refused create is queued again, `session_expired` rolls the session over, account errors
    /// end the agent.
    private func serverError(_ error: RealtimeError, incoming: Bool, _ s: inout State) -> [AgentAction] {
        if error.code == "response_cancel_not_active" { return [] }
        if let id = error.eventID, s.sessionUpdateIDs.contains(id), configuration.transcription != nil {
            // A transcription session without its settings transcribes nothing: off, in one line.
            let line =
                "the server refused the transcription session's settings (\(error.code ?? error.type): "
                + "\(error.message)); transcription is off, the recording goes on"
            s.failure = line
            s.lastError = line
            s.status = .failed
            s.fatal = true
            errors.add(1, ordering: .relaxed)
            connected.store(false, ordering: .releasing)
            return [.log(line)] + (s.connection.map { [.close($0)] } ?? [])
        }
        if let id = error.eventID, s.sessionUpdateIDs.contains(id) {
            let warning =
                "the server refused a session.update (\(error.code ?? error.type): \(error.message)); the "
                + "session keeps its previous settings"
            s.sessionWarning = warning
            if incoming {
                s.incomingReady = true
                wake.signal()
            }
            errors.add(1, ordering: .relaxed)
            return [.log(warning)]
        }
        if error.code == "conversation_already_has_active_response", s.turns.refusedBusy(eventID: error.eventID) {
            return []
        }
        if error.code == "session_expired" {
            if !incoming { s.rollNow = true }
            return [.log("the session reached its maximum duration (session_expired); moving to a new one")]
        }
        errors.add(1, ordering: .relaxed)
        s.lastError = "\(error)"
        if error.isFatal {
            let line =
                "the Realtime server refused the account (\(error.code ?? "")): \(error.message); the agent is "
                + "off, the recording goes on"
            s.failure = line
            s.status = .failed
            s.fatal = true
            connected.store(false, ordering: .releasing)
            return [.log(line)] + (s.connection.map { [.close($0)] } ?? [])
        }
        return [.log("server error \(error)")]
    }

    /// A human started talking: if the agent is talking, stop it within a frame (the flush, after
    /// the lock) and tell the server what was really heard (``cutPlayback(at:_:)``). The server
    /// cancels its reply itself with `interrupt_response`; only without it does the agent cancel.
    private func bargeIn(_ s: inout State, flush: inout Bool) -> [AgentAction] {
        let responding = s.turns.speechStarted()
        flush = voice.isPlaying
        var actions: [AgentAction] = []
        if responding {
            if !flush { s.transcript.cutLast(at: voice.playPosition) }
            if !s.settings.interruptResponse, let c = s.connection {
                actions.append(.send(RealtimeClientEvent.responseCancel.json(eventID: nextEventID()), on: c))
            }
        }
        return actions
    }

    /// After a barge-in flush stopped playback at ring position `stoppedAt`: the next reply
    /// starts fresh; truncates for what was cut.
    private func cutPlayback(at stoppedAt: Int64, _ s: inout State) -> [AgentAction] {
        upsampler.reset()
        s.voiceBase = voice.writePosition
        s.voiceInput = 0
        bargeIns.add(1, ordering: .relaxed)
        guard let c = s.connection else { return [] }
        return s.transcript.cut(at: stoppedAt, session: s.generation).map { cut in
            let event: RealtimeClientEvent =
                switch cut {
                case .truncate(let itemID, let contentIndex, let audioEndMs):
                    .truncate(itemID: itemID, contentIndex: contentIndex, audioEndMs: audioEndMs)
                case .delete(let itemID): .deleteItem(itemID: itemID)
                }
            return .send(event.json(eventID: nextEventID()), on: c)
        }
    }

    private func receiveAudio(responseID: String, itemID: String, contentIndex: Int, pcm: [Int16], _ s: inout State) {
        let start = s.voiceBase + 2 * s.voiceInput
        guard
            s.transcript.receive(
                itemID: itemID, responseID: responseID, contentIndex: contentIndex, session: s.generation,
                samples: pcm.count, start: start)
        else { return }
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
    func drainUpsampler(_ s: inout State) {
        while true {
            let tail = upsampler.flush()
            if tail.isEmpty { break }
            voice.push(tail)
        }
        voice.markComplete()
        s.voiceBase = voice.writePosition
        s.voiceInput = 0
    }

    /// The code and message of a failed response's `status_details.error`.
    static func failure(in details: String?) -> (code: String?, message: String) {
        guard let details, let object = try? JSONValue(parsing: details), object.objectValue != nil else {
            return (nil, "")
        }
        let error = object["error"]
        let code = error?["code"]?.stringValue ?? error?["type"]?.stringValue ?? object["reason"]?.stringValue
        return (code, error?["message"]?.stringValue ?? "")
    }
}
