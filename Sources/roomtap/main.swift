import Foundation

// roomtap: the command-line tool. Exit status: 0 success, 1 failure, 64 usage error.
// Results go to stdout, diagnostics (one line each) to stderr.

let status = CommandDispatch.run(Array(CommandLine.arguments.dropFirst()))
exit(status)
