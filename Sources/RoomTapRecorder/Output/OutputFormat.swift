import RoomTapAll

/// `--format`, `--rate`, `--bitrate`: the format of the files `record` and `export` write, read
/// once from the arguments with usage errors (exit 64) for values roomtap cannot write.
struct OutputFormat: Equatable {
    var format: AudioFileFormat = .wav
    var sampleRate: Int = AudioFrame.sampleRate
    /// Opus bits per second per file.
    var bitrate: Int = 32_000

    /// `.wav`, `.flac` or `.opus`.
    var dotExtension: String { "." + format.fileExtension }

    /// Plain 48 kHz WAV, what ``WAVWriter`` writes.
    var isDefault: Bool { format == .wav && sampleRate == AudioFrame.sampleRate }

    static let section = "OUTPUT FORMAT"

    static let options: [OptionSpec] = [
        OptionSpec(
            "--format", .value, "wav|flac|opus", section: section,
            help: "Format of the speaker files and the mix (default wav): flac is\n"
                + "lossless (libFLAC), opus is Ogg Opus for sharing (libopus). Start time\n"
                + "in bext (WAV) or Vorbis comments (FLAC, Opus)."),
        OptionSpec(
            "--rate", .value, "HZ", section: section,
            help: "Sample rate of the files: 8000, 16000, 24000, 32000, 44100 or 48000\n"
                + "(default, the room's; Opus files: 8000, 16000, 24000 or 48000).\n"
                + "Resampled by libsoxr; every file keeps the room's length."),
        OptionSpec(
            "--bitrate", .value, "BPS", section: section,
            help: "Opus bitrate per file in bit/s, 6000-510000 (default 32000)."),
    ]

    /// `record`'s: the format options, `--loudness` and `--multichannel`.
    static let recordOptions: [OptionSpec] =
        options + [
            OptionSpec(
                "--loudness", .flag, section: section,
                help: "Measure each file's integrated loudness (EBU R 128, LUFS) and true\n"
                    + "peak (dBTP) on the writer threads, into room.json (tracks[].loudness)."),
            OptionSpec(
                "--multichannel", .value, "FILE", section: section,
                help: "When the room ends, also write one file with a channel per speaker\n"
                    + "(room order; WAV/RF64, or FLAC for a .flac name), channel names in\n"
                    + "its LIST/INFO chunk (WAV) or Vorbis comments (FLAC) and room.json.\n"
                    + "A relative FILE is relative to --out; it may not be another output."),
        ]

    /// The format the arguments ask for. `command`: for the usage errors.
    static func parse(_ args: ParsedArguments, command: String) throws(UsageError) -> OutputFormat {
        var result = OutputFormat()
        if let text = args.value("--format") {
            guard let format = AudioFileFormat(rawValue: text.lowercased()) else {
                throw UsageError(description: "--format \(text): give wav, flac or opus", command: command)
            }
            result.format = format
        }
        if let text = args.value("--rate") {
            guard let rate = Int(text), OutputSampleRate.supported.contains(rate) else {
                throw UsageError(description: "--rate \(text): give \(OutputSampleRate.spoken)", command: command)
            }
            guard result.format != .opus || OutputSampleRate.opus.contains(rate) else {
                throw UsageError(
                    description: "--rate \(text): Opus files are made at 8000, 16000, 24000 or 48000; "
                        + "use --format wav or flac for \(text)", command: command)
            }
            result.sampleRate = rate
        }
        if let text = args.value("--bitrate") {
            guard result.format == .opus else {
                throw UsageError(description: "--bitrate is for --format opus; add --format opus", command: command)
            }
            guard let bitrate = Int(text), (6_000...510_000).contains(bitrate) else {
                throw UsageError(
                    description: "--bitrate \(text): give bits per second, 6000-510000 (e.g. 32000)", command: command)
            }
            result.bitrate = bitrate
        }
        return result
    }

    /// Writer options for a file of this format.
    func writerOptions(overwrite: Bool, metadata: AudioFileMetadata, loudness: Bool) -> EncodedFileWriter.Options {
        var o = EncodedFileWriter.Options()
        o.format = format
        o.sampleRate = sampleRate
        o.bitrate = bitrate
        o.overwrite = overwrite
        o.metadata = metadata
        o.measuresLoudness = loudness
        return o
    }
}
