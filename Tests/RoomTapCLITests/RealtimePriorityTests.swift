import Foundation
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
                "--realtime-priority", "--out", out.path, "--quiet",
            ], environment: ["ROOMTAP_CONTROL": uniqueControlPath()])
        var policy: Int?
        #expect(
            waitUntil(timeout: .seconds(20)) {
                policy = Self.schedulingPolicy(ofThreadNamed: "roomtap.clock", in: recorder.pid)
                return policy != nil
            }, "the clock thread shows up in /proc")
        let outcome = recorder.wait(timeout: 30)
        #expect(outcome.status == 0, "stderr: \(outcome.stderr)")
        let warnings = outcome.stderrLines.filter { $0.hasPrefix("roomtap: warning: --realtime-priority:") }
        if policy == 1 {
            // SCHED_FIFO in force; at most the memory-lock line.
            #expect(warnings.allSatisfy { $0.contains("memory is not locked") }, "\(outcome.stderr)")
        } else {
            #expect(policy == 0, "SCHED_OTHER when refused")
            #expect(warnings.count == 1 && warnings[0].contains("SCHED_FIFO is not permitted"), "\(outcome.stderr)")
        }
        #expect(try listing(out) == ["carol.wav", "room.json"])
    }

    /// The scheduling policy (0 SCHED_OTHER, 1 SCHED_FIFO) of the thread of process `pid` named
    /// `name` (field 41 of /proc/PID/task/TID/stat), nil while there is none.
    static func schedulingPolicy(ofThreadNamed name: String, in pid: Int32) -> Int? {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        for tid in tasks {
            let comm = (try? String(contentsOfFile: "/proc/\(pid)/task/\(tid)/comm", encoding: .utf8)) ?? ""
            guard comm.trimmingCharacters(in: .newlines) == name,
                let stat = try? String(contentsOfFile: "/proc/\(pid)/task/\(tid)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { continue }
            let fields = stat[stat.index(after: close)...].split(separator: " ")  // from field 3 on
            return fields.count > 38 ? Int(fields[38]) : nil
        }
        return nil
    }
}
