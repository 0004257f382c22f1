/// A usage error: the command line itself was wrong. Exit status 64 (EX_USAGE).
struct UsageError: Error, CustomStringConvertible {
    let description: String
    /// The command whose help explains the right usage ("record", or "" for the top level).
    let command: String
}

/// A failure while doing the work: exit status 1, one line on stderr.
struct RuntimeError: Error, CustomStringConvertible {
    let description: String
}

/// A command line parsed against a ``CommandSpec``: the values of its options (by long name) and
/// its positional arguments. Made by ``Arguments/parse(_:for:)`` in one pass over argv, so
/// every option is known, has the values its kind needs and is given as often as it may be.
/// A value type; read it from any thread.
struct ParsedArguments {
    /// The command's name ("record"), for the messages of its own checks.
    let command: String
    /// Every value given, by long option name ("--out"), in command-line order. A flag counts one
    /// empty string per appearance.
    private(set) var given: [String: [String]] = [:]
    /// The positional arguments, in order (everything after `--` included).
    private(set) var positionals: [String] = []
    /// True when -h or --help appeared before `--`: the command shows its help and does nothing.
    private(set) var wantsHelp = false
    /// The long names the command declares; asking for another is a programming error.
    private let declared: Set<String>

    init(command: String, declared: Set<String>) {
        self.command = command
        self.declared = declared
    }

    /// True when the flag (or any option of that name) was given.
    func flag(_ long: String) -> Bool { !values(long).isEmpty }

    /// The value of an option given at most once (the parser refused it twice); nil when absent.
    func value(_ long: String) -> String? { values(long).last }

    /// Every value of a repeatable option, in command-line order.
    func values(_ long: String) -> [String] {
        precondition(declared.contains(long), "roomtap \(command) declares no option \(long)")
        return given[long] ?? []
    }

    fileprivate mutating func add(_ long: String, _ value: String) { given[long, default: []].append(value) }
    fileprivate mutating func addPositional(_ argument: String) { positionals.append(argument) }
    fileprivate mutating func requestHelp() { wantsHelp = true }
}

/// The command-line parser: one pass over argv against a command's table entry.
///
/// Rules (docs/CLI.md, "Options"): long options are `--name value` or `--name=value`; a short
/// form (`-o DIR`) where the table gives one; `--` ends the options (everything after it is
/// positional); `-` alone and negative numbers (`-6dB`, `-0.5`) are values, not options. A value
/// is never `--` nor another option: `--out --mix` is refused (write `--out=-x` for a value that
/// starts with '-'). An optional value (`--play [DEVICE]`) is taken from `--play=DEVICE`, or from
/// the next argument when that does not start with '-' and the command takes no positional
/// arguments; otherwise the option's default. Unknown options, a missing value, a flag given a
/// value and a once-only option given twice are usage errors (exit 64) naming the option.
enum Arguments {
    static func parse(_ argv: [String], for command: CommandSpec) throws(UsageError) -> ParsedArguments {
        var result = ParsedArguments(command: command.name, declared: Set(command.options.map(\.long)))
        let end = argv.firstIndex(of: "--") ?? argv.endIndex
        if argv[..<end].contains(where: { $0 == "-h" || $0 == "--help" }) {
            result.requestHelp()
            return result
        }
        func fail(_ message: String) -> UsageError { UsageError(description: message, command: command.name) }
        var i = 0
        var afterDashes = false
        while i < argv.count {
            let argument = argv[i]
            i += 1
            if afterDashes || !isOption(argument) {
                result.addPositional(argument)
                continue
            }
            if argument == "--" {
                afterDashes = true
                continue
            }
            var name = argument
            var inline: String?
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                inline = String(argument[argument.index(after: equals)...])
            }
            guard let option = command.option(named: name) else {
                let place = command.name.isEmpty ? "roomtap" : "roomtap \(command.name)"
                throw fail("unknown option '\(name)' for '\(place)'")
            }
            switch option.kind {
            case .flag:
                guard inline == nil else { throw fail("option '\(name)' takes no value") }
                result.add(option.long, "")
            case .value, .repeatable:
                if let inline {
                    result.add(option.long, inline)
                    break
                }
                guard i < argv.count else { throw fail("option '\(name)' needs a value") }
                let next = argv[i]
                if next == "--" {
                    throw fail("option '\(name)' needs a value, not '--' (for that value write \(option.long)=--)")
                }
                if isOption(next) {
                    throw fail(
                        "option '\(name)' needs a value, not the option '\(next)' "
                            + "(for a value that starts with '-' write \(option.long)=VALUE)")
                }
                result.add(option.long, next)
                i += 1
            case .optionalValue(let fallback):
                if let inline {
                    result.add(option.long, inline)
                } else if !command.takesPositionals, i < argv.count, !argv[i].hasPrefix("-") {
                    result.add(option.long, argv[i])
                    i += 1
                } else {
                    result.add(option.long, fallback)
                }
            }
            if option.kind.isOnce, let count = result.given[option.long]?.count, count > 1 {
                throw fail("option '\(option.long)' given \(count) times; give it once")
            }
        }
        return result
    }

    /// True for an argument that is an option (or `--`): starts with '-', is not '-' alone and
    /// not a negative number.
    static func isOption(_ argument: String) -> Bool {
        argument.hasPrefix("-") && argument != "-" && !isNegativeNumber(argument)
    }

    /// "-6dB", "-0.5", "-inf dB": a value (a level), not an option.
    static func isNegativeNumber(_ argument: String) -> Bool {
        let rest = argument.dropFirst()
        return rest.first.map { $0.isNumber || $0 == "." } == true || rest.lowercased().hasPrefix("inf")
    }
}
