import Foundation
import RoomTapSync

/// The standard streams of one command's run: where its results (stdout) and diagnostics (stderr)
/// go, and the descriptor its standard input is read from. Handed down explicitly from
/// ``CommandDispatch/run(_:context:)`` (in ``CommandContext``); nothing in the library writes to
/// the process's streams any other way.
///
/// ``standard`` is the process's own streams, as `roomtap` has them; ``capturing(input:)`` keeps
/// what a command wrote in memory, so a test can run commands in its own process, side by side.
/// A value; every method may be called from any thread (the room's threads warn through it).
package struct Console: Sendable {
    /// Standard input's descriptor (`--file NAME=-`, `watch`'s keys). Not owned: never closed here.
    package let input: Int32
    /// True when standard input is a terminal (`--file NAME=-` refuses one).
    package let inputIsTerminal: Bool
    /// True when standard output and standard input are both the terminal the user types at, so
    /// `watch` may draw in place and read keys (raw mode on `input`, drawing on the process's
    /// stdout); false for a captured console.
    package let isInteractive: Bool
    /// True when standard error is a terminal: the progress line is redrawn in place.
    package let errorIsTerminal: Bool

    /// Appends to standard output as `print` does (buffered: a failure is seen when stdout is
    /// flushed, as `main.swift` does at the end).
    private let printOut: @Sendable (String) -> Void
    /// Writes to standard output now; false when the write failed (a full disk, a closed pipe).
    private let writeOut: @Sendable (String) -> Bool
    /// Writes to standard error; a failed write is dropped.
    private let writeError: @Sendable (String) -> Void

    /// The process's standard streams (descriptors 0, 1 and 2), the terminal flags read once now.
    /// Results are `print`ed through stdio as before (so `main.swift`'s flush sees a failed write);
    /// ``output(_:)`` and stderr go straight to write(2) (``StandardStreams``).
    package static var standard: Console {
        Console(
            input: STDIN_FILENO, inputIsTerminal: isatty(STDIN_FILENO) == 1,
            isInteractive: isatty(STDIN_FILENO) == 1 && isatty(STDOUT_FILENO) == 1,
            errorIsTerminal: isatty(STDERR_FILENO) == 1,
            printOut: { Swift.print($0, terminator: "") },
            writeOut: { StandardStreams.write($0, to: STDOUT_FILENO) },
            writeError: { StandardStreams.error($0) })
    }

    /// A console that keeps what is written to it (never a terminal), with `input` as standard
    /// input (a descriptor the caller owns: /dev/null, or a pipe the test writes).
    package static func capturing(input: Int32) -> (console: Console, captured: CapturedOutput) {
        let captured = CapturedOutput()
        let console = Console(
            input: input, inputIsTerminal: false, isInteractive: false, errorIsTerminal: false,
            printOut: { captured.append($0, toOutput: true) },
            writeOut: { text in
                captured.append(text, toOutput: true)
                return true
            },
            writeError: { captured.append($0, toOutput: false) })
        return (console, captured)
    }

    /// `text` and `terminator` to standard output, as Swift's `print` (a failure shows at the
    /// final flush of stdout, not here).
    package func print(_ text: String, terminator: String = "\n") { printOut(text + terminator) }

    /// `text` to standard output now; a failed write (a full disk, a closed pipe) throws, so the
    /// command exits 1.
    func output(_ text: String) throws {
        guard writeOut(text) else {
            throw RuntimeError(description: "cannot write to standard output: \(String(cString: strerror(errno)))")
        }
    }

    /// `text` to standard output now, unbuffered; false when stdout is gone (`watch` stops then).
    func write(_ text: String) -> Bool { writeOut(text) }

    /// `text` to standard error as it is (no prefix, no line end added); dropped if stderr is gone.
    func error(_ text: String) { writeError(text) }

    /// One line on stderr, prefixed "roomtap: error: " (line breaks in `message` become spaces).
    package func printError(_ message: String) {
        let oneLine = message.replacingOccurrences(of: "\n", with: " ")
        writeError("roomtap: error: \(oneLine)\n")
    }

    /// One line on stderr, prefixed "roomtap: warning: ".
    func printWarning(_ message: String) { writeError("roomtap: warning: \(message)\n") }
}

/// What a ``Console/capturing(input:)`` console was given: standard output and standard error,
/// each in the order written. Thread: any (writes from the room's threads and reads by the test
/// are under one lock).
package final class CapturedOutput: Sendable {
    private let streams = Locked((output: "", error: ""))

    /// Everything written to standard output so far.
    package var output: String { streams.withLock { $0.output } }
    /// Everything written to standard error so far.
    package var error: String { streams.withLock { $0.error } }

    fileprivate func append(_ text: String, toOutput: Bool) {
        streams.withLock { if toOutput { $0.output += text } else { $0.error += text } }
    }
}

/// What one command's run is given besides its arguments: its console, its environment, and
/// whether it may take the process's SIGINT/SIGTERM. The process-wide state a command used to
/// read for itself, made explicit so commands can run in a test's process, several at once.
///
/// The working directory is not in it: a relative path is opened against the process's, so a
/// caller running commands in its own process (tests, side by side) gives absolute paths.
/// A value; read it from any thread.
package struct CommandContext: Sendable {
    /// Where results and diagnostics go, and standard input.
    package var console: Console
    /// The environment the command reads (`OPENAI_API_KEY`, `ROOMTAP_CONTROL`, S3 credentials...).
    package var environment: [String: String]
    /// True when a live room stops on SIGINT/SIGTERM (it then sets both to be ignored by the
    /// process and takes them through a dispatch source); false in a process that is not a
    /// recorder's own (a test's), which keeps its signals and stops rooms otherwise
    /// (`--duration`, the control socket's `stop`).
    package var handlesStopSignals: Bool

    package init(console: Console, environment: [String: String], handlesStopSignals: Bool) {
        self.console = console
        self.environment = environment
        self.handlesStopSignals = handlesStopSignals
    }

    /// The `roomtap` process's own: its standard streams, its environment, and its signals.
    package static var standard: CommandContext {
        CommandContext(console: .standard, environment: ProcessInfo.processInfo.environment, handlesStopSignals: true)
    }
}
