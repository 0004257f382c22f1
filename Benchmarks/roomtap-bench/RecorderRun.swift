import Foundation

/// One `roomtap record` process over a room, measured by the CPU time the kernel charged it.
enum RecorderRun {
    struct Measurement {
        let cpuSeconds: Double
        let wallSeconds: Double
    }

    static func measure(files: [String], mix: Bool) throws -> Measurement {
        let out = "\(BenchFiles.directory)/out-\(files.count)\(mix ? "-mix" : "")"
        var arguments = ["record", "--out", out, "--force", "--quiet"]
        for (i, file) in files.enumerated() { arguments += ["--file", "s\(i)=\(file)"] }
        if mix { arguments.append("--mix") }
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("roomtap").path
        var pid: pid_t = 0
        let argv = ([binary] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let wallStart = Date()
        guard posix_spawn(&pid, binary, nil, nil, argv, environ) == 0 else {
            throw NSError(domain: "bench", code: 1, userInfo: [NSLocalizedDescriptionKey: "cannot start \(binary)"])
        }
        var status: Int32 = 0
        var usage = rusage()
        wait4(pid, &status, 0, &usage)
        let wall = Date().timeIntervalSince(wallStart)
        guard status == 0 else {
            throw NSError(
                domain: "bench", code: 1, userInfo: [NSLocalizedDescriptionKey: "roomtap record failed (\(status))"])
        }
        let cpu = seconds(usage.ru_utime) + seconds(usage.ru_stime)
        return Measurement(cpuSeconds: cpu, wallSeconds: wall)
    }

    private static func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
}
