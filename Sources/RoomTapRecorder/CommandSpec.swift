/// What an option takes on the command line.
enum OptionKind: Sendable, Equatable {
    /// `--mix`: no value. Giving it again changes nothing.
    case flag
    /// `--out DIR`: one value, given at most once.
    case value
    /// `--file SPEC`: one value per appearance, kept in order.
    case repeatable
    /// `--play [DEVICE]`: a value that may be left out (then `default`); at most once.
    case optionalValue(default: String)

    /// True when giving the option twice is a usage error.
    var isOnce: Bool {
        switch self {
        case .value, .optionalValue: true
        case .flag, .repeatable: false
        }
    }
}

/// One option of a command: its names, what it takes, and its help. An immutable value.
struct OptionSpec: Sendable {
    /// "--out".
    let long: String
    /// "o" for `-o`; nil when the option has no short form.
    let short: Character?
    let kind: OptionKind
    /// What the value is called in help ("DIR", "[DEVICE]"); empty for flags.
    let placeholder: String
    /// The help text; line breaks are kept, continuation lines are indented under the first.
    let help: String
    /// The help section it is listed in ("OPTIONS", "LIVE OPTIONS", ...).
    let section: String

    init(
        _ long: String, short: Character? = nil, _ kind: OptionKind, _ placeholder: String = "",
        section: String = "OPTIONS", help: String
    ) {
        self.long = long
        self.short = short
        self.kind = kind
        self.placeholder = placeholder
        self.help = help
        self.section = section
    }

    /// "-o, --out DIR": how help shows the option.
    var label: String {
        (short.map { "-\($0), " } ?? "") + long + (placeholder.isEmpty ? "" : " " + placeholder)
    }

    /// -h/--help, which every command takes (the parser answers it before anything else).
    static let help = OptionSpec("--help", short: "h", .flag, help: "Show this help.")
}

/// Where the top-level help lists a command.
enum CommandGroup: Sendable, CaseIterable {
    /// Commands that work on files and rooms ("COMMANDS:").
    case main
    /// Commands that talk to a running recorder over its control socket.
    case control
    /// The fleet on Redis: worker, submit, jobs, cancel.
    case fleet
    /// help, version.
    case other
}

/// One `roomtap` command: its name, its one-line summary (the top-level help's list), its
/// options, its help prose and what runs it. Adding a command is one ``CommandTable`` entry
/// plus its run function. An immutable value.
struct CommandSpec: Sendable {
    let name: String
    let group: CommandGroup
    /// One line for the top-level COMMANDS list.
    let summary: String
    /// The options, in help order (-h/--help is added at the end of the OPTIONS section).
    let options: [OptionSpec]
    /// True when the command takes positional arguments (an optional value then never takes the
    /// next argument: `--play` only takes a device as `--play=DEVICE`).
    let takesPositionals: Bool
    /// The help text before the options (OVERVIEW, USAGE, prose), ending in a blank line.
    let helpIntro: String
    /// The help text after the options (notes, examples); may be empty.
    let helpNotes: String
    /// Runs the command (on the caller's thread) with the run's console and environment; throws
    /// UsageError (exit 64) or any other error (1).
    let run: @Sendable (ParsedArguments, CommandContext) throws -> Void

    init(
        _ name: String, group: CommandGroup, summary: String, options: [OptionSpec] = [],
        takesPositionals: Bool = false, helpIntro: String, helpNotes: String = "",
        run: @escaping @Sendable (ParsedArguments, CommandContext) throws -> Void
    ) {
        self.name = name
        self.group = group
        self.summary = summary
        self.options = options + [.help]
        self.takesPositionals = takesPositionals
        self.helpIntro = helpIntro
        self.helpNotes = helpNotes
        self.run = run
    }

    /// The option spelled `name` ("--out" or "-o"), or nil.
    func option(named name: String) -> OptionSpec? {
        if name.hasPrefix("--") { return options.first { $0.long == name } }
        guard name.count == 2, let letter = name.last else { return nil }
        return options.first { $0.short == letter }
    }
}
