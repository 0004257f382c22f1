import Synchronization

/// What a track control applies to.
///
/// By default a control shapes what is *heard* (mixes, playback, the agent) while the speaker's
/// own recording keeps the raw speaker. `.record` applies the controls to the speaker's recording
/// too (someone who asks to be off the record gets silence in their file, timeline kept).
public enum ControlScope: String, Sendable, Codable, CaseIterable {
    /// Mixes, playback and the agent; the track's own recording stays raw.
    case heard
    /// Everything: what is heard and the track's own recording.
    case record
}

/// A snapshot of a track's controls.
public struct TrackControlState: Sendable, Equatable {
    /// Sora's `audioEnabled`: false mutes the track.
    public var isEnabled: Bool
    /// Sora's `remoteAudioVolume`: linear gain, 0...10, 1 is unity.
    public var volume: Float
    /// Where mute and volume apply.
    public var scope: ControlScope
    /// True while the track is one of the room's soloed tracks.
    public var isSoloed: Bool

    public init(isEnabled: Bool = true, volume: Float = 1, scope: ControlScope = .heard, isSoloed: Bool = false) {
        self.isEnabled = isEnabled
        self.volume = volume
        self.scope = scope
        self.isSoloed = isSoloed
    }

    /// The gain heard in mixes and playback when `soloActive` says whether any track is soloed.
    public func heardGain(soloActive: Bool) -> Float {
        guard isEnabled, !soloActive || isSoloed else { return 0 }
        return volume
    }

    /// The gain of the track's own recording.
    public var recordedGain: Float {
        guard scope == .record else { return 1 }
        return isEnabled ? volume : 0
    }
}

/// Mute and volume of one track (the Sora SDK's `audioEnabled` and `remoteAudioVolume`), changed
/// from any thread, read lock-free by the room clock.
///
/// A change takes effect at the next frame the clock renders and is ramped linearly across that
/// frame (10 ms), so there is no click and no zipper noise. The whole state lives in one atomic
/// word, so the clock never sees half of a change.
///
/// Thread: every member is safe from any thread. Setters are idempotent.
public final class TrackControls: Sendable {
    /// The largest volume (Sora's range is 0...10).
    public static let maximumVolume: Float = 10

    private static let volumeMask: UInt64 = 0xFFFF_FFFF
    private static let mutedBit: UInt64 = 1 << 32
    private static let recordBit: UInt64 = 1 << 33
    private static let soloBit: UInt64 = 1 << 34

    private let word = Atomic<UInt64>(UInt64(Float(1).bitPattern))

    init() {}

    /// The controls now in force.
    public var state: TrackControlState { Self.decode(word.load(ordering: .acquiring)) }

    /// Sora's `audioEnabled`. Setting it keeps the volume.
    public var isEnabled: Bool { state.isEnabled }

    /// Sora's `remoteAudioVolume`, 0...10.
    public var volume: Float { state.volume }

    /// Mutes (`enabled == false`) or unmutes the track; `scope`, when given, replaces the scope.
    public func setEnabled(_ enabled: Bool, scope: ControlScope? = nil) {
        update { s in
            s.isEnabled = enabled
            if let scope { s.scope = scope }
        }
    }

    /// Sets the volume, clamped to 0...10 (NaN is ignored); `scope`, when given, replaces the scope.
    public func setVolume(_ volume: Float, scope: ControlScope? = nil) {
        guard !volume.isNaN else { return }
        update { s in
            s.volume = min(max(volume, 0), Self.maximumVolume)
            if let scope { s.scope = scope }
        }
    }

    /// Sets where mute and volume apply.
    public func setScope(_ scope: ControlScope) { update { $0.scope = scope } }

    /// Marks the track soloed or not (``Room/solo(_:)`` does this for every track).
    func setSoloed(_ soloed: Bool) { update { $0.isSoloed = soloed } }

    private func update(_ change: (inout TrackControlState) -> Void) {
        var current = word.load(ordering: .relaxed)
        while true {
            var s = Self.decode(current)
            change(&s)
            let (exchanged, original) = word.compareExchange(
                expected: current, desired: Self.encode(s), ordering: .acquiringAndReleasing)
            if exchanged { return }
            current = original
        }
    }

    /// The raw word, for the clock's per-frame read. Room clock's thread.
    var packed: UInt64 { word.load(ordering: .acquiring) }

    static func decode(_ w: UInt64) -> TrackControlState {
        TrackControlState(
            isEnabled: w & mutedBit == 0, volume: Float(bitPattern: UInt32(truncatingIfNeeded: w & volumeMask)),
            scope: w & recordBit != 0 ? .record : .heard, isSoloed: w & soloBit != 0)
    }

    static func encode(_ s: TrackControlState) -> UInt64 {
        var w = UInt64(s.volume.bitPattern)
        if !s.isEnabled { w |= mutedBit }
        if s.scope == .record { w |= recordBit }
        if s.isSoloed { w |= soloBit }
        return w
    }
}
