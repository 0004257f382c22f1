import Foundation
public import RoomTapCore

/// A local voice-activity gate in front of a transcription session: a speaker's silence is never
/// sent (the service bills the audio it is sent, so a silent speaker costs nothing), while every
/// word is: the gate opens at the first voiced frame and first hands over the `preroll` before it
/// (the soft start of a word, and the prefix the server's VAD keeps), and it closes only after
/// `hangover` without voice, long enough for the server's VAD to see the silence that ends the
/// turn and commit it.
///
/// A frame is voiced when its RMS is at or above ``Settings/thresholdDBFS`` (muted and silent
/// frames never are: a speaker off the record is not sent).
///
/// Thread: a value owned by the listen sink's thread (``AgentListenSink``), never the room
/// clock's. Its pre-roll storage is allocated once, in `init`.
public struct VoiceGate {
    /// How the gate decides.
    ///
    /// Thread: a value.
    public struct Settings: Sendable, Equatable {
        /// The level of a voiced 10 ms frame, in dBFS of its RMS (default −50: quiet speech in a
        /// close microphone is about −40; the track meter's "talking" is −45).
        public var thresholdDBFS: Double
        /// Audio handed over before the first voiced frame, in milliseconds (default 300: the
        /// prefix the server's VAD keeps).
        public var prerollMilliseconds: Int
        /// Audio without voice after which the gate closes, in milliseconds (default 1000: the
        /// server's 500 ms of silence that ends a turn, and a margin as long).
        public var hangoverMilliseconds: Int

        /// Settings with the defaults above.
        public init(thresholdDBFS: Double = -50, prerollMilliseconds: Int = 300, hangoverMilliseconds: Int = 1_000) {
            self.thresholdDBFS = thresholdDBFS
            self.prerollMilliseconds = max(0, prerollMilliseconds)
            self.hangoverMilliseconds = max(10, hangoverMilliseconds)
        }
    }

    public let settings: Settings
    /// The squared RMS (in sample units²) of a voiced frame.
    private let thresholdPower: Double
    private let prerollFrames: Int
    private let hangoverFrames: Int
    /// Pre-roll ring: `prerollFrames` mono frames.
    private var ring: [Int16]
    private var ringRoomSamples: [Int64]
    private var ringCount = 0
    private var ringHead = 0
    private var open = false
    private var quietFrames = 0

    /// A closed gate.
    public init(settings: Settings = Settings()) {
        self.settings = settings
        let rms = 32_768 * pow(10, settings.thresholdDBFS / 20)
        thresholdPower = rms * rms
        prerollFrames = settings.prerollMilliseconds / 10
        hangoverFrames = max(1, settings.hangoverMilliseconds / 10)
        ring = [Int16](repeating: 0, count: max(1, prerollFrames) * AudioFrame.samplesPerChannel)
        ringRoomSamples = [Int64](repeating: 0, count: max(1, prerollFrames))
    }

    /// True while frames pass.
    public var isOpen: Bool { open }

    /// Whether `frame` (mono) is voiced.
    public func isVoiced(_ frame: AudioFrame) -> Bool {
        guard !frame.status.isZero, !frame.samples.isEmpty else { return false }
        var sum = 0.0
        for s in frame.samples { sum += Double(s) * Double(s) }
        return sum / Double(frame.samples.count) >= thresholdPower
    }

    /// Takes one mono frame and hands `pass` what goes through, in room order: nothing while
    /// closed and quiet; the pre-roll and the frame when it opens; the frame while open. Returns
    /// true when the gate closed at this frame.
    public mutating func admit(_ frame: AudioFrame, pass: (AudioFrame) -> Void) -> Bool {
        let voiced = isVoiced(frame)
        if open {
            pass(frame)
            quietFrames = voiced ? 0 : quietFrames + 1
            if quietFrames >= hangoverFrames {
                open = false
                ringCount = 0
                return true
            }
            return false
        }
        guard voiced else {
            remember(frame)
            return false
        }
        open = true
        quietFrames = 0
        // The pre-roll: the frames right before this one, oldest first (a gap ends it).
        let n = AudioFrame.samplesPerChannel
        var first = 0
        for k in 0..<ringCount {
            let slot = (ringHead + prerollFrames - ringCount + k) % prerollFrames
            if ringRoomSamples[slot] != frame.roomSample - Int64((ringCount - k) * n) { first = k + 1 }
        }
        for k in first..<ringCount {
            let slot = (ringHead + prerollFrames - ringCount + k) % prerollFrames
            ring.withUnsafeBufferPointer { all in
                pass(
                    AudioFrame(
                        samples: UnsafeBufferPointer(rebasing: all[(slot * n)..<((slot + 1) * n)]), channels: 1,
                        roomSample: ringRoomSamples[slot], status: .normal))
            }
        }
        ringCount = 0
        pass(frame)
        return false
    }

    /// Closes the gate and forgets the pre-roll (the audio stopped being wanted).
    public mutating func reset() {
        open = false
        quietFrames = 0
        ringCount = 0
    }

    private mutating func remember(_ frame: AudioFrame) {
        guard prerollFrames > 0 else { return }
        let n = AudioFrame.samplesPerChannel
        let count = min(n, frame.samples.count)
        ring.withUnsafeMutableBufferPointer { all in
            for i in 0..<count { all[ringHead * n + i] = frame.samples[i] }
            for i in count..<n { all[ringHead * n + i] = 0 }
        }
        ringRoomSamples[ringHead] = frame.roomSample
        ringHead = (ringHead + 1) % prerollFrames
        ringCount = min(ringCount + 1, prerollFrames)
    }
}
