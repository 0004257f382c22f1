import Foundation

/// Picks the subcommand from ``CommandTable`` and turns errors into the documented exit statuses:
/// the one door of the recorder library that the `roomtap` executable goes through.
package enum CommandDispatch {
    static let version = "0.1.0"

    /// Runs one roomtap command line (without the program name) to its exit status: 0 success,
    /// 1 failure, 64 usage error. Results go to `context`'s standard output, diagnostics to its
    /// standard error; the command reads `context`'s environment, never the process's. Never
    /// exits the process. Thread: the caller's, which it blocks until the command is done; runs
    /// with different contexts may go on side by side.
    package static func run(_ arguments: [String], context: CommandContext) -> Int32 {
        let console = context.console
        guard let first = arguments.first else {
            console.error(Help.topLevel)
            return 64
        }
        do {
            switch first {
            case "-h", "--help":
                console.print(Help.topLevel, terminator: "")
            case "--version":
                console.print("roomtap \(version)")
            default:
                guard let command = CommandTable.command(named: first) else {
                    if Arguments.isOption(first) {
                        throw UsageError(description: "unknown option '\(first)' for 'roomtap'", command: "")
                    }
                    throw UsageError(
                        description: "unknown command '\(first)'; the commands are "
                            + CommandTable.all.map(\.name).joined(separator: ", "), command: "")
                }
                let parsed = try Arguments.parse(Array(arguments.dropFirst()), for: command)
                if parsed.wantsHelp {
                    console.print(Help.text(for: command), terminator: "")
                } else {
                    try command.run(parsed, context)
                }
            }
            return 0
        } catch let error as UsageError {
            let helpCommand = error.command.isEmpty ? "roomtap --help" : "roomtap \(error.command) --help"
            console.printError("\(error.description) (see '\(helpCommand)')")
            return 64
        } catch {
            console.printError("\(error)")
            return 1
        }
    }

    /// `roomtap help [COMMAND]`: the top-level help, or the command's.
    static func help(_ arguments: ParsedArguments, _ console: Console) throws(UsageError) {
        let topics = arguments.positionals
        guard let topic = topics.first else {
            console.print(Help.topLevel, terminator: "")
            return
        }
        guard topics.count == 1 else {
            throw UsageError(description: "unexpected argument '\(topics[1])'; give one command", command: "help")
        }
        guard let command = CommandTable.command(named: topic) else {
            throw UsageError(description: "no help for '\(topic)': not a roomtap command", command: "")
        }
        console.print(Help.text(for: command), terminator: "")
    }
}
