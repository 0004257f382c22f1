import RoomTapSync
import Synchronization

/// A value the control side publishes and the room clock takes at the start of a tick: a room's
/// render plan, a track's sinks, a mixer's inputs. The clock never waits, allocates or frees for
/// it.
///
/// The control side changes the value under a lock and bumps an atomic generation. The clock
/// compares generations once a tick and, only when they differ, takes the value with
/// `withLockIfAvailable` (if the lock is busy it keeps what it has for one more tick): a
/// reference-count copy. The version the clock lets go of is not freed there: every replaced
/// version stays in a retired list until the clock holds a newer one, and the next control-side
/// call (``update(_:)``, ``releaseRetired()``) releases it on its own thread, so a removed sink's
/// last reference (its ring, its file) never goes on the clock (libwebrtc's mixer never frees on
/// the audio thread).
///
/// Thread: ``update(_:)``, ``value`` and ``releaseRetired()`` from any thread but the clock's;
/// ``take(into:generation:)`` from the one thread that renders the owner this tick (the clock's,
/// or a render helper's, with a happens-before edge between ticks).
final class PublishedSnapshot<Value: Sendable>: Sendable {
    private struct State {
        var current: Value
        var currentGeneration: UInt64 = 0
        var heldByClock: UInt64 = 0  // the generation the clock holds (set under the lock)
        var retired: [(generation: UInt64, value: Value)] = []
    }

    private let published = Atomic<UInt64>(0)
    private let state: Locked<State>

    /// A snapshot whose first version (generation 0) is `initial`; the clock side starts holding
    /// that same value with generation 0.
    init(_ initial: Value) {
        state = Locked(State(current: initial))
    }

    /// The version now published. Control side.
    var value: Value { state.withLock { $0.current } }

    /// Changes the value with `body`; when `body` returns true (it changed something) the result
    /// is published as a new version, taken by the clock at its next tick. Returns the generation
    /// now published. Releases retired versions the clock no longer holds, after the lock.
    /// Control side: allocates, may free.
    @discardableResult
    func update(_ body: (inout Value) -> Bool) -> UInt64 {
        var released: [(generation: UInt64, value: Value)] = []
        let generation = state.withLock { s -> UInt64 in
            released = Self.takeReleasable(&s)
            var next = s.current
            guard body(&next) else { return s.currentGeneration }
            s.retired.append((s.currentGeneration, s.current))
            s.current = next
            s.currentGeneration += 1
            published.store(s.currentGeneration, ordering: .releasing)
            return s.currentGeneration
        }
        withExtendedLifetime(released) {}  // freed here, outside the lock
        return generation
    }

    /// Releases, on this thread, the retired versions the clock no longer holds (the caller knows
    /// the clock has moved on: ``Room/removeTrack(_:)`` after the clock applied its change).
    func releaseRetired() {
        let released = state.withLock { Self.takeReleasable(&$0) }
        withExtendedLifetime(released) {}
    }

    /// Retired versions kept (for tests: the clock frees none of them).
    var retiredCount: Int { state.withLock { $0.retired.count } }

    /// True when a version newer than `generation` was published. Any thread; never blocks.
    @inline(__always)
    func isNewer(than generation: UInt64) -> Bool { published.load(ordering: .acquiring) != generation }

    /// Clock side: if a newer version was published and the lock is free, puts it in `held` and
    /// its generation in `heldGeneration`, and returns true. Never blocks, allocates or frees: the
    /// version `held` had stays retired on the control side.
    @inline(__always)
    func take(into held: inout Value, generation heldGeneration: inout UInt64) -> Bool {
        guard published.load(ordering: .acquiring) != heldGeneration else { return false }
        let taken = state.withLockIfAvailable { s -> Bool in
            held = s.current
            heldGeneration = s.currentGeneration
            s.heldByClock = s.currentGeneration
            return true
        }
        return taken ?? false
    }

    private static func takeReleasable(_ s: inout State) -> [(generation: UInt64, value: Value)] {
        guard s.retired.contains(where: { $0.generation != s.heldByClock }) else { return [] }
        let held = s.heldByClock
        let releasable = s.retired.filter { $0.generation != held }
        s.retired.removeAll { $0.generation != held }
        return releasable
    }
}
