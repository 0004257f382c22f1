import CALSA
import Foundation
import RoomTapTestSupport

/// An ALSA configuration for tests without a sound card: ALSA's `file` PCM plugin over the `null`
/// plugin, in a temporary directory.
///
/// - ``playbackDevice`` (`roomtap_play`) writes everything played to ``playbackFile`` as raw
///   S16_LE interleaved samples (truncated at each open), in whatever channel count was opened.
/// - ``captureDevice`` (`roomtap_mic`) reads raw S16_LE from ``captureFile`` (written by `init`).
///   ALSA does not report the end of that file: reads after it go on returning the plugin's last
///   read buffer. `init` therefore appends ``trailingSilence`` samples of zeros, so a capture that
///   goes past the end yields silence; tests that want exactly the samples bound the capture with
///   ``captureSampleCount`` (`ALSACapture(maxSamples:)`).
/// - `default` is both (an `asym` PCM), so a program using the default device needs nothing else.
///
/// The file replaces ALSA's whole configuration (`/usr/share/alsa/alsa.conf` is not read). Use it
/// in a child process through ``environment`` (`ALSA_CONFIG_PATH`), or in this process through
/// ``activate()``. Neither device paces: the `null` slave takes and gives samples as fast as they
/// are asked for (`ALSACapture` holds such a device back to real time unless told not to).
///
/// Thread: immutable after `init`; ``activate()`` changes process-wide state (run such tests
/// serialized).
public final class ALSATestConfig: Sendable {
    /// The PCM name that writes ``playbackFile``.
    public let playbackDevice = "roomtap_play"
    /// The PCM name that reads ``captureFile``.
    public let captureDevice = "roomtap_mic"
    /// The configuration file (the value of `ALSA_CONFIG_PATH`).
    public let configPath: String
    /// Where the playback device writes.
    public let playbackFile: String
    /// What the capture device reads.
    public let captureFile: String
    /// Samples per channel given to `init` (the file holds ``trailingSilence`` more, all zero).
    public let captureSampleCount: Int64
    /// Zero samples per channel appended to the capture file: more than ALSA's read buffer, so its
    /// stale contents after the end are zeros.
    public static let trailingSilence = 16_384
    private let directory: TemporaryDirectory

    /// Writes the configuration, and `captureSamples` (interleaved, `captureChannels` channels) as
    /// the capture device's input.
    public init(captureSamples: [Int16] = [], captureChannels: Int = 1) throws {
        directory = try TemporaryDirectory(prefix: "roomtap-alsa")
        configPath = directory.file("asound.conf")
        playbackFile = directory.file("played.raw")
        captureFile = directory.file("mic.raw")
        captureSampleCount = Int64(captureSamples.count / max(1, captureChannels))
        let padded = captureSamples + [Int16](repeating: 0, count: Self.trailingSilence * max(1, captureChannels))
        let bytes = padded.withUnsafeBufferPointer { Data(buffer: $0) }  // little-endian hosts
        try bytes.write(to: URL(fileURLWithPath: captureFile))
        let config = """
            # roomtap test devices (ALSATestConfig): ALSA's file plugin over the null plugin.
            pcm.\(playbackDevice) {
                type file
                slave.pcm { type null }
                file "\(Self.escape(playbackFile))"
                format "raw"
            }
            pcm.\(captureDevice) {
                type file
                slave.pcm { type null }
                file "/dev/null"
                infile "\(Self.escape(captureFile))"
                format "raw"
            }
            pcm.!default {
                type asym
                playback.pcm "\(playbackDevice)"
                capture.pcm "\(captureDevice)"
            }

            """
        try config.write(toFile: configPath, atomically: true, encoding: .utf8)
    }

    /// `ALSA_CONFIG_PATH` for a child process's environment.
    public var environment: [String: String] { ["ALSA_CONFIG_PATH": configPath] }

    /// Makes this process use the configuration: sets `ALSA_CONFIG_PATH` and frees ALSA's cached
    /// global configuration (`snd_config_update_free_global`) so the next open reads this file.
    /// Call with no ALSA device open.
    public func activate() {
        setenv("ALSA_CONFIG_PATH", configPath, 1)
        snd_config_update_free_global()
    }

    /// What the playback device has written so far, as interleaved samples.
    public func playedSamples() throws -> [Int16] {
        let data = try Data(contentsOf: URL(fileURLWithPath: playbackFile))
        return data.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
    }

    private static func escape(_ path: String) -> String {
        path.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
    }
}
