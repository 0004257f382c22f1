import Foundation
public import RoomTapCore
import Synchronization

/// The agent's track: reply audio (48 kHz mono, already resampled) played out onto the room
/// timeline 10 ms per tick, at the pace it was spoken; silence when nothing is queued.
///
/// The session thread pushes into a preallocated single-producer single-consumer ``SampleRing``
/// (bounded, `.dropNewest`: what does not fit is counted in ``overflowSamples``); the room clock
/// reads it in ``render``.
/// Positions are absolute sample counts since creation: ``writePosition`` (pushed) and
/// ``playPosition`` (played out, or skipped by a flush). ``flush()`` (barge-in) skips everything
/// queued at once, from the writer's side, without waiting for a tick: the next frame is silent
/// (or the audio pushed after the flush).
///
/// Thread: `render` and `isFinished` on the room clock's thread; `push`, `markComplete` and
/// `flush` on one writer at a time (the agent's session, under its voice lock); the positions,
/// ``roomSample(atPosition:)`` and the counters anywhere.
public final class AgentVoiceSource: FrameSource, @unchecked Sendable {
    public let channels = 1
    /// Ring capacity in samples (48 kHz).
    public let capacity: Int

    private let ring: SampleRing
    private let lastRoomSample = Atomic<Int64>(-480)
    // Anchors: (ring position, room sample) where playback (re)started after an underrun or flush.
    private static let anchorCapacity = 1_024
    private let anchorPositions: UnsafeMutablePointer<Int64>
    private let anchorRooms: UnsafeMutablePointer<Int64>
    private let anchorCount = Atomic<Int>(0)
    private let complete = Atomic<Int64>(0)
    /// Audio gathered before playback (re)starts, unless the writer marked it complete (48 kHz samples).
    public let prebufferSamples: Int
    // Room clock's thread only:
    /// Where the last render's samples ended in the ring: samples taken from elsewhere follow a
    /// flush (or a gap) and start a new anchor.
    private var lastRead = 0
    private var previousFull = false
    private var playing = false

    /// Allocates a ring of `seconds` of 48 kHz audio (default 5 minutes). Playback starts (and
    /// restarts after running dry) once `prebufferMilliseconds` are queued or the writer marked
    /// what is queued complete (``markComplete()``), so a reply streamed at real-time pace plays
    /// without gaps.
    public init(seconds: Int = 300, prebufferMilliseconds: Int = 100) {
        capacity = max(1, seconds) * AudioFrame.sampleRate
        prebufferSamples = max(0, prebufferMilliseconds) * 48
        ring = SampleRing(capacity: capacity, channels: 1, policy: .dropNewest)
        anchorPositions = .allocate(capacity: Self.anchorCapacity)
        anchorPositions.initialize(repeating: 0, count: Self.anchorCapacity)
        anchorRooms = .allocate(capacity: Self.anchorCapacity)
        anchorRooms.initialize(repeating: 0, count: Self.anchorCapacity)
    }

    deinit {
        anchorPositions.deallocate()
        anchorRooms.deallocate()
    }

    /// Never keeps an offline room going by itself: finished whenever nothing is queued.
    public var isFinished: Bool { ring.writePosition <= ring.readPosition }

    /// Samples pushed so far (the ring position after the last pushed sample).
    public var writePosition: Int64 { Int64(ring.writePosition) }
    /// Samples played or flushed so far.
    public var playPosition: Int64 { Int64(ring.readPosition) }
    /// True while queued audio waits to be played.
    public var isPlaying: Bool { writePosition > playPosition }
    /// Samples that did not fit in the ring and were dropped.
    public var overflowSamples: Int64 { Int64(ring.droppedSamples) }
    /// Room sample of the last frame rendered (-480 before the first).
    public var lastRenderedRoomSample: Int64 { lastRoomSample.load(ordering: .acquiring) }

    /// Queues `samples` (48 kHz mono) after what is queued. Returns how many fit. Writer only; never
    /// blocks, does not allocate.
    @discardableResult
    public func push(_ samples: UnsafeBufferPointer<Int16>) -> Int {
        guard !samples.isEmpty, let src = samples.baseAddress else { return 0 }
        return ring.write(src, frames: samples.count)
    }

    /// Says that everything pushed so far may play without waiting for more (the end of a reply).
    /// Writer only.
    public func markComplete() { complete.store(Int64(ring.writePosition), ordering: .releasing) }

    /// Barge-in: drops everything queued, at once, and returns the play position where playback
    /// stopped (the samples before it were taken by the clock and play; none after it will). The
    /// ring's read position moves by compare-and-exchange, so a render racing the flush keeps only
    /// what it took before it (``SampleRing/discard(upTo:)``); nothing waits for the clock, only,
    /// at most, for a render's copy in progress (well under a microsecond). Idempotent (a second
    /// flush with nothing pushed since skips nothing). Writer only; does not allocate.
    @discardableResult
    public func flush() -> Int64 {
        let target = ring.writePosition
        let skipped = ring.discard(upTo: target)
        return Int64(target - skipped)
    }

    /// The room sample at which ring position `position` plays (played already: when it did;
    /// queued: when it will if playback goes on without a gap). Writer side or any thread.
    public func roomSample(atPosition position: Int64) -> Int64 {
        let r = playPosition
        let next = lastRenderedRoomSample + Int64(AudioFrame.samplesPerChannel)
        guard position <= r else { return next + (position - r) }
        let count = anchorCount.load(ordering: .acquiring)
        var i = count - 1
        while i >= max(0, count - Self.anchorCapacity) {
            let slot = i % Self.anchorCapacity
            if anchorPositions[slot] <= position { return anchorRooms[slot] + (position - anchorPositions[slot]) }
            i -= 1
        }
        return next - (r - position)
    }

    public func render(into samples: UnsafeMutableBufferPointer<Int16>, at roomSample: Int64) -> FrameStatus {
        let r = Int64(ring.readPosition)
        let w = Int64(ring.writePosition)
        var available = Int(w - r)
        if !playing {
            if available > 0 && (available >= prebufferSamples || complete.load(ordering: .acquiring) >= w) {
                playing = true
            } else {
                available = 0
            }
        }
        let out = samples.baseAddress!
        // A flush racing this read takes the rest away: only what was taken plays, and the ring
        // says where it was taken from.
        let (n, from) =
            available > 0
            ? ring.take(upTo: min(AudioFrame.samplesPerChannel, available), into: out) : (0, Int(r))
        if n < AudioFrame.samplesPerChannel { playing = false }
        // Not where the last frame ended (a flush skipped ahead), or after a short frame: a new anchor.
        if n > 0, from != lastRead || !previousFull {
            let slot = anchorCount.load(ordering: .relaxed)
            anchorPositions[slot % Self.anchorCapacity] = Int64(from)
            anchorRooms[slot % Self.anchorCapacity] = roomSample
            anchorCount.store(slot + 1, ordering: .releasing)
        }
        if n < AudioFrame.samplesPerChannel {
            (out + n).update(repeating: 0, count: AudioFrame.samplesPerChannel - n)
        }
        lastRead = from + n
        previousFull = n == AudioFrame.samplesPerChannel
        lastRoomSample.store(roomSample, ordering: .releasing)
        return n > 0 ? .normal : .silence
    }
}
