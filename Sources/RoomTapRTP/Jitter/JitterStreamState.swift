import Synchronization

/// What the receive side and the two clock-side playouts of one stream share: atomics only, each
/// written by one side and read by the other (the arrow in each comment says which way).
///
/// The receive thread (``JitterInserter``) owns the packet ring's writes and the stream's
/// placement; the room clock's thread owns the playouts (``LivePlayout``, ``RecordPlayout``);
/// nothing here is locked and nothing allocates after init.
///
/// Thread: any. Each field has exactly one writer thread.
final class JitterStreamState: Sendable {
    /// Inserter → playouts, once: the extended sequence number of the stream's first packet (-1 before).
    let firstSequence = Atomic<Int64>(-1)
    /// Inserter → playouts: the highest extended sequence number stored.
    let highestSequence = Atomic<Int64>(-1)
    /// Live playout → inserter: packets below this have been passed by the live playout.
    let liveRead = Atomic<Int64>(-1)
    /// Record playout → inserter: packets below this have been passed by the record playout
    /// (`.max` when the stream has no record playout).
    let recordRead: Atomic<Int64>
    /// Inserter → playouts: how far the sender's timeline has slid against the room (samples;
    /// `.min` = no estimate yet). See ``DriftEstimator``.
    let slide = Atomic<Int64>(.min)
    /// Inserter → record playout: the smallest skew (arrival − timeline position, samples) of the
    /// current sender so far: where its least-delayed packets put it.
    let leastSkew = Atomic<Int64>(.max)
    /// Live playout → inserter: `lag − delay − sync` (its drift correction so far, samples).
    let liveDrift = Atomic<Int64>(0)
    /// Live playout → inserter: the sender-report shift it has applied (samples).
    let liveSync = Atomic<Int64>(0)
    /// Inserter → live playout: the delay arrivals call for (samples).
    let neededDelay: Atomic<Int64>
    /// Inserter → playouts: the sender-report shift wanted (samples).
    let syncTarget = Atomic<Int64>(0)
    /// Inserter → record playout: true once a sender report placed the stream (then
    /// ``recordSync`` is its place on the room's NTP mapping).
    let syncKnown = Atomic<Bool>(false)
    /// Inserter → record playout: the exact sender-report shift (samples), dead band or not.
    let recordSync = Atomic<Int64>(0)
    /// Anyone → playouts: the participant has left.
    let ended = Atomic<Bool>(false)
    /// Inserter → anyone: `CLOCK_MONOTONIC` ns of the last insert.
    let lastArrivalNanos = Atomic<UInt64>(0)

    init(initialDelay: Int64, hasRecord: Bool) {
        neededDelay = Atomic(initialDelay)
        recordRead = Atomic(hasRecord ? -1 : .max)
    }
}
