import Foundation
import RoomTap

/// Everything `record` checks before it creates a single file: the inputs are readable Ogg Opus,
/// the output directory is usable, and no output would overwrite anything (unless --force).
struct RecordingPlan {
    struct Input {
        let spec: FileSpec
        let info: OggOpusFileInfo
        /// Sanitised, unique file base name.
        let fileName: String
        var wavPath: String
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
    /// Room length expected from the inputs, in samples (the longest offset + duration).
    let expectedSamples: Int64

    /// Longest input accepted (48 hours): a damaged or crafted file whose granule positions claim
    /// more would otherwise make a room of that length.
    static let maxDurationSamples: Int64 = 48 * 3600 * 48_000

    static func make(_ options: RecordCommand.Options) throws -> RecordingPlan {
        var naming = OutputNaming()
        if options.mix { naming.reserve("mix") }
        if options.agent != nil { naming.reserve("agent") }
        var inputs: [Input] = []
        for spec in options.files {
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
        let out = options.out
        try prepareDirectory(out)
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
        let inputPaths = Set(inputs.map { realpathOrSelf($0.spec.path) })
        for path in outputs {
            if inputPaths.contains(realpathOrSelf(path)) {
                throw RuntimeError(description: "\(path) is one of the input files; choose another --out")
            }
            if !options.force && FileManager.default.fileExists(atPath: path) {
                throw RuntimeError(
                    description: "\(path) already exists; pass --force to overwrite it, or choose another --out")
            }
        }
        let expected = inputs.map { $0.spec.offsetSamples + $0.info.durationSamples }.max() ?? 0
        return RecordingPlan(
            options: options, inputs: inputs, description: description, describedPaths: describedPaths,
            naming: naming, outDirectory: out, mixPath: mixPath, agentPath: agentPath, transcriptPath: transcriptPath,
            roomJSONPath: roomJSON, expectedSamples: expected)
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
    /// --force, with a suffix past any file already on disk (nothing is overwritten).
    static func livePath(for name: String, naming: inout OutputNaming, in directory: String, force: Bool) -> String {
        while true {
            let path = join(directory, naming.claim(name) + ".wav")
            if force || !FileManager.default.fileExists(atPath: path) { return path }
        }
    }

    private static func prepareDirectory(_ out: String) throws {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: out, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else {
                throw RuntimeError(description: "--out \(out) exists and is not a directory; choose a directory")
            }
        } else {
            do {
                try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
            } catch {
                let reason = (error as NSError).localizedFailureReason ?? "\(error.localizedDescription)"
                throw RuntimeError(description: "cannot create output directory \(out): \(reason)")
            }
        }
        guard access(out, W_OK | X_OK) == 0 else {
            throw RuntimeError(
                description: "output directory \(out) is not writable (\(String(cString: strerror(errno)))); "
                    + "choose another --out")
        }
    }

    static func join(_ directory: String, _ name: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }

    private static func realpathOrSelf(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
