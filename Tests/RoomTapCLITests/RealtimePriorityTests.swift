import Foundation
import RoomTapCLITestSupport
import RoomTapTestSupport
import Testing

/// `--realtime-priority`: the room clock runs under SCHED_FIFO when the process may have it, and
/// roomtap says so in one line when it may not; the recording is the same either way.
@Suite("CLI: --realtime-priority")
struct RealtimePriorityTests {
    @Test func theClockRunsUnderSCHEDFIFOOrOneLineSaysWhyNot() throws {
        let out = try temporaryDirectory()
        let recorder = try CLIRunner.start(
            [
                "record", "--file", "carol=\(sample("carol"))", "--realtime", "--duration", "2",
                "--listen", "127.0.0.1:\(try freeUDPPort())", "--realtime-priority", "12", "--out", out.path,
                "--quiet",
            ], environment: ["ROOMTAP_CONTROL": uniqueControlPath()])
        var scheduling: (policy: Int, priority: Int)?
        var receive: (policy: Int, priority: Int)?
        #expect(
            waitUntil(timeout: .seconds(20)) {
                scheduling = Self.scheduling(ofThreadNamed: "roomtap.clock", in: recorder.pid)
                receive = Self.scheduling(ofThreadNamed: "roomtap.rx", in: recorder.pid)
                // The receive thread is named before it sets its own policy: when the clock has
                // SCHED_FIFO, wait for the receive thread to have it too.
                guard let clock = scheduling, let rx = receive else { return false }
                return clock.policy == 0 || rx.policy == 1
            }, "the clock and receive threads show up in /proc")
        let policy = scheduling?.policy
        let outcome = recorder.wait(timeout: 30)
        #expect(outcome.status == 0, "stderr: \(outcome.stderr)")
        let warnings = outcome.stderrLines.filter { $0.hasPrefix("roomtap: warning: --realtime-priority:") }
        if policy == 1 {
            // SCHED_FIFO at the priority asked for, the receive thread one below; at most the
            // memory-lock line.
            #expect(scheduling?.priority == 12)
            #expect(receive?.policy == 1 && receive?.priority == 11, "roomtap.rx: \(String(describing: receive))")
            #expect(warnings.allSatisfy { $0.contains("memory is not locked") }, "\(outcome.stderr)")
        } else {
            #expect(policy == 0, "SCHED_OTHER when refused")
            #expect(warnings.count == 1 && warnings[0].contains("SCHED_FIFO is not permitted"), "\(outcome.stderr)")
        }
        #expect(try listing(out) == ["carol.wav", "room.json"])
    }

    @Test(arguments: ["0", "100", "high", "-3"])
    func aPriorityOutsideOneToNinetyNineIsAUsageError(value: String) throws {
        let out = try temporaryDirectory()
        let outcome = try roomtap(
            ["record", "--listen", "127.0.0.1:9", "--realtime-priority=\(value)", "--out", out.path], expect: 64)
        #expect(outcome.stderrLines.count == 1, "\(outcome.stderr)")
        let message = "--realtime-priority must be a SCHED_FIFO priority from 1 to 99, not '\(value)'"
        #expect(outcome.stderr.contains(message), "\(outcome.stderr)")
        #expect(try listing(out).isEmpty, "nothing created")
    }

    /// The scheduling policy (0 SCHED_OTHER, 1 SCHED_FIFO) and real-time priority of the thread of
    /// process `pid` named `name` (fields 41 and 40 of /proc/PID/task/TID/stat), nil while there
    /// is none.
    static func scheduling(ofThreadNamed name: String, in pid: Int32) -> (policy: Int, priority: Int)? {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        for tid in tasks {
            let comm = (try? String(contentsOfFile: "/proc/\(pid)/task/\(tid)/comm", encoding: .utf8)) ?? ""
            guard comm.trimmingCharacters(in: .newlines) == name,
                let stat = try? String(contentsOfFile: "/proc/\(pid)/task/\(tid)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { continue }
            let fields = stat[stat.index(after: close)...].split(separator: " ")  // from field 3 on
            guard fields.count > 38, let policy = Int(fields[38]), let priority = Int(fields[37]) else { return nil }
            return (policy, priority)
        }
        return nil
    }
}
