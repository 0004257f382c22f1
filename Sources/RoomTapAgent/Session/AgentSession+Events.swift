import RoomTapJSON

/// Server events, decided: responses and barge-in (``ResponseTurns``), transcript attribution,
/// tool calls, errors.
///
/// With `interrupt_response` on (the default) the server cancels its reply when someone talks;
/// the agent flushes the voice track (``AgentAction/flushVoice``: silent from the next frame,
/// without waiting for it) and truncates the item at what was played
/// (``SessionInput/voiceFlushed(stoppedAt:)``), and sends `response.cancel` only when
/// server-side interruption is off.
extension AgentSession {
    /// Codes of a failed response that retrying cannot heal: the agent ends.
    static let fatalResponseCodes: Set<String> = RealtimeError.fatalCodes.union([
        "model_not_found", "invalid_model", "billing_not_active",
    ])

    mutating func decide(_ event: RealtimeServerEvent, generation g: Int) -> [AgentAction] {
        let current = g == generation
        let incoming = self.incoming?.generation == g
        let previousClock = previous?.generation == g ? previous?.clock : nil
        switch event {
        case .sessionCreated(let expiresAt):
            if incoming {
                self.incoming?.expiresAt = expiresAt
            } else if current, connecting != nil {
                openingExpiresAt = expiresAt  // the greeting came before the upgrade was reported
            } else if current, let expiresAt {
                planRollover(expiresAt: expiresAt)
            }
            return []
        case .sessionUpdated:
            if settingUp == g { settingUp = nil }
            guard incoming else { return [] }
            self.incoming?.ready = true
            if case .settingUp = self.incoming?.phase { return incomingSettled() }
            return []
        case .error(let error):
            guard current || incoming else { return [] }
            return serverError(error, incoming: incoming)
        case .speechStarted(let itemID, let ms):
            guard current || previousClock != nil else { return [] }
            transcript.speechStarted(itemID: itemID, at: (previousClock ?? clock).roomSample(sessionMs: ms))
            guard current else { return [] }
            return bargeIn()
        case .speechStopped(let itemID, let ms):
            guard current || previousClock != nil else { return [] }
            transcript.speechStopped(itemID: itemID, at: (previousClock ?? clock).roomSample(sessionMs: ms))
            guard current else { return [] }
            turns.speechStopped()
            return releaseSay()
        case .committed(let itemID):
            // A turn the client committed (a transcription model without turn detection): its
            // room span is the one kept when it was committed.
            guard current, configuration.transcription?.serverTurnDetection == false, !pendingCommits.isEmpty
            else { return [] }
            let span = pendingCommits.removeFirst()
            transcript.speechStarted(itemID: itemID, at: span.start)
            transcript.speechStopped(itemID: itemID, at: span.end)
            return []
        case .responseCreated(let id):
            guard current else { return [] }
            counts.responses += 1
            turns.created(id)
            return []
        case .functionCall(_, let call):
            guard current else { return [] }
            return takeUp([call], generation: g)
        case .responseDone(let id, let status, let details, let calls):
            guard current else { return [] }
            return responseDone(id, status: status, details: details, calls: calls, generation: g)
        case .outputAudioDelta(let responseID, let itemID, let contentIndex, let pcm):
            guard current, !turns.isCancelled(responseID) else { return [] }
            return receiveAudio(responseID: responseID, itemID: itemID, contentIndex: contentIndex, pcm: pcm)
        case .outputAudioDone(_, let itemID):
            guard current else { return [] }
            transcript.audioDone(itemID: itemID)
            rebaseVoice = true
            return [.endVoiceRun]
        case .outputAudioTranscriptDelta(let itemID, let delta):
            guard current else { return [] }
            transcript.transcriptDelta(itemID: itemID, delta)
            return []
        case .outputAudioTranscriptDone(let itemID, let transcript):
            guard current else { return [] }
            self.transcript.transcriptDone(itemID: itemID, transcript)
            return []
        case .outputTextDone(_, let text):
            guard current, !text.isEmpty else { return [] }
            counts.textReplies += 1
            let at = now.voice.writePosition
            transcript.remember(agent: true, text)
            return [
                .log("the model answered in text, not speech (nothing is spoken; it is in the transcript)"),
                .transcript(PendingTranscriptLine(start: at, end: at, speaker: "agent", text: text, onVoiceRing: true)),
            ]
        case .inputTranscriptionCompleted(let itemID, let text):
            guard current || previousClock != nil else { return [] }
            if let speaker = configuration.speaker {
                // A transcription session hears one speaker's record: the line is theirs, on the
                // files' timeline.
                let at = (previousClock ?? clock).lastRoomSample ?? 0
                let span = transcript.utterance(itemID: itemID, now: at)
                guard !text.isEmpty else { return [] }
                return [
                    .transcript(
                        PendingTranscriptLine(
                            start: span.start, end: span.end, speaker: speaker, text: text, onRecordTimeline: true))
                ]
            }
            let span = transcript.utterance(itemID: itemID, now: now.voice.lastRenderedRoomSample + 480)
            let names = speakersBetween(span.start, span.end)
            let who = names.isEmpty ? "unknown" : names.joined(separator: "+")
            transcript.remember(agent: false, "\(who): \(text)")
            return [.transcript(PendingTranscriptLine(start: span.start, end: span.end, speaker: who, text: text))]
        case .inputTranscriptionFailed(let itemID, let message):
            guard current || previousClock != nil else { return [] }
            _ = transcript.utterance(itemID: itemID, now: 0)
            counts.transcriptionFailures += 1
            return [.log("an utterance could not be transcribed\(message.isEmpty ? "" : ": \(message)")")]
        case .other:
            return []
        }
    }

    private mutating func responseDone(
        _ id: String, status: String, details: String?, calls: [RealtimeFunctionCall], generation g: Int
    ) -> [AgentAction] {
        let tools = takeUp(calls, generation: g)
        counts.responsesDone += 1
        turns.done(id)
        transcript.responseDone(id)
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
                return fail(line)
            }
            let line = "response \(status)\(code.map { " (\($0))" } ?? "")\(message.isEmpty ? "" : ": \(message)")"
            if status == "failed" {
                counts.errors += 1
                lastError = line
            }
            actions.append(.log(line))
        }
        return tools + actions + releaseSay()
    }

    /// An `error` event: benign ones pass quietly, a refused `session.update` is a warning, a
    /// refused create is queued again, `session_expired` rolls the session over at once,
    /// account errors end the agent.
    mutating func serverError(_ error: RealtimeError, incoming: Bool) -> [AgentAction] {
        if error.code == "response_cancel_not_active" { return [] }
        if let id = error.eventID, sessionUpdateIDs.contains(id), configuration.transcription != nil {
            // A transcription session without its settings transcribes nothing: off, in one line.
            counts.errors += 1
            return fail(
                "the server refused the transcription session's settings (\(error.code ?? error.type): "
                    + "\(error.message)); transcription is off, the recording goes on")
        }
        if let id = error.eventID, sessionUpdateIDs.contains(id) {
            let warning =
                "the server refused a session.update (\(error.code ?? error.type): \(error.message)); the "
                + "session keeps its previous settings"
            sessionWarning = warning
            counts.errors += 1
            if !incoming { settingUp = nil }
            var actions: [AgentAction] = [.log(warning)]
            if incoming {
                self.incoming?.ready = true
                if case .settingUp = self.incoming?.phase { actions += incomingSettled() }
            }
            return actions
        }
        if error.code == "conversation_already_has_active_response", turns.refusedBusy(eventID: error.eventID) {
            return []
        }
        if error.code == "session_expired" {
            let line = AgentAction.log(
                "the session reached its maximum duration (session_expired); moving to a new one")
            guard !incoming, current != nil else { return [line] }
            if let incoming = self.incoming, case .moving = incoming.phase, incoming.ready, !incoming.closed {
                var actions = [line, AgentAction.close(generation: current!)]
                actions += closedForRollover()
                return actions
            }
            return [line] + ended(.expired)
        }
        counts.errors += 1
        lastError = "\(error)"
        if error.isFatal {
            let actions = fail(
                "the Realtime server refused the account (\(error.code ?? "")): \(error.message); the agent is "
                    + "off, the recording goes on")
            lastError = "\(error)"
            return actions
        }
        return [.log("server error \(error)")]
    }

    /// The session in use expired while its successor was ready: move to it now.
    private mutating func closedForRollover() -> [AgentAction] {
        guard let g = current else { return [] }
        return closed(g, code: 1001, reason: "session_expired")
    }

    /// A human started talking: if the agent is talking, stop it at once (``AgentAction/
    /// flushVoice``, then ``cutPlayback(at:)``) and tell the server what was really heard. The
    /// server cancels its reply itself with `interrupt_response`; only without it does the agent.
    private mutating func bargeIn() -> [AgentAction] {
        let responding = turns.speechStarted()
        let flush = now.voice.isPlaying
        var actions: [AgentAction] = []
        if responding {
            if !flush { transcript.cutLast(at: now.voice.playPosition) }
            if !settings.interruptResponse, let c = current {
                actions.append(.send(.responseCancel, eventID: nextEventID(), on: c))
            }
        }
        if flush { actions.append(.flushVoice) }
        return actions
    }

    /// After a barge-in flush stopped playback at ring position `stoppedAt`: the next reply
    /// starts fresh; truncates (or deletes) what was cut.
    mutating func cutPlayback(at stoppedAt: Int64) -> [AgentAction] {
        rebaseVoice = true
        counts.bargeIns += 1
        guard let c = current else { return [] }
        return transcript.cut(at: stoppedAt, session: generation).map { cut in
            let event: RealtimeClientEvent =
                switch cut {
                case .truncate(let itemID, let contentIndex, let audioEndMs):
                    .truncate(itemID: itemID, contentIndex: contentIndex, audioEndMs: audioEndMs)
                case .delete(let itemID): .deleteItem(itemID: itemID)
                }
            return .send(event, eventID: nextEventID(), on: c)
        }
    }

    private mutating func receiveAudio(
        responseID: String, itemID: String, contentIndex: Int, pcm: [Int16]
    ) -> [AgentAction] {
        if rebaseVoice {
            voiceBase = now.voice.writePosition
            voiceInput = 0
            rebaseVoice = false
        }
        let start = voiceBase + 2 * voiceInput
        guard
            transcript.receive(
                itemID: itemID, responseID: responseID, contentIndex: contentIndex, session: generation,
                samples: pcm.count, start: start)
        else { return [] }
        voiceInput += Int64(pcm.count)
        return [.play(pcm)]
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
