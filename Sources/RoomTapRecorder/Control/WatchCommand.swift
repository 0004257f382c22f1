import Foundation
import RoomTapAll
import RoomTapSync
import Synchronization

/// `roomtap watch`: a live view of the running room. On a terminal: a level meter and talking
/// indicator per track, redrawn in place about 10 times a second, with keys to select a track,
/// mute it, change its volume and solo it; `q` or Ctrl-C quits and restores the terminal. Not on a
/// terminal (or with --json): one line per event, for scripts.
enum WatchCommand {
    /// What the screen shows; written by the event thread, read by the drawing loop.
    private struct Screen {
        var roomTime = 0.0
        var tracks: [JSONValue] = []
        var levels: [String: (level: Double?, talking: Bool)] = [:]
        var tracksStale = true
        var message = ""
        var ended: String?
    }

    static func run(_ args: ParsedArguments, _ context: CommandContext) throws {
        let console = context.console
        let explicit = args.value("--control")
        let dir = args.value("--dir")
        let json = args.flag("--json")
        let extra = args.positionals
        guard extra.isEmpty else {
            throw UsageError(description: "unexpected argument '\(extra[0])'", command: "watch")
        }
        let path = try RecorderChoice.socketPath(
            control: explicit, dir: dir, command: "watch", environment: context.environment)
        let events = try ControlVerbs.connect(path)
        if json || !console.isInteractive {
            try streamLines(events, json: json, console)
        } else {
            try interactive(events: events, commands: try ControlVerbs.connect(path), console)
        }
    }

    /// One line per event (JSON with --json), until the recorder stops or stdout closes.
    private static func streamLines(_ client: ControlClient, json: Bool, _ console: Console) throws {
        do {
            try client.watch { event in
                let line: String
                if json {
                    line = event.jsonText
                } else if event["event"]?.stringValue == "levels" {
                    let tracks = event["tracks"]?.arrayValue ?? []
                    line =
                        String(format: "%8.2f s ", event["room_time"]?.doubleValue ?? 0)
                        + tracks.map { t in
                            let level = t["level_dbfs"]?.doubleValue.map { String(format: "%.0f", $0) } ?? "-inf"
                            return
                                "\(t["name"]?.stringValue ?? "?")=\(level)\(t["talking"]?.boolValue == true ? "*" : "")"
                        }.joined(separator: " ")
                } else if event["event"]?.stringValue == "stopped" {
                    line = ended(event)
                } else {
                    line = event.jsonText
                }
                return console.write(line + "\n") && event["event"]?.stringValue != "stopped"
            }
        } catch .disconnected(_) {
            return  // the recorder ended: so does the watch
        } catch { throw RuntimeError(description: "\(error)") }
    }

    /// The last line of a watch, from the recorder's `stopped` event: the room ended normally,
    /// where its files are, and the files that failed.
    static func ended(_ event: JSONValue) -> String {
        let dir = event["dir"]?.stringValue ?? "?"
        let failed = (event["errors"]?.arrayValue ?? []).compactMap { $0["file"]?.stringValue }
        return "the room ended; its files are in \(dir) (room.json: \(event["room_json"]?.stringValue ?? "?"))"
            + (failed.isEmpty ? "" : "; these failed: \(failed.joined(separator: ", "))")
    }

    // MARK: - The terminal view

    /// The full-screen view on `console`, which is the process's own terminal
    /// (``Console/isInteractive``).
    private static func interactive(events: ControlClient, commands: ControlClient, _ console: Console) throws {
        let screen = Locked(Screen())
        let eventClient = UncheckedBox(events)
        RoomThread.start("roomtap.watch") {
            do {
                try eventClient.value.watch { event in
                    screen.withLock { s in
                        switch event["event"]?.stringValue {
                        case "levels":
                            s.roomTime = event["room_time"]?.doubleValue ?? s.roomTime
                            for t in event["tracks"]?.arrayValue ?? [] {
                                guard let name = t["name"]?.stringValue else { continue }
                                s.levels[name] = (t["level_dbfs"]?.doubleValue, t["talking"]?.boolValue == true)
                            }
                        case "stopped": s.ended = ended(event)
                        default: s.tracksStale = true
                        }
                    }
                    return event["event"]?.stringValue != "stopped"
                }
            } catch {
                // Closed without a `stopped` event: killed, or not a recorder that says so.
                screen.withLock { if $0.ended == nil { $0.ended = "\(error)" } }
            }
            screen.withLock { if $0.ended == nil { $0.ended = "the recorder stopped" } }
        }

        let terminal = RawTerminal(console)
        defer { terminal.restore() }
        var selected = 0
        while true {
            // SIGINT or SIGTERM: quit as `q` does (the terminal restored by the defer above).
            if terminal.wasInterrupted { return }
            var snapshot = screen.withLock { $0 }
            if let ended = snapshot.ended {
                terminal.restore()
                console.print("roomtap watch: \(ended)")
                return
            }
            if snapshot.tracksStale {
                if let result = try? commands.request(.tracks) {
                    // Speakers first, the mixes (derived: mix, agent-hears) last, so the view opens on a
                    // speaker and a key press never starts on the mix.
                    let all = result["tracks"]?.arrayValue ?? []
                    snapshot.tracks =
                        all.filter { $0["kind"]?.stringValue != "mix" }
                        + all.filter { $0["kind"]?.stringValue == "mix" }
                    screen.withLock {
                        $0.tracks = snapshot.tracks
                        $0.tracksStale = false
                    }
                }
            }
            selected = max(0, min(selected, snapshot.tracks.count - 1))
            terminal.draw(render(snapshot, selected: selected))
            guard let key = terminal.readKey(timeoutMilliseconds: 100) else { continue }
            let name = snapshot.tracks.indices.contains(selected) ? snapshot.tracks[selected]["name"]?.stringValue : nil
            let current: JSONValue? = snapshot.tracks.indices.contains(selected) ? snapshot.tracks[selected] : nil
            var command: ControlCommand?
            switch key {
            case .quit: return
            case .up: selected -= 1
            case .down: selected += 1
            case .character("m"):
                if let name {
                    // What is heard only: a key never puts a speaker back on the record.
                    command =
                        current?["muted"]?.boolValue == true
                        ? .unmute(track: name, scope: .heard) : .mute(track: name, scope: .heard)
                }
            case .character("+"), .character("="), .character("-"):
                if let name {
                    let volume = current?["volume"]?.doubleValue ?? 1
                    let step = key == .character("-") ? 1 / 1.4125 : 1.4125  // 3 dB
                    let next = min(10, max(0, volume < 0.01 && step > 1 ? 0.1 : volume * step))
                    command = .volume(track: name, change: .set(Float((next * 1000).rounded() / 1000)), scope: nil)
                }
            case .character("0"):
                if let name { command = .volume(track: name, change: .set(1), scope: nil) }
            case .character("s"):
                if let name { command = .solo(tracks: [name]) }
            case .character("u"): command = .unsolo
            default: break
            }
            if let command {
                let message: String
                do {
                    _ = try commands.request(command)
                    message = "\(command.name.rawValue) \(name ?? "") ok"
                } catch { message = "\(error)" }
                screen.withLock {
                    $0.message = message
                    $0.tracksStale = true
                }
            }
        }
    }

    private static func render(_ s: Screen, selected: Int) -> [String] {
        var lines = [
            String(format: "roomtap watch   room time %.1f s", s.roomTime),
            "↑/↓ select  m mute  +/- volume 3 dB  0 unity  s solo  u unsolo  q quit", "",
        ]
        for (i, track) in s.tracks.enumerated() {
            let name = track["name"]?.stringValue ?? "?"
            let meter = s.levels[name] ?? (track["level_dbfs"]?.doubleValue, track["talking"]?.boolValue == true)
            let level = meter.level ?? -90
            let width = 30
            let filled = Int(((level + 60) / 60 * Double(width)).rounded()).clamped(0, width)
            let bar = String(repeating: "█", count: filled) + String(repeating: "·", count: width - filled)
            let muted = track["muted"]?.boolValue == true
            let flags = [
                meter.talking ? "talking" : "", muted ? "MUTED" : "",
                track["record_muted"]?.boolValue == true ? "OFF-RECORD" : "",
                track["solo"]?.boolValue == true ? "SOLO" : "",
                track["state"]?.stringValue == "left" ? "left" : "",
            ].filter { !$0.isEmpty }.joined(separator: " ")
            lines.append(
                (i == selected ? "> " : "  ") + name.padding(toLength: 14, withPad: " ", startingAt: 0) + " " + bar
                    + String(format: " %6.1f dB  vol ", level) + TracksTable.volumeText(track) + "  " + flags)
        }
        if s.tracks.isEmpty { lines.append("  (no tracks yet)") }
        lines.append("")
        lines.append(s.message)
        return lines
    }
}

extension Int {
    fileprivate func clamped(_ low: Int, _ high: Int) -> Int { Swift.max(low, Swift.min(high, self)) }
}

/// Holds a non-Sendable value handed to exactly one other thread.
private final class UncheckedBox<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}

/// The terminal in raw mode (no echo, key by key) for `watch`, with the alternate screen; restored
/// on `restore()` and at exit. SIGINT and SIGTERM only set ``wasInterrupted`` (the view's loop
/// looks at it at least every 100 ms and quits, restoring the terminal), never end the process
/// from the handler; their earlier dispositions come back on `restore()`. Keys are read from the
/// console's input; the console is the process's own terminal (descriptors 0 and 1), the only
/// place raw mode means anything. Thread: the view's; one at a time.
private final class RawTerminal {
    enum Key: Equatable {
        case up, down, quit
        case character(Character)
    }

    /// The terminal's settings before raw mode, in a heap allocation of `termios`'s full 60 bytes.
    /// Not a static stored `termios`: Swift 6.3.1 gives such a static 57 bytes of storage, so
    /// storing a whole one overwrites the next globals (`docs/swift-bugs/`; ASan's debug pass
    /// caught it here).
    nonisolated(unsafe) private static let saved: UnsafeMutablePointer<termios> = {
        let storage = UnsafeMutablePointer<termios>.allocate(capacity: 1)
        storage.initialize(to: termios())
        return storage
    }()
    nonisolated(unsafe) private static var active = false
    /// Set by the SIGINT/SIGTERM handler (async-signal-safe: a lock-free store).
    private static let interrupted = Atomic<Bool>(false)
    private let console: Console
    /// SIGINT's and SIGTERM's dispositions before the view, put back by `restore()`.
    private var previousHandlers: [(Int32, (@convention(c) (Int32) -> Void)?)] = []

    init(_ console: Console) {
        self.console = console
        tcgetattr(console.input, Self.saved)
        var raw = Self.saved.pointee
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
        tcsetattr(console.input, TCSANOW, &raw)
        Self.active = true
        Self.interrupted.store(false, ordering: .relaxed)
        _ = console.write("\u{1B}[?1049h\u{1B}[?25l")  // alternate screen, hide cursor
        atexit { RawTerminal.restoreTerminal() }
        for number in [SIGINT, SIGTERM] {
            let previous = signal(number) { _ in RawTerminal.interrupted.store(true, ordering: .relaxed) }
            previousHandlers.append((number, previous))
        }
    }

    /// True once SIGINT or SIGTERM arrived while the view ran.
    var wasInterrupted: Bool { Self.interrupted.load(ordering: .relaxed) }

    /// Leaves raw mode and the alternate screen, and gives SIGINT and SIGTERM back. Idempotent.
    func restore() {
        Self.restoreTerminal()
        for (number, handler) in previousHandlers { signal(number, handler) }
        previousHandlers = []
    }

    /// Also run at exit, so it touches only the terminal (descriptors 0 and 1).
    private static func restoreTerminal() {
        guard active else { return }
        active = false
        tcsetattr(STDIN_FILENO, TCSANOW, Self.saved)
        let text = "\u{1B}[?25h\u{1B}[?1049l"
        _ = text.withCString { write(STDOUT_FILENO, $0, strlen($0)) }
    }

    func draw(_ lines: [String]) {
        _ = console.write("\u{1B}[H" + lines.map { $0 + "\u{1B}[K" }.joined(separator: "\n") + "\u{1B}[J")
    }

    func readKey(timeoutMilliseconds: Int32) -> Key? {
        var fds = pollfd(fd: console.input, events: Int16(POLLIN), revents: 0)
        guard poll(&fds, 1, timeoutMilliseconds) > 0 else { return nil }
        // One key per call: keys typed (or pasted) faster than the screen redraws are each taken.
        var bytes = [UInt8](repeating: 0, count: 3)
        guard read(console.input, &bytes, 1) > 0 else { return .quit }
        var n = 1
        if bytes[0] == 0x1B {  // an arrow key: ESC [ A, its bytes already there
            var more = pollfd(fd: console.input, events: Int16(POLLIN), revents: 0)
            while n < 3, poll(&more, 1, 10) > 0, read(console.input, &bytes[n], 1) > 0 { n += 1 }
        }
        if n >= 3 && bytes[0] == 0x1B && bytes[1] == UInt8(ascii: "[") {
            switch bytes[2] {
            case UInt8(ascii: "A"): return .up
            case UInt8(ascii: "B"): return .down
            default: return nil
            }
        }
        switch bytes[0] {
        case UInt8(ascii: "q"), 0x03, 0x04: return .quit
        case UInt8(ascii: "k"): return .up
        case UInt8(ascii: "j"): return .down
        default: return .character(Character(UnicodeScalar(bytes[0])))
        }
    }
}
