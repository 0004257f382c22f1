import Foundation

// roomtap: the command-line tool. Exit status: 0 success, 1 failure, 64 usage error.
// Results go to stdout, diagnostics (one line each) to stderr.

// A write to a stream whose reader went away fails with EPIPE instead of killing the process: a
// recorder must outlive the terminal or pipe that read its progress (see StandardStreams).
signal(SIGPIPE, SIG_IGN)
let status = CommandDispatch.run(Array(CommandLine.arguments.dropFirst()))
exit(status)
