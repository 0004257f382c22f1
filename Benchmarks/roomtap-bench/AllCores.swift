import Foundation

/// `roomtap record` on every core against the smallest one-thread program for the same job
/// (`roomtap-minimal`: libogg + opus_decode on one room clock, the same WAVs with write(2)), both
/// writing to tmpfs: wall-clock speedup, CPU ratio and peak RSS for 8 and 64 one-minute speakers,
/// and how roomtap's wall time scales with `--threads`. As a control, the minimal program is also
/// run split over the cores (one process per core, the speakers dealt out, all at once): what this
/// machine charges in CPU for using its cores at the same time (shared caches, memory bandwidth, a
/// VM's host), a cost roomtap on every core pays too.
enum AllCores {
    static let outputs = "/dev/shm/roomtap-bench"

    struct Row {
        let minimal: ChildRun.Measurement
        let roomtap: ChildRun.Measurement
        /// The minimal program split into one process per core, run at once (CPU summed).
        let split: ChildRun.Measurement?
    }

    /// Best of `repeats` of each (by wall time; CPU and RSS are their own minima), run alternately
    /// so a noisy stretch of the machine hits both.
    static func measure(files: [String], threads: Int?, repeats: Int, splitOver cores: Int = 1) throws -> Row {
        try FileManager.default.createDirectory(atPath: outputs, withIntermediateDirectories: true)
        let program = ChildRun.sibling("roomtap-minimal")
        var minimal: [ChildRun.Measurement] = []
        var roomtap: [ChildRun.Measurement] = []
        var split: [ChildRun.Measurement] = []
        for _ in 0..<repeats {
            let dir = "\(outputs)/minimal-\(files.count)"
            try? FileManager.default.removeItem(atPath: dir)
            minimal.append(try ChildRun.measure(program, [dir] + files))
            roomtap.append(
                try RecorderRun.measure(
                    files: files, mix: false, threads: threads, directory: "\(outputs)/roomtap-\(files.count)"))
            if cores > 1 {
                // One shell starts the processes and waits for them all: its children's CPU is theirs.
                let parts = (0..<cores).map { c -> String in
                    let share = stride(from: c, to: files.count, by: cores).map { files[$0] }
                    return ([program, "\(outputs)/split-\(files.count)-\(c)"] + share).joined(separator: " ") + " &"
                }
                let dirs = (0..<cores).map { "\(outputs)/split-\(files.count)-\($0)" }
                for dir in dirs { try? FileManager.default.removeItem(atPath: dir) }
                split.append(try ChildRun.measure("/bin/sh", ["-c", (parts + ["wait"]).joined(separator: " ")]))
            }
        }
        try? FileManager.default.removeItem(atPath: outputs)
        return Row(minimal: best(minimal), roomtap: best(roomtap), split: split.isEmpty ? nil : best(split))
    }

    static func best(_ runs: [ChildRun.Measurement]) -> ChildRun.Measurement {
        ChildRun.Measurement(
            cpuSeconds: runs.map(\.cpuSeconds).min()!, wallSeconds: runs.map(\.wallSeconds).min()!,
            peakRSSMiB: runs.map(\.peakRSSMiB).min()!)
    }

    static func report(files: [String], repeats: Int) throws {
        let cores = ProcessInfo.processInfo.activeProcessorCount
        print("\nroomtap record on every core (\(cores) here) vs roomtap-minimal (one thread), outputs on tmpfs,")
        print("best of \(repeats), alternating; load average before: \(loadAverage())")
        var rows: [[String]] = [
            [
                "room", "minimal wall", "roomtap wall", "speedup", "minimal CPU", "roomtap CPU", "CPU ratio",
                "split CPU", "split ratio", "RSS min", "RSS roomtap",
            ]
        ]
        for speakers in [8, 64] {
            let room = (0..<speakers).map { files[$0 % files.count] }
            let row = try measure(files: room, threads: nil, repeats: repeats, splitOver: min(cores, speakers))
            let split = row.split ?? row.minimal
            rows.append([
                "\(speakers) speakers", f(row.minimal.wallSeconds), f(row.roomtap.wallSeconds),
                String(format: "%.2f", row.minimal.wallSeconds / row.roomtap.wallSeconds),
                f(row.minimal.cpuSeconds), f(row.roomtap.cpuSeconds),
                String(format: "%.3f", row.minimal.cpuSeconds / row.roomtap.cpuSeconds),
                f(split.cpuSeconds), String(format: "%.3f", row.minimal.cpuSeconds / split.cpuSeconds),
                String(format: "%.0f MiB", row.minimal.peakRSSMiB), String(format: "%.0f MiB", row.roomtap.peakRSSMiB),
            ])
        }
        printTable(rows)
        print(
            "speedup = minimal wall / roomtap wall (target >= 1.6 on 2 cores, >= 0.8 x cores); "
                + "CPU ratio = minimal CPU / roomtap CPU (target >= 0.95); split = the minimal program as one "
                + "process per core at once (split ratio = minimal CPU / split CPU: the machine's own cost of "
                + "using every core)")

        print("\nscaling, 64 speakers (roomtap record --threads N):")
        var scaling: [[String]] = [["threads", "wall", "CPU", "speedup vs minimal", "CPU ratio", "RSS"]]
        let room = (0..<64).map { files[$0 % files.count] }
        for threads in [1, 2, 4, 8] where threads == 1 || threads <= cores {
            let row = try measure(files: room, threads: threads, repeats: repeats)
            scaling.append([
                "\(threads)", f(row.roomtap.wallSeconds), f(row.roomtap.cpuSeconds),
                String(format: "%.2f", row.minimal.wallSeconds / row.roomtap.wallSeconds),
                String(format: "%.3f", row.minimal.cpuSeconds / row.roomtap.cpuSeconds),
                String(format: "%.0f MiB", row.roomtap.peakRSSMiB),
            ])
        }
        printTable(scaling)
        print("load average after: \(loadAverage())")
    }

    private static func f(_ seconds: Double) -> String { String(format: "%.3f s", seconds) }

    static func loadAverage() -> String {
        (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?.split(separator: " ").prefix(3)
            .joined(separator: " ") ?? "?"
    }

    static func printTable(_ rows: [[String]]) {
        let widths = rows[0].indices.map { c in rows.map { $0[c].count }.max()! }
        for row in rows {
            print(
                row.enumerated().map { $1.padding(toLength: widths[$0], withPad: " ", startingAt: 0) }.joined(
                    separator: "  "))
        }
    }
}
