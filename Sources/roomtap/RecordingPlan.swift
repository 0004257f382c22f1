import Foundation
import RoomTap
import RoomTapSync

/// Everything `record` checks before it creates a single file: the inputs are readable Ogg Opus,
/// the output directory is usable, and no output would overwrite anything (unless --force).
struct RecordingPlan {
    struct Input {
        let spec: FileSpec
        let info: OggOpusFileInfo
        /// Sanitised, unique file base name.
        let fileName: String
        var wavPath: String
        /// For `NAME=-`: the source, made here because standard input can be read only once (its
        /// headers were read to inspect it; the audio is read while the room runs).
        var stream: OggOpusFileSource? = nil
    }

    let options: RecordCommand.Options
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
    /// Room length expected from the inputs, in samples (the longest offset + duration; a stream
    /// on standard input counts as its offset: its length is known when it ends).
    let expectedSamples: Int64
    /// The directories of --out that do not exist yet, outermost first.
    let missingDirectories: [String]
    /// With --force: the files of the earlier recording in DIR (as its room.json lists them, and
    /// room.json itself) that this one replaces.
    let earlierFiles: [String]
    /// The directories this run created (by ``prepareOutputs()``).
    let createdDirectories = CreatedDirectories()

    /// The directories a run created, innermost last.
    final class CreatedDirectories: Sendable {
        let paths = Locked<[String]>([])
    }

    /// Longest input accepted (48 hours): a damaged or crafted file whose granule positions claim
    /// more would otherwise make a room of that length.
    static let maxDurationSamples: Int64 = 48 * 3600 * 48_000

    static func make(_ options: RecordCommand.Options) throws -> RecordingPlan {
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
        for spec in options.files {
            if spec.isStandardInput {
                inputs.append(try standardInput(spec, options, naming: &naming))
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
            inputs.append(Input(spec: spec, info: info, fileName: naming.claim(spec.name), wavPath: ""))
        }
        let description = try readDescription(options)
        if options.agent != nil { _ = try RoomAgent.apiKey(in: ProcessInfo.processInfo.environment) }
        let out = options.out
        let missingDirectories = try checkDirectory(out)
        for i in inputs.indices { inputs[i].wavPath = join(out, inputs[i].fileName + ".wav") }
        var describedPaths: [String: String] = [:]
        for participant in description?.participants ?? [] {
            let name = participant.name ?? "port-\(participant.port)"
            describedPaths[name] = join(out, naming.claim(name) + ".wav")
        }
        let mixPath = options.mix ? join(out, "mix.wav") : nil
        let agentPath = options.agent != nil ? join(out, "agent.wav") : nil
        let transcriptPath = options.agent != nil ? join(out, "transcript.jsonl") : nil
        let roomJSON = join(out, "room.json")
        let outputs =
            inputs.map(\.wavPath) + describedPaths.values.sorted()
            + [mixPath, agentPath, transcriptPath, roomJSON].compactMap { $0 }
        let inputFiles = try identities(of: inputs, options)
        for path in outputs { try checkReplaceable(path, inputs: inputFiles) }
        if !options.force {
            for path in outputs where lstatOrNil(path) != nil {
                throw RuntimeError(
                    description: "\(path) already exists; pass --force to overwrite it, or choose another --out")
            }
        }
        let earlier = options.force ? try earlierRecording(in: out) : []
        for path in earlier { try checkReplaceable(path, inputs: inputFiles) }
        let expected = inputs.map { $0.spec.offsetSamples + $0.info.durationSamples }.max() ?? 0
        return RecordingPlan(
            options: options, inputs: inputs, description: description, describedPaths: describedPaths,
            naming: naming, outDirectory: out, mixPath: mixPath, agentPath: agentPath, transcriptPath: transcriptPath,
            roomJSONPath: roomJSON, expectedSamples: expected, missingDirectories: missingDirectories,
            earlierFiles: earlier.filter { lstatOrNil($0) != nil })
    }

    /// The input of `--file NAME=-`: refused on a terminal; otherwise its headers are read (this
    /// waits until they arrive) and its source made.
    private static func standardInput(
        _ spec: FileSpec, _ options: RecordCommand.Options, naming: inout OutputNaming
    ) throws -> Input {
        guard isatty(STDIN_FILENO) == 0 else {
            throw UsageError(
                description: "--file \(spec.name)=- reads Ogg Opus from standard input, which is a terminal; pipe "
                    + "a stream in (e.g. ffmpeg -i IN -c:a libopus -f ogg - | roomtap record --file \(spec.name)=- ...)",
                command: "record")
        }
        let source: OggOpusFileSource
        do {
            source = try OggOpusFileSource(
                streamFrom: STDIN_FILENO, name: "standard input (--file \(spec.name)=-)", channels: options.channels,
                offset: spec.offsetSamples)
        } catch { throw RuntimeError(description: error.description) }
        return Input(spec: spec, info: source.info, fileName: naming.claim(spec.name), wavPath: "", stream: source)
    }

    /// Creates the directories of --out that are missing (remembering which, for
    /// ``removeCreatedDirectories()``) and, with --force, removes the earlier recording's files.
    /// Called once every start-up check has passed, just before the first output is created.
    func prepareOutputs() throws {
        for directory in missingDirectories {
            if mkdir(directory, 0o777) == 0 {
                createdDirectories.paths.withLock { $0.append(directory) }
            } else if errno != EEXIST {
                let reason = String(cString: strerror(errno))
                let parent = (directory as NSString).deletingLastPathComponent
                throw RuntimeError(
                    description: "cannot create output directory \(options.out): \(parent.isEmpty ? "." : parent) "
                        + "does not accept new directories (\(reason)); choose another --out")
            }
        }
        for path in earlierFiles where unlink(path) != 0 && errno != ENOENT {
            throw RuntimeError(
                description: "cannot remove \(path) of the earlier recording: \(String(cString: strerror(errno))); "
                    + "remove it or choose another --out")
        }
    }

    /// Removes the directories ``prepareOutputs()`` created, innermost first, as long as they are
    /// empty (rmdir(2) removes nothing else): a run that failed leaves the disk as it was.
    func removeCreatedDirectories() {
        for directory in createdDirectories.paths.withLock({ $0 }).reversed() where rmdir(directory) != 0 { return }
    }

    /// Reads and parses --sdp or --room (one clear line on failure).
    private static func readDescription(_ options: RecordCommand.Options) throws -> RoomDescription? {
        guard let path = options.sdp ?? options.roomFile else { return nil }
        guard let data = FileManager.default.contents(atPath: path) else {
            let what = options.sdp != nil ? "SDP file" : "room file"
            throw RuntimeError(description: "\(path): cannot read the \(what); check the path")
        }
        do {
            if options.sdp != nil {
                return try RoomDescription.parseSDP(String(decoding: data, as: UTF8.self), source: path)
            }
            return try RoomDescription.parseJSON(data, source: path)
        } catch {
            throw RuntimeError(description: error.description)
        }
    }

    /// The path for a track that appears while a live room runs: a fresh sanitised name; without
    /// --force, with a suffix past any file already on disk (nothing is overwritten); never a link.
    static func livePath(for name: String, naming: inout OutputNaming, in directory: String, force: Bool) -> String {
        while true {
            let path = join(directory, naming.claim(name) + ".wav")
            guard let info = lstatOrNil(path) else { return path }
            if force && info.st_mode & S_IFMT == S_IFREG { return path }
        }
    }

    /// Checks that --out is a writable directory, or can be made one; creates nothing. Returns the
    /// directories that are missing, outermost first.
    private static func checkDirectory(_ out: String) throws -> [String] {
        var missing: [String] = []
        var path = out
        while true {
            var info = stat()
            if stat(path, &info) == 0 {
                guard info.st_mode & S_IFMT == S_IFDIR else {
                    if missing.isEmpty {
                        throw RuntimeError(
                            description: "--out \(out) exists and is not a directory; choose a directory")
                    }
                    throw RuntimeError(
                        description: "cannot create output directory \(out): \(path) is not a directory; "
                            + "choose another --out")
                }
                guard access(path, W_OK | X_OK) == 0 else {
                    let reason = String(cString: strerror(errno))
                    if missing.isEmpty {
                        throw RuntimeError(
                            description: "output directory \(out) is not writable (\(reason)); choose another --out")
                    }
                    throw RuntimeError(
                        description: "cannot create output directory \(out): \(path) is not writable (\(reason)); "
                            + "choose another --out")
                }
                return missing.reversed()
            }
            // ENOTDIR: a component is a file; the walk up reaches it and says so.
            guard errno == ENOENT || errno == ENOTDIR else {
                throw RuntimeError(
                    description: "cannot create output directory \(out): \(String(cString: strerror(errno))); "
                        + "choose another --out")
            }
            missing.append(path)
            let parent = (path as NSString).deletingLastPathComponent
            path = parent.isEmpty ? "." : parent
        }
    }

    /// An input file: what names it on the command line, its path, and its (device, inode).
    private struct InputFile {
        let option: String
        let path: String
        let device: UInt64
        let inode: UInt64
    }

    /// Every input (--file paths, --room or --sdp, --agent-instructions) by (device, inode).
    private static func identities(of inputs: [Input], _ options: RecordCommand.Options) throws -> [InputFile] {
        var named = inputs.filter { !$0.spec.isStandardInput }.map { ("--file \($0.spec.name)", $0.spec.path) }
        if let path = options.roomFile { named.append(("--room", path)) }
        if let path = options.sdp { named.append(("--sdp", path)) }
        if let path = options.agent?.instructionsFile { named.append(("--agent-instructions", path)) }
        return named.compactMap { option, path in
            var info = stat()
            guard stat(path, &info) == 0 else { return nil }
            return InputFile(option: option, path: path, device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
        }
    }

    /// Refuses an output (or an earlier recording's file) that is a symbolic link or is one of the
    /// inputs (the same device and inode, so hard links and other spellings of a path count).
    private static func checkReplaceable(_ path: String, inputs: [InputFile]) throws {
        guard let info = lstatOrNil(path) else { return }
        if info.st_mode & S_IFMT == S_IFLNK {
            throw RuntimeError(
                description: "\(path) is a symbolic link; roomtap never writes through a link: "
                    + "remove it or choose another --out")
        }
        if let input = inputs.first(where: { $0.device == UInt64(info.st_dev) && $0.inode == UInt64(info.st_ino) }) {
            throw RuntimeError(
                description: "\(path) is the same file as an input (\(input.option) \(input.path)); recording there "
                    + "would overwrite it: choose another --out")
        }
    }

    /// With --force: the files of the recording already in `out`, as its room.json names them
    /// (`tracks[].file`, `transcript.jsonl` when it had an agent) and room.json itself. Refuses a
    /// room.json that is not a report, or that names anything but a WAV (or the transcript) in DIR.
    private static func earlierRecording(in out: String) throws -> [String] {
        let roomJSON = join(out, "room.json")
        guard lstatOrNil(roomJSON) != nil else { return [] }
        guard let data = FileManager.default.contents(atPath: roomJSON),
            let report = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any],
            let tracks = report["tracks"] as? [Any]
        else {
            throw RuntimeError(
                description: "\(roomJSON) is not a roomtap report, so --force cannot tell which files were the "
                    + "earlier recording's: remove it or choose another --out")
        }
        var names = tracks.compactMap { ($0 as? [String: Any])?["file"] as? String }
        if report["agent"] != nil { names.append("transcript.jsonl") }
        for name in names {
            let plain = !name.contains("/") && !name.contains("\0") && !name.hasPrefix(".")
            guard plain && (name.hasSuffix(".wav") || name == "transcript.jsonl") else {
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
