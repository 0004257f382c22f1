import Foundation
import Synchronization

/// The level of a track and whether its speaker is talking, measured on the raw audio of every
/// frame (before the track's controls), for meters and "who is talking" displays.
///
/// The level is the frame's RMS with a peak hold that falls 20 dB per second, like a VU meter.
/// "Talking" means a frame above ``talkThresholdDBFS`` within the last ``hangoverFrames`` frames.
///
/// Thread: `measure` on the room clock's thread (no allocation, no lock); the readers from any
/// thread, lock-free, possibly one frame behind.
public final class TrackMeter: Sendable {
    /// A frame at or above this RMS level (dB relative to full scale) counts as speech.
    public static let talkThresholdDBFS: Float = -45
    /// Frames (10 ms each) a speaker still counts as talking after the last loud frame.
    public static let hangoverFrames: Int64 = 30

    private static let decayPerFrame: Float = 0.977  // -0.2 dB per 10 ms = -20 dB/s
    private static let talkThreshold: Float = 32768 * powf(10, talkThresholdDBFS / 20)

    private let levelBits = Atomic<UInt32>(0)
    private let lastLoudFrame = Atomic<Int64>(.min / 2)
    private let lastFrame = Atomic<Int64>(-1)

    init() {}

    /// The held level in dBFS, or nil while the track has been silent (below -90 dBFS).
    public var levelDBFS: Float? {
        let rms = Float(bitPattern: levelBits.load(ordering: .relaxed))
        guard rms >= 1 else { return nil }
        let db = 20 * log10f(rms / 32768)
        return db < -90 ? nil : db
    }

    /// True while the speaker is talking (with hangover).
    public var isTalking: Bool {
        lastFrame.load(ordering: .relaxed) - lastLoudFrame.load(ordering: .relaxed) < Self.hangoverFrames
    }

    /// Measures one frame. Room clock's thread.
    func measure(_ samples: UnsafeMutableBufferPointer<Int16>, status: FrameStatus, frameIndex: Int64) {
        var rms: Float = 0
        if !status.isZero {
            var sum: Int64 = 0
            for s in samples { sum &+= Int64(s) * Int64(s) }
            rms = sqrtf(Float(sum) / Float(samples.count))
        }
        let held = Float(bitPattern: levelBits.load(ordering: .relaxed)) * Self.decayPerFrame
        levelBits.store(max(rms, held).bitPattern, ordering: .relaxed)
        if rms >= Self.talkThreshold { lastLoudFrame.store(frameIndex, ordering: .relaxed) }
        lastFrame.store(frameIndex, ordering: .relaxed)
    }
}
