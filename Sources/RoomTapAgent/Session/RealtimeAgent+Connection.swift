import Foundation
import RoomTapSync

/// The connection lifecycle (the supervisor thread, `roomtap.agent`): connect, back off, stop on
/// what will not heal, and replace a session before the service ends it. No path opens
/// connections faster than a bounded rate.
///
/// - A refused key (HTTP 401/403) ends the agent at once; another 4xx but 408/429 after one more
///   try; 408, 429, 5xx and network failures back off (``RealtimeAgentConfiguration/
///   reconnectDelay``: 0.5 s doubling to 30 s, with jitter).
/// - Every attempt (reconnect or rollover) waits at least ``RealtimeAgentConfiguration/
///   minimumConnectionInterval`` after the one before.
/// - A session is replaced before it expires (a rollover): from ``RealtimeAgentConfiguration/
///   sessionLifetime`` after it opened, or a lead before its `expires_at` that is a share of its
///   life (``RealtimeAgentConfiguration/rolloverLead(life:lead:share:)``: min(5 min, 10 %)), at
///   the first quiet moment (no reply in progress or playing, nobody talking), a new session is
///   opened and set up (`session.update`, the recent context as one system item); then the heard
///   audio moves to it, and the old one closes a few seconds later (its last transcriptions still
///   count). No audio and no reply is lost.
/// - `session_expired` or a close 1001 is "roll over now": a new session at once (the floor
///   aside). A session the server ends at once (``RealtimeAgentConfiguration/quickSessionEnd``)
///   a second time in a row is followed by backoff, whatever the code; after
///   ``RealtimeAgentConfiguration/maxQuickSessionEnds`` in a row the agent stops with one line.
extension RealtimeAgent {
    /// How a session ended.
    private enum Ending {
        case stop
        case expired
        case closed(code: Int, reason: String)
    }

    func supervise() {
        let clock = configuration.clock
        var attempt = 0
        var rejectedOnce = false
        var everConnected = false
        var delay = 0.0
        var rollingOver = false
        var lastAttempt: ContinuousClock.Instant?
        var quickEnds = 0
        supervising: while true {
            if state.withLock({ $0.stopRequested || $0.fatal }) { break }
            if attempt > 0 && !rollingOver {
                state.withLock { $0.status = .reconnecting }
                if !sleep(until: clock.now + .milliseconds(Int(max(0, delay) * 1000))) { break }
            }
            // The floor between attempts, whatever led here.
            if let lastAttempt, !sleep(until: lastAttempt + configuration.minimumConnectionInterval) { break }
            lastAttempt = clock.now
            let (generation, connection, life) = makeConnection()
            let cancelled = state.withLock { s -> Bool in
                s.status = everConnected || attempt > 0 ? .reconnecting : .connecting
                s.generation = generation
                s.connecting = connection
                s.openingExpiresAt = nil
                s.opening = true
                return s.stopRequested
            }
            if cancelled { break }
            defer { state.withLock { $0.opening = false } }
            do {
                try connection.connect(redacting: configuration.apiKey)
            } catch {
                if state.withLock({ $0.stopRequested }) { break supervising }
                let message: String
                switch error {
                case .unauthorized(let status):
                    fail(
                        "the Realtime server refused the API key (HTTP \(status)): check \(configuration.keyName); "
                            + "the agent is off, the recording goes on")
                    break supervising
                case .rejected(let status, let text):
                    if rejectedOnce {
                        fail(
                            "the Realtime server rejected the connection twice (HTTP \(status)\(text.isEmpty ? "" : ": \(text)")): "
                                + "check --agent-url and --agent-model; the agent is off, the recording goes on")
                        break supervising
                    }
                    rejectedOnce = true
                    message = "HTTP \(status)\(text.isEmpty ? "" : ": \(text)")"
                case .failed(let text):
                    message = text
                }
                errors.add(1, ordering: .relaxed)
                retries.add(1, ordering: .relaxed)
                attempt += 1
                rollingOver = false
                delay = configuration.reconnectDelay(attempt)
                let line =
                    "cannot connect to \(Self.host(configuration.url)): \(message); retrying in "
                    + String(format: "%.1f s", delay)
                state.withLock { $0.lastError = line }
                configuration.log(line)
                continue supervising
            }
            rejectedOnce = false
            if everConnected {
                if rollingOver { rollovers.add(1, ordering: .relaxed) } else { reconnects.add(1, ordering: .relaxed) }
            }
            everConnected = true
            sessionsOpened.add(1, ordering: .relaxed)
            rollingOver = false
            perform(
                state.withLock { s in
                    s.opening = false
                    return opened(connection, &s)
                })
            // After rollovers the session in use is another connection than the one opened here.
            let (ending, current, currentLife) = watch(connection, life)
            if case .stop = ending {
                current.close(code: 1000)
                _ = currentLife.wait(seconds: 1)
                break supervising
            }
            let (lived, quick) = state.withLock { s -> (Duration, Bool) in
                let lived = clock.now - s.sessionOpenedAt
                let limit =
                    s.sessionLife.map { min(configuration.quickSessionEnd, $0 / 2) } ?? configuration.quickSessionEnd
                return (lived, lived < limit)
            }
            let how: String
            switch ending {
            case .stop: break supervising
            case .expired:
                current.close(code: 1000)
                how = "session_expired"
            case .closed(let code, let reason):
                how = "\(code)\(reason.isEmpty ? "" : " \(reason)")"
            }
            retire()
            quickEnds = quick ? quickEnds + 1 : 0
            if quickEnds >= configuration.maxQuickSessionEnds {
                fail(
                    "the Realtime server ended \(quickEnds) sessions in a row right after they opened (last: \(how) "
                        + "after \(Self.seconds(lived))): check --agent-url, the account and the service's status; "
                        + "the agent is off, the recording goes on")
                break supervising
            }
            if quickEnds >= 2 {
                // Ended at once again: never straight back, and (above) not forever.
                attempt = quickEnds - 1
                rollingOver = false
                retries.add(1, ordering: .relaxed)
                delay = configuration.reconnectDelay(attempt)
                let line =
                    "the server ended the session after \(Self.seconds(lived)) (\(how)), \(quickEnds) in a row; "
                    + "reconnecting in " + String(format: "%.1f s", delay)
                state.withLock { $0.lastError = line }
                configuration.log(line)
                continue supervising
            }
            if case .closed(let code, _) = ending, code != 1001 {
                configuration.log("connection closed (\(how)); reconnecting")
                attempt = 1
                retries.add(1, ordering: .relaxed)
                delay = configuration.reconnectDelay(attempt)
            } else {
                if case .closed = ending { configuration.log("the session ended (\(how)); moving to a new one") }
                rollingOver = true
                attempt = 0
            }
        }
        let leftovers = state.withLock { s -> [RealtimeConnection] in
            connected.store(false, ordering: .releasing)
            if s.failure == nil { s.status = .stopped }
            defer { s.connection = nil }
            return [s.connection, s.incoming?.connection].compactMap { $0 }
        }
        for c in leftovers { c.close(code: 1000) }
    }

    /// Waits until `deadline` (the supervisor's backoff and floor); false when the agent is to
    /// stop meanwhile. Supervisor thread.
    private func sleep(until deadline: ContinuousClock.Instant) -> Bool {
        let clock = configuration.clock
        while true {
            if state.withLock({ $0.stopRequested || $0.fatal }) { return false }
            let now = clock.now
            guard now < deadline else { return true }
            _ = clock.wait(wake, until: min(deadline, now + .seconds(1)))
        }
    }

    /// `0.12 s`.
    static func seconds(_ d: Duration) -> String {
        String(format: "%.2f s", Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18)
    }

    /// A connection whose events go to ``handle(_:generation:)`` under a generation number of
    /// its own (current once the supervisor makes it so).
    private func makeConnection() -> (Int, RealtimeConnection, ConnectionLife) {
        let generation = state.withLock { s -> Int in
            s.lastGeneration += 1
            return s.lastGeneration
        }
        let life = ConnectionLife()
        let connection = RealtimeConnection(
            url: configuration.url, apiKey: configuration.apiKey, authentication: configuration.authentication,
            onText: { [weak self] text in self?.handle(text, generation: generation) },
            onClose: { [weak self] code, reason in
                life.close(code: code, reason: reason)
                self?.wake.signal()
            })
        return (generation, connection, life)
    }

    /// A session opened: it is the one in use; nothing of an old session carries over but what
    /// the model should remember (one system item) and the says still waiting.
    private func opened(_ connection: RealtimeConnection, _ s: inout State) -> [AgentAction] {
        let clock = configuration.clock
        s.connecting = nil
        s.connection = connection
        s.status = .connected
        s.clock = SessionClock()
        s.turns.reset()
        s.rollNow = false
        s.previous = nil
        s.sessionOpenedAt = clock.now
        s.sessionLife = nil
        s.rolloverAt = clock.now + configuration.sessionLifetime
        if let expiresAt = s.openingExpiresAt { planRollover(expiresAt: expiresAt, &s) }
        s.openingExpiresAt = nil
        connected.store(true, ordering: .releasing)
        return setUp(connection, &s) + releaseSay(&s)
    }

    /// `session.update` and the context summary for a new session.
    private func setUp(_ connection: RealtimeConnection, _ s: inout State) -> [AgentAction] {
        if let transcription = configuration.transcription {
            // A transcription session: its settings only (no conversation to remind it of).
            let update = RealtimeClientEvent.transcriptionSessionUpdate(transcription)
            return [.send(update.json(eventID: sessionUpdateID(&s)), on: connection)]
        }
        var actions: [AgentAction] = [
            .send(RealtimeClientEvent.sessionUpdate(s.settings).json(eventID: sessionUpdateID(&s)), on: connection)
        ]
        if let summary = s.transcript.contextSummary {
            actions.append(
                .send(RealtimeClientEvent.systemMessage(summary).json(eventID: nextEventID()), on: connection))
        }
        return actions
    }

    /// Brings the rollover forward to a lead before the session's `expires_at` (Unix seconds):
    /// the smaller of ``RealtimeAgentConfiguration/rolloverLead`` and
    /// ``RealtimeAgentConfiguration/rolloverShare`` of the session's life, and never sooner than
    /// ``RealtimeAgentConfiguration/minimumConnectionInterval`` after it opened.
    func planRollover(expiresAt: Int, _ s: inout State) {
        let clock = configuration.clock
        let now = clock.now
        let left = Double(expiresAt) - clock.unixTime
        let life = now - s.sessionOpenedAt + .milliseconds(Int(max(0, left) * 1000))
        s.sessionLife = life
        let lead = RealtimeAgentConfiguration.rolloverLead(
            life: life, lead: configuration.rolloverLead, share: configuration.rolloverShare)
        let at = max(s.sessionOpenedAt + life - lead, s.sessionOpenedAt + configuration.minimumConnectionInterval)
        s.rolloverAt = min(s.rolloverAt ?? at, at)
    }

    /// Watches the session in use until it ends; writes agent lines as they play out; rolls the
    /// session over when due and quiet (then watches the new one).
    private func watch(
        _ first: RealtimeConnection, _ firstLife: ConnectionLife
    ) -> (Ending, RealtimeConnection, ConnectionLife) {
        let clock = configuration.clock
        var connection = first
        var life = firstLife
        var retiring: [(RealtimeConnection, ContinuousClock.Instant)] = []
        defer { for (old, _) in retiring { old.close(code: 1000) } }
        while true {
            _ = clock.wait(wake, until: clock.now + .milliseconds(50))
            let (lines, stopping, rollNow, due) = state.withLock { s in
                (
                    agentLines(&s, final: false), s.stopRequested || s.fatal, s.rollNow,
                    s.rolloverAt.map { clock.now >= $0 } ?? false
                        && !s.turns.active && !s.turns.humanTalking && !voice.isPlaying
                )
            }
            perform(lines)
            let now = clock.now
            retiring.removeAll { old, at in
                guard now >= at else { return false }
                old.close(code: 1000)
                return true
            }
            if stopping { return (.stop, connection, life) }
            if life.isClosed {
                let (code, reason) = life.closeReason
                return (.closed(code: code, reason: reason), connection, life)
            }
            if rollNow { return (.expired, connection, life) }
            if due, let (next, nextLife) = rollOver() {
                retiring.append((connection, clock.now + .seconds(3)))
                connection = next
                life = nextLife
            }
        }
    }

    /// Opens and sets up the next session while the current one goes on, then moves to it. Nil
    /// (and a later try) when it cannot be opened.
    private func rollOver() -> (RealtimeConnection, ConnectionLife)? {
        let clock = configuration.clock
        let (generation, next, life) = makeConnection()
        var ready: Bool
        // Incoming before it connects: its greeting (`expires_at`) may come before connect returns.
        state.withLock { s in
            s.opening = true
            s.incoming = (generation, next)
            s.incomingReady = false
            s.incomingExpiresAt = nil
        }
        do {
            try next.connect(redacting: configuration.apiKey)
            perform(state.withLock { s in setUp(next, &s) })
            let deadline = clock.now + .seconds(5)
            var done = false
            while !done && clock.now < deadline && !life.isClosed {
                _ = clock.wait(wake, until: clock.now + .milliseconds(20))
                done = state.withLock { $0.incomingReady || $0.stopRequested || $0.fatal }
            }
            ready = state.withLock { $0.incomingReady } && !life.isClosed
        } catch {
            ready = false
        }
        state.withLock { $0.opening = false }
        // The move happens at a quiet moment, checked under the same lock as the swap: a reply the
        // old session started meanwhile (server VAD) plays out there first. Says wait meanwhile.
        var actions: [AgentAction] = []
        let patience = clock.now + .seconds(30)
        while true {
            var swapped = false
            let settled = state.withLock { s -> Bool in
                guard ready, !s.stopRequested, !s.fatal, !life.isClosed, clock.now < patience else {
                    s.incoming = nil
                    s.rolloverAt = clock.now + .seconds(10)
                    actions = [.log("could not move to a new session yet; trying again in 10 s")]
                    return true
                }
                guard !s.turns.active, !s.turns.humanTalking, !voice.isPlaying else { return false }
                s.previous = (s.generation, s.clock)
                s.generation = generation
                s.connection = next
                s.incoming = nil
                s.clock = SessionClock()
                s.turns.reset()
                s.sessionOpenedAt = clock.now
                s.sessionLife = nil
                s.rolloverAt = clock.now + configuration.sessionLifetime
                if let expiresAt = s.incomingExpiresAt { planRollover(expiresAt: expiresAt, &s) }
                s.incomingExpiresAt = nil
                actions = releaseSay(&s)
                swapped = true
                return true
            }
            if settled {
                if !swapped { ready = false }
                break
            }
            _ = clock.wait(wake, until: clock.now + .milliseconds(20))
        }
        perform(actions)
        guard ready, state.withLock({ $0.connection === next }) else {
            next.close(code: 1000)
            return nil
        }
        rollovers.add(1, ordering: .relaxed)
        sessionsOpened.add(1, ordering: .relaxed)
        return (next, life)
    }

    /// The session in use is gone: no audio goes anywhere until the next one.
    private func retire() {
        state.withLock { s in
            connected.store(false, ordering: .releasing)
            s.connection = nil
            s.previous = nil
        }
    }

    static func host(_ url: String) -> String {
        URLComponents(string: url).flatMap { c in c.host.map { h in c.port.map { "\(h):\($0)" } ?? h } } ?? url
    }
}

/// One connection's close, signalled by the client's thread.
final class ConnectionLife: Sendable {
    private let closed = Locked<(Int, String)?>(nil)
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

extension Duration {
    /// Nanoseconds, 0 for a negative duration.
    var nanosecondsClamped: UInt64 {
        let (seconds, attoseconds) = components
        guard seconds >= 0 else { return 0 }
        guard seconds < 1_000_000_000 else { return UInt64.max / 2 }
        return UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000)
    }
}
