import CALSA
import Foundation
public import RoomTapCore
import RoomTapSync
import Synchronization

/// A microphone (an ALSA capture device) as a live track of the room, e.g. `local`.
///
/// The device is S16_LE, 48 kHz, interleaved, mono by default (`channels: 2` for stereo), read in
/// 10 ms periods (480 samples per channel) with an 80 ms device buffer. A capture thread of its own
/// reads each period with `snd_pcm_readi` into a lock-free ``SampleRing``; the room clock takes 480 samples
/// per tick in ``render(into:at:)``.
///
/// The device's clock and the room's drift apart. When too little has arrived for a tick the frame
/// is silence and counted in ``underflows``; when the ring holds more than `maxLatencyFrames` × 10
/// ms (the device runs faster), the oldest samples are dropped down to half that, counted in
/// ``droppedSamples``. Capture overruns of the device itself are recovered and counted in
/// ``overruns``.
///
/// The capture ends when the device fails (``failure``), after `maxSamples`, or at ``close()``;
/// ``isFinished`` turns true once the ring has been emptied after that, so an offline room of a
/// file-backed test device can finish. (ALSA's `file` plugin does not report the end of its
/// `infile`: after it, reads go on returning stale samples, so such tests pass `maxSamples`.)
///
/// Thread: `render` and `isFinished` on the room clock's thread (no blocking, no allocation);
/// `start`, `close` and the counters from any other thread.
public final class ALSACapture: FrameSource, @unchecked Sendable {
    /// The ALSA device name.
    public let device: String
    /// 1 (default) or 2.
    public let channels: Int
    /// Frames per period and in the device buffer, as the device granted them (asked: 480, 3840).
    public let periodFrames: Int
    public let bufferFrames: Int
    /// Most samples per channel captured before the capture ends by itself; nil: no limit.
    public let maxSamples: Int64?
    /// Whether a device running faster than real time is held back to the wall clock.
    public let paceFastDevices: Bool

    private let pcm: PCMDevice
    private let ring: SampleRing
    private let scratch: UnsafeMutablePointer<Int16>  // the capture thread's read buffer
    private let started = Atomic<Bool>(false)
    private let stopping = Atomic<Bool>(false)
    private let ended = Atomic<Bool>(false)
    private let closed = Atomic<Bool>(false)
    private let underflowCount = Atomic<Int>(0)
    private let overrunCount = Atomic<Int>(0)
    private let captured = Atomic<Int64>(0)
    private let failureBox = Locked<ALSAError?>(nil)
    /// The thread, once started; joined when it is stopped.
    private let captureThread = Locked<RoomThread?>(nil)
    private let pacedFlag = Atomic<Bool>(false)

    /// Opens and configures `device` at once, so a bad name is one error line at startup:
    /// `cannot open ALSA capture device "X": <reason>`. Capture begins at ``start()``.
    ///
    /// - Parameters:
    ///   - maxLatencyFrames: the most audio the ring holds, in 10 ms frames (at least 2).
    ///   - maxSamples: end the capture after this many samples per channel (timed captures, tests).
    ///   - paceFastDevices: hold back a device that delivers audio faster than real time (see
    ///     ``isPaced``). Tests that want a whole file captured at once pass false.
    public init(
        device: String = "default", channels: Int = 1, maxLatencyFrames: Int = 8, maxSamples: Int64? = nil,
        paceFastDevices: Bool = true
    ) throws {
        precondition(channels == 1 || channels == 2, "1 or 2 channels")
        pcm = try PCMDevice(name: device, direction: .capture, channels: channels, bufferPeriods: 8)
        self.device = device
        self.channels = channels
        self.maxSamples = maxSamples
        self.paceFastDevices = paceFastDevices
        periodFrames = pcm.periodFrames
        bufferFrames = pcm.bufferFrames
        let frames = max(2, maxLatencyFrames) * AudioFrame.samplesPerChannel
        let capacity = max(frames, 2 * pcm.periodFrames)
        ring = SampleRing(capacity: capacity, channels: channels, policy: .dropOldest(keeping: capacity / 2))
        scratch = .allocate(capacity: pcm.periodFrames * channels)
        scratch.initialize(repeating: 0, count: pcm.periodFrames * channels)
    }

    deinit { scratch.deallocate() }

    /// Starts the capture thread. Idempotent. Until it runs, every tick is an underflow.
    public func start() {
        guard !started.exchange(true, ordering: .acquiringAndReleasing), !closed.load(ordering: .acquiring) else {
            return
        }
        captureThread.withLock { thread in
            thread = RoomThread.start("roomtap.alsa.capture") { [self] in
                captureLoop()
            }
        }
    }

    /// Ends the capture: stops the thread (within one period), closes the device. What is still in
    /// the ring is rendered, then the source is finished. Idempotent; any thread but the clock's.
    public func close() {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        stopping.store(true, ordering: .releasing)
        if started.load(ordering: .acquiring) {
            captureThread.withLock { $0 }?.join()
        }
        pcm.close()
        ended.store(true, ordering: .releasing)
    }

    /// Ticks rendered as silence because not enough audio had arrived.
    public var underflows: Int { underflowCount.load(ordering: .relaxed) }
    /// Samples per channel dropped (oldest first) to keep the latency bounded.
    public var droppedSamples: Int { ring.droppedSamples }
    /// Device overruns (the capture thread was late) recovered so far.
    public var overruns: Int { overrunCount.load(ordering: .relaxed) }
    /// Samples per channel read from the device so far.
    public var capturedSamples: Int64 { captured.load(ordering: .relaxed) }
    /// Samples per channel waiting in the ring.
    public var bufferedSamples: Int { ring.count }
    /// True once the capture thread has stopped (failure, `maxSamples`, or `close`).
    public var hasEnded: Bool { ended.load(ordering: .acquiring) }
    /// True once the capture thread found the device delivering audio faster than real time (ahead
    /// of the wall clock by more than 50 ms + 0.5 % of the time since start; a sound card cannot be,
    /// since audio exists only once recorded: ALSA's `null` and `file` plugins, a broken driver)
    /// and, with `paceFastDevices`, began to sleep so the device yields real time, instead of
    /// spinning a core and overflowing the ring.
    public var isPaced: Bool { pacedFlag.load(ordering: .relaxed) }
    /// The device failure that ended the capture, if any.
    public var failure: ALSAError? { failureBox.withLock { $0 } }

    // MARK: - FrameSource (the room clock's thread)

    public var isFinished: Bool { ended.load(ordering: .acquiring) && ring.count == 0 }

    public func render(into samples: UnsafeMutableBufferPointer<Int16>, at roomSample: Int64) -> FrameStatus {
        let n = AudioFrame.samplesPerChannel
        let out = samples.baseAddress!
        let done = ended.load(ordering: .acquiring)  // before reading the ring: when set, the ring is final
        if ring.read(exactly: n, into: out) { return .normal }
        if done {
            let got = ring.read(upTo: n, into: out)
            (out + got * channels).update(repeating: 0, count: (n - got) * channels)
            return got > 0 ? .normal : .silence
        }
        underflowCount.add(1, ordering: .relaxed)
        samples.update(repeating: 0)
        return .silence
    }

    // MARK: - The capture thread

    private func captureLoop() {
        defer { ended.store(true, ordering: .releasing) }
        guard let handle = pcm.handle else { return }
        let started = snd_pcm_start(handle)
        if started < 0 && snd_pcm_state(handle) != SND_PCM_STATE_RUNNING {
            fail("ALSA capture on \"\(device)\" failed to start: \(PCMDevice.text(started))", code: started)
            return
        }
        let began = MonotonicClock.now
        while !stopping.load(ordering: .acquiring) {
            if paceFastDevices { pace(since: began) }
            var want = pcm.periodFrames
            if let maxSamples {
                let left = maxSamples - captured.load(ordering: .relaxed)
                if left <= 0 { return }
                want = min(want, Int(left))
            }
            let n = snd_pcm_readi(handle, scratch, snd_pcm_uframes_t(want))
            if n > 0 {
                ring.write(scratch, frames: Int(n))
                captured.add(Int64(n), ordering: .relaxed)
                continue
            }
            if n == 0 { return }  // end of input
            if n == -Int(EAGAIN) { continue }
            if n == -Int(EPIPE) { overrunCount.add(1, ordering: .relaxed) }
            if snd_pcm_recover(handle, Int32(n), 1) < 0 {
                fail("ALSA capture on \"\(device)\" failed: \(PCMDevice.text(n))", code: Int32(n))
                return
            }
            if n == -Int(EPIPE) || n == -Int(ESTRPIPE) { _ = snd_pcm_start(handle) }
        }
    }

    /// Sleeps while the samples captured so far are ahead of the monotonic clock since `began` (once
    /// they have been too far ahead, see ``isPaced``), in steps of at most 20 ms so `close` is
    /// noticed.
    private func pace(since began: MonotonicClock.Instant) {
        while !stopping.load(ordering: .acquiring) {
            let elapsed = (MonotonicClock.now - began) / .seconds(1)
            let ahead = Double(captured.load(ordering: .relaxed)) / Double(AudioFrame.sampleRate) - elapsed
            if !pacedFlag.load(ordering: .relaxed) {
                guard ahead > 0.05 + 0.005 * elapsed else { return }
                pacedFlag.store(true, ordering: .relaxed)
            }
            guard ahead > 0.01 else { return }
            usleep(UInt32(min(ahead - 0.01, 0.02) * 1e6))
        }
    }

    private func fail(_ message: String, code: Int32) {
        failureBox.withLock { if $0 == nil { $0 = ALSAError(message, code: code) } }
    }
}
