import Foundation
public import RoomTapCore
public import RoomTapFiles
import RoomTapSync
import Synchronization

/// Writes a track's 10 ms frames to a file in any ``AudioFileFormat`` at any
/// ``OutputSampleRate``: it keeps the room's timeline (silence for room time no frame came for,
/// padding to the last frame offered, as ``WAVWriter`` does), optionally measures loudness
/// (``LoudnessMeter``, at 48 kHz), resamples (``SampleRateConverter``) and hands the samples to
/// the format's ``PCMFileEncoder``, with a ``PCMFileEncoder/checkpoint()`` at least once per second
/// of audio and of wall time. All of it on the writer's thread, none on the room clock's.
///
/// File sample `k` at rate `r` is room time `timelineOrigin / 48000 + k / r` seconds; a file of
/// `n` room samples holds exactly `n × r / 48000` samples.
///
/// Thread: a ``FrameConsumer`` (one thread at a time); ``samplesWritten`` and
/// ``noteOffered(end:)`` from any thread; ``loudness`` after ``finish()`` from any thread.
public final class EncodedFileWriter: AudioFileWriter {
    /// How the file is made.
    public struct Options: Sendable {
        public var format: AudioFileFormat = .wav
        /// Samples per second in the file (``OutputSampleRate/supported``).
        public var sampleRate: Int = AudioFrame.sampleRate
        /// Ogg Opus target bitrate, bits per second (per file).
        public var bitrate: Int = 32_000
        /// FLAC compression level 0...8.
        public var flacLevel: Int = 5
        /// Replace an existing file (else `.alreadyExists`).
        public var overwrite: Bool = false
        /// Start time, title, channel names.
        public var metadata = AudioFileMetadata()
        /// Measure integrated loudness and true peak (``loudness``).
        public var measuresLoudness: Bool = false
        /// fsync(2) when finishing.
        public var syncOnFinish: Bool = true

        public init() {}
    }

    public let path: String
    /// Channels in the file; frames of another channel count are converted.
    public let channels: Int
    public let options: Options

    private let encoder: any PCMFileEncoder
    private let converter: SampleRateConverter?
    private let meter: LoudnessMeter?
    private let scratch: UnsafeMutablePointer<Int16>
    private let silence: UnsafeMutablePointer<Int16>
    private var nextRoomSample: Int64
    private var samplesSinceCheckpoint: Int64 = 0
    private var lastCheckpoint = MonotonicClock.now
    private var finished = false
    private let writtenCounter = Atomic<Int64>(0)
    private let offeredEnd = Atomic<Int64>(.min)
    private let measured = Locked<LoudnessMeter.Result?>(nil)

    /// Creates the file (see the encoders for the errors; `.invalidArgument` for a rate roomtap
    /// does not write).
    public init(path: String, channels: Int, options: Options = .init()) throws(OutputFileError) {
        guard OutputSampleRate.supported.contains(options.sampleRate) else {
            throw OutputFileError(
                path: path, message: "cannot write \(options.sampleRate) Hz; choose \(OutputSampleRate.spoken)",
                kind: .invalidArgument)
        }
        let rate = options.sampleRate
        switch options.format {
        case .wav:
            encoder = try WAVFileEncoder(
                path: path, channels: channels, sampleRate: rate, metadata: options.metadata,
                overwrite: options.overwrite, syncOnFinish: options.syncOnFinish)
        case .flac:
            encoder = try FLACFileEncoder(
                path: path, channels: channels, sampleRate: rate, metadata: options.metadata,
                compressionLevel: options.flacLevel, overwrite: options.overwrite, syncOnFinish: options.syncOnFinish)
        case .opus:
            encoder = try OggOpusFileEncoder(
                path: path, channels: channels, sampleRate: rate, bitrate: options.bitrate, metadata: options.metadata,
                overwrite: options.overwrite, syncOnFinish: options.syncOnFinish)
        }
        do {
            converter =
                rate == AudioFrame.sampleRate
                ? nil
                : try SampleRateConverter(inputRate: AudioFrame.sampleRate, outputRate: rate, channels: channels)
        } catch {
            if !options.overwrite { unlink(path) }
            throw OutputFileError(path: path, message: error.description, kind: .invalidArgument)
        }
        meter = options.measuresLoudness ? LoudnessMeter(channels: channels, sampleRate: AudioFrame.sampleRate) : nil
        self.path = path
        self.channels = channels
        self.options = options
        nextRoomSample = options.metadata.timelineOrigin
        scratch = .allocate(capacity: AudioFrame.samplesPerChannel * max(channels, AudioFrame.maxChannels))
        silence = .allocate(capacity: AudioFrame.samplesPerChannel * channels)
        silence.initialize(repeating: 0, count: AudioFrame.samplesPerChannel * channels)
    }

    deinit {
        scratch.deallocate()
        silence.deallocate()
    }

    public var samplesWritten: Int64 { writtenCounter.load(ordering: .relaxed) }

    /// The track's loudness, once ``finish()`` has run with ``Options-swift.struct/measuresLoudness``.
    public var loudness: LoudnessMeter.Result? { measured.withLock { $0 } }

    public func noteOffered(end: Int64) { offeredEnd.store(end, ordering: .releasing) }

    // MARK: - FrameConsumer

    /// Appends one frame after silence for any room time skipped; frames before the timeline
    /// position are ignored.
    public func consume(_ frame: AudioFrame) throws {
        let n = Int64(AudioFrame.samplesPerChannel)
        guard frame.roomSample + n > nextRoomSample else { return }
        if frame.roomSample > nextRoomSample { try appendSilence(frames: frame.roomSample - nextRoomSample) }
        let skip = Int(nextRoomSample - frame.roomSample)
        let source: UnsafePointer<Int16>
        if frame.channels == channels, let base = frame.samples.baseAddress {
            source = base
        } else if channels <= AudioFrame.maxChannels {
            frame.copy(into: scratch, channels: channels)
            source = UnsafePointer(scratch)
        } else {
            throw OutputFileError(
                path: path, message: "a \(frame.channels)-channel frame for a \(channels)-channel file",
                kind: .invalidArgument)
        }
        try append(source + skip * channels, frames: AudioFrame.samplesPerChannel - skip)
    }

    /// Checkpoints the file when a second of wall time has passed since the last one.
    public func drained() throws {
        guard !finished, samplesSinceCheckpoint > 0, MonotonicClock.now - lastCheckpoint >= .seconds(1) else {
            return
        }
        try checkpoint()
    }

    /// Pads to the last frame offered, releases the resampler's tail, finishes the file and the
    /// loudness measurement. Idempotent.
    public func finish() throws {
        guard !finished else { return }
        let end = offeredEnd.load(ordering: .acquiring)
        if end > nextRoomSample { try appendSilence(frames: end - nextRoomSample) }
        if let converter {
            let (out, count) = converter.flush()
            if count > 0 { try encoder.write(out, frames: count) }
        }
        finished = true
        try encoder.finish()
        if let meter { measured.withLock { $0 = meter.result } }
    }

    // MARK: - Samples without frames (export)

    /// Appends `frames` interleaved 48 kHz frames at the timeline position (``export``'s path:
    /// whole files, no room clock). At most 4800 frames per call.
    public func append(_ samples: UnsafePointer<Int16>, frames: Int) throws(OutputFileError) {
        guard frames > 0 else { return }
        meter?.add(samples, frames: frames)
        if let converter {
            let (out, count) = converter.process(samples, frames: frames)
            if count > 0 { try encoder.write(out, frames: count) }
        } else {
            try encoder.write(samples, frames: frames)
        }
        nextRoomSample += Int64(frames)
        samplesSinceCheckpoint += Int64(frames)
        writtenCounter.add(Int64(frames), ordering: .relaxed)
        if samplesSinceCheckpoint >= Int64(AudioFrame.sampleRate) { try checkpoint() }
    }

    private func appendSilence(frames: Int64) throws(OutputFileError) {
        var left = frames
        while left > 0 {
            let n = Int(min(left, Int64(AudioFrame.samplesPerChannel)))
            try append(silence, frames: n)
            left -= Int64(n)
        }
    }

    private func checkpoint() throws(OutputFileError) {
        try encoder.checkpoint()
        samplesSinceCheckpoint = 0
        lastCheckpoint = .now
    }
}
