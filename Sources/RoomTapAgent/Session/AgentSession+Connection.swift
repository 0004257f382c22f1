import Foundation
import RoomTapSync

/// The connection lifecycle, decided: connect, back off, stop on what will not heal, and replace
/// a session before the service ends it. No path opens connections faster than a bounded rate.
///
/// - A refused key (HTTP 401/403) ends the agent at once; another 4xx but 408/429 after one more
///   try; 408, 429, 5xx and network failures back off (``RealtimeAgentConfiguration/
///   reconnectDelay``: 0.5 s doubling to 30 s, with jitter).
/// - Every attempt after a drop or a failure waits at least ``RealtimeAgentConfiguration/
///   minimumConnectionInterval`` after the one before (a rollover is never planned sooner than
///   that after its session opened).
/// - A session is replaced before it expires (a rollover): from ``RealtimeAgentConfiguration/
///   sessionLifetime`` after it opened, or a lead before its `expires_at` that is a share of its
///   life (``RealtimeAgentConfiguration/rolloverLead(life:lead:share:)``: min(5 min, 10 %)), at
///   the first quiet moment (no reply in progress or playing, nobody talking), a new session is
///   opened and set up (`session.update`, the recent context as one system item); then the heard
///   audio moves to it, and the old one closes 3 s later (its last transcriptions still count).
/// - `session_expired` or a close 1001 is "roll over now": a new session at once (the floor
///   aside). A session the server ends at once (``RealtimeAgentConfiguration/quickSessionEnd``)
///   a second time in a row is followed by backoff, whatever the code; after
///   ``RealtimeAgentConfiguration/maxQuickSessionEnds`` in a row the agent stops with one line.
///
/// Only ``SessionInput/timer`` opens connections (``AgentAction/open(generation:)``): the shell
/// performs it on its supervisor thread, which may block in the upgrade.
extension AgentSession {
    /// How a session in use ended.
    enum Ending {
        case expired
        case closed(code: Int, reason: String)
    }

    mutating func start() -> [AgentAction] {
        guard !started else { return [] }
        started = true
        guard !configuration.apiKey.isEmpty else {
            return fail(
                "no API key: set \(configuration.keyName) to use the agent; the room records without it")
        }
        retryAt = now.instant
        return []
    }

    mutating func stop() -> [AgentAction] {
        guard !stopRequested else { return [] }
        stopRequested = true
        return closeAll()
    }

    /// Closes every connection the reducer knows of; none is in use after.
    mutating func closeAll() -> [AgentAction] {
        let all = [current, connecting, incoming?.generation].compactMap { $0 } + retiring.map(\.generation)
        current = nil
        connecting = nil
        settingUp = nil
        incoming = nil
        retiring = []
        previous = nil
        var seen = Set<Int>()
        return all.filter { seen.insert($0).inserted }.map { .close(generation: $0) }
    }

    /// Ends the agent for good: one line, `failed`, no more retries.
    mutating func fail(_ message: String) -> [AgentAction] {
        failure = message
        lastError = message
        status = .failed
        fatal = true
        return [.log(message)] + closeAll()
    }

    // MARK: Timers

    /// What is due at ``now``: a connection attempt, a rollover, a rollover's set-up deadline or
    /// patience, the close of a retired session.
    mutating func timersDue() -> [AgentAction] {
        guard !isDone else { return [] }
        let t = now.instant
        var actions: [AgentAction] = []
        retiring.removeAll { old in
            guard t >= old.at else { return false }
            actions.append(.close(generation: old.generation))
            return true
        }
        if current == nil, connecting == nil, let retryAt,
            t >= retryAt, lastAttempt.map({ t >= $0 + configuration.minimumConnectionInterval }) ?? true
        {
            actions += attempt(at: t)
        }
        if current != nil, incoming == nil, let rolloverAt, t >= rolloverAt, quiet {
            lastGeneration += 1
            incoming = Incoming(generation: lastGeneration)
            actions.append(.open(generation: lastGeneration))
        }
        if let incoming, case .settingUp(let until) = incoming.phase, t >= until {
            actions += incomingSettled()
        }
        return actions + moveIfReady()
    }

    /// A first connection or a reconnect.
    private mutating func attempt(at t: MonotonicClock.Instant) -> [AgentAction] {
        lastAttempt = t
        retryAt = nil
        lastGeneration += 1
        status = everConnected || attempt > 0 ? .reconnecting : .connecting
        generation = lastGeneration
        connecting = lastGeneration
        connectingClosed = nil
        openingExpiresAt = nil
        return [.open(generation: lastGeneration)]
    }

    // MARK: Upgrades

    mutating func connected(_ g: Int) -> [AgentAction] {
        if let incoming, incoming.generation == g {
            guard !isDone, current != nil else { return [.close(generation: g)] }
            var actions = setUp(g)
            self.incoming?.phase = .settingUp(until: now.instant + .seconds(5))
            if self.incoming?.ready == true || self.incoming?.closed == true { actions += incomingSettled() }
            return actions
        }
        guard connecting == g, !isDone else { return [.close(generation: g)] }
        rejectedOnce = false
        if everConnected {
            if rollingOver { counts.rollovers += 1 } else { counts.reconnects += 1 }
        }
        everConnected = true
        counts.sessionsOpened += 1
        rollingOver = false
        connecting = nil
        current = g
        settingUp = g
        status = .connected
        clock = SessionClock()
        turns.reset()
        previous = nil
        sessionOpenedAt = now.instant
        sessionLife = nil
        rolloverAt = now.instant + configuration.sessionLifetime
        if let expiresAt = openingExpiresAt { planRollover(expiresAt: expiresAt) }
        openingExpiresAt = nil
        var actions = setUp(g) + releaseSay()
        if let (code, reason) = connectingClosed {
            connectingClosed = nil
            actions += ended(.closed(code: code, reason: reason))
        }
        return actions
    }

    mutating func connectFailed(_ g: Int, _ error: RealtimeConnection.ConnectError) -> [AgentAction] {
        if let incoming, incoming.generation == g {
            self.incoming?.ready = false
            self.incoming?.closed = true
            return incomingSettled()
        }
        guard connecting == g else { return [] }
        connecting = nil
        guard !isDone else { return [] }
        let message: String
        switch error {
        case .unauthorized(let status):
            return fail(
                "the Realtime server refused the API key (HTTP \(status)): check \(configuration.keyName); "
                    + "the agent is off, the recording goes on")
        case .rejected(let status, let text):
            if rejectedOnce {
                return fail(
                    "the Realtime server rejected the connection twice (HTTP \(status)\(text.isEmpty ? "" : ": \(text)")): "
                        + "check --agent-url and --agent-model; the agent is off, the recording goes on")
            }
            rejectedOnce = true
            message = "HTTP \(status)\(text.isEmpty ? "" : ": \(text)")"
        case .failed(let text):
            message = text
        }
        counts.errors += 1
        counts.retries += 1
        attempt += 1
        rollingOver = false
        let delay = configuration.reconnectDelay(attempt)
        retryAt = now.instant + .milliseconds(Int(max(0, delay) * 1000))
        status = .reconnecting
        let line =
            "cannot connect to \(Self.host(configuration.url)): \(message); retrying in "
            + String(format: "%.1f s", delay)
        lastError = line
        return [.log(line)]
    }

    /// `session.update` and the context summary for a new session.
    mutating func setUp(_ g: Int) -> [AgentAction] {
        if let transcription = configuration.transcription {
            // A transcription session: its settings only (no conversation to remind it of).
            return [.send(.transcriptionSessionUpdate(transcription), eventID: sessionUpdateID(), on: g)]
        }
        var actions: [AgentAction] = [.send(.sessionUpdate(settings), eventID: sessionUpdateID(), on: g)]
        if let summary = transcript.contextSummary {
            actions.append(.send(.systemMessage(summary), eventID: nextEventID(), on: g))
        }
        return actions
    }

    // MARK: Closes

    mutating func closed(_ g: Int, code: Int, reason: String) -> [AgentAction] {
        if connecting == g {
            connectingClosed = (code, reason)
            return []
        }
        if let incoming, incoming.generation == g {
            self.incoming?.closed = true
            if case .connecting = incoming.phase { return [] }
            return incomingSettled()
        }
        retiring.removeAll { $0.generation == g }
        guard current == g, !isDone else { return [] }
        if let incoming, case .moving = incoming.phase, incoming.ready, !incoming.closed {
            // The rollover's session is ready: move to it now, the old one is gone anyway.
            return swap()
        }
        return ended(.closed(code: code, reason: reason))
    }

    /// The session in use ended: back off, roll over at once, or give up.
    mutating func ended(_ ending: Ending) -> [AgentAction] {
        guard let g = current else { return [] }
        var actions: [AgentAction] = []
        let lived = now.instant - (sessionOpenedAt ?? now.instant)
        let limit = sessionLife.map { min(configuration.quickSessionEnd, $0 / 2) } ?? configuration.quickSessionEnd
        let quick = lived < limit
        let how: String
        switch ending {
        case .expired:
            actions.append(.close(generation: g))
            how = "session_expired"
        case .closed(let code, let reason):
            how = "\(code)\(reason.isEmpty ? "" : " \(reason)")"
        }
        // The session in use is gone: no audio goes anywhere until the next one.
        current = nil
        settingUp = nil
        previous = nil
        if let incoming {
            actions.append(.close(generation: incoming.generation))
            self.incoming = nil
        }
        status = .reconnecting
        quickEnds = quick ? quickEnds + 1 : 0
        if quickEnds >= configuration.maxQuickSessionEnds {
            return actions
                + fail(
                    "the Realtime server ended \(quickEnds) sessions in a row right after they opened (last: \(how) "
                        + "after \(Self.seconds(lived))): check --agent-url, the account and the service's status; "
                        + "the agent is off, the recording goes on")
        }
        if quickEnds >= 2 {
            // Ended at once again: never straight back, and (above) not forever.
            attempt = quickEnds - 1
            rollingOver = false
            counts.retries += 1
            let delay = configuration.reconnectDelay(attempt)
            retryAt = now.instant + .milliseconds(Int(max(0, delay) * 1000))
            let line =
                "the server ended the session after \(Self.seconds(lived)) (\(how)), \(quickEnds) in a row; "
                + "reconnecting in " + String(format: "%.1f s", delay)
            lastError = line
            return actions + [.log(line)]
        }
        if case .closed(let code, _) = ending, code != 1001 {
            attempt = 1
            rollingOver = false
            counts.retries += 1
            let delay = configuration.reconnectDelay(attempt)
            retryAt = now.instant + .milliseconds(Int(max(0, delay) * 1000))
            return actions + [.log("connection closed (\(how)); reconnecting")]
        }
        if case .closed = ending { actions.append(.log("the session ended (\(how)); moving to a new one")) }
        rollingOver = true
        attempt = 0
        retryAt = now.instant
        return actions
    }

    // MARK: Rollover

    /// Brings the rollover forward to a lead before the session's `expires_at` (Unix seconds):
    /// the smaller of ``RealtimeAgentConfiguration/rolloverLead`` and
    /// ``RealtimeAgentConfiguration/rolloverShare`` of the session's life, and never sooner than
    /// ``RealtimeAgentConfiguration/minimumConnectionInterval`` after it opened.
    mutating func planRollover(expiresAt: Int) {
        let opened = sessionOpenedAt ?? now.instant
        let left = Double(expiresAt) - now.unixTime
        let life = now.instant - opened + .milliseconds(Int(max(0, left) * 1000))
        sessionLife = life
        let lead = RealtimeAgentConfiguration.rolloverLead(
            life: life, lead: configuration.rolloverLead, share: configuration.rolloverShare)
        let at = max(opened + life - lead, opened + configuration.minimumConnectionInterval)
        rolloverAt = min(rolloverAt ?? at, at)
    }

    /// The incoming session is set up (`session.updated`, or a refused update), or its set-up
    /// failed or timed out: it waits for a quiet moment, or the rollover is given up for now.
    mutating func incomingSettled() -> [AgentAction] {
        guard let incoming else { return [] }
        guard incoming.ready, !incoming.closed, !isDone, current != nil else { return giveUpRollover() }
        self.incoming?.phase = .moving(patience: now.instant + .seconds(30))
        return moveIfReady()
    }

    /// The rollover could not be made: its session closes, the next try is in 10 s.
    mutating func giveUpRollover() -> [AgentAction] {
        guard let incoming else { return [] }
        self.incoming = nil
        rolloverAt = now.instant + .seconds(10)
        return [
            .log("could not move to a new session yet; trying again in 10 s"), .close(generation: incoming.generation),
        ]
    }

    /// Moves to the incoming session when it is ready and the moment is quiet (a reply the old
    /// session started meanwhile plays out there first; says wait meanwhile); gives up when its
    /// patience is spent.
    mutating func moveIfReady() -> [AgentAction] {
        guard let incoming, case .moving(let patience) = incoming.phase else { return [] }
        guard !isDone, !incoming.closed, current != nil, now.instant < patience else { return giveUpRollover() }
        guard quiet else { return [] }
        return swap()
    }

    /// The heard audio moves to the incoming session; the old one closes 3 s later.
    private mutating func swap() -> [AgentAction] {
        guard let incoming, let old = current else { return [] }
        previous = (generation, clock)
        retiring.append((old, now.instant + .seconds(3)))
        generation = incoming.generation
        current = incoming.generation
        self.incoming = nil
        clock = SessionClock()
        turns.reset()
        sessionOpenedAt = now.instant
        sessionLife = nil
        rolloverAt = now.instant + configuration.sessionLifetime
        if let expiresAt = incoming.expiresAt { planRollover(expiresAt: expiresAt) }
        counts.rollovers += 1
        counts.sessionsOpened += 1
        return releaseSay()
    }

    // MARK: Text

    /// `0.12 s`.
    static func seconds(_ d: Duration) -> String {
        String(format: "%.2f s", Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18)
    }

    static func host(_ url: String) -> String {
        URLComponents(string: url).flatMap { c in c.host.map { h in c.port.map { "\(h):\($0)" } ?? h } } ?? url
    }
}
