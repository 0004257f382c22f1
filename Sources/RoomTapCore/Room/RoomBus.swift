import Dispatch
public import RoomTapSync

/// The room's bus: a bounded queue of events posted by the threads that must never run a
/// handler (the receive thread, the room clock, the sinks' writers, the control socket, a join's
/// signaling) and drained by one control thread, which runs the handlers (adds tracks, opens
/// files, writes room.json, tells the application). Nobody polls for what a bus event says.
///
/// Posting takes a short lock over storage allocated at init, so it allocates nothing; it wakes
/// the drainer through a semaphore (a futex wake when the drainer sleeps). A full bus refuses
/// the event and counts it (``refused``): the poster decides what a refusal means.
///
/// Thread: ``post(_:)`` from any thread, the room clock's and the receive thread's included;
/// ``next(waitingAtMost:)`` and ``drain()`` from the one control thread that owns the bus.
public final class RoomBus: Sendable {
    /// What happened. Plain values (no references), so posting copies a few words.
    public enum Event: Sendable, Equatable {
        /// The receive thread claimed stream slot `slot` (a new stream on UDP `port`): the control
        /// thread makes its track.
        case streamAppeared(slot: Int, port: UInt16)
        /// A track joined the room (posted by ``Room`` after its `onTrackAdded` ran).
        case trackAdded(TrackID)
        /// A track left the room (posted by ``Room`` after its `onTrackRemoved` ran).
        case trackRemoved(TrackID)
        /// The room clock has stopped (the room's end, or a stop): posted by the clock's thread
        /// as its last act. The drainer finishes the room.
        case clockStopped
        /// A sink's consumer failed (a write error, a full disk): posted once per sink by the
        /// thread that saw it fail. The drainer asks the sinks which, and says so.
        case sinkFailed
        /// A control change took effect (mute, volume, solo; by a client or the agent).
        case controlChanged
        /// A component queued a warning or a failure for the drainer to take (a join's signaling,
        /// a streaming server's refused request).
        case warningQueued
        /// Wakes the drainer with nothing to do (to stop it, or to check its own state).
        case wake
    }

    private struct Ring {
        var events: [Event]
        var head = 0
        var count = 0
        var refused = 0
    }

    /// Events the bus holds at most.
    public let capacity: Int
    private let ring: Locked<Ring>
    private let posted = DispatchSemaphore(value: 0)

    /// A bus of `capacity` events (at least 1), allocated here once.
    public init(capacity: Int) {
        self.capacity = max(1, capacity)
        ring = Locked(Ring(events: Array(repeating: .wake, count: max(1, capacity))))
    }

    /// Queues `event` and wakes the drainer; false (counted) when the bus is full. Any thread;
    /// allocates nothing; never waits beyond the lock's few instructions.
    @discardableResult
    public func post(_ event: Event) -> Bool {
        let queued = ring.withLock { r -> Bool in
            guard r.count < capacity else {
                r.refused += 1
                return false
            }
            r.events[(r.head + r.count) % capacity] = event
            r.count += 1
            return true
        }
        if queued { posted.signal() }
        return queued
    }

    /// The next event, waiting up to `seconds` for one; nil when none came. Control thread.
    public func next(waitingAtMost seconds: Double) -> Event? {
        guard posted.wait(timeout: .now() + max(0, seconds)) == .success else { return nil }
        return take()
    }

    /// The event at the head of the ring, once the drainer has taken its signal.
    private func take() -> Event? {
        ring.withLock { r -> Event? in
            guard r.count > 0 else { return nil }
            defer {
                r.head = (r.head + 1) % capacity
                r.count -= 1
            }
            return r.events[r.head]
        }
    }

    /// The next event, waiting until `deadline` (``MonotonicClock``) at most; nil when none came
    /// by then. Control thread.
    public func next(until deadline: MonotonicClock.Instant) -> Event? {
        next(until: deadline, on: SystemDeadlineClock())
    }

    /// The next event, waiting until `deadline` on `clock` at most (a virtual clock in tests); nil
    /// when none came by then. Control thread.
    package func next(until deadline: MonotonicClock.Instant, on clock: any DeadlineClock) -> Event? {
        guard clock.wait(posted, until: deadline) else { return nil }
        return take()
    }

    /// Events refused because the bus was full.
    public var refused: Int { ring.withLock { $0.refused } }
}

/// Where a component that outlives its room's set-up posts its events: nowhere until
/// ``connect(_:)`` gives it a room's bus (a join, a streaming server, a control log are made
/// before the room's supervisor drains). Thread: any; the last bus connected wins; ``post(_:)``
/// allocates nothing.
package final class RoomBusLink: Sendable {
    private let bus = Locked<RoomBus?>(nil)

    package init() {}

    /// Posts to `bus` from now on.
    package func connect(_ bus: RoomBus) { self.bus.withLock { $0 = bus } }

    /// Posts `event` to the connected bus, if any (see ``RoomBus/post(_:)``).
    package func post(_ event: RoomBus.Event) { bus.withLock { $0 }?.post(event) }
}
