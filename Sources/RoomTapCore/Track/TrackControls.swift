import Foundation
import Synchronization

/// What a track control applies to.
///
/// A track has two independent sets of controls: what is *heard* (the live mix, playback, the
/// agent) and what is *recorded* (the speaker's own file and the recorded mix). A heard control
/// never changes a file but the recorded mix; a record control never changes what is heard.
/// Someone who asks to be off the record is muted with `.record` (or `.all`) and stays off it until
/// an unmute whose scope covers the record: no volume change and no heard unmute puts them back.
public enum ControlScope: String, Sendable, Codable, CaseIterable {
    /// Mixes, playback and the agent (and so the recorded mix); the track's own file stays raw.
    case heard
    /// The track's own file and the recorded mix; what is heard is untouched.
    case record
    /// Both.
    case all

    /// True when the scope covers what is heard.
    public var coversHeard: Bool { self != .record }
    /// True when the scope covers the record.
    public var coversRecord: Bool { self != .heard }
}

/// A snapshot of a track's controls.
public struct TrackControlState: Sendable, Equatable {
    /// Sora's `audioEnabled` for what is heard: false mutes the track in mixes and playback.
    public var isEnabled: Bool
    /// Sora's `remoteAudioVolume` for what is heard: linear gain, 0...10, 1 is unity.
    public var volume: Float
    /// False while the track is off the record (its file and the recorded mix hold silence).
    public var isRecordEnabled: Bool
    /// Linear gain, 0...10, of the track's own file and its part of the recorded mix.
    public var recordVolume: Float
    /// True while the track is one of the room's soloed tracks.
    public var isSoloed: Bool

    public init(
        isEnabled: Bool = true, volume: Float = 1, isRecordEnabled: Bool = true, recordVolume: Float = 1,
        isSoloed: Bool = false
    ) {
        self.isEnabled = isEnabled
        self.volume = volume
        self.isRecordEnabled = isRecordEnabled
        self.recordVolume = recordVolume
        self.isSoloed = isSoloed
    }

    /// The gain heard in mixes and playback when `soloActive` says whether any track is soloed.
    public func heardGain(soloActive: Bool) -> Float {
        guard isEnabled, !soloActive || isSoloed else { return 0 }
        return volume
    }

    /// The gain of the track's own recording.
    public var recordedGain: Float { isRecordEnabled ? recordVolume : 0 }
}

/// Mute and volume of one track, heard and recorded (the Sora SDK's `audioEnabled` and
/// `remoteAudioVolume`, twice), changed from any thread, read lock-free by the room clock.
///
/// A change takes effect at the next frame the clock renders and is ramped linearly across that
/// frame (10 ms), so there is no click and no zipper noise. Mute and volume of both scopes live in
/// one atomic word, so the clock never sees half of a change (`.all` changes both at once). Solo,
/// set by the room for every track in turn, is a word of its own.
///
/// Thread: every member is safe from any thread. Setters are idempotent.
public final class TrackControls: Sendable {
    /// The largest volume (Sora's range is 0...10).
    public static let maximumVolume: Float = 10

    // A volume in 0...10 is a non-negative Float: its sign bit is always 0, so 31 bits hold it.
    private static let volumeMask: UInt64 = 0x7FFF_FFFF
    private static let recordVolumeShift: UInt64 = 31
    private static let mutedBit: UInt64 = 1 << 62
    private static let recordMutedBit: UInt64 = 1 << 63

    private let word = Atomic<UInt64>(TrackControls.encode(TrackControlState()))
    private let soloed = Atomic<Bool>(false)

    init() {}

    /// The controls now in force.
    public var state: TrackControlState { Self.decode(packed, soloed: isSoloed) }

    /// Sora's `audioEnabled` (heard). Setting it keeps the volume.
    public var isEnabled: Bool { state.isEnabled }

    /// Sora's `remoteAudioVolume` (heard), 0...10.
    public var volume: Float { state.volume }

    /// Mutes (`enabled == false`) or unmutes the track in `scope`; the volumes are kept.
    public func setEnabled(_ enabled: Bool, scope: ControlScope = .heard) {
        update { s in
            if scope.coversHeard { s.isEnabled = enabled }
            if scope.coversRecord { s.isRecordEnabled = enabled }
        }
    }

    /// Sets the volume of `scope`, clamped to 0...10 (NaN is ignored); mute state is kept.
    public func setVolume(_ volume: Float, scope: ControlScope = .heard) {
        guard !volume.isNaN else { return }
        let v = volume > 0 ? min(volume, Self.maximumVolume) : 0  // never -0: 31 bits hold it
        update { s in
            if scope.coversHeard { s.volume = v }
            if scope.coversRecord { s.recordVolume = v }
        }
    }

    /// Changes the volume of `scope` by `decibels` (pactl's relative step: the gain is multiplied
    /// by 10^(dB/20)), clamped to 0...10, in one atomic step: two changes made at once both apply,
    /// and no other change made meanwhile is lost. A non-finite change is ignored; mute state is
    /// kept. Any thread (the control side); the clock ramps to the new gain over one frame.
    public func changeVolume(byDecibels decibels: Float, scope: ControlScope = .heard) {
        guard decibels.isFinite else { return }
        let factor = Float(pow(10, Double(decibels) / 20))
        func changed(_ volume: Float) -> Float {
            let v = volume * factor
            return v > 0 ? min(v, Self.maximumVolume) : 0
        }
        update { s in
            if scope.coversHeard { s.volume = changed(s.volume) }
            if scope.coversRecord { s.recordVolume = changed(s.recordVolume) }
        }
    }

    /// Marks the track soloed or not (``Room/solo(_:)`` does this for every track).
    func setSoloed(_ soloed: Bool) { self.soloed.store(soloed, ordering: .releasing) }

    /// True while the track is soloed. Any thread (the room clock reads it each frame).
    var isSoloed: Bool { soloed.load(ordering: .acquiring) }

    private func update(_ change: (inout TrackControlState) -> Void) {
        var current = word.load(ordering: .relaxed)
        while true {
            var s = Self.decode(current, soloed: false)
            change(&s)
            let (exchanged, original) = word.compareExchange(
                expected: current, desired: Self.encode(s), ordering: .acquiringAndReleasing)
            if exchanged { return }
            current = original
        }
    }

    /// The raw word, for the clock's per-frame read. Room clock's thread.
    var packed: UInt64 { word.load(ordering: .acquiring) }

    static func decode(_ w: UInt64, soloed: Bool) -> TrackControlState {
        TrackControlState(
            isEnabled: w & mutedBit == 0, volume: Float(bitPattern: UInt32(truncatingIfNeeded: w & volumeMask)),
            isRecordEnabled: w & recordMutedBit == 0,
            recordVolume: Float(bitPattern: UInt32(truncatingIfNeeded: (w >> recordVolumeShift) & volumeMask)),
            isSoloed: soloed)
    }

    static func encode(_ s: TrackControlState) -> UInt64 {
        var w = UInt64(s.volume.bitPattern) & volumeMask
        w |= (UInt64(s.recordVolume.bitPattern) & volumeMask) << recordVolumeShift
        if !s.isEnabled { w |= mutedBit }
        if !s.isRecordEnabled { w |= recordMutedBit }
        return w
    }
}
