import Foundation
import RoomTapSync

/// The shell's supervisor thread (`roomtap.agent`) and its connections. What to do and when is
/// the reducer's (`AgentSession+Connection.swift`); this thread only sleeps until
/// ``AgentSession/nextDeadline`` (or a wake from an input that moved it earlier), feeds
/// ``SessionInput/timer``, and performs the upgrades the reducer asks for (they block).
extension RealtimeAgent {
    /// Until the agent stops or fails: sleep until the next deadline, act on it. Supervisor thread.
    func supervise() {
        let clock = configuration.clock
        while true {
            feed(.timer)
            if state.withLock({ $0.session.isDone }) { break }
            // Until the reducer's next deadline as it stands (an input may move it; no deadline:
            // only an input gives work, and it wakes this thread).
            _ = clock.wait(wake, untilDeadlineOf: { [weak self] in self?.state.withLock { $0.session.nextDeadline } })
        }
        // The closes decided at the end: give them a second to be answered (a clean close).
        let lives = state.withLock { $0.links.values.map(\.life) }
        let until = MonotonicClock.now + .seconds(1)
        for life in lives {
            let left = until - MonotonicClock.now
            guard left > .zero else { break }
            _ = life.wait(seconds: Double(left.nanosecondsClamped) / 1e9)
        }
    }

    /// Makes the connection of session `generation`, whose events and close are fed to the
    /// reducer under that generation, and opens it (blocks until the upgrade is done or failed).
    /// Supervisor thread.
    func open(_ generation: Int) {
        let life = ConnectionLife()
        let connection = RealtimeConnection(
            url: configuration.url, apiKey: configuration.apiKey, authentication: configuration.authentication,
            onText: { [weak self] text in self?.receive(text, generation: generation) },
            onClose: { [weak self] code, reason in
                life.close(code: code, reason: reason)
                self?.feed(.closed(generation: generation, code: code, reason: reason))
            })
        // Known before the upgrade, so that `stop` can cancel it by closing it.
        let stopping = state.withLock { s -> Bool in
            s.links[generation] = Link(connection: connection, life: life)
            return s.session.isDone
        }
        guard !stopping else {
            connection.close(code: 1000)
            feed(.connectFailed(generation: generation, .failed("stopped")))
            return
        }
        do {
            try connection.connect(redacting: configuration.apiKey)
        } catch {
            feed(.connectFailed(generation: generation, error))
            return
        }
        feed(.connected(generation: generation))
    }
}

/// One connection's close, signalled by the client's thread.
///
/// Thread: any.
final class ConnectionLife: Sendable {
    private let closed = Locked<(Int, String)?>(nil)
    private let done = DispatchSemaphore(value: 0)

    /// The close (the first one counts). Idempotent.
    func close(code: Int, reason: String) {
        let first = closed.withLock { c -> Bool in
            guard c == nil else { return false }
            c = (code, reason)
            return true
        }
        if first { done.signal() }
    }

    var isClosed: Bool { closed.withLock { $0 != nil } }

    /// Waits up to `seconds` (wall time) for the close; true when closed.
    func wait(seconds: Double) -> Bool {
        if isClosed { return true }
        guard done.wait(timeout: .now() + seconds) == .success else { return false }
        done.signal()
        return true
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
