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

/// A small command-line scanner in the swift-argument-parser style: kebab-case long options,
/// `--name value` and `--name=value`, `-h/--help`, `--` ends options.
struct Arguments {
    private var remaining: [String]
    let command: String

    init(_ arguments: [String], command: String) {
        self.remaining = arguments
        self.command = command
    }

    /// True (and consumed) when -h or --help appears before `--`.
    mutating func wantsHelp() -> Bool {
        let end = remaining.firstIndex(of: "--") ?? remaining.endIndex
        guard let i = remaining[..<end].firstIndex(where: { $0 == "-h" || $0 == "--help" }) else { return false }
        remaining.remove(at: i)
        return true
    }

    /// Consumes every occurrence of a flag; true if present.
    mutating func flag(_ name: String) throws(UsageError) -> Bool {
        var found = false
        var i = 0
        while i < remaining.count, remaining[i] != "--" {
            if remaining[i] == name {
                remaining.remove(at: i)
                found = true
            } else if remaining[i].hasPrefix(name + "=") {
                throw UsageError(description: "option '\(name)' takes no value", command: command)
            } else {
                i += 1
            }
        }
        return found
    }

    /// Consumes every occurrence of an option with a value, in order.
    mutating func values(_ name: String) throws(UsageError) -> [String] {
        var found: [String] = []
        var i = 0
        while i < remaining.count, remaining[i] != "--" {
            let argument = remaining[i]
            if argument == name {
                guard i + 1 < remaining.count, !remaining[i + 1].hasPrefix("--") || remaining[i + 1] == "--" else {
                    throw UsageError(description: "option '\(name)' needs a value", command: command)
                }
                found.append(remaining[i + 1])
                remaining.removeSubrange(i...(i + 1))
            } else if argument.hasPrefix(name + "=") {
                found.append(String(argument.dropFirst(name.count + 1)))
                remaining.remove(at: i)
            } else {
                i += 1
            }
        }
        return found
    }

    /// Consumes an option that may appear at most once.
    mutating func value(_ name: String) throws(UsageError) -> String? {
        let all = try values(name)
        guard all.count <= 1 else {
            throw UsageError(description: "option '\(name)' given \(all.count) times; give it once", command: command)
        }
        return all.first
    }

    /// Consumes an option whose value may be left out (`--play`, `--play hw:1`, `--play=hw:1`):
    /// `default` when it stands alone or the next argument is another option; nil when absent.
    mutating func optionalValue(_ name: String, default fallback: String) throws(UsageError) -> String? {
        var found: [String] = []
        var i = 0
        while i < remaining.count, remaining[i] != "--" {
            let argument = remaining[i]
            if argument == name {
                if i + 1 < remaining.count, !remaining[i + 1].hasPrefix("-") {
                    found.append(remaining[i + 1])
                    remaining.removeSubrange(i...(i + 1))
                } else {
                    found.append(fallback)
                    remaining.remove(at: i)
                }
            } else if argument.hasPrefix(name + "=") {
                found.append(String(argument.dropFirst(name.count + 1)))
                remaining.remove(at: i)
            } else {
                i += 1
            }
        }
        guard found.count <= 1 else {
            throw UsageError(description: "option '\(name)' given \(found.count) times; give it once", command: command)
        }
        return found.first
    }

    /// "-6dB", "-0.5", "-inf dB": a value (a level), not an option.
    static func isNegativeNumber(_ argument: String) -> Bool {
        let rest = argument.dropFirst()
        return rest.first.map { $0.isNumber || $0 == "." } == true || rest.lowercased().hasPrefix("inf")
    }

    /// The positional arguments left; any unknown option left over is a usage error.
    mutating func positionals() throws(UsageError) -> [String] {
        var result: [String] = []
        var afterDashes = false
        for argument in remaining {
            if !afterDashes && argument == "--" {
                afterDashes = true
            } else if !afterDashes && argument.hasPrefix("-") && argument != "-" && !Self.isNegativeNumber(argument) {
                throw UsageError(
                    description: "unknown option '\(argument)' for 'roomtap \(command)'", command: command)
            } else {
                result.append(argument)
            }
        }
        remaining = []
        return result
    }
}
