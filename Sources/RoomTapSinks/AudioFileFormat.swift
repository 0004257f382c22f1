/// The file formats roomtap writes a track in (`--format`).
///
/// - `wav`: 16-bit PCM WAV, RF64 past 4 GiB, BWF `bext` (``WAVWriter``, ``WAVFileEncoder``).
/// - `flac`: lossless FLAC through libFLAC, 16-bit, start time in Vorbis comments (``FLACFileEncoder``).
/// - `opus`: Ogg Opus (RFC 7845) through libopus and libogg, lossy, for sharing (``OggOpusFileEncoder``).
public enum AudioFileFormat: String, Sendable, CaseIterable {
    case wav
    case flac
    case opus

    /// The file name extension, without the dot (`wav`, `flac`, `opus`).
    public var fileExtension: String { rawValue }

    /// The format a file name's extension names (`.wav`, `.rf64`, `.flac`, `.opus`, `.ogg`; any
    /// case), nil for any other.
    public static func fromExtension(of path: String) -> AudioFileFormat? {
        guard let dot = path.lastIndex(of: "."), !path[dot...].contains("/") else { return nil }
        switch path[path.index(after: dot)...].lowercased() {
        case "wav", "rf64": return .wav
        case "flac": return .flac
        case "opus", "ogg": return .opus
        default: return nil
        }
    }
}

/// The output sample rates roomtap writes (`--rate`): 48 kHz, the room's own, and the divisors of
/// it that speech recognition and telephony use. Every frame of 10 ms is a whole number of samples
/// at each of them, so files at every rate keep the room's length exactly.
public enum OutputSampleRate {
    /// 8000, 16000, 24000, 32000, 44100, 48000: every one a whole number of samples per 10 ms
    /// frame, so a file of `n` room samples holds exactly `n × rate / 48000`.
    public static let supported = [8_000, 16_000, 24_000, 32_000, 44_100, 48_000]
    /// The rates an Ogg Opus file can say it was made from (libopus encodes 8, 12, 16, 24 or
    /// 48 kHz; roomtap offers those of ``supported``).
    public static let opus = [8_000, 16_000, 24_000, 48_000]
    /// "8000, 16000, 24000, 32000, 44100 or 48000", for messages.
    public static let spoken = supported.dropLast().map(String.init).joined(separator: ", ") + " or 48000"
}
