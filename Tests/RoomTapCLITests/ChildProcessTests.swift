import Foundation
import RoomTapCLITestSupport
import RoomTapSync
import RoomTapTestSupport
import Testing

/// The runner every CLI test stands on, with children started side by side from several threads
/// as parallel tests do. Once, three unrelated tests each failed after exactly 121 s: a pipe made
/// by one test leaked into a long-running child another test was spawning, so a recorder never
/// saw the end of its standard input (or a reader never saw the end of the output) until the
/// 120 s timeout. With Foundation's plain `Pipe()` and `Process.run()` this test's `cat`s stalled
/// 3 times in 600 on this machine; through ``ChildProcesses`` never.
@Suite struct ChildProcessTests {
    @Test func childrenStartedSideBySideNeverHoldEachOthersPipes() throws {
        let sleepers = Locked<[Process]>([])
        let failures = Locked<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            for round in 0..<150 {
                do {
                    // A long-running child: it would keep any pipe made while it was spawned.
                    let sleeper = Process()
                    sleeper.executableURL = URL(fileURLWithPath: "/bin/sleep")
                    sleeper.arguments = ["120"]
                    sleeper.standardOutput = FileHandle.nullDevice
                    sleeper.standardError = FileHandle.nullDevice
                    try ChildProcesses.run(sleeper)
                    sleepers.withLock { $0.append(sleeper) }
                    let input = ChildProcesses.pipe()
                    let cat = try CLIRunner.start(
                        [], executable: URL(fileURLWithPath: "/bin/cat"), standardInput: input)
                    let line = "\(worker).\(round)\n"
                    try input.fileHandleForWriting.write(contentsOf: Data(line.utf8))
                    try input.fileHandleForWriting.close()
                    // cat ends when its input ends; its output ends when it does.
                    let outcome = cat.wait(timeout: 30)
                    if outcome.status != 0 || outcome.stdout != line || !outcome.stderr.isEmpty {
                        failures.withLock {
                            $0.append("\(line.dropLast()): status \(outcome.status), stderr \(outcome.stderr)")
                        }
                    }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
        }
        for sleeper in sleepers.withLock({ $0 }) {
            kill(sleeper.processIdentifier, SIGKILL)
            sleeper.waitUntilExit()
        }
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")
    }
}
