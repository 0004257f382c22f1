import Foundation
import RoomTapAll
import RoomTapSync

/// Everything `record` checks before it creates a single file: the inputs are readable Ogg Opus,
/// the output directory is usable, and no output would overwrite anything (unless --force).
struct RecordingPlan {
    struct Input {
        let spec: FileSpec
        /// An Ogg Opus input: what inspecting it found; nil for a recording.
        let info: OggOpusFileInfo?
        /// A recording (a Janus .mjr, a WebM/Matroska/MP4 track): its stream; nil for Ogg Opus.
        var recording: Recording? = nil
        /// A Sora recording's connection (--sora-recording): its files' audio, each at its place.
        var sora: SoraRecording.Connection? = nil
        /// Sanitised, unique file base name.
        let fileName: String
        var wavPath: String
        /// For `NAME=-`: the source, made here because standard input can be read only once (its
        /// headers were read to inspect it; the audio is read while the room runs).
        var stream: OggOpusFileSource? = nil
        /// Where the input's first sample plays on the room timeline (samples): the --file
        /// offset, plus for a recording with wall-clock times its place among the others.
        var offsetSamples: Int64
        /// The samples it plays.
        var durationSamples: Int64 {
            sora?.endSamples ?? recording?.stream.durationSamples ?? info?.durationSamples ?? 0
        }
        /// True when the input ends early (a cut file).
        var isTruncated: Bool {
            sora.map { $0.files.contains(where: \.isCut) } ?? recording?.isTruncated ?? info?.isTruncated ?? false
        }
        /// room.json's `source.kind`.
        var kind: String { sora != nil ? "sora-recording" : recording?.kind ?? "ogg-opus-file" }
    }

    /// A recording of RTP packets, played through the jitter buffer (``RecordedStreamSource``).
    struct Recording {
        /// room.json's `source.kind`: `janus-mjr`, `matroska` (also WebM) or `mp4`.
        let kind: String
        let stream: RecordedRTPStream
        let isTruncated: Bool
        /// Frames that were not Opus RTP and were skipped.
        let skippedFrames: Int
        /// The wall-clock time of the recording's own time 0 (µs since the epoch), when it is
        /// placed by it: a Janus .mjr's `u`; a container's start tag with --align wallclock.
        let wallClockMicroseconds: Int64?
        /// Where its first sample lies on its own timeline (a container track's start).
        let startSamples: Int64
    }

    let options: RecordCommand.Options
    /// The run's console, environment and signals: what the recording reads and reports through.
    let context: CommandContext
    let inputs: [Input]
    /// Live: who is expected (from --sdp or --room).
    let description: RoomDescription?
    /// Live: the file of each described participant, by track name.
    let describedPaths: [String: String]
    /// The names claimed so far (file tracks, described participants, "mix"); live tracks that
    /// appear later claim theirs from a copy of this.
    let naming: OutputNaming
    let outDirectory: String
    let mixPath: String?
    /// With --agent: the agent's voice (agent.wav) and transcript.jsonl.
    let agentPath: String?
    let transcriptPath: String?
    let roomJSONPath: String
    /// --multichannel FILE resolved (``OutputPaths/resolve(_:in:)``: relative to DIR); nil without.
    let multichannelPath: String?
    /// Room length expected from the inputs, in samples (the longest offset + duration; a stream
    /// on standard input counts as its offset: its length is known when it ends).
    let expectedSamples: Int64
    /// The directories of --out that do not exist yet, outermost first.
    let missingDirectories: [String]
    /// With --force: the files of the earlier recording in DIR (as its room.json lists them, and
    /// room.json itself) that this one replaces.
    let earlierFiles: [String]
    /// What this run took on the disk (by ``prepareOutputs()``).
    let claimed = Claimed()

    /// The directories a run created, innermost last, and the lock of DIR while it records.
    final class Claimed: Sendable {
        let directories = Locked<[String]>([])
        let lock = Locked<RecorderLock?>(nil)
    }

    /// Wall-clock time of room sample 0 when recordings with wall-clock times placed the room (the
    /// earliest first packet; a Sora recording's start); nil: the room starts when it is recorded.
    let recordedStart: Date?
    /// With --sora-recording: what was read.
    var sora: SoraPlanned? = nil

    /// Longest input accepted (48 hours): a damaged or crafted file whose granule positions claim
    /// more would otherwise make a room of that length.
    static let maxDurationSamples: Int64 = 48 * 3600 * 48_000

    /// Plans the room of `options`; API keys and tokens are looked up in `context`'s environment
    /// and `--file NAME=-` reads `context`'s standard input.
    static func make(_ options: RecordCommand.Options, context: CommandContext) throws -> RecordingPlan {
        var naming = OutputNaming()
        if options.mix { naming.reserve("mix") }
        if options.agent != nil { naming.reserve("agent") }
        var inputs: [Input] = []
        let piped = options.files.filter(\.isStandardInput)
        if piped.count > 1 {
            throw UsageError(
                description: "--file \(piped.map { "\($0.name)=-" }.joined(separator: ", --file ")): only one --file "
                    + "may read standard input (-); save the other streams to files",
                command: "record")
        }
        if let spec = piped.first, options.usesRealTimeClock {
            // The room clock's thread must never wait: a pipe that falls behind would stall every
            // track of a live room (its reads are on that thread, as a file's are).
            throw UsageError(
                description: "--file \(spec.name)=- (standard input) can only be recorded offline, where the room "
                    + "waits for the stream; a room on the real-time clock (live participants, --realtime, "
                    + "--play, --mic, --agent) cannot wait for a pipe: send the stream as RTP "
                    + "(ffmpeg ... -f rtp rtp://127.0.0.1:PORT) to a --listen address instead",
                command: "record")
        }
        var files = options.files
        if let directory = options.janusRoom {
            files += try janusRoom(directory, options)
        }
        for spec in files {
            if spec.isStandardInput {
                inputs.append(try standardInput(spec, options, console: context.console, naming: &naming))
                continue
            }
            // A pipe, FIFO or device would block or read as empty: a file is read twice (inspected,
            // then recorded) and must be a regular file; a stream goes through standard input
            // (`NAME=-`, read once). Directories get their own message below.
            var status = stat()
            if stat(spec.path, &status) == 0, status.st_mode & S_IFMT != S_IFREG, status.st_mode & S_IFMT != S_IFDIR {
                throw RuntimeError(
                    description: "--file \(spec.name)=\(spec.path) is not a regular file; roomtap needs a seekable "
                        + "Ogg Opus file (save the stream to a file first, or pipe it in: --file \(spec.name)=-)")
            }
            if let recordings = try recordings(at: spec, options) {
                for (trackSpec, recording) in recordings {
                    if recording.isTruncated && !options.allowTruncated {
                        throw RuntimeError(
                            description: "\(spec.path): the recording is cut short (it ends inside a packet or "
                                + "is damaged there); pass --allow-truncated to record what is there")
                    }
                    guard recording.stream.durationSamples <= maxDurationSamples else {
                        throw RuntimeError(
                            description: "\(spec.path): the recording's timestamps span more than 48 hours, more "
                                + "than roomtap records from one file; check the file")
                    }
                    inputs.append(
                        Input(
                            spec: trackSpec, info: nil, recording: recording, fileName: naming.claim(trackSpec.name),
                            wavPath: "", offsetSamples: spec.offsetSamples + recording.startSamples))
                }
                continue
            }
            let info = try OggOpusFileInfo.inspect(path: spec.path)
            if info.isTruncated && !options.allowTruncated {
                throw RuntimeError(
                    description: "\(spec.path): file is truncated (ends mid-page or without an end-of-stream page); "
                        + "pass --allow-truncated to record what is there")
            }
            guard info.durationSamples <= maxDurationSamples else {
                throw RuntimeError(
                    description:
                        "\(spec.path): the file claims \(info.durationSamples / 48_000 / 3600) hours of audio, "
                        + "more than roomtap records from one file (48 hours); check the file")
            }
            inputs.append(
                Input(
                    spec: spec, info: info, fileName: naming.claim(spec.name), wavPath: "",
                    offsetSamples: spec.offsetSamples))
        }
        let sora = try soraInputs(options, naming: &naming)
        inputs += sora?.inputs ?? []
        try checkTrackNames(inputs, options)
        let recordedStart = place(&inputs) ?? sora?.planned.start
        let description = try readDescription(options)
        try checkPlayTrack(inputs, description, options)
        if let agent = options.agent {
            _ = try RoomAgent.apiKey(in: context.environment, azure: agent.azure)
        }
        if let address = options.http {
            _ = try LivePage.token(for: address, environment: context.environment)
        }
        if let transcribe = options.transcribe {
            _ = try RoomAgent.apiKey(in: context.environment, azure: transcribe.azure, option: "--transcribe")
        }
        let out = options.out
        let missingDirectories = try OutputGuard.missingDirectories(of: out, option: "--out")
        for i in inputs.indices { inputs[i].wavPath = join(out, inputs[i].fileName + options.output.dotExtension) }
        var describedPaths: [String: String] = [:]
        for participant in description?.participants ?? [] {
            let name = participant.trackName
            describedPaths[name] = join(out, naming.claim(name) + options.output.dotExtension)
        }
        let mixPath = options.mix ? join(out, "mix" + options.output.dotExtension) : nil
        let agentPath = options.agent != nil ? join(out, "agent" + options.output.dotExtension) : nil
        let transcriptPath = options.writesTranscript ? join(out, "transcript.jsonl") : nil
        let roomJSON = join(out, "room.json")
        let multichannelPath = options.multichannel.map { OutputPaths.resolve($0, in: out) }
        if let given = options.multichannel, let path = multichannelPath {
            try checkMultichannel(
                given: given, path: path, inputs: inputs, describedPaths: describedPaths, mixPath: mixPath,
                agentPath: agentPath, transcriptPath: transcriptPath, roomJSON: roomJSON,
                created: missingDirectories, options)
            // A stream that appears later never takes its name (`--multichannel ssrc-4d2.wav`).
            if OutputPaths.canonical(DirectoryPath.parent(of: path)) == OutputPaths.canonical(out),
                path.hasSuffix(options.output.dotExtension)
            {
                naming.reserve(String((path as NSString).lastPathComponent.dropLast(options.output.dotExtension.count)))
            }
        }
        let outputs =
            inputs.map(\.wavPath) + describedPaths.values.sorted()
            + [mixPath, agentPath, transcriptPath, roomJSON, multichannelPath].compactMap { $0 }
        if let refusal = RecorderLock.refusal(out, "stop it first (roomtap stop) or choose another --out") {
            throw refusal  // even with --force: its files are in use
        }
        let inputFiles = identities(of: inputs, options)
        let remedy = "choose another --out"
        for path in outputs {
            try OutputGuard.checkReplaceable(path, inputs: inputFiles, writing: "recording", remedy: remedy)
        }
        if !options.force {
            for path in outputs where OutputGuard.exists(path) {
                throw RuntimeError(
                    description: "\(path) already exists; pass --force to overwrite it, or choose another --out")
            }
        }
        let earlier = options.force ? try earlierRecording(in: out) : []
        for path in earlier {
            try OutputGuard.checkReplaceable(path, inputs: inputFiles, writing: "recording", remedy: remedy)
        }
        let expected = inputs.map { $0.offsetSamples + $0.durationSamples }.max() ?? 0
        return RecordingPlan(
            options: options, context: context, inputs: inputs, description: description,
            describedPaths: describedPaths, naming: naming, outDirectory: out, mixPath: mixPath, agentPath: agentPath,
            transcriptPath: transcriptPath,
            roomJSONPath: roomJSON, multichannelPath: multichannelPath, expectedSamples: expected,
            missingDirectories: missingDirectories,
            earlierFiles: earlier.filter { lstatOrNil($0) != nil }, recordedStart: recordedStart, sora: sora?.planned)
    }

    /// --multichannel against every other output of the run (each track's file, the mix, the
    /// agent's, the transcript, room.json, DIR's lock) and its directory (``OutputPaths``).
    private static func checkMultichannel(
        given: String, path: String, inputs: [Input], describedPaths: [String: String], mixPath: String?,
        agentPath: String?, transcriptPath: String?, roomJSON: String, created: [String],
        _ options: RecordCommand.Options
    ) throws {
        var others = inputs.map { OutputPaths.Output(what: "the file of track \($0.spec.name)", path: $0.wavPath) }
        others += describedPaths.sorted { $0.key < $1.key }.map {
            OutputPaths.Output(what: "the file of track \($0.key)", path: $0.value)
        }
        if let mixPath { others.append(.init(what: "the mix", path: mixPath)) }
        if let agentPath { others.append(.init(what: "the agent's voice", path: agentPath)) }
        if let transcriptPath { others.append(.init(what: "the transcript", path: transcriptPath)) }
        others.append(.init(what: "the room's report", path: roomJSON))
        let lock = join(options.out, RecorderLock.fileName)
        others.append(.init(what: "the recorder's lock", path: lock))
        try OutputPaths.check(
            .init(what: "--multichannel", path: path), given: given, against: others, directory: options.out,
            created: created)
    }

    /// Reads `spec`'s file as a recording if its content says it is one: a Janus .mjr (`MJR0000` at
    /// the start), WebM/Matroska (EBML) or MP4 (`ftyp`); nil for anything else (Ogg Opus, inspected
    /// by the caller). A container with several Opus tracks gives a track each, named
    /// `NAME-<track title>` (`NAME-<n>`, its place among the Opus tracks, without a title). One-line
    /// errors.
    private static func recordings(
        at spec: FileSpec, _ options: RecordCommand.Options
    ) throws -> [(FileSpec, Recording)]? {
        let fd = open(spec.path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        var magic = [UInt8](repeating: 0, count: 12)
        let n = magic.withUnsafeMutableBytes { read(fd, $0.baseAddress!, 12) }
        close(fd)
        guard n >= 8 else { return nil }
        if JanusRecording.looksLikeJanus(magic) {
            do {
                let janus = try JanusRecording.read(path: spec.path)
                return [
                    (
                        spec,
                        Recording(
                            kind: "janus-mjr", stream: janus.stream, isTruncated: janus.isTruncated,
                            skippedFrames: janus.skippedFrames, wallClockMicroseconds: janus.firstPacketMicroseconds,
                            startSamples: 0)
                    )
                ]
            } catch {
                throw RuntimeError(description: error.description)
            }
        }
        guard n >= 12, ContainerRecording.looksLikeContainer(magic) else { return nil }
        let container: ContainerRecording
        do { container = try ContainerRecording.read(path: spec.path) } catch {
            throw RuntimeError(description: error.description)
        }
        let kind = container.format.hasPrefix("matroska") ? "matroska" : "mp4"
        let wallClock = options.align == .wallclock ? container.wallClockMicroseconds : nil
        if options.align == .wallclock && wallClock == nil {
            throw RuntimeError(
                description: "\(spec.path): --align wallclock, but the file says no wall-clock start (no "
                    + "creation_time, DateUTC or started_at tag); give it an offset (NAME=PATH@SECONDS) without "
                    + "--align wallclock")
        }
        var used: [String: Int] = [:]
        return container.tracks.enumerated().map { i, track in
            var name = spec.name
            if container.tracks.count > 1 {
                name += "-" + (track.title.flatMap { $0.isEmpty ? nil : $0 } ?? "\(i + 1)")
                let count = (used[name.lowercased()] ?? 0) + 1
                used[name.lowercased()] = count
                if count > 1 { name += "-\(count)" }
            }
            return (
                FileSpec(name: name, path: spec.path, offsetSamples: spec.offsetSamples),
                Recording(
                    kind: kind, stream: track.stream, isTruncated: container.isDamaged, skippedFrames: 0,
                    wallClockMicroseconds: wallClock, startSamples: track.startSamples)
            )
        }
    }

    /// Refuses two tracks with one name (ignoring case) once files with several tracks and
    /// --janus-room have given theirs (`--file room=x.mka --file room-alice=y.opus`). The names
    /// on the command line alone were checked when it was parsed.
    private static func checkTrackNames(_ inputs: [Input], _ options: RecordCommand.Options) throws {
        var seen: [String: Input] = [:]
        for input in inputs {
            let key = input.spec.name.lowercased()
            if let earlier = seen[key] {
                throw UsageError(
                    description: "two tracks are named '\(input.spec.name)' (from \(earlier.spec.path) and "
                        + "\(input.spec.path)); give the --file another name", command: "record")
            }
            seen[key] = input
        }
        if let mic = options.mic.map({ _ in options.micName }), let clash = seen[mic.lowercased()] {
            throw UsageError(
                description: "--mic-name '\(mic)' is also a track of \(clash.spec.path); give the microphone "
                    + "another name", command: "record")
        }
    }

    /// `--play-track NAME` in a room whose track names are all known before it starts (no
    /// `--listen` streams, `--discover`ed SSRCs or joined publishers, which are named as they
    /// appear): NAME must be one of them, or nothing would play.
    private static func checkPlayTrack(
        _ inputs: [Input], _ description: RoomDescription?, _ options: RecordCommand.Options
    ) throws {
        guard let wanted = options.playTrack, options.listen.isEmpty, options.join == nil, !options.discover
        else { return }
        var names = inputs.map(\.spec.name) + (description?.participants.map(\.trackName) ?? [])
        if options.mic != nil { names.append(options.micName) }
        if options.agent != nil { names += ["agent", "agent-hears"] }
        if options.mix { names.append("mix") }
        guard !names.contains(wanted) else { return }
        throw UsageError(
            description: "--play-track \(wanted): the room has no track of that name (its tracks: "
                + names.joined(separator: ", ") + "); name one of them, or leave --play-track out to play the mix",
            command: "record")
    }

    /// Places the recordings that carry wall-clock times (a Janus .mjr's first-packet time `u`;
    /// with --align wallclock, a container's start tag) on one timeline: the earliest at its
    /// offset, every other that much later as it started. Returns the wall-clock time of room
    /// sample 0 (nil without such recordings).
    private static func place(_ inputs: inout [Input]) -> Date? {
        let times = inputs.compactMap { $0.recording?.wallClockMicroseconds }
        guard let origin = times.min() else { return nil }
        for i in inputs.indices {
            guard let recording = inputs[i].recording, let start = recording.wallClockMicroseconds else { continue }
            inputs[i].offsetSamples =
                inputs[i].spec.offsetSamples + recording.startSamples + (start - origin) * 48 / 1000
        }
        return Date(timeIntervalSince1970: Double(origin) / 1_000_000)
    }

    /// `--janus-room DIR`: a --file for every audio recording of the one room in DIR, named
    /// `user-<id>`. A name that another --file already takes is a usage error.
    private static func janusRoom(_ directory: String, _ options: RecordCommand.Options) throws -> [FileSpec] {
        let found: [JanusRoomDirectory.Recording]
        do { found = try JanusRoomDirectory.recordings(in: directory) } catch {
            throw RuntimeError(description: error.description)
        }
        let taken = Set(options.files.map { $0.name.lowercased() })
        if let clash = found.first(where: { taken.contains($0.name.lowercased()) }) {
            throw UsageError(
                description: "--file name '\(clash.name)' is also a participant of --janus-room \(directory) "
                    + "(\(clash.path)); give the --file another name", command: "record")
        }
        return found.map { FileSpec(name: $0.name, path: $0.path, offsetSamples: 0) }
    }

    /// The input of `--file NAME=-`: `console`'s standard input, refused on a terminal; otherwise
    /// its headers are read (this waits until they arrive) and its source made.
    private static func standardInput(
        _ spec: FileSpec, _ options: RecordCommand.Options, console: Console, naming: inout OutputNaming
    ) throws -> Input {
        guard !console.inputIsTerminal else {
            throw UsageError(
                description: "--file \(spec.name)=- reads Ogg Opus from standard input, which is a terminal; pipe "
                    + "a stream in (e.g. ffmpeg -i IN -c:a libopus -f ogg - | roomtap record --file \(spec.name)=- ...)",
                command: "record")
        }
        let source: OggOpusFileSource
        do {
            source = try OggOpusFileSource(
                streamFrom: console.input, name: "standard input (--file \(spec.name)=-)", channels: options.channels,
                offset: spec.offsetSamples)
        } catch { throw RuntimeError(description: error.description) }
        return Input(
            spec: spec, info: source.info, fileName: naming.claim(spec.name), wavPath: "", stream: source,
            offsetSamples: spec.offsetSamples)
    }

    /// Creates the directories of --out that are missing (remembering which, for
    /// ``removeCreatedDirectories()``), takes DIR's ``RecorderLock`` and, with --force, removes the
    /// earlier recording's files.
    /// Called once every start-up check has passed, just before the first output is created.
    func prepareOutputs() throws {
        for directory in missingDirectories {
            if mkdir(directory, 0o777) == 0 {
                claimed.directories.withLock { $0.append(directory) }
            } else if errno != EEXIST {
                let reason = String(cString: strerror(errno))
                let parent = DirectoryPath.parent(of: directory)
                throw RuntimeError(
                    description: "cannot create output directory \(options.out): \(parent) "
                        + "does not accept new directories (\(reason)); choose another --out")
            }
        }
        // DIR is this recorder's from now until its room.json is final: another recorder, repair
        // and export refuse it (a recorder that got here first wins).
        let lock = try RecorderLock.acquire(directory: outDirectory)
        claimed.lock.withLock { $0 = lock }
        for path in earlierFiles where unlink(path) != 0 && errno != ENOENT {
            throw RuntimeError(
                description: "cannot remove \(path) of the earlier recording: \(String(cString: strerror(errno))); "
                    + "remove it or choose another --out")
        }
    }

    /// Removes the directories ``prepareOutputs()`` created, innermost first, as long as they are
    /// empty (rmdir(2) removes nothing else): a run that failed leaves the disk as it was.
    func removeCreatedDirectories() {
        releaseDirectory()
        for directory in claimed.directories.withLock({ $0 }).reversed() where rmdir(directory) != 0 { return }
    }

    /// Gives DIR up (its room.json is final, or the run failed): the lock is released. Idempotent.
    func releaseDirectory() {
        claimed.lock.withLock { lock in
            lock?.release()
            lock = nil
        }
    }

    /// Reads and parses --sdp or --room (one clear line on failure).
    private static func readDescription(_ options: RecordCommand.Options) throws -> RoomDescription? {
        guard let path = options.sdp ?? options.roomFile else { return nil }
        guard let data = FileManager.default.contents(atPath: path) else {
            let what = options.sdp != nil ? "SDP file" : "room file"
            throw RuntimeError(description: "\(path): cannot read the \(what); check the path")
        }
        let description: RoomDescription
        do {
            description =
                options.sdp != nil
                ? try RoomDescription.parseSDP(String(decoding: data, as: UTF8.self), source: path)
                : try RoomDescription.parseJSON(data, source: path)
        } catch {
            throw RuntimeError(description: error.description)
        }
        return try keyed(description, options, path: path)
    }

    /// `description` with the --srtp keys: each names a participant (usage error otherwise), and
    /// never shows in a message.
    private static func keyed(
        _ description: RoomDescription, _ options: RecordCommand.Options, path: String
    ) throws(UsageError) -> RoomDescription {
        guard !options.srtpKeys.isEmpty else { return description }
        let names = description.participants.map(\.trackName)
        for key in options.srtpKeys where !names.contains(key.name) {
            let shown = names.prefix(8).joined(separator: ", ") + (names.count > 8 ? ", ..." : "")
            throw UsageError(
                description: "--srtp \(key.name): \(path) has no participant of that name (its participants: "
                    + "\(shown)); name one as --dry-run lists them", command: "record")
        }
        do {
            return try description.keyed(
                Dictionary(options.srtpKeys.map { ($0.name, $0.keying) }, uniquingKeysWith: { a, _ in a }),
                source: path)
        } catch {
            throw UsageError(description: "--srtp: \(error.description)", command: "record")
        }
    }

    /// The path for a track that appears while a live room runs: a fresh sanitised name; without
    /// --force, with a suffix past any file already on disk (nothing is overwritten); never a link.
    static func livePath(
        for name: String, naming: inout OutputNaming, in directory: String, force: Bool, dotExtension: String = ".wav"
    ) -> String {
        while true {
            let path = join(directory, naming.claim(name) + dotExtension)
            guard let info = lstatOrNil(path) else { return path }
            if force && info.st_mode & S_IFMT == S_IFREG { return path }
        }
    }

    /// Every input (--file paths, --room or --sdp, --agent-instructions), for
    /// ``OutputGuard/checkReplaceable(_:inputs:writing:remedy:)``.
    private static func identities(of inputs: [Input], _ options: RecordCommand.Options) -> [OutputGuard.Input] {
        var named = inputs.filter { !$0.spec.isStandardInput }.map { ("--file \($0.spec.name)", $0.spec.path) }
        if let path = options.roomFile { named.append(("--room", path)) }
        if let path = options.sdp { named.append(("--sdp", path)) }
        if let path = options.agent?.instructionsFile { named.append(("--agent-instructions", path)) }
        return named.compactMap { option, path in OutputGuard.Input(path: path, label: "\(option) \(path)") }
    }

    /// With --force: the files of the recording already in `out`, as its room.json names them
    /// (`tracks[].file`, `transcript.jsonl` when it had an agent) and room.json itself. Refuses a
    /// room.json that is not a report, or that names anything but a WAV (or the transcript) in DIR.
    private static func earlierRecording(in out: String) throws -> [String] {
        let roomJSON = join(out, "room.json")
        guard lstatOrNil(roomJSON) != nil else { return [] }
        guard let data = FileManager.default.contents(atPath: roomJSON),
            let report = data.withUnsafeBytes({ try? JSONValue(parsing: $0) }), report.objectValue != nil,
            let tracks = report["tracks"]?.arrayValue
        else {
            throw RuntimeError(
                description: "\(roomJSON) is not a roomtap report, so --force cannot tell which files were the "
                    + "earlier recording's: remove it or choose another --out")
        }
        var names = tracks.compactMap { $0["file"]?.stringValue }
        if report["agent"] != nil { names.append("transcript.jsonl") }
        for name in names {
            let plain = !name.contains("/") && !name.contains("\0") && !name.hasPrefix(".")
            let audio = [".wav", ".flac", ".opus"].contains { name.hasSuffix($0) }
            guard plain && (audio || name == "transcript.jsonl") else {
                throw RuntimeError(
                    description: "\(roomJSON) lists '\(name)', not a file roomtap writes in DIR; --force removes "
                        + "only an earlier recording's own files: remove room.json or choose another --out")
            }
        }
        return Set(names + ["room.json"]).sorted().map { join(out, $0) }
    }

    /// lstat(2): what is at `path` itself (a link is not followed), or nil when nothing is.
    private static func lstatOrNil(_ path: String) -> stat? {
        var info = stat()
        return lstat(path, &info) == 0 ? info : nil
    }

    static func join(_ directory: String, _ name: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }
}
