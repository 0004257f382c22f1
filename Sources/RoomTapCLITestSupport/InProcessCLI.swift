import Foundation
import RoomTapRecorder

/// Runs roomtap command lines in the test's own process, through the same door as the `roomtap`
/// executable (``CommandDispatch``), and captures what they printed: ``CLIRunner``'s `Outcome`
/// without a process, so most CLI tests cost no fork, exec and start-up.
///
/// What a run gets instead of the process's state:
/// - a console of its own (stdout and stderr captured; standard input /dev/null, never a terminal);
/// - an environment of its own: this process's, a control socket of its own
///   (`ROOMTAP_CONTROL`, as ``CLIRunner`` gives each child), then `environment`;
/// - no signals: SIGINT/SIGTERM are left to the test process (a live room ends by `--duration`
///   or the control socket's `stop`).
///
/// There is no working directory of its own: a relative path is taken from the test process's,
/// shared by every test running beside it, so give absolute paths (tests that run in a
/// directory, `in:`, stay on ``CLIRunner``). What only a process shows stays on the binary too:
/// its exit status as such, signals, the final flush of stdout, children, stdin pipes.
///
/// Thread: any; runs may go on side by side. Each blocks its caller until the command is done
/// (no timeout: nothing can be killed in-process).
public enum InProcessCLI {
    /// Runs `roomtap arguments...` here and returns its exit status (0, 1 or 64) and output.
    public static func run(_ arguments: [String], environment: [String: String] = [:]) -> CLIRunner.Outcome {
        var env = ProcessInfo.processInfo.environment
        env["ROOMTAP_CONTROL"] = uniqueControlPath()
        for (key, value) in environment { env[key] = value }
        let input = open("/dev/null", O_RDONLY | O_CLOEXEC)
        defer { if input >= 0 { close(input) } }
        let (console, captured) = Console.capturing(input: input)
        let status = CommandDispatch.run(
            arguments, context: CommandContext(console: console, environment: env, handlesStopSignals: false))
        return CLIRunner.Outcome(status: status, stdout: captured.output, stderr: captured.error)
    }
}
