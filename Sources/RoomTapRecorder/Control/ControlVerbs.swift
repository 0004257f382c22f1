import Foundation
import RoomTapAll

/// The verbs that talk to a running recorder over its control socket: `tracks`, `status`,
/// `mute`, `unmute`, `volume`, `solo`, `unsolo` (and `agent`). Each sends one ``ControlCommand``
/// (docs/CONTROL-PROTOCOL.md) and prints the reply: a table, or with --json the reply's result.
/// A recorder still setting up its room answers `starting`; the verb asks again for up to
/// ``startingWait``, so a verb run as the recorder starts acts once its tracks exist.
enum ControlVerbs {
    /// How long a verb keeps asking a recorder that is still starting (its room not yet set up).
    static let startingWait: Duration = .seconds(10)

    /// Sends `verb`'s command (its options and arguments as ``CommandTable`` declares them) and
    /// prints the reply on `context`'s console.
    static func run(_ verb: ControlCommand.Name, _ args: ParsedArguments, _ context: CommandContext) throws {
        let console = context.console
        let explicit = args.value("--control")
        let dir = args.value("--dir")
        let json = args.flag("--json")
        let scope = [.mute, .unmute, .volume].contains(verb) ? args.value("--scope") : nil
        let positionals = args.positionals
        if verb == .status, positionals.count == 1 {
            try DirectoryStatus.run(directory: positionals[0], args, context)
            return
        }
        if [.mute, .unmute].contains(verb) && (positionals.count != 1 || args.flag("--all")) {
            try several(verb, positionals, all: args.flag("--all"), scope: scope, json: json, explicit, dir, context)
            return
        }
        if verb == .volume && positionals.count == 1 {
            try showVolume(positionals[0], json: json, explicit, dir, context)
            return
        }
        let command = try command(verb, positionals, scope: scope)
        let client = try connect(
            RecorderChoice.socketPath(
                control: explicit, dir: dir, command: verb.rawValue, environment: context.environment))
        let result = try ask(client, command)
        if json {
            console.print(result.jsonText)
            return
        }
        switch command {
        case .tracks: console.print(TracksTable.render(result["tracks"]?.arrayValue ?? []), terminator: "")
        case .status: console.print(statusText(result), terminator: "")
        case .agent: console.print(result["message"]?.stringValue ?? "ok")
        default: console.print(changeText(command, result))
        }
    }

    /// Sends one command, asking again while the recorder is starting (``startingWait``); a
    /// failure is one line.
    static func ask(_ client: ControlClient, _ command: ControlCommand) throws -> JSONValue {
        do { return try client.request(command, whileStarting: startingWait) } catch {
            throw RecorderChoice.failure(error, of: client)
        }
    }

    /// A signed level in dB (`+3dB`, `-6 dB`): the change it asks for, as pactl reads it; nil for
    /// an absolute level (`0.5`, `0dB`, `-inf dB`: silence).
    static func relativeDecibels(_ level: String) -> Double? {
        let text = level.trimmingCharacters(in: .whitespaces)
        guard let sign = text.first, sign == "+" || sign == "-", text.lowercased().hasSuffix("db"),
            let value = Double(text.dropLast(2).trimmingCharacters(in: .whitespaces)), value.isFinite
        else { return nil }
        return value
    }

    /// `mute`/`unmute` of several NAMEs, or of every speaker (`--all`): one request per track, in
    /// order, one line (or JSON reply) each; the first that fails ends the run (exit 1).
    private static func several(
        _ verb: ControlCommand.Name, _ names: [String], all: Bool, scope: String?, json: Bool, _ explicit: String?,
        _ dir: String?, _ context: CommandContext
    ) throws {
        let console = context.console
        if all && !names.isEmpty {
            throw UsageError(description: "give NAME... or --all, not both", command: verb.rawValue)
        }
        guard all || !names.isEmpty else {
            throw UsageError(description: "usage: roomtap \(verb.rawValue) NAME... | --all", command: verb.rawValue)
        }
        for name in names { _ = try command(verb, [name], scope: scope) }  // every usage error first
        let client = try connect(
            RecorderChoice.socketPath(
                control: explicit, dir: dir, command: verb.rawValue, environment: context.environment))
        let targets =
            all
            ? (try ask(client, .tracks)["tracks"]?.arrayValue ?? [])
                .filter { $0["kind"]?.stringValue != "mix" }.compactMap { $0["name"]?.stringValue } : names
        for name in targets {
            let command = try command(verb, [name], scope: scope)
            let result = try ask(client, command)
            console.print(json ? result.jsonText : changeText(command, result))
        }
    }

    /// `volume NAME`: the track's volumes now, heard and recorded, linear and in dB.
    private static func showVolume(
        _ name: String, json: Bool, _ explicit: String?, _ dir: String?, _ context: CommandContext
    ) throws {
        let console = context.console
        let client = try connect(
            RecorderChoice.socketPath(control: explicit, dir: dir, command: "volume", environment: context.environment))
        let tracks = try ask(client, .tracks)["tracks"]?.arrayValue ?? []
        guard let track = tracks.first(where: { $0["name"]?.stringValue == name }) else {
            throw RuntimeError(
                description: "no track named '\(name)' (tracks: "
                    + tracks.compactMap { $0["name"]?.stringValue }.joined(separator: ", ") + ")")
        }
        let heard = track["volume"]?.doubleValue ?? 1
        let record = track["record_volume"]?.doubleValue ?? 1
        if json {
            console.print(
                JSONValue.object(["track": .string(name), "volume": .number(heard), "record_volume": .number(record)])
                    .jsonText)
            return
        }
        func text(_ gain: Double) -> String {
            String(format: "%.2f (", gain) + (gain > 0 ? String(format: "%+.1f dB)", 20 * log10(gain)) : "-inf dB)")
        }
        console.print("\(name): heard volume \(text(heard)); record volume \(text(record))")
    }

    /// Opens the control socket at `path` (see
    /// ``RecorderChoice/socketPath(control:dir:command:environment:)``).
    static func connect(_ path: String) throws -> ControlClient {
        do { return try ControlClient(path: path) } catch { throw RuntimeError(description: "\(error)") }
    }

    /// The command a verb and its arguments ask for; a bad argument is a usage error (exit 64),
    /// found before connecting.
    static func command(_ verb: ControlCommand.Name, _ args: [String], scope: String?) throws(UsageError)
        -> ControlCommand
    {
        let name = verb.rawValue
        func expect(_ count: Int, _ usage: String) throws(UsageError) {
            guard args.count == count else {
                throw UsageError(description: "usage: roomtap \(name) \(usage)", command: name)
            }
        }
        var chosen: ControlCommand.Scope?
        if let scope {
            guard let known = ControlCommand.Scope(rawValue: scope) else {
                throw UsageError(description: "--scope must be heard, record or all, not '\(scope)'", command: name)
            }
            chosen = known
        }
        switch verb {
        case .status:
            try expect(0, "[DIR]")
            return .status
        case .tracks:
            try expect(0, "")
            return .tracks
        case .unsolo:
            try expect(0, "")
            return .unsolo
        case .mute:
            try expect(1, "NAME")
            return .mute(track: args[0], scope: chosen)
        case .unmute:
            try expect(1, "NAME")
            return .unmute(track: args[0], scope: chosen)
        case .volume:
            try expect(2, "NAME LEVEL   (LEVEL: 0...10, 1 is unity, or dB such as -6dB)")
            guard let gain = VolumeLevel.parse(args[1]) else {
                throw UsageError(
                    description: "volume '\(args[1])' must be 0...10 (1 is unity) or a level in dB such as -6dB",
                    command: name)
            }
            // pactl's rule: a signed dB level is a change of the volume now (of the scope's side),
            // made by the recorder in one step (`change_db`), so two changes at once both apply.
            let change: ControlCommand.VolumeChange =
                relativeDecibels(args[1]).map { .change(decibels: $0) } ?? .set(gain)
            return .volume(track: args[0], change: change, scope: chosen)
        case .solo:
            guard !args.isEmpty else { throw UsageError(description: "usage: roomtap solo NAME...", command: name) }
            return .solo(tracks: args)
        case .agent:
            return .agent(try agentAction(args))
        case .ping, .hello, .watch, .stop:
            // Not verbs of this table (stop and watch are commands of their own).
            throw UsageError(description: "usage: roomtap \(name)", command: name)
        }
    }

    /// `agent say TEXT | instructions FILE | mute | unmute`.
    private static func agentAction(_ args: [String]) throws(UsageError) -> ControlCommand.AgentAction {
        let usage = "usage: roomtap agent say TEXT | instructions FILE | mute | unmute"
        switch args.first {
        case "say":
            guard args.count >= 2 else {
                throw UsageError(description: "usage: roomtap agent say TEXT", command: "agent")
            }
            return .say(args.dropFirst().joined(separator: " "))
        case "instructions":
            guard args.count == 2 else {
                throw UsageError(description: "usage: roomtap agent instructions FILE", command: "agent")
            }
            guard let text = try? String(contentsOfFile: args[1], encoding: .utf8) else {
                throw UsageError(description: "cannot read instructions file '\(args[1])'", command: "agent")
            }
            return .instructions(text)
        case let action? where action == "mute" || action == "unmute":
            guard args.count == 1 else {
                throw UsageError(description: "usage: roomtap agent \(action)", command: "agent")
            }
            return action == "mute" ? .mute : .unmute
        default:
            throw UsageError(description: usage, command: "agent")
        }
    }

    private static func changeText(_ command: ControlCommand, _ result: JSONValue) -> String {
        let time = String(format: "%.2f s", result["room_time"]?.doubleValue ?? 0)
        switch command {
        case .solo:
            return
                "solo \(result["solo"]?.arrayValue?.compactMap(\.stringValue).joined(separator: ", ") ?? "") from \(time)"
        case .unsolo: return "solo off from \(time)"
        default:
            // "carol: heard unmuted, volume 0.50; record muted, volume 1.00; from 3.20 s"
            let name = result["track"]?.stringValue ?? "?"
            func side(_ muted: String, _ volume: String) -> String {
                let state = result[muted]?.boolValue == true ? "muted" : "unmuted"
                return "\(state), volume \(String(format: "%.2f", result[volume]?.doubleValue ?? 1))"
            }
            return
                "\(name): heard \(side("muted", "volume")); record \(side("record_muted", "record_volume")); from \(time)"
        }
    }

    static func statusText(_ r: JSONValue) -> String {
        func n(_ key: String) -> Int { r[key]?.intValue ?? 0 }
        var lines = [
            String(format: "room time   %.2f s", r["room_time"]?.doubleValue ?? 0),
            "tracks      \(n("tracks"))", "sinks       \(n("sinks"))", "dropped     \(n("dropped_frames")) frame(s)",
            "late ticks  \(n("late_ticks"))",
        ]
        let solo = r["solo"]?.arrayValue?.compactMap(\.stringValue) ?? []
        if !solo.isEmpty { lines.append("solo        \(solo.joined(separator: ", "))") }
        if let agent = r["agent"] {
            var line = "agent       \(agent["state"]?.stringValue ?? "?"), \(agent["retries"]?.intValue ?? 0) retries"
            if let error = agent["last_error"]?.stringValue { line += "; last error: \(error)" }
            lines.append(line)
            if let warning = agent["session_warning"]?.stringValue { lines.append("agent warn  \(warning)") }
        }
        if let upload = r["upload"] {
            func u(_ key: String) -> Int { upload[key]?.intValue ?? 0 }
            lines.append(
                "upload      \(upload["destination"]?.stringValue ?? "?"): uploading, \(u("segments_uploaded")) "
                    + "segment(s) uploaded, \(u("segments_failed")) failed (kept for the end), "
                    + "\(u("segments_waiting")) waiting")
            if let error = upload["last_error"]?.stringValue { lines.append("last error  \(error)") }
        }
        lines.append("control     \(r["control"]?.stringValue ?? "") (pid \(n("pid")))")
        for file in r["files"]?.arrayValue?.compactMap(\.stringValue) ?? [] { lines.append("file        \(file)") }
        for error in r["errors"]?.arrayValue ?? [] {
            lines.append("FAILED      \(error["error"]?.stringValue ?? "?")")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}

/// The `roomtap tracks` table.
enum TracksTable {
    static func render(_ tracks: [JSONValue]) -> String {
        var rows = [["NAME", "SOURCE", "STATE", "MUTED", "VOLUME", "LEVEL", "TALKING", "LOSS"]]
        for t in tracks {
            // Heard mute and record mute: "yes", "yes+rec" (and off the record), "rec" (off the record only).
            let heard = t["muted"]?.boolValue == true
            let record = t["record_muted"]?.boolValue == true
            let muted = heard ? (record ? "yes+rec" : "yes") : (record ? "rec" : "no")
            // STATE: live or left, then what else holds for the track (a solo, a failed file); the
            // NAME column holds the name alone, as the verbs take it.
            let state =
                [
                    t["state"]?.stringValue ?? "", t["solo"]?.boolValue == true ? "solo" : "",
                    t["file_error"]?.stringValue != nil ? "FILE FAILED" : "",
                ].filter { !$0.isEmpty }.joined(separator: ", ")
            rows.append([
                t["name"]?.stringValue ?? "?", t["source"]?.stringValue ?? "", state, muted,
                volumeText(t),
                t["level_dbfs"]?.doubleValue.map { String(format: "%.1f dBFS", $0) } ?? "-",
                t["talking"]?.boolValue == true ? "yes" : "no",
                t["loss_percent"]?.doubleValue.map { String(format: "%.1f %%", $0) } ?? "-",
            ])
        }
        return layout(rows)
    }

    /// The heard volume, and the record volume when it is not unity: "0.50", "1.00 rec 0.25".
    static func volumeText(_ t: JSONValue) -> String {
        let heard = String(format: "%.2f", t["volume"]?.doubleValue ?? 1)
        let record = t["record_volume"]?.doubleValue ?? 1
        return record == 1 ? heard : heard + String(format: " rec %.2f", record)
    }

    /// Rows as aligned columns (two spaces apart, the last column not padded), a newline each.
    static func layout(_ rows: [[String]]) -> String {
        let widths = (0..<rows[0].count).map { c in rows.map { $0[c].count }.max() ?? 0 }
        return rows.map { row in
            row.enumerated().map { c, cell in
                c == row.count - 1 ? cell : cell.padding(toLength: widths[c], withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }.joined(separator: "\n") + "\n"
    }
}
