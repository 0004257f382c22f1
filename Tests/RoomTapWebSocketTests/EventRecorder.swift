import Foundation
import RoomTapSync
import RoomTapTestSupport
import RoomTapWebSocket

#if canImport(Glibc)
    import Glibc
#endif

/// Collects a client's events for a test (onEvent runs on the loop thread).
final class EventRecorder: Sendable {
    private let events = Locked<[WebSocketEvent]>([])
    private let threadList = Locked<Set<UInt>>([])

    var all: [WebSocketEvent] { events.withLock { $0 } }

    /// The handler to give the client.
    var handler: @Sendable (WebSocketEvent) -> Void {
        { [self] event in
            events.withLock { $0.append(event) }
            let thread = UInt(pthread_self())
            threadList.withLock { _ = $0.insert(thread) }
        }
    }

    /// The threads (`pthread_self`) events were delivered on.
    var threads: Set<UInt> { threadList.withLock { $0 } }

    /// Waits until `count` events arrived; the events so far.
    func wait(count: Int, timeout: Duration = .seconds(5)) -> [WebSocketEvent] {
        _ = waitUntil(timeout: timeout) { events.withLock { $0.count } >= count }
        return all
    }

    /// The `.closed` event, if it came.
    var closed: (code: UInt16, reason: String)? {
        for case .closed(let code, let reason) in all { return (code, reason) }
        return nil
    }
}
