import Foundation

/// One child process, measured by what the kernel charged it: CPU (user + system), wall time and
/// peak resident set.
enum ChildRun {
    struct Measurement {
        let cpuSeconds: Double
        let wallSeconds: Double
        /// Peak resident set size (`ru_maxrss`), MiB.
        let peakRSSMiB: Double
    }

    /// A program next to this one (`roomtap`, `roomtap-minimal`).
    static func sibling(_ name: String) -> String {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(name).path
    }

    /// Runs `binary` under /usr/bin/time, whose report gives the peak RSS: a child spawned from
    /// this (large) process inherits its RSS in `ru_maxrss`, one started by `time` does not.
    static func measure(_ binary: String, _ arguments: [String]) throws -> Measurement {
        var pid: pid_t = 0
        let rssFile = "/dev/shm/roomtap-bench-rss-\(getpid())"
        defer { unlink(rssFile) }
        let command = ["/usr/bin/time", "-f", "%M", "-o", rssFile, binary] + arguments
        let argv = command.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let wallStart = Date()
        guard posix_spawn(&pid, command[0], nil, nil, argv, environ) == 0 else {
            throw NSError(domain: "bench", code: 1, userInfo: [NSLocalizedDescriptionKey: "cannot start \(binary)"])
        }
        var status: Int32 = 0
        var usage = rusage()
        wait4(pid, &status, 0, &usage)
        let wall = Date().timeIntervalSince(wallStart)
        guard status == 0 else {
            throw NSError(
                domain: "bench", code: 1,
                userInfo: [NSLocalizedDescriptionKey: "\(binary) \(arguments.prefix(3)) failed (\(status))"])
        }
        let cpu = seconds(usage.ru_utime) + seconds(usage.ru_stime)
        let kib = (try? String(contentsOfFile: rssFile, encoding: .utf8))?.split(separator: "\n").last
            .flatMap { Double($0.trimmingCharacters(in: .whitespaces)) }
        return Measurement(cpuSeconds: cpu, wallSeconds: wall, peakRSSMiB: (kib ?? Double(usage.ru_maxrss)) / 1024)
    }

    private static func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
}
