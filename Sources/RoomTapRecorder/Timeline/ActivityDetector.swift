import Foundation

/// One stretch of talk on a track, in samples per channel from the start of the room.
struct TalkSpan: Equatable {
    var startSample: Int64
    var endSample: Int64
    let sampleRate: Int

    /// Start, in seconds of room time.
    var start: Double { Double(startSample) / Double(sampleRate) }
    /// End (exclusive), in seconds of room time.
    var end: Double { Double(endSample) / Double(sampleRate) }
}

/// Finds when a track has someone talking: a voice activity detector on signal level, good enough
/// for roomtap's per-speaker files (one voice each, silence where the speaker is quiet or absent).
///
/// Each 10 ms frame is active when its RMS (over all channels) reaches `thresholdDBFS` (relative to
/// full scale, 32768). A span starts at its first active frame and ends at the end of its last one;
/// pauses up to `hangover` long are bridged (so words of one sentence stay one span), and spans
/// shorter than `minimumSpan` are dropped (clicks, breaths).
///
/// Defaults, tuned on the sample room (Samples/room: espeak-ng voices through Opus at 24 kbit/s,
/// measured per 10 ms frame): most speech frames lie between -40 and -10 dBFS, fade tails and soft
/// consonants between -60 and -45, the pauses between words between -95 and -70, and a speaker who
/// is absent is exact zeros. -45 dBFS keeps the words and leaves out their tails; the spans found
/// then start and end within 10-30 ms of the speech edges in Samples/room/README.md. 200 ms of
/// hangover bridges the gaps between words and keeps sentence pauses (about 0.3 s and more) as
/// splits; 100 ms is shorter than any word and longer than a click.
///
/// Thread: a value used on one thread; feed samples in order, then `finish`.
struct ActivityDetector {
    static let defaultThresholdDBFS = -45.0
    static let defaultHangover = 0.2
    static let defaultMinimumSpan = 0.1

    let sampleRate: Int
    let channels: Int
    private let frameLength: Int  // samples per channel in 10 ms
    private let thresholdSquared: Double
    private let hangoverFrames: Int
    private let minimumFrames: Int
    private var sumSquares = 0.0
    private var samplesInFrame = 0  // all channels
    private var frame = 0
    private var totalSamples: Int64 = 0  // per channel
    private var openStart: Int?
    private var lastActive = 0
    private var frameHasSound = false
    private var silentStart: Int?
    private(set) var spans: [TalkSpan] = []
    /// Runs of frames holding exact zeros only: where the file has no sound at all (a speaker
    /// muted off the record, absent, or not yet joined). Not subject to hangover or minimum length.
    private(set) var silentRuns: [TalkSpan] = []

    init(
        sampleRate: Int = 48_000, channels: Int = 1, thresholdDBFS: Double = defaultThresholdDBFS,
        hangover: Double = defaultHangover, minimumSpan: Double = defaultMinimumSpan
    ) {
        self.sampleRate = sampleRate
        self.channels = max(1, channels)
        frameLength = max(1, sampleRate / 100)
        let amplitude = 32_768 * pow(10, thresholdDBFS / 20)
        thresholdSquared = amplitude * amplitude
        hangoverFrames = Int((hangover * 100).rounded())
        minimumFrames = Int((minimumSpan * 100).rounded())
    }

    /// Takes the next interleaved samples (any count; frames may straddle calls).
    mutating func feed(_ samples: UnsafeBufferPointer<Int16>) {
        let perFrame = frameLength * channels
        for sample in samples {
            if sample != 0 { frameHasSound = true }
            let v = Double(sample)
            sumSquares += v * v
            samplesInFrame += 1
            if samplesInFrame == perFrame { endFrame() }
        }
    }

    /// Convenience: every sample at once.
    mutating func feed(_ samples: [Int16]) { samples.withUnsafeBufferPointer { feed($0) } }

    /// Ends the input (a partial last frame counts as a frame) and returns the spans.
    mutating func finish() -> [TalkSpan] {
        if samplesInFrame > 0 { endFrame() }
        closeSpan()
        closeSilentRun()
        return spans
    }

    private mutating func endFrame() {
        let n = samplesInFrame
        let active = n > 0 && sumSquares / Double(n) >= thresholdSquared
        if frameHasSound {
            closeSilentRun()
        } else if silentStart == nil {
            silentStart = frame
        }
        frameHasSound = false
        totalSamples += Int64(n / channels)
        if active {
            if openStart == nil { openStart = frame }
            lastActive = frame
        } else if openStart != nil && frame - lastActive > hangoverFrames {
            closeSpan()
        }
        frame += 1
        sumSquares = 0
        samplesInFrame = 0
    }

    /// Ends the silent run in progress (it ends where the frames counted so far end).
    private mutating func closeSilentRun() {
        guard let start = silentStart else { return }
        silentStart = nil
        silentRuns.append(
            TalkSpan(startSample: Int64(start) * Int64(frameLength), endSample: totalSamples, sampleRate: sampleRate))
    }

    private mutating func closeSpan() {
        guard let start = openStart else { return }
        openStart = nil
        guard lastActive + 1 - start >= minimumFrames else { return }
        let end = min(Int64(lastActive + 1) * Int64(frameLength), totalSamples)
        spans.append(TalkSpan(startSample: Int64(start) * Int64(frameLength), endSample: end, sampleRate: sampleRate))
    }
}
