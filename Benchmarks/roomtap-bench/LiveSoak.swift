import Foundation
import RoomTapAll
import RoomTapRTPTestSupport
import RoomTapSync
import RoomTapTestSupport
import Synchronization

/// The long live run of `make soak`: `senders` synthetic speakers at real time through a seeded
/// bad network (loss, reordering, duplicates) into one `roomtap record --listen` for `seconds`,
/// sampling the recorder's RSS, open descriptors and threads every 10 s. It passes when, after the
/// first minute, RSS grows less than 1 MiB per hour (least-squares slope), descriptors and threads
/// do not grow (the least in the last quarter of the run is no more than the most in its first
/// quarter: a leak raises the floor; room.json is rewritten every 10 s on a dispatch worker, which
/// comes and goes with its temporary file, so a sample may catch one more of each and a peak
/// proves nothing), every file has the room's exact length,
/// and the recorder has no more late ticks than the machine gives a thread doing nothing at the
/// same priority at the same time (``LatencyProbe``; at most twice its count plus 10): on this VM
/// the host's steal time alone makes such a thread more than 5 ms late a few hundred times an hour,
/// so "0 late ticks" is a property of the machine, not of the recorder.
/// The recorder runs with `--realtime-priority 20` and the sender under SCHED_FIFO 20 too when the
/// machine permits (each says in one line when it does not), so other work on the machine (a
/// build, a test run whose live rooms use priority 10) does not make ticks late; that is the
/// setting a long unattended recording should use.
enum LiveSoak {
    struct Sample {
        let seconds: Double
        let rssKiB: Int
        let fds: Int
        let threads: Int
    }

    struct Outcome {
        let samples: [Sample]
        let slopeKiBPerHour: Double
        let lateTicks: Int
        let worstLatenessMs: Double
        /// The machine's own: a thread at the recorder's priority doing nothing, at the same time.
        let probe: LatencyProbe.Figures
        let tracks: Int
        let exactFiles: Int
        let fdRange: ClosedRange<Int>
        let threadRange: ClosedRange<Int>
        /// The most descriptors and threads in the first and in the last quarter of the samples.
        /// The most in the first quarter of the samples, and the least in the last quarter.
        let fdPeaks: (first: Int, lastFloor: Int)
        let threadPeaks: (first: Int, lastFloor: Int)
        let exitStatus: Int32
        let senders: Int
        var passed: Bool {
            exitStatus == 0 && lateTicks >= 0 && lateTicks <= 2 * probe.late + 10 && tracks == senders
                && exactFiles == senders
                && abs(slopeKiBPerHour) < 1024 && fdPeaks.lastFloor <= fdPeaks.first
                && threadPeaks.lastFloor <= threadPeaks.first
        }

        var report: String {
            let mib = { (kib: Int?) in String(format: "%.1f", Double(kib ?? 0) / 1024) }
            return (passed ? "pass" : "FAIL")
                + ": \(senders) speakers, \(Int(samples.last?.seconds ?? 0)) s, \(samples.count) samples: RSS "
                + "\(mib(samples.first?.rssKiB)) → \(mib(samples.last?.rssKiB)) MiB, slope after the first minute "
                + "\(Int(slopeKiBPerHour)) KiB/hour; late ticks \(lateTicks) (worst "
                + String(format: "%.1f", worstLatenessMs) + " ms) against the machine's \(probe.late) late of "
                + "\(probe.wakeUps) wake-ups (worst " + String(format: "%.1f", probe.worstMs) + " ms; steal "
                + String(format: "%.1f", probe.stealSeconds) + " s); files exact \(exactFiles)/\(tracks); "
                + "fds \(fdRange.lowerBound)-\(fdRange.upperBound) (most in the first quarter \(fdPeaks.first), "
                + "least in the last \(fdPeaks.lastFloor)); threads \(threadRange.lowerBound)-\(threadRange.upperBound) "
                + "(\(threadPeaks.first), \(threadPeaks.lastFloor)); exit \(exitStatus)"
        }
    }

    /// The SCHED_FIFO priority of the recorder and the sender: above the default 10 that the test
    /// suites' live rooms use, so a soak beside a test run measures the recorder, not the tests.
    static let priority: Int32 = 20

    static func run(senders: Int, seconds: Double) throws -> Outcome {
        let out = "\(BenchFiles.directory)/soak-live-\(senders)"
        let port = try freeUDPPort()
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("roomtap").path
        let arguments = [
            binary, "record", "--listen", "127.0.0.1:\(port)", "--max-tracks", "\(senders)",
            "--duration", "\(seconds + 1)", "--out", out, "--force", "--quiet", "--realtime-priority", "\(priority)",
        ]
        try? FileManager.default.removeItem(atPath: out)
        var pid: pid_t = 0
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = ProcessInfo.processInfo.environment.map { strdup("\($0)=\($1)") } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        guard posix_spawn(&pid, binary, nil, nil, argv, envp) == 0 else {
            throw NSError(domain: "soak", code: 1, userInfo: [NSLocalizedDescriptionKey: "cannot start \(binary)"])
        }
        usleep(500_000)
        let child = pid
        let samples = Locked<[Sample]>([])
        let sampling = Atomic<Bool>(true)
        let started = Date()
        let sampler = Thread {
            while sampling.load(ordering: .relaxed) {
                let sample = Sample(
                    seconds: Date().timeIntervalSince(started), rssKiB: statusField(child, "VmRSS:"),
                    fds: (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(child)/fd").count) ?? 0,
                    threads: statusField(child, "Threads:"))
                if sample.threads > 0 { samples.withLock { $0.append(sample) } }
                for _ in 0..<100 where sampling.load(ordering: .relaxed) { usleep(100_000) }
            }
        }
        sampler.start()
        let probe = LatencyProbe(priority: priority)
        send(senders: senders, seconds: seconds, port: port)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        let machine = probe.stop()
        sampling.store(false, ordering: .relaxed)
        let data = FileManager.default.contents(atPath: out + "/room.json") ?? Data()
        let json = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
        let tracks = json["tracks"] as? [[String: Any]] ?? []
        let duration = json["durationSamples"] as? Int ?? -1
        let network = json["network"] as? [String: Any] ?? [:]
        let exact = tracks.filter { track in
            guard let file = track["file"] as? String, (track["samplesWritten"] as? Int) == duration else {
                return false
            }
            let size = (try? FileManager.default.attributesOfItem(atPath: out + "/" + file)[.size] as? Int) ?? 0
            return size >= duration * 2 && size < duration * 2 + 4096  // the samples plus the headers
        }.count
        let all = samples.withLock { $0 }
        let steady = all.filter { $0.seconds >= 60 }
        let used = steady.count >= 2 ? steady : all
        let result = Outcome(
            samples: all, slopeKiBPerHour: slope(used.map { ($0.seconds, Double($0.rssKiB)) }) * 3600,
            lateTicks: network["lateTicks"] as? Int ?? -1,
            worstLatenessMs: (network["maxTickLatenessMs"] as? NSNumber)?.doubleValue ?? -1, probe: machine,
            tracks: tracks.count, exactFiles: exact,
            fdRange: (used.map(\.fds).min() ?? 0)...(used.map(\.fds).max() ?? 0),
            threadRange: (used.map(\.threads).min() ?? 0)...(used.map(\.threads).max() ?? 0),
            fdPeaks: peaks(used.map(\.fds)), threadPeaks: peaks(used.map(\.threads)),
            exitStatus: (status >> 8) & 0xFF, senders: senders)
        if result.passed { try? FileManager.default.removeItem(atPath: out) }  // kept to look into
        return result
    }

    /// The largest value in the first quarter of `values` and the smallest in the last.
    static func peaks(_ values: [Int]) -> (first: Int, lastFloor: Int) {
        let quarter = max(1, values.count / 4)
        return (values.prefix(quarter).max() ?? 0, values.suffix(quarter).min() ?? 0)
    }

    /// A numeric field of /proc/PID/status (kB for VmRSS), 0 once the process is gone.
    static func statusField(_ pid: pid_t, _ name: String) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return 0 }
        let line = status.split(separator: "\n").first { $0.hasPrefix(name) }
        return line.flatMap {
            Int($0.dropFirst(name.count).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "")
        }
            ?? 0
    }

    /// Least-squares slope of y over x.
    static func slope(_ points: [(Double, Double)]) -> Double {
        guard points.count >= 2 else { return 0 }
        let n = Double(points.count)
        let mx = points.map(\.0).reduce(0, +) / n
        let my = points.map(\.1).reduce(0, +) / n
        let sxy = points.map { ($0.0 - mx) * ($0.1 - my) }.reduce(0, +)
        let sxx = points.map { ($0.0 - mx) * ($0.0 - mx) }.reduce(0, +)
        return sxx > 0 ? sxy / sxx : 0
    }

    /// Sends `senders` streams at real time (absolute deadlines, 20 ms packets) with a seeded
    /// impaired network: 2 % of packets lost, 2 % sent after the next one, 1 % sent twice.
    static func send(senders: Int, seconds: Double, port: UInt16) {
        if let reason = RealtimeScheduling.unavailableReason(priority: priority) {
            FileHandle.standardError.write(Data("soak sender: \(reason); sending at normal priority\n".utf8))
        } else {
            RealtimeScheduling.applyToCurrentThread(priority: priority)
        }
        let payloads = LiveCapacity.packets()
        let socket = DatagramSocket(ListenAddress(host: "127.0.0.1", port: port))
        let count = Int(seconds * 50)
        var rng = SplitMix64(seed: 2026)
        var held: [[UInt8]?] = Array(repeating: nil, count: senders)
        var start = timespec()
        clock_gettime(CLOCK_MONOTONIC, &start)
        for k in 0..<count {
            var deadline = start
            let ns = Int(start.tv_nsec) + k * 20_000_000
            deadline.tv_sec += ns / 1_000_000_000
            deadline.tv_nsec = ns % 1_000_000_000
            clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, nil)
            for s in 0..<senders {
                let packet = RTPPacketBuilder(
                    payloadType: 111, sequenceNumber: UInt16(truncatingIfNeeded: k), timestamp: UInt32(k * 960),
                    ssrc: UInt32(0x5000 + s), payload: payloads[(k + s) % payloads.count]
                ).bytes()
                let roll = Double(rng.next() % 10_000) / 10_000
                if roll < 0.02 && k > 0 && k < count - 1 {
                    continue  // lost
                } else if roll < 0.04 && k < count - 1 {
                    held[s] = packet  // reordered: goes after the next one
                    continue
                }
                socket.send(packet)
                if roll < 0.05 { socket.send(packet) }  // duplicated
                if let late = held[s] {
                    socket.send(late)
                    held[s] = nil
                }
            }
        }
    }
}
