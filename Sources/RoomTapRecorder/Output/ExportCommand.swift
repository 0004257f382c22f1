import Foundation
import RoomTapAll
import RoomTapFiles

/// `roomtap export DIR [--out OUT] [--format …] [--rate …] [--bitrate …] [--multichannel FILE]
/// [--normalize LUFS] [--force]`: "cooks" a finished recording. Reads DIR/room.json and its WAVs
/// and writes every speaker and the mix in another format or rate (OUT/<name>.<ext>), one file
/// with a channel per speaker, and a mix re-made with every speaker brought to one loudness; each
/// file's loudness and true peak are measured. The report of what was made goes to OUT/room.json
/// (OUT/export.json when OUT is DIR, whose room.json stays the recording's).
///
/// Nothing is overwritten without --force, and an input never: every output is checked before the
/// first is created.
enum ExportCommand {
    static let command = "export"

    static let options: [OptionSpec] =
        [
            OptionSpec(
                "--out", short: "o", .value, "OUT",
                help: "Where to write (default DIR; created if missing)."),
            OptionSpec(
                "--multichannel", .value, "FILE",
                help: "Also write one file with a channel per speaker, in room order:\n"
                    + "FLAC for a .flac name (8 speakers at most), else WAV (RF64 past\n"
                    + "4 GiB); channel names in its LIST/INFO chunk (WAV) or Vorbis\n"
                    + "comment ROOMTAP_CHANNELS (FLAC), and in the report. A relative FILE\n"
                    + "is relative to OUT; it may not be another output or an input."),
            OptionSpec(
                "--normalize", .value, "LUFS",
                help: "Re-make the mix from the speaker files, each brought to this\n"
                    + "integrated loudness (e.g. -23, EBU R 128) before summing and the\n"
                    + "limiter. The speaker files stay as recorded."),
            OptionSpec("--force", short: "f", .flag, help: "Overwrite outputs that exist (never an input)."),
        ] + OutputFormat.options

    /// A file to convert: the track, its WAV, where it goes.
    private struct Job {
        var index: Int
        var input: String
        var output: String
    }

    static func run(_ args: ParsedArguments, _ context: CommandContext) throws {
        let console = context.console
        guard let directory = args.positionals.first else {
            throw UsageError(description: "no directory: give the directory of a recording", command: command)
        }
        guard args.positionals.count == 1 else {
            throw UsageError(description: "unexpected argument '\(args.positionals[1])'", command: command)
        }
        let format = try OutputFormat.parse(args, command: command)
        let force = args.flag("--force")
        var normalize: Double?
        if let text = args.value("--normalize") {
            guard let value = Double(text), value.isFinite, (-70.0...0.0).contains(value) else {
                throw UsageError(
                    description: "--normalize \(text): give a loudness in LUFS, -70...0 (e.g. -23)", command: command)
            }
            normalize = value
        }
        if let refusal = RecorderLock.refusal(directory, "export it after it stops") { throw refusal }
        let out = args.value("--out") ?? directory
        // OUT a writable directory, or one that can be made (made only once everything is checked).
        let created = try OutputGuard.missingDirectories(of: out, option: "--out")
        let roomJSON = RecordingPlan.join(directory, "room.json")
        guard var report = try RoomReport.read(from: roomJSON) else {
            throw RuntimeError(
                description: "no room.json in \(directory); give the directory roomtap record --out wrote")
        }

        // What to make, all checked before anything is created.
        let speakers = report.tracks.indices.filter { report.tracks[$0].kind == "speaker" }
            .sorted { report.tracks[$0].id < report.tracks[$1].id }
        let mix = report.tracks.indices.first { report.tracks[$0].isRoomMix }
        var jobs: [Job] = []
        for index in speakers + (normalize == nil ? mix.map { [$0] } ?? [] : []) {
            let name = report.tracks[index].file
            // WAV, FLAC or Ogg Opus (RecordedAudio), as record --format wrote it.
            let stem = (name as NSString).deletingPathExtension
            jobs.append(
                Job(
                    index: index, input: RecordingPlan.join(directory, name),
                    output: RecordingPlan.join(out, stem + "." + format.format.fileExtension)))
        }
        var mixOutput: String?
        if normalize != nil {
            guard !speakers.isEmpty else {
                throw RuntimeError(description: "\(roomJSON) lists no speakers; there is nothing to mix")
            }
            mixOutput = RecordingPlan.join(out, "mix." + format.format.fileExtension)
        }
        let givenMultichannel = args.value("--multichannel")
        let multichannel = givenMultichannel.map { OutputPaths.resolve($0, in: out) }
        let multichannelFormat: AudioFileFormat? = multichannel.map {
            AudioFileFormat.fromExtension(of: $0) == .flac ? .flac : .wav
        }
        if let multichannel {
            if AudioFileFormat.fromExtension(of: multichannel) == .opus {
                throw UsageError(
                    description:
                        "--multichannel \(multichannel): a multichannel file is WAV or FLAC; name it .wav or .flac",
                    command: command)
            }
            if multichannelFormat == .flac && speakers.count > 8 {
                throw RuntimeError(
                    description: "--multichannel \(multichannel): FLAC holds 8 channels and the room has "
                        + "\(speakers.count) speakers; name it .wav")
            }
        }
        let reportPath = RecordingPlan.join(out, sameDirectory(out, directory) ? "export.json" : "room.json")
        let inputs = jobs.map(\.input)
        if let multichannel, let givenMultichannel {
            var others = jobs.map {
                OutputPaths.Output(what: "the file of track \(report.tracks[$0.index].name)", path: $0.output)
            }
            if let mixOutput { others.append(.init(what: "the normalized mix", path: mixOutput)) }
            others.append(.init(what: "the report", path: reportPath))
            others += jobs.map { .init(what: "the recording of track \(report.tracks[$0.index].name)", path: $0.input) }
            try OutputPaths.check(
                .init(what: "--multichannel", path: multichannel), given: givenMultichannel, against: others,
                directory: out, created: created)
        }
        let outputs = jobs.map(\.output) + [mixOutput, multichannel, reportPath].compactMap { $0 }
        let recording = jobs.compactMap { job in
            OutputGuard.Input(path: job.input, label: "the recording of track \(report.tracks[job.index].name)")
        }
        for output in outputs {
            try OutputGuard.checkReplaceable(
                output, inputs: recording, writing: "exporting",
                remedy: "choose --out, --format or --rate so that nothing is written over the recording")
            if !force && OutputGuard.exists(output) {
                throw RuntimeError(description: "\(output) already exists; pass --force to overwrite it")
            }
        }
        for input in inputs where !OutputGuard.exists(input) {
            throw RuntimeError(description: "\(input) is missing; room.json lists it: repair or record again")
        }
        // Every input readable and at the room's rate before anything is written.
        for input in Set(inputs + speakers.map { RecordingPlan.join(directory, report.tracks[$0].file) }).sorted() {
            _ = try RecordedAudio.openAtRoomRate(input, command: "export")
        }
        do {
            try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        } catch {
            throw RuntimeError(description: "cannot create \(out): \(error.localizedDescription)")
        }

        let speakerInputs = speakers.map { RecordingPlan.join(directory, report.tracks[$0].file) }
        let start = parseTime(report.startTime)
        var made: [String] = []
        for job in jobs {
            let track = report.tracks[job.index]
            let metadata = AudioFileMetadata(roomStartTime: start, title: "roomtap track \(track.name)")
            let (loudness, samples) = try convert(
                job.input, to: job.output, format: format, metadata: metadata, overwrite: force, console: console)
            report.tracks[job.index].file = (job.output as NSString).lastPathComponent
            report.tracks[job.index].format = format.format.rawValue
            report.tracks[job.index].fileSampleRate = format.sampleRate
            report.tracks[job.index].loudness = loudness.map(RoomReport.Loudness.init)
            made.append(line(job.output, samples: samples, loudness: loudness))
        }
        if let mixOutput, let target = normalize {
            let gains = speakers.map { index -> Double in
                guard let lufs = report.tracks[index].loudness?.integratedLUFS else { return 0 }
                return target - lufs
            }
            for (i, index) in speakers.enumerated() {
                report.tracks[index].mixGainDB = (gains[i] * 100).rounded() / 100
            }
            let channels = mix.map { report.tracks[$0].channels } ?? 1
            let metadata = AudioFileMetadata(roomStartTime: start, title: "roomtap track mix")
            let (loudness, samples) = try ExportMixing.mix(
                speakerInputs, gainsDB: gains, channels: channels, to: mixOutput,
                options: format.writerOptions(overwrite: force, metadata: metadata, loudness: true))
            if let mix {
                report.tracks[mix].file = (mixOutput as NSString).lastPathComponent
                report.tracks[mix].format = format.format.rawValue
                report.tracks[mix].fileSampleRate = format.sampleRate
                report.tracks[mix].loudness = loudness.map(RoomReport.Loudness.init)
                report.tracks[mix].inputs = speakers.map { report.tracks[$0].name }
            }
            made.append(line(mixOutput, samples: samples, loudness: loudness))
        }
        if let multichannel, let multichannelFormat {
            let names = speakers.map { report.tracks[$0].name }
            let metadata = AudioFileMetadata(roomStartTime: start, title: "roomtap room", channelNames: names)
            var options = format.writerOptions(overwrite: force, metadata: metadata, loudness: false)
            options.format = multichannelFormat
            let samples = try ExportMixing.interleave(speakerInputs, to: multichannel, options: options)
            report.multichannel = .init(
                file: givenMultichannel ?? multichannel, format: multichannelFormat.rawValue,
                sampleRate: format.sampleRate, channels: names)
            made.append(
                line(multichannel, samples: samples, loudness: nil) + ", channels " + names.joined(separator: ", "))
        }
        report.export = .init(
            from: directory, format: format.format.rawValue, sampleRate: format.sampleRate,
            bitrate: format.format == .opus ? format.bitrate : nil, normalizeLUFS: normalize)
        try report.write(to: reportPath, overwrite: true)
        for text in made { console.print(text) }
        console.print("\(reportPath): the report")
    }

    /// Converts one file (WAV, FLAC or Ogg Opus at 48 kHz); returns its loudness and its length in
    /// room samples. A file cut short is warned about on `console`.
    private static func convert(
        _ input: String, to output: String, format: OutputFormat, metadata: AudioFileMetadata, overwrite: Bool,
        console: Console
    ) throws -> (LoudnessMeter.Result?, Int64) {
        do {
            let reader = try RecordedAudio.openAtRoomRate(input, command: "export")
            let writer = try EncodedFileWriter(
                path: output, channels: reader.channels,
                options: format.writerOptions(overwrite: overwrite, metadata: metadata, loudness: true))
            let chunk = ExportMixing.chunkFrames
            let buffer = UnsafeMutablePointer<Int16>.allocate(capacity: chunk * reader.channels)
            defer { buffer.deallocate() }
            while true {
                let n = try reader.read(into: buffer, frames: chunk)
                if n == 0 { break }
                try writer.append(buffer, frames: n)
            }
            try writer.finish()
            if (reader as? FLACFileReader)?.endedAtDamage == true {
                console.printWarning(
                    "\(input) is cut short or damaged after "
                        + String(format: "%.2f s", Double(writer.samplesWritten) / Double(AudioFrame.sampleRate))
                        + " (a killed recording?); \(output) holds that much: run roomtap repair on the recording")
            }
            return (writer.loudness, writer.samplesWritten)
        } catch let error as WAVError {
            throw RuntimeError(description: error.description)
        } catch let error as OutputFileError {
            throw RuntimeError(description: error.description)
        }
    }

    private static func line(_ path: String, samples: Int64, loudness: LoudnessMeter.Result?) -> String {
        var text = "\(path): " + String(format: "%.2f s", Double(samples) / Double(AudioFrame.sampleRate))
        if let loudness {
            text += loudness.integratedLUFS.map { String(format: ", %.1f LUFS", $0) } ?? ", silent"
            if let peak = loudness.truePeakDBTP { text += String(format: ", %.1f dBTP", peak) }
        }
        return text
    }

    private static func parseTime(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: text)
    }

    /// Same file by device and inode (so other spellings and hard links count).
    private static func sameFile(_ a: String, _ b: String) -> Bool {
        var x = stat()
        var y = stat()
        return stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino
    }

    private static func sameDirectory(_ a: String, _ b: String) -> Bool {
        sameFile(a, b)
            || URL(fileURLWithPath: a).standardizedFileURL.path == URL(fileURLWithPath: b).standardizedFileURL.path
    }
}
