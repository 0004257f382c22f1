import CALSA
public import RoomTapCore
import Synchronization

/// Plays one track (the mix, or one speaker) through an ALSA PCM device.
///
/// The device is S16_LE, 48 kHz, interleaved, `channels` 1 or 2 (frames of the other count are
/// converted: stereo to mono averages, mono to stereo duplicates), with 10 ms periods and a 60 ms
/// device buffer (six periods). Playback starts once 40 ms are written, and since frames then
/// arrive as fast as the device plays them, the device keeps about 40 ms queued: the cushion that
/// rides out a consumer thread woken late on a loaded machine, with 20 ms of room above it for a
/// burst of frames. Latency from the room clock to the speaker is about 40 ms plus what waits in
/// the frame queue (at most `queueFrames` × 10 ms, default 80 ms; normally under 10 ms).
///
/// Thread: ``onFrame(_:)`` runs on the room clock's thread and only copies the frame into a bounded
/// queue (``QueuedSink``, `.drop` policy by default): it never blocks and never allocates. A
/// consumer thread of its own writes to the device with `snd_pcm_writei`, which blocks at the
/// device's pace. Counters and ``close()`` from any thread but the clock's.
///
/// The room clock and the sound card's clock drift apart: when the card is slower, the queue fills
/// and frames are dropped (``dropped``); when it is faster, the device runs dry and the underrun is
/// recovered (`snd_pcm_recover`) and counted (``underruns``).
public final class ALSAPlayback: AudioTrackSink, @unchecked Sendable {
    /// The ALSA device name.
    public let device: String
    /// Channels sent to the device (1 or 2).
    public let channels: Int
    /// Frames per period and in the device buffer, as the device granted them (asked: 480, 2880).
    public let periodFrames: Int
    public let bufferFrames: Int

    private let writer: Writer
    private let sink: QueuedSink

    /// Opens and configures `device` at once, so a bad name or an unusable device is one error
    /// line at startup: `cannot open ALSA playback device "X": <reason>`.
    ///
    /// - Parameters:
    ///   - queueFrames: the queue between the room clock and the device thread, in 10 ms frames.
    ///   - overflow: `.drop` for live rooms; `.wait` only for offline rooms on a ``VirtualClock``
    ///     (tests), where the clock may wait for the device.
    ///   - realtimePriority: the device thread's SCHED_FIFO priority (the caller checked it is
    ///     permitted), so that a loaded machine does not starve the speaker; nil: normal priority.
    public init(
        device: String = "default", channels: Int, queueFrames: Int = 8, overflow: OverflowPolicy = .drop,
        realtimePriority: Int32? = nil
    ) throws {
        precondition(channels == 1 || channels == 2, "1 or 2 channels")
        let pcm = try PCMDevice(name: device, direction: .playback, channels: channels, bufferPeriods: 6)
        self.device = device
        self.channels = channels
        periodFrames = pcm.periodFrames
        bufferFrames = pcm.bufferFrames
        writer = Writer(pcm: pcm)
        sink = QueuedSink(
            consumer: writer, channels: channels, capacity: max(2, queueFrames), wakeThreshold: 1, policy: overflow,
            threadName: "roomtap.alsa.playback", realtimePriority: realtimePriority)
    }

    /// Room clock's thread: copies the frame into the queue; never blocks (under `.drop`).
    public func onFrame(_ frame: AudioFrame) { sink.onFrame(frame) }

    /// Device underruns recovered so far (the device ran out of audio).
    public var underruns: Int { writer.underruns.load(ordering: .relaxed) }
    /// Frames dropped because the queue was full (or after a device failure, or after close).
    public var dropped: Int { sink.droppedFrames }
    /// Frames written to the device.
    public var played: Int { sink.consumedFrames }

    /// Plays what is queued, drains the device (`snd_pcm_drain`: waits until the last sample has
    /// been played) and closes it. Throws the device's first failure, e.g. `ALSA playback on
    /// "X" failed: <reason>`. Idempotent; call after the track's sinks were removed (or the room
    /// finished), from any thread but the room clock's.
    public func close() throws {
        defer { writer.pcm.close() }  // after a failure `finish` is skipped; the sink's thread has ended here
        try sink.close()
    }

    /// The consumer: writes frames to the device on the sink's thread.
    private final class Writer: FrameConsumer, @unchecked Sendable {
        let pcm: PCMDevice
        let underruns = Atomic<Int>(0)

        init(pcm: PCMDevice) { self.pcm = pcm }

        func consume(_ frame: AudioFrame) throws {
            guard let handle = pcm.handle, var pointer = frame.samples.baseAddress else { return }
            var left = AudioFrame.samplesPerChannel
            while left > 0 {
                let n = snd_pcm_writei(handle, pointer, snd_pcm_uframes_t(left))
                if n >= 0 {
                    left -= Int(n)
                    pointer += Int(n) * pcm.channels
                    continue
                }
                if n == -Int(EPIPE) { underruns.add(1, ordering: .relaxed) }
                if n == -Int(EAGAIN) { continue }
                let recovered = snd_pcm_recover(handle, Int32(n), 1)
                if recovered < 0 {
                    throw ALSAError(
                        "ALSA playback on \"\(pcm.name)\" failed: \(PCMDevice.text(n))", code: Int32(n))
                }
            }
        }

        func drained() throws {}

        func finish() throws {
            if let handle = pcm.handle { snd_pcm_drain(handle) }
            pcm.close()
        }
    }
}
