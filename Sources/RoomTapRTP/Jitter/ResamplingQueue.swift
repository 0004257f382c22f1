import RoomTapResampling

/// Converts one stream's decoded audio from its own rate to 48 kHz with libsoxr and hands it out
/// in exactly the pieces the timeline asks for, a fixed ``lead`` behind its input.
///
/// libsoxr aligns its output with its input but holds back a few samples until its filter has
/// seen what follows, so one packet's input does not yield exactly that packet's 48 kHz samples.
/// The queue starts ``lead`` samples of silence ahead (more than the filter ever holds back), and
/// ``take(_:into:)`` always has what is asked for; the stream comes out exactly ``lead`` samples
/// later than it went in, and the owner places it that much earlier (``PCMPayloadDecoder``), so
/// the audio lands where its timestamps say.
///
/// Quality: libsoxr's quick recipe (`SOXR_QQ`, cubic interpolation), which holds back a handful
/// of samples. Its DFT recipes (LQ/MQ/HQ) hold back 20–90 ms at 8 kHz in blocks, which would add
/// that much to the live playout's latency; telephone audio is band-limited to 3.4 kHz (G.711)
/// or 7 kHz (G.722), well inside what cubic interpolation keeps.
///
/// Thread: confined to the room clock's thread. Everything is allocated (and libsoxr primed with
/// silence, so it has made its own allocations) in `init`; nothing allocates after.
final class ResamplingQueue {
    /// Input rate (Hz).
    let inputRate: Int
    /// Interleaved channels in and out.
    let channels: Int
    /// Samples per channel the output runs behind the input (48 kHz).
    let lead: Int
    /// The most input samples per channel one ``push(_:frames:)`` takes.
    let maxInput: Int

    private let stream: SoxrStream?
    private let storage: UnsafeMutablePointer<Int16>
    private let capacity: Int
    private var head = 0
    private var count = 0
    /// Input and output samples per channel since init (for ``inputNeeded(toTake:)``).
    private var inputTotal: Int64 = 0
    private var outputTotal: Int64 = 0

    /// A queue from `inputRate` to 48 kHz taking up to `maxInput` samples per channel per push;
    /// nil if libsoxr refuses. A 48 kHz input passes through unchanged (lead 0).
    init?(inputRate: Int, channels: Int, maxInput: Int) {
        self.inputRate = inputRate
        self.channels = channels
        self.maxInput = maxInput
        let maxOutput = maxInput * 48_000 / inputRate + 1
        if inputRate == 48_000 {
            stream = nil
            lead = 0
            capacity = 2 * maxOutput + 64
            storage = .allocate(capacity: capacity * channels)
            storage.initialize(repeating: 0, count: capacity * channels)
            return
        }
        guard
            let made = try? SoxrStream(
                inputRate: Double(inputRate), outputRate: 48_000, channels: channels, recipe: .quick)
        else { return nil }
        stream = made
        // Prime with silence in pieces of every size a stream sends (a sample, 10 and 20 ms,
        // 20 ms + a bit), measuring the most the filter holds back.
        let probeCapacity = 2 * maxOutput + 4096
        let scratchIn = UnsafeMutablePointer<Int16>.allocate(capacity: maxInput * channels)
        scratchIn.initialize(repeating: 0, count: maxInput * channels)
        let scratchOut = UnsafeMutablePointer<Int16>.allocate(capacity: probeCapacity * channels)
        defer {
            scratchIn.deallocate()
            scratchOut.deallocate()
        }
        var fed: Int64 = 0
        var got: Int64 = 0
        var held: Int64 = 0
        for size in [1, inputRate / 100, inputRate / 50, inputRate / 50 + 7, 3, maxInput]
            + Array(repeating: inputRate / 50, count: 20)
        {
            let n = min(max(1, size), maxInput)
            let (idone, odone) = made.process(scratchIn, frames: n, into: scratchOut, capacity: probeCapacity)
            fed += Int64(idone)
            got += Int64(odone)
            held = max(held, fed * 48_000 / Int64(inputRate) - got)
        }
        let pending = Int(fed * 48_000 / Int64(inputRate) - got)
        lead = Int(held) + 2
        capacity = 2 * maxOutput + 2 * lead + 4096
        storage = .allocate(capacity: capacity * channels)
        storage.initialize(repeating: 0, count: capacity * channels)
        // What the filter still holds of the priming silence comes out first: with it, the queue
        // starts `lead` ahead.
        count = max(0, lead - pending)
    }

    deinit { storage.deallocate() }

    /// Input samples per channel to push so that ``take(_:into:)`` of `frames` is all converted
    /// audio (never the queue's own silence): what keeps the queue ``lead`` ahead.
    func inputNeeded(toTake frames: Int) -> Int {
        let wanted = (outputTotal + Int64(frames)) * Int64(inputRate)
        let n = (wanted + 47_999) / 48_000 - inputTotal
        return Int(max(0, min(Int64(maxInput), n)))
    }

    /// Converts `frames` samples per channel of interleaved `input` (at most ``maxInput``) and
    /// queues the result.
    func push(_ input: UnsafePointer<Int16>, frames: Int) {
        inputTotal += Int64(frames)
        guard let stream else {
            append(input, frames: frames)
            return
        }
        compact()  // leaves at least half the storage, more than one push makes
        count +=
            stream.process(
                input, frames: frames, into: storage + (head + count) * channels, capacity: capacity - head - count
            ).produced
    }

    /// Moves `frames` samples per channel (at most ``LiveOpusDecoder/maxFrameSamples``) into
    /// `out`; silence for any the queue lacks (which the lead makes never happen).
    func take(_ frames: Int, into out: UnsafeMutablePointer<Int16>) {
        let n = min(frames, count)
        out.update(from: storage + head * channels, count: n * channels)
        if n < frames { (out + n * channels).update(repeating: 0, count: (frames - n) * channels) }
        head += n
        count -= n
        if count == 0 { head = 0 }
        outputTotal += Int64(frames)
    }

    private func append(_ pcm: UnsafePointer<Int16>, frames: Int) {
        compact()
        let n = min(frames, capacity - head - count)
        (storage + (head + count) * channels).update(from: pcm, count: n * channels)
        count += n
    }

    /// Moves the queued samples to the front when the tail is short of room.
    private func compact() {
        guard head > 0, head + count > capacity / 2 else { return }
        if count > 0 { storage.update(from: storage + head * channels, count: count * channels) }
        head = 0
    }
}
