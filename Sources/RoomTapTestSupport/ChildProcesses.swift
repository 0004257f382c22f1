public import Foundation
import RoomTapSync

/// Pipes and child processes for tests that run side by side, such that no child ever holds a
/// descriptor it was not given.
///
/// Foundation's `Pipe()` makes descriptors without `O_CLOEXEC`, and on Linux `Process.run()`
/// closes in the child only the descriptors that were open when it listed `/proc/self/fd`: a pipe
/// another thread makes between that listing and the spawn is inherited by the child. A
/// long-running child (a recorder, a sender) holding the write end of another test's output pipe
/// keeps that test's reader from ever seeing end-of-file; one holding the write end of another
/// recorder's standard input keeps that recorder waiting for input that never ends. Both stall
/// until the runner's timeout (once: three unrelated tests failed after exactly 121 s).
///
/// Here every pipe is close-on-exec from the moment it exists, and pipes are made and children
/// spawned under one lock, so a pipe cannot appear between a spawn's listing and its `exec`.
/// Every pipe a test gives a child and every `Process.run()` goes through here.
///
/// Thread: any; ``run(_:)`` serialises spawns (each takes well under a millisecond).
public enum ChildProcesses {
    private static let lock = Locked(())

    /// A new pipe whose two ends are close-on-exec (the child's copy made by `Process` for its
    /// standard input or output is not: `dup2` clears the flag).
    public static func pipe() -> Pipe {
        lock.withLock { _ in
            let pipe = Pipe()
            for fd in [pipe.fileHandleForReading.fileDescriptor, pipe.fileHandleForWriting.fileDescriptor] {
                _ = fcntl(fd, F_SETFD, fcntl(fd, F_GETFD) | FD_CLOEXEC)
            }
            return pipe
        }
    }

    /// Starts `process` (as `process.run()`), never while ``pipe()`` makes a pipe.
    public static func run(_ process: Process) throws {
        try lock.withLock { _ in try process.run() }
    }
}
