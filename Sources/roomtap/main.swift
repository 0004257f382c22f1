import CLinuxNet
import Foundation
import RoomTapRecorder

// roomtap: the command-line tool. Exit status: 0 success, 1 failure, 64 usage error.
// Results go to stdout, diagnostics (one line each) to stderr.

// A write to a stream whose reader went away fails with EPIPE instead of killing the process: a
// recorder must outlive the terminal or pipe that read its progress (see StandardStreams).
signal(SIGPIPE, SIG_IGN)
// The process's own streams, environment and signals: the context every command is given.
let context = CommandContext.standard
var status = CommandDispatch.run(Array(CommandLine.arguments.dropFirst()), context: context)
// As coreutils' close_stdout: output that never reached its file (a full disk, /dev/full) is a
// failure, not a success. A reader that went away (EPIPE: `roomtap jobs | head -1`) is not an
// error of ours: the status stands, as if SIGPIPE had ended the program.
let failure = roomtap_flush_stdout()
if failure != 0, failure != EPIPE {
    context.console.printError(
        "cannot write to standard output"
            + (failure > 0 ? ": \(String(cString: strerror(failure)))" : " (a write to it failed: a full disk?)"))
    if status == 0 { status = 1 }
}
exit(status)
