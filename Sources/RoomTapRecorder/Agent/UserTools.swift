import Foundation
import RoomTapAll
import RoomTapSync

/// `--agent-tools FILE`: the user's own function tools, a JSON array of
/// `{"name", "description", "parameters" (JSON Schema), "command": [program, args...], "timeout_s"}`.
/// A call runs the command with the call's arguments (JSON) on its standard input; its standard
/// output is the result. A command that cannot start, exits non-zero or outlives `timeout_s`
/// (then it is killed) gives an error result; no call stalls the session (each runs on the
/// agent's tools queue, which runs calls side by side).
///
/// Thread: a value; ``run(arguments:)`` blocks for at most about `timeout_s` + 1 s.
struct UserTool: Sendable {
    var name: String
    var description: String
    var parameters: JSONValue
    var command: [String]
    /// Seconds.
    var timeout: Double

    static let defaultTimeout = 10.0
    /// The most of a command's output kept as its result (bytes).
    static let maxOutput = 64 << 10

    var definition: RealtimeTool { RealtimeTool(name: name, description: description, parameters: parameters) }

    /// The tools of `path`; one line saying what is wrong (and where) otherwise. `reserved` are
    /// names already taken (the built-in tools).
    static func load(path: String, reserved: Set<String>) throws(UsageError) -> [UserTool] {
        func bad(_ what: String) -> UsageError {
            UsageError(description: "--agent-tools '\(path)': \(what)", command: "record")
        }
        guard let data = FileManager.default.contents(atPath: path) else { throw bad("cannot read the file") }
        let text = String(decoding: data, as: UTF8.self)
        guard let value = try? JSONValue(parsing: text), let list = value.arrayValue else {
            throw bad(
                "not a JSON array of tools ({\"name\", \"description\", \"parameters\", \"command\", \"timeout_s\"})")
        }
        var tools: [UserTool] = []
        for (i, entry) in list.enumerated() {
            let label = "tool \(i + 1)"
            guard entry.objectValue != nil else { throw bad("\(label) is not an object") }
            guard let name = entry["name"]?.stringValue, RealtimeTool.isValidName(name) else {
                throw bad("\(label): \"name\" must be 1-64 of a-z A-Z 0-9 _ -")
            }
            guard !reserved.contains(name), !tools.contains(where: { $0.name == name }) else {
                throw bad(
                    "\(label): the name '\(name)' is taken (built-in tools: \(reserved.sorted().joined(separator: ", ")))"
                )
            }
            let parameters = entry["parameters"] ?? .object(["type": .string("object"), "properties": .object([:])])
            guard parameters["type"]?.stringValue == "object" else {
                throw bad("\(label) ('\(name)'): \"parameters\" must be a JSON Schema of type \"object\"")
            }
            guard let command = entry["command"]?.arrayValue?.compactMap(\.stringValue),
                !command.isEmpty, command.count == entry["command"]?.arrayValue?.count, !command[0].isEmpty
            else { throw bad("\(label) ('\(name)'): \"command\" must be a non-empty array of strings") }
            var timeout = defaultTimeout
            if let t = entry["timeout_s"] {
                guard let seconds = t.doubleValue, seconds > 0, seconds <= 600 else {
                    throw bad("\(label) ('\(name)'): \"timeout_s\" must be a number of seconds, 0 < t <= 600")
                }
                timeout = seconds
            }
            tools.append(
                UserTool(
                    name: name, description: entry["description"]?.stringValue ?? "", parameters: parameters,
                    command: command, timeout: timeout))
        }
        return tools
    }

    /// Runs the command with `arguments` on its standard input and `environment` as its
    /// environment (its program looked up on that `PATH`); its standard output (trimmed, at most
    /// ``maxOutput`` bytes; `{"ok":true}` when empty) is the result.
    func run(arguments: String, environment: [String: String]) -> RealtimeToolResult {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.resolve(command[0], path: environment["PATH"]))
        process.arguments = Array(command.dropFirst())
        process.environment = environment
        let input = Pipe()
        let output = Pipe()
        let errors = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        let ended = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in ended.signal() }
        do { try process.run() } catch {
            return .error("the tool \(name) could not start \(command[0]): \(error.localizedDescription)")
        }
        let stdout = Self.collect(output.fileHandleForReading, limit: Self.maxOutput)
        let stderr = Self.collect(errors.fileHandleForReading, limit: 4_096)
        RoomThread.start("roomtap.agent.tool-input") {
            try? input.fileHandleForWriting.write(contentsOf: Data(arguments.utf8))
            try? input.fileHandleForWriting.close()
        }
        if ended.wait(timeout: .now() + timeout) == .timedOut {
            process.terminate()
            if ended.wait(timeout: .now() + 1) == .timedOut { kill(process.processIdentifier, SIGKILL) }
            _ = ended.wait(timeout: .now() + 1)
            return .error("the tool \(name) timed out after \(Self.format(timeout)) s and was stopped")
        }
        let out = stdout.result(waiting: 1)
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            let why = stderr.result(waiting: 1).split(whereSeparator: \.isNewline).last.map(String.init) ?? ""
            let how =
                process.terminationReason == .exit
                ? "exited with status \(process.terminationStatus)"
                : "was killed by signal \(process.terminationStatus)"
            return .error("the tool \(name) \(how)\(why.isEmpty ? "" : ": \(why)")")
        }
        let text = out.trimmingCharacters(in: .whitespacesAndNewlines)
        return RealtimeToolResult(output: text.isEmpty ? #"{"ok":true}"# : text)
    }

    /// `program` as given when it has a `/`, else the first match on `path` (a `PATH`; nil: the
    /// usual directories).
    static func resolve(_ program: String, path: String?) -> String {
        guard !program.contains("/") else { return program }
        let path = path ?? "/usr/local/bin:/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = "\(directory)/\(program)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return program
    }

    static func format(_ seconds: Double) -> String { String(format: "%g", seconds) }

    /// Reads `handle` to its end on a thread of its own, keeping the first `limit` bytes.
    private static func collect(_ handle: FileHandle, limit: Int) -> Collected {
        let collected = Collected()
        RoomThread.start("roomtap.agent.tool-output") {
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                collected.append(chunk, limit: limit)
            }
            collected.finish()
        }
        return collected
    }

    private final class Collected: Sendable {
        private let bytes = Locked<Data>(Data())
        private let done = DispatchSemaphore(value: 0)
        func append(_ chunk: Data, limit: Int) {
            bytes.withLock { b in if b.count < limit { b.append(chunk.prefix(limit - b.count)) } }
        }
        func finish() { done.signal() }
        /// What was read, after waiting at most `seconds` for the end (a child's child may hold
        /// the pipe open).
        func result(waiting seconds: Double) -> String {
            _ = done.wait(timeout: .now() + seconds)
            return String(decoding: bytes.withLock { $0 }, as: UTF8.self)
        }
    }
}
