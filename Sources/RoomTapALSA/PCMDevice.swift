import CALSA
import Synchronization

/// Which way audio flows through a PCM, with the words used in error lines.
enum PCMDirection {
    case playback
    case capture

    var stream: snd_pcm_stream_t { self == .playback ? SND_PCM_STREAM_PLAYBACK : SND_PCM_STREAM_CAPTURE }
    var word: String { self == .playback ? "playback" : "capture" }
}

/// An open, configured ALSA PCM handle: S16_LE, 48 kHz, interleaved, 1 or 2 channels, 10 ms
/// periods. Not thread-safe: it is opened on the caller's thread, then used by one thread at a
/// time (the device thread), then closed.
final class PCMDevice: @unchecked Sendable {
    /// The ALSA device name ("default", "hw:1,0", "plughw:CARD=USB").
    let name: String
    let direction: PCMDirection
    let channels: Int
    /// Frames (samples per channel) per period, as the device granted (asked: 480 = 10 ms).
    let periodFrames: Int
    /// Frames in the device's ring buffer, as granted.
    let bufferFrames: Int
    private(set) var handle: OpaquePointer?

    /// Opens `name` and configures it; `bufferPeriods` periods of 10 ms make the device buffer.
    /// Throws one-line ``ALSAError``s: `cannot open ALSA playback device "X": <reason>`.
    init(name: String, direction: PCMDirection, channels: Int, bufferPeriods: Int) throws {
        precondition(channels == 1 || channels == 2, "1 or 2 channels")
        Self.quietLibrary()
        self.name = name
        self.direction = direction
        self.channels = channels
        var pcm: OpaquePointer?
        let opened = snd_pcm_open(&pcm, name, direction.stream, 0)
        guard opened >= 0, let pcm else {
            throw ALSAError(
                "cannot open ALSA \(direction.word) device \"\(name)\": \(Self.text(opened))", code: opened)
        }
        handle = pcm
        do {
            (periodFrames, bufferFrames) = try Self.configure(
                pcm, channels: channels, bufferPeriods: bufferPeriods, direction: direction, name: name)
        } catch {
            snd_pcm_close(pcm)
            handle = nil
            throw error
        }
    }

    deinit { close() }

    /// Closes the handle (without draining). Idempotent.
    func close() {
        if let handle { snd_pcm_close(handle) }
        handle = nil
    }

    /// alsa-lib's words for a negative error code.
    static func text(_ code: some BinaryInteger) -> String { String(cString: snd_strerror(Int32(code))) }

    private static let quieted = Atomic<Bool>(false)

    /// Routes alsa-lib's own stderr diagnostics to nowhere, once per process (every failure is
    /// reported by us as one line instead).
    private static func quietLibrary() {
        if !quieted.exchange(true, ordering: .acquiringAndReleasing) { roomtap_alsa_silence_library_messages() }
    }

    private static func configure(
        _ pcm: OpaquePointer, channels: Int, bufferPeriods: Int, direction: PCMDirection, name: String
    ) throws -> (Int, Int) {
        var hw: OpaquePointer?
        guard snd_pcm_hw_params_malloc(&hw) >= 0, let hw else {
            throw ALSAError("cannot configure ALSA \(direction.word) device \"\(name)\": out of memory", code: -12)
        }
        defer { snd_pcm_hw_params_free(hw) }
        let rate: UInt32 = 48_000
        var period = snd_pcm_uframes_t(480)
        var buffer = snd_pcm_uframes_t(480 * bufferPeriods)
        var dir: Int32 = 0
        let steps: [(String, () -> Int32)] = [
            ("no configuration", { snd_pcm_hw_params_any(pcm, hw) }),
            ("interleaved access", { snd_pcm_hw_params_set_access(pcm, hw, SND_PCM_ACCESS_RW_INTERLEAVED) }),
            ("format S16_LE", { snd_pcm_hw_params_set_format(pcm, hw, SND_PCM_FORMAT_S16_LE) }),
            ("\(channels) channel(s)", { snd_pcm_hw_params_set_channels(pcm, hw, UInt32(channels)) }),
            ("48000 Hz", { snd_pcm_hw_params_set_rate(pcm, hw, rate, 0) }),
            ("10 ms periods", { snd_pcm_hw_params_set_period_size_near(pcm, hw, &period, &dir) }),
            ("buffer size", { snd_pcm_hw_params_set_buffer_size_near(pcm, hw, &buffer) }),
            ("parameters", { snd_pcm_hw_params(pcm, hw) }),
        ]
        for (what, step) in steps {
            let err = step()
            if err < 0 {
                throw ALSAError(
                    "cannot configure ALSA \(direction.word) device \"\(name)\" (\(what)): \(text(err))"
                        + " (roomtap needs S16_LE, 48000 Hz, \(channels) channel(s); try a \"plughw:\" device)",
                    code: err)
            }
        }
        if direction == .playback {
            // Start once four periods are queued (40 ms: the cushion against a late consumer thread that
            // the device keeps from then on) instead of the default full buffer.
            var sw: OpaquePointer?
            if snd_pcm_sw_params_malloc(&sw) >= 0, let sw {
                defer { snd_pcm_sw_params_free(sw) }
                if snd_pcm_sw_params_current(pcm, sw) >= 0 {
                    _ = snd_pcm_sw_params_set_start_threshold(pcm, sw, min(buffer, 4 * period))
                    _ = snd_pcm_sw_params_set_avail_min(pcm, sw, period)
                    _ = snd_pcm_sw_params(pcm, sw)
                }
            }
        }
        return (Int(period), Int(buffer))
    }
}
