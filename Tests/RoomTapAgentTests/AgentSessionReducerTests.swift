import Foundation
import RoomTapAgent
import RoomTapSync
import Testing

/// The agent's session reducer (``AgentSession``) on its own: inputs in, actions and deadlines
/// out, with no socket, no thread and no clock (time is a value the test moves).
@Suite("Agent: the session reducer")
struct AgentSessionReducerTests {
    /// A reducer, the time and the voice track's positions it is given.
    struct Harness {
        var session: AgentSession
        var t = MonotonicClock.now
        var unix = 1_700_000_000.0
        var voice = VoicePlayout()

        init(_ configure: (inout RealtimeAgentConfiguration) -> Void = { _ in }) {
            var c = RealtimeAgentConfiguration(
                apiKey: "sk-test", url: "ws://127.0.0.1:9/v1/realtime", reconnectDelay: { Double($0) * 0.5 },
                minimumConnectionInterval: .seconds(1), log: { _ in })
            configure(&c)
            session = AgentSession(configuration: c, speakersBetween: { _, _ in ["alice"] })
        }

        mutating func feed(_ input: SessionInput) -> [AgentAction] {
            session.handle(input, now: SessionNow(instant: t, unixTime: unix, voice: voice))
        }

        mutating func advance(_ d: Duration) {
            t += d
            unix += Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
        }

        /// Moves time to the reducer's next deadline and feeds the timer there.
        mutating func fireNextDeadline() -> [AgentAction] {
            if let d = session.nextDeadline, d > t { advance(d - t) }
            return feed(.timer)
        }

        /// Started and connected as session 1 (its session.update sent).
        mutating func connect() {
            _ = feed(.start)
            #expect(feed(.timer) == [.open(generation: 1)])
            _ = feed(.connected(generation: 1))
        }

        /// Reply audio `samples` (24 kHz) of `item` in response `response`, ended.
        mutating func reply(_ samples: Int, item: String = "item_1", response: String = "resp_1") -> [AgentAction] {
            var actions = feed(.server(.responseCreated(responseID: response), generation: 1))
            let pcm = [Int16](repeating: 100, count: samples)
            actions += feed(
                .server(.outputAudioDelta(responseID: response, itemID: item, contentIndex: 0, pcm: pcm), generation: 1)
            )
            voice.writePosition += Int64(2 * samples)  // the shell pushed it, resampled
            actions += feed(.server(.outputAudioDone(responseID: response, itemID: item), generation: 1))
            actions += feed(.server(.outputAudioTranscriptDone(itemID: item, transcript: "Soup."), generation: 1))
            return actions
        }
    }

    static func sends(_ actions: [AgentAction]) -> [RealtimeClientEvent] {
        actions.compactMap { if case .send(let event, _, _) = $0 { event } else { nil } }
    }

    static func logs(_ actions: [AgentAction]) -> [String] {
        actions.compactMap { if case .log(let line) = $0 { line } else { nil } }
    }

    // MARK: Session start

    @Test func startOpensOneConnectionAndSetsTheSessionUp() {
        var h = Harness { $0.session.instructions = "Be brief." }
        #expect(h.session.nextDeadline == nil, "idle until started")
        #expect(h.feed(.start).isEmpty)
        #expect(h.session.nextDeadline == h.t, "connect at once")
        #expect(h.feed(.timer) == [.open(generation: 1)])
        #expect(h.session.isOpeningSession && h.session.status == .connecting)
        #expect(h.session.nextDeadline == nil, "nothing timed while the upgrade blocks")
        let actions = h.feed(.connected(generation: 1))
        #expect(actions == [.send(.sessionUpdate(h.session.settings), eventID: "rt_1", on: 1)])
        #expect(h.session.isConnected && h.session.counts.sessionsOpened == 1)
        #expect(h.session.isOpeningSession, "until the session answers its set-up")
        _ = h.feed(.server(.sessionUpdated, generation: 1))
        #expect(!h.session.isOpeningSession)
        #expect(h.session.nextDeadline == h.t + .seconds(55 * 60), "the rollover, nothing sooner: no polling")
        #expect(h.feed(.start).isEmpty, "start is idempotent")
    }

    @Test func aMissingKeyFailsInOneLineWithoutAConnection() {
        var h = Harness { $0.apiKey = "" }
        let actions = h.feed(.start)
        #expect(Self.logs(actions).count == 1 && actions.count == 1)
        #expect(h.session.status == .failed && h.session.isDone && h.session.nextDeadline == nil)
    }

    @Test func aSayBeforeTheSessionGoesOutOnceConnected() {
        var h = Harness()
        #expect(h.feed(.say("Hello room")).isEmpty)
        _ = h.feed(.start)
        _ = h.feed(.timer)
        let actions = h.feed(.connected(generation: 1))
        #expect(
            Self.sends(actions) == [.sessionUpdate(h.session.settings), .userMessage("Hello room"), .responseCreate])
    }

    // MARK: Heard audio

    /// (connected, listening input stopped, chunk) → one append per chunk, or none.
    @Test(arguments: [(false, 0), (true, 1)])
    func eachChunkIsOneAppendOnlyOnASessionInUse(connected: Bool, appends: Int) {
        var h = Harness()
        if connected { h.connect() }
        let actions = h.feed(.audioChunk(samples: 960, roomSample: 0))
        let sent = actions.filter { if case .sendAudio(_, on: 1) = $0 { true } else { false } }
        #expect(sent.count == appends)
    }

    @Test func appendsArePacedByChunkAndMapTheServersOffsetsBackToRoomSamples() {
        var h = Harness()
        h.connect()
        var ids: [String] = []
        // 40 ms chunks (960 samples at 24 kHz), then a gap in the room (a dropped frame run).
        for roomSample: Int64 in [0, 1_920, 3_840, 48_000] {
            for action in h.feed(.audioChunk(samples: 960, roomSample: roomSample)) {
                if case .sendAudio(let id, on: 1) = action { ids.append(id) }
            }
        }
        #expect(ids.count == 4 && Set(ids).count == 4, "one append per chunk, each its own event_id: \(ids)")
        _ = h.feed(.server(.speechStarted(itemID: "u1", audioStartMs: 40), generation: 1))
        _ = h.feed(.server(.speechStopped(itemID: "u1", audioEndMs: 130), generation: 1))
        let actions = h.feed(.server(.inputTranscriptionCompleted(itemID: "u1", transcript: "hi"), generation: 1))
        guard case .transcript(let line) = actions.first else {
            Issue.record("no line: \(actions)")
            return
        }
        // 40 ms is room sample 1,920; 130 ms is 10 ms into the chunk at 48,000.
        #expect(line.start == 1_920 && line.end == 48_480 && line.speaker == "alice" && line.text == "hi")
    }

    // MARK: Replies

    @Test func replyAudioIsPlayedAndItsLineWrittenWhenItHasPlayedOut() {
        var h = Harness()
        h.connect()
        let opened = h.t
        let actions = h.reply(4_800)
        #expect(actions.contains(.play([Int16](repeating: 100, count: 4_800))))
        #expect(actions.contains(.endVoiceRun))
        #expect(!actions.contains { if case .transcript = $0 { true } else { false } }, "not played yet")
        // Queued 9,600 samples (200 ms): the reducer wants to look again when they will have played.
        #expect(h.session.nextDeadline == h.t + .milliseconds(201))
        h.voice.playPosition = 4_800
        _ = h.fireNextDeadline()
        h.voice.playPosition = 9_600
        let lines = h.fireNextDeadline()
        guard case .transcript(let line) = lines.first else {
            Issue.record("no line: \(lines)")
            return
        }
        #expect(line.start == 0 && line.end == 9_600 && line.text == "Soup." && !line.interrupted)
        #expect(h.session.nextDeadline == opened + .seconds(55 * 60), "nothing left to follow")
    }

    @Test func aSecondItemStartsWhereTheVoiceRingIs() {
        var h = Harness()
        h.connect()
        _ = h.reply(2_400, item: "a", response: "r1")
        _ = h.feed(.server(.responseDone(responseID: "r1", status: "completed", statusDetails: nil), generation: 1))
        h.voice.writePosition += 37  // the resampler's tail
        h.voice.playPosition = h.voice.writePosition
        var lines = h.reply(2_400, item: "b", response: "r2")
        h.voice.playPosition = h.voice.writePosition
        lines += h.feed(.finish)
        let starts = lines.compactMap { if case .transcript(let l) = $0 { l.start } else { nil } }
        #expect(starts == [0, 4_837])
    }

    // MARK: Barge-in

    /// (server interruption on, 48 kHz samples played of a 1 s item) → what the server is told.
    @Test(
        arguments: [
            (true, 24_000, [.truncate(itemID: "item_1", contentIndex: 0, audioEndMs: 500)]),
            (false, 24_000, [.responseCancel, .truncate(itemID: "item_1", contentIndex: 0, audioEndMs: 500)]),
            (true, 0, [.deleteItem(itemID: "item_1")]),
        ] as [(Bool, Int64, [RealtimeClientEvent])])
    func bargeInFlushesAtOnceAndTruncatesAtWhatWasPlayed(
        interrupt: Bool, played: Int64, expected: [RealtimeClientEvent]
    ) {
        var h = Harness { $0.session.interruptResponse = interrupt }
        h.connect()
        _ = h.reply(24_000)
        h.voice.playPosition = played
        let actions = h.feed(.server(.speechStarted(itemID: "u1", audioStartMs: 0), generation: 1))
        #expect(actions.last == .flushVoice, "the flush is decided, not waited for")
        let cuts = h.feed(.voiceFlushed(stoppedAt: played))
        #expect(Self.sends(actions) + Self.sends(cuts) == expected)
        #expect(h.session.counts.bargeIns == 1)
        // The cancelled reply's late audio is dropped.
        let late = h.feed(
            .server(
                .outputAudioDelta(responseID: "resp_1", itemID: "item_1", contentIndex: 0, pcm: [1, 2]), generation: 1))
        #expect(late.isEmpty)
    }

    @Test func nothingPlayingMeansNoFlush() {
        var h = Harness()
        h.connect()
        let actions = h.feed(.server(.speechStarted(itemID: "u1", audioStartMs: 0), generation: 1))
        #expect(actions.isEmpty && h.session.turns.humanTalking)
    }

    // MARK: Tools

    @Test func aToolCallRunsOnceAndItsResultIsAnsweredAfterTheResponse() {
        var h = Harness()
        h.connect()
        let call = RealtimeFunctionCall(callID: "call_1", name: "mute", arguments: "{}")
        _ = h.feed(.server(.responseCreated(responseID: "r1"), generation: 1))
        let first = h.feed(.server(.functionCall(responseID: "r1", call: call), generation: 1))
        #expect(first == [.runTool(call, generation: 1)])
        let again = h.feed(
            .server(
                .responseDone(responseID: "r1", status: "completed", statusDetails: nil, functionCalls: [call]),
                generation: 1))
        #expect(again.isEmpty, "taken up once by call_id")
        let answered = h.feed(.toolFinished(call, RealtimeToolResult(output: "{}"), generation: 1))
        #expect(Self.sends(answered) == [.functionCallOutput(callID: "call_1", output: "{}"), .responseCreate])
        #expect(h.session.counts.toolCalls == 1)
        let stale = h.feed(.toolFinished(call, RealtimeToolResult(output: "{}"), generation: 7))
        #expect(Self.sends(stale).isEmpty && Self.logs(stale).count == 1, "a result for another session is dropped")
    }

    // MARK: Server errors

    @Test func aRateLimitedResponseIsLoggedAndTheNextSayGoesOut() {
        var h = Harness()
        h.connect()
        _ = h.feed(.say("One"))
        let details = #"{"type":"failed","error":{"type":"requests","code":"rate_limit_exceeded","message":"slow"}}"#
        let actions = h.feed(
            .server(.responseDone(responseID: "r1", status: "failed", statusDetails: details), generation: 1))
        #expect(Self.logs(actions).first?.contains("rate_limit_exceeded") == true)
        #expect(h.session.lastError?.contains("rate_limit_exceeded") == true && !h.session.isDone)
        #expect(Self.sends(h.feed(.say("Two"))) == [.userMessage("Two"), .responseCreate])
    }

    @Test(arguments: ["insufficient_quota", "invalid_api_key"])
    func anAccountErrorEndsTheAgentAndClosesItsSession(code: String) {
        var h = Harness()
        h.connect()
        let actions = h.feed(
            .server(.error(RealtimeError(type: "invalid_request_error", code: code, message: "no")), generation: 1))
        #expect(actions.contains(.close(generation: 1)) && Self.logs(actions).count == 1)
        #expect(h.session.status == .failed && h.session.isDone && h.session.nextDeadline == nil)
    }

    @Test func sessionExpiredRollsOverToANewSessionAfterTheFloor() {
        var h = Harness()
        h.connect()
        h.advance(.seconds(30))
        let actions = h.feed(
            .server(
                .error(RealtimeError(type: "invalid_request_error", code: "session_expired", message: "")),
                generation: 1))
        #expect(actions.contains(.close(generation: 1)) && Self.logs(actions).count == 1)
        #expect(!h.session.isConnected && h.session.nextDeadline == h.t, "a new session at once")
        #expect(h.feed(.timer) == [.open(generation: 2)])
        _ = h.feed(.connected(generation: 2))
        #expect(h.session.counts.rollovers == 1 && h.session.counts.reconnects == 0)
        #expect(h.feed(.closed(generation: 1, code: 1000, reason: "")).isEmpty, "the old session's close is stale")
    }

    // MARK: Reconnects

    /// (how the upgrade failed, twice) → the agent's fate and the retry's deadline after the first.
    @Test(
        arguments: [
            (.failed("refused"), false), (.rejected(status: 404, message: ""), true),
            (.unauthorized(status: 401), true),
        ] as [(RealtimeConnection.ConnectError, Bool)])
    func failedUpgradesBackOffOrEnd(error: RealtimeConnection.ConnectError, endsAfterTwo: Bool) {
        var h = Harness()
        _ = h.feed(.start)
        let start = h.t
        _ = h.feed(.timer)
        let first = h.feed(.connectFailed(generation: 1, error))
        if case .unauthorized = error {
            #expect(h.session.isDone && Self.logs(first).count == 1)
            return
        }
        #expect(Self.logs(first).first?.contains("retrying in 0.5 s") == true, "\(first)")
        // Backoff 0.5 s, under the 1 s floor since the attempt: the floor wins.
        #expect(h.session.nextDeadline == start + .seconds(1))
        #expect(h.fireNextDeadline() == [.open(generation: 2)])
        _ = h.feed(.connectFailed(generation: 2, error))
        #expect(h.session.isDone == endsAfterTwo)
        if !endsAfterTwo {
            #expect(h.session.nextDeadline == start + .seconds(2), "attempt 2 backs off 1 s")
            #expect(h.session.counts.retries == 2 && h.session.status == .reconnecting)
        }
    }

    /// (close code) → the line and when the next session is opened.
    @Test(
        arguments: [(1006, .milliseconds(500), "connection closed"), (1001, .zero, "moving to a new one")]
            as [(Int, Duration, String)])
    func aDroppedSessionReconnects(code: Int, after: Duration, says: String) {
        var h = Harness()
        h.connect()
        h.advance(.seconds(60))
        let actions = h.feed(.closed(generation: 1, code: code, reason: ""))
        #expect(Self.logs(actions).first?.contains(says) == true, "\(actions)")
        #expect(h.session.nextDeadline == h.t + after)
        #expect(h.fireNextDeadline() == [.open(generation: 2)])
        _ = h.feed(.connected(generation: 2))
        #expect(h.session.isConnected)
        #expect(h.session.counts.reconnects + h.session.counts.rollovers == 1)
    }

    @Test func sessionsTheServerEndsAtOnceBackOffThenEndTheAgent() {
        var h = Harness()
        _ = h.feed(.start)
        var opened = 0
        while !h.session.isDone {
            let actions = h.fireNextDeadline()
            guard case .open(let g) = actions.first else {
                Issue.record("no attempt: \(actions)")
                return
            }
            opened += 1
            _ = h.feed(.connected(generation: g))
            _ = h.feed(.closed(generation: g, code: 1001, reason: "going away"))
        }
        #expect(opened == 5 && h.session.status == .failed)
        #expect(h.session.failure?.contains("5 sessions in a row") == true)
    }

    @Test func aCloseBeforeTheUpgradeIsReportedEndsTheSessionOnceOpened() {
        var h = Harness()
        _ = h.feed(.start)
        _ = h.feed(.timer)
        #expect(h.feed(.closed(generation: 1, code: 1006, reason: "")).isEmpty)
        let actions = h.feed(.connected(generation: 1))
        #expect(Self.logs(actions).first?.contains("connection closed") == true && !h.session.isConnected)
    }

    // MARK: Rollover

    @Test func aSessionIsReplacedBeforeItsExpiryMakeBeforeBreak() {
        var h = Harness()
        h.connect()
        _ = h.feed(.server(.sessionCreated(expiresAt: Int(h.unix) + 60), generation: 1))
        // A 60 s life: the lead is 10 % of it, 6 s before the end.
        #expect(h.session.nextDeadline == h.t + .seconds(54))
        #expect(h.fireNextDeadline() == [.open(generation: 2)])
        #expect(h.session.isOpeningSession && h.session.current == 1)
        let setUp = h.feed(.connected(generation: 2))
        #expect(setUp == [.send(.sessionUpdate(h.session.settings), eventID: "rt_2", on: 2)])
        // Heard audio still goes to the old session until the new one is ready.
        #expect(h.feed(.audioChunk(samples: 960, roomSample: 0)).contains(.sendAudio(eventID: "rt_3", on: 1)))
        _ = h.feed(.server(.sessionUpdated, generation: 2))
        #expect(h.session.current == 2 && h.session.generation == 2 && h.session.counts.rollovers == 1)
        #expect(h.feed(.audioChunk(samples: 960, roomSample: 1_920)).contains(.sendAudio(eventID: "rt_4", on: 2)))
        #expect(h.session.nextDeadline == h.t + .seconds(3), "the old session closes 3 s later")
        #expect(h.fireNextDeadline() == [.close(generation: 1)])
    }

    @Test func theMoveWaitsForTheReplyToPlayOut() {
        var h = Harness { $0.sessionLifetime = .seconds(10) }
        h.connect()
        h.advance(.seconds(10))
        _ = h.reply(2_400)
        _ = h.feed(.server(.responseDone(responseID: "resp_1", status: "completed", statusDetails: nil), generation: 1))
        #expect(h.feed(.timer).isEmpty, "not while the reply plays")
        #expect(h.session.nextDeadline == h.t + .milliseconds(101))
        h.voice.playPosition = h.voice.writePosition
        let actions = h.fireNextDeadline()
        #expect(actions.contains(.open(generation: 2)))
    }

    @Test func aRolloverThatCannotBeSetUpIsTriedAgainIn10Seconds() {
        var h = Harness { $0.sessionLifetime = .seconds(10) }
        h.connect()
        _ = h.fireNextDeadline()
        _ = h.feed(.connected(generation: 2))
        #expect(h.session.nextDeadline == h.t + .seconds(5), "the set-up's patience")
        let actions = h.fireNextDeadline()
        #expect(actions.contains(.close(generation: 2)) && Self.logs(actions).count == 1)
        #expect(h.session.current == 1 && h.session.nextDeadline == h.t + .seconds(10))
    }

    @Test func aSessionThatExpiresWhileItsSuccessorWaitsForAQuietMomentMovesAtOnce() {
        var h = Harness { $0.sessionLifetime = .seconds(10) }
        h.connect()
        #expect(h.fireNextDeadline() == [.open(generation: 2)])
        _ = h.feed(.connected(generation: 2))
        _ = h.feed(.server(.responseCreated(responseID: "r1"), generation: 1))
        _ = h.feed(.server(.sessionUpdated, generation: 2))
        #expect(h.session.current == 1, "a reply is in progress: the move waits")
        #expect(h.session.nextDeadline == h.t + .seconds(30), "no sooner than its patience: no polling")
        let expired = RealtimeError(type: "invalid_request_error", code: "session_expired", message: "")
        let actions = h.feed(.server(.error(expired), generation: 1))
        #expect(
            actions.contains(.close(generation: 1)) && !actions.contains { if case .open = $0 { true } else { false } })
        #expect(h.session.current == 2 && h.session.counts.rollovers == 1 && h.session.isConnected)
    }

    @Test func aNewSessionIsOpeningUntilItAnswersItsSetUp() {
        var h = Harness()
        h.connect()
        #expect(h.session.isOpeningSession)
        let refused = RealtimeError(type: "invalid_request_error", code: "invalid_value", message: "", eventID: "rt_1")
        let actions = h.feed(.server(.error(refused), generation: 1))
        #expect(Self.logs(actions).count == 1 && h.session.sessionWarning != nil)
        #expect(!h.session.isOpeningSession, "a refused update is an answer too")
    }

    // MARK: Stop

    @Test func stopClosesEverySessionAndWantsNoMoreTime() {
        var h = Harness { $0.sessionLifetime = .seconds(10) }
        h.connect()
        _ = h.fireNextDeadline()  // a rollover under way
        let actions = h.feed(.stop)
        #expect(Set(actions.map { "\($0)" }) == ["close(generation: 1)", "close(generation: 2)"])
        #expect(h.session.isDone && h.session.nextDeadline == nil && h.feed(.timer).isEmpty)
        #expect(h.feed(.stop).isEmpty, "idempotent")
        _ = h.feed(.finish)
        #expect(h.session.status == .stopped)
    }
}

/// The voice track's barge-in flush takes effect at once, from the writer's side, with no clock
/// running: the stop position is exact, the next frame is silent, and what is pushed after plays
/// from a new anchor on the room timeline.
@Suite("Agent: the voice flush")
struct VoiceFlushTests {
    @Test func aFlushNeedsNoTickAndTheNextReplyIsPlacedWhereItPlays() {
        let voice = AgentVoiceSource(seconds: 1, prebufferMilliseconds: 0)
        let out = UnsafeMutableBufferPointer<Int16>.allocate(capacity: 480)
        defer { out.deallocate() }
        _ = [Int16](repeating: 7, count: 4_800).withUnsafeBufferPointer { voice.push($0) }
        _ = voice.render(into: out, at: 0)
        _ = voice.render(into: out, at: 480)
        let wall = ContinuousClock.now
        let stoppedAt = voice.flush()
        #expect(ContinuousClock.now - wall < .milliseconds(5), "no wait for the clock")
        #expect(stoppedAt == 960 && voice.playPosition == 4_800 && !voice.isPlaying)
        #expect(voice.flush() == 4_800, "a second flush skips nothing")
        #expect(voice.render(into: out, at: 960) == .silence && out[0] == 0)
        _ = [Int16](repeating: 3, count: 960).withUnsafeBufferPointer { voice.push($0) }
        voice.markComplete()
        #expect(voice.render(into: out, at: 1_440) == .normal && out[0] == 3 && out[479] == 3)
        #expect(voice.roomSample(atPosition: 4_800) == 1_440, "anchored where it played")
        #expect(voice.roomSample(atPosition: 480) == 480, "the audio before the flush stays where it played")
    }

    @Test func aFlushRightAfterAFullFrameStillAnchorsTheNextAudio() {
        let voice = AgentVoiceSource(seconds: 1, prebufferMilliseconds: 0)
        let out = UnsafeMutableBufferPointer<Int16>.allocate(capacity: 480)
        defer { out.deallocate() }
        _ = [Int16](repeating: 7, count: 4_800).withUnsafeBufferPointer { voice.push($0) }
        _ = voice.render(into: out, at: 0)
        // Flushed and refilled between two ticks: the frame after is the new audio, placed anew.
        #expect(voice.flush() == 480)
        _ = [Int16](repeating: 3, count: 960).withUnsafeBufferPointer { voice.push($0) }
        #expect(voice.render(into: out, at: 480) == .normal && out[0] == 3)
        #expect(voice.roomSample(atPosition: 4_800) == 480)
    }
}
