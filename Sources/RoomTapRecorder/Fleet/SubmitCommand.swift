import Foundation
import RoomTapAll

/// `roomtap submit --redis URL [--id ID] [--tracks N] -- record ARGS...`: checks the record
/// arguments as `record` itself would (a usage error is reported now, not by a worker later),
/// makes relative input paths absolute, queues the job and prints its id.
enum SubmitCommand {
    /// Options that name an input file or directory, made absolute at submit time.
    static let pathOptions: Set<String> = [
        "--janus-room", "--sora-recording", "--sdp", "--room", "--agent-instructions",
    ]
    /// Options a worker sets itself.
    static let refused: [String: String] = [
        "--out": "the worker chooses the directory (SPOOL/ID/room/)", "-o": "the worker chooses the directory",
        "--force": "a job's directory is always new", "-f": "a job's directory is always new",
        "--control": "each room has a control socket of its own",
        "--upload":
            "the fleet's bucket is the worker's: roomtap worker --upload s3://BUCKET/PREFIX (room ID goes to PREFIX/ID/)",
        "--upload-segments-only": "the worker uploads its live rooms' segments itself",
    ]

    static func run(_ args: ParsedArguments, _ context: CommandContext) throws {
        let store = try FleetCLI.store(args, command: "submit")
        var record = args.positionals
        guard record.first == "record" else {
            throw UsageError(
                description:
                    "give the room after '--' as record arguments: roomtap submit --redis URL -- record --file ...",
                command: "submit")
        }
        record.removeFirst()
        for argument in record {
            let name = argument.split(separator: "=", maxSplits: 1).first.map(String.init) ?? argument
            if let reason = refused[name] {
                throw UsageError(description: "\(name) is not for a job: \(reason)", command: "submit")
            }
        }
        guard let recordSpec = CommandTable.all.first(where: { $0.name == "record" }) else { return }
        let options: RecordCommand.Options
        do {
            options = try RecordCommand.parse(
                try Arguments.parse(record + ["--out", "/nonexistent/roomtap-job"], for: recordSpec),
                environment: context.environment)
        } catch {
            throw UsageError(description: "the record arguments: \(error.description)", command: "submit")
        }
        if options.files.contains(where: \.isStandardInput) {
            throw UsageError(
                description: "a job cannot read standard input (--file NAME=-): give a file", command: "submit")
        }
        let id = args.value("--id") ?? JobID.make()
        guard JobID.isValid(id) else {
            throw UsageError(
                description: "--id '\(id)' must be 1-64 of A-Z a-z 0-9 . _ - (not starting with . or -)",
                command: "submit")
        }
        var tracks = options.files.count + (options.mic != nil ? 1 : 0)
        if tracks == 0 || options.janusRoom != nil || options.soraRecording != nil || options.hasNetwork {
            tracks = max(tracks, WorkerConfiguration.defaultRoomTracks)
        }
        if let text = args.value("--tracks") {
            guard let n = Int(text), (1...100_000).contains(n) else {
                throw UsageError(
                    description: "--tracks must be a number of tracks 1-100000, not '\(text)'", command: "submit")
            }
            tracks = n
        }
        let submission = JobStore.Submission(
            id: id, arguments: absolutePaths(record), tracks: tracks, isLive: options.usesRealTimeClock, upload: nil)
        guard try FleetCLI.redis({ try store.submit(submission) }) else {
            throw RuntimeError(
                description: "a job '\(id)' exists already: choose another --id (roomtap jobs lists them)")
        }
        context.console.print(id)
    }

    /// `record` arguments with relative input paths made absolute (the worker runs elsewhere),
    /// against the process's working directory.
    static func absolutePaths(_ arguments: [String]) -> [String] {
        let cwd = FileManager.default.currentDirectoryPath
        func absolute(_ path: String) -> String {
            path.hasPrefix("/") || path.hasPrefix("s3://") || path == "-" ? path : cwd + "/" + path
        }
        var result: [String] = []
        var i = 0
        while i < arguments.count {
            let argument = arguments[i]
            i += 1
            var name = argument
            var inline: String?
            if argument.hasPrefix("--"), let eq = argument.firstIndex(of: "=") {
                name = String(argument[..<eq])
                inline = String(argument[argument.index(after: eq)...])
            }
            guard name == "--file" || pathOptions.contains(name) else {
                result.append(argument)
                continue
            }
            var value = inline
            if value == nil, i < arguments.count {
                value = arguments[i]
                i += 1
            }
            guard var text = value else {
                result.append(argument)
                continue
            }
            if name == "--file", let eq = text.firstIndex(of: "=") {
                text = String(text[...eq]) + absolute(String(text[text.index(after: eq)...]))
            } else if name != "--file" {
                text = absolute(text)
            }
            result += [name, text]
        }
        return result
    }
}

/// What the fleet's commands share: the Redis URL and prefix options, Redis errors as one line.
enum FleetCLI {
    static func store(_ args: ParsedArguments, command: String) throws -> JobStore {
        guard let text = args.value("--redis") else {
            throw UsageError(description: "give the fleet's Redis: --redis redis://HOST:PORT", command: command)
        }
        let url: RedisURL
        do { url = try RedisURL(text) } catch {
            throw UsageError(description: "--redis: \(error.description)", command: command)
        }
        return JobStore(connection: RedisConnection(url), keys: try keys(args, command: command))
    }

    static func keys(_ args: ParsedArguments, command: String) throws(UsageError) -> FleetKeys {
        let prefix = args.value("--redis-prefix") ?? "roomtap:"
        guard FleetKeys.isValidPrefix(prefix) else {
            throw UsageError(
                description: "--redis-prefix '\(prefix)' must be 1-64 of letters, digits and : _ - . { }",
                command: command)
        }
        return FleetKeys(prefix: prefix)
    }

    /// Runs a Redis call; a connection failure becomes one line naming the server.
    static func redis<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch let error as RedisError {
            throw RuntimeError(
                description: error.isReply ? error.description : "\(error.description) (is redis-server running there?)"
            )
        }
    }
}
