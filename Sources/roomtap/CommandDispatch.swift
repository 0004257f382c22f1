import Foundation

/// Picks the subcommand and turns errors into the documented exit statuses.
enum CommandDispatch {
    static let version = "0.1.0"

    static func run(_ arguments: [String]) -> Int32 {
        guard let first = arguments.first else {
            FileHandle.standardError.write(Data(Help.topLevel.utf8))
            return 64
        }
        let rest = Array(arguments.dropFirst())
        do {
            switch first {
            case "-h", "--help":
                print(Help.topLevel, terminator: "")
            case "--version", "version":
                print("roomtap \(version)")
            case "help":
                guard let topic = rest.first else {
                    print(Help.topLevel, terminator: "")
                    return 0
                }
                guard let text = Help.text(for: topic) else {
                    throw UsageError(description: "no help for '\(topic)': not a roomtap command", command: "")
                }
                print(text, terminator: "")
            case "record":
                try RecordCommand.run(rest)
            case "repair":
                try RepairCommand.run(rest)
            case "timeline":
                try TimelineCommand.run(rest)
            case "watch":
                try WatchCommand.run(rest)
            case "stop":
                try StopCommand.run(rest)
            case "list":
                try ListCommand.run(rest)
            case let verb where ControlVerbs.names.contains(verb):
                try ControlVerbs.run(verb, rest)
            default:
                throw UsageError(description: "unknown command '\(first)'", command: "")
            }
            return 0
        } catch let error as UsageError {
            let helpCommand = error.command.isEmpty ? "roomtap --help" : "roomtap \(error.command) --help"
            printError("\(error.description) (see '\(helpCommand)')")
            return 64
        } catch {
            printError("\(error)")
            return 1
        }
    }

    /// One line on stderr, prefixed "roomtap: error: ".
    static func printError(_ message: String) {
        let oneLine = message.replacingOccurrences(of: "\n", with: " ")
        FileHandle.standardError.write(Data("roomtap: error: \(oneLine)\n".utf8))
    }

    /// One line on stderr, prefixed "roomtap: warning: ".
    static func printWarning(_ message: String) {
        FileHandle.standardError.write(Data("roomtap: warning: \(message)\n".utf8))
    }
}
