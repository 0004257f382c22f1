import Foundation
import RoomTapAll
import RoomTapMediaTestSupport
import RoomTapRTPTestSupport
import RoomTapTestSupport
import Synchronization

/// The live capacity run: N synthetic senders at real time (20 ms Opus packets, distinct SSRCs,
/// on one UDP port or one port each) into one `roomtap record --listen` writing N WAVs,
/// recording only or with `--play` (ALSA's file plugin) listening live (two decoders per
/// track). A run passes when the recorder reports no late clock tick, every track received every
/// packet, and every file has the room's length. Peak RSS and the most threads are sampled.
enum LiveCapacity {
    /// How the senders reach the recorder, and whether something listens live.
    struct Layout: Sendable {
        var portPerParticipant = false
        var play = false
        var label: String {
            (portPerParticipant ? "one port each" : "one port") + (play ? ", --play" : ", record only")
        }
    }

    struct Outcome {
        let layout: Layout
        let peakRSSKiB: Int
        let threads: Int
        let senders: Int
        let lateTicks: Int
        let tracks: Int
        let completeFiles: Bool
        let packetsReceived: Int
        let packetsSent: Int
        let cpuSeconds: Double
        let seconds: Double
        var passed: Bool { lateTicks == 0 && tracks == senders && completeFiles && packetsReceived == packetsSent }
    }

    /// 50 distinct 20 ms packets of speech-like audio (1 s), reused in a loop by every sender.
    static func packets() -> [[UInt8]] {
        RTPTestSender.encode(TestSignal.speechLike(samples: 50 * 960), bitrate: 24_000).packets
    }

    static func run(senders: Int, seconds: Double, port: UInt16, layout: Layout = Layout()) throws -> Outcome {
        let out = "\(BenchFiles.directory)/live-\(senders)"
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("roomtap").path
        let ports = layout.portPerParticipant ? (0..<senders).map { port + UInt16($0) } : [port]
        var arguments = [binary, "record"]
        for p in ports { arguments += ["--listen", "127.0.0.1:\(p)"] }
        arguments += [
            "--max-tracks", "\(senders)", "--duration", "\(seconds + 1)", "--out", out, "--force", "--quiet",
        ]
        var environment = ProcessInfo.processInfo.environment
        let alsa = layout.play ? try ALSATestConfig() : nil
        if let alsa {
            arguments += ["--play", alsa.playbackDevice]
            environment.merge(alsa.environment) { $1 }
        }
        try? FileManager.default.removeItem(atPath: out)
        var pid: pid_t = 0
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0)=\($1)") } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        guard posix_spawn(&pid, binary, nil, nil, argv, envp) == 0 else {
            throw NSError(domain: "bench", code: 1, userInfo: [NSLocalizedDescriptionKey: "cannot start \(binary)"])
        }
        usleep(300_000 + UInt32(senders) * 1_000)
        let threads = Atomic<Int>(0)
        let sampling = Atomic<Bool>(true)
        let child = pid
        let sampler = Thread {
            while sampling.load(ordering: .relaxed) {
                threads.store(max(threads.load(ordering: .relaxed), threadCount(child)), ordering: .relaxed)
                usleep(200_000)
            }
        }
        sampler.start()
        let sent = send(senders: senders, seconds: seconds, ports: ports)
        var status: Int32 = 0
        var usage = rusage()
        wait4(pid, &status, 0, &usage)
        sampling.store(false, ordering: .relaxed)
        let cpu =
            Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6 + Double(usage.ru_stime.tv_sec)
            + Double(usage.ru_stime.tv_usec) / 1e6
        let data = FileManager.default.contents(atPath: out + "/room.json") ?? Data()
        let json = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
        let tracks = json["tracks"] as? [[String: Any]] ?? []
        let duration = json["durationSamples"] as? Int ?? -1
        let network = json["network"] as? [String: Any] ?? [:]
        let received = tracks.compactMap { ($0["rtp"] as? [String: Any])?["packets"] as? Int }.reduce(0, +)
        let complete = !tracks.isEmpty && tracks.allSatisfy { ($0["samplesWritten"] as? Int) == duration }
        return Outcome(
            layout: layout, peakRSSKiB: usage.ru_maxrss, threads: threads.load(ordering: .relaxed), senders: senders,
            lateTicks: network["lateTicks"] as? Int ?? -1, tracks: tracks.count,
            completeFiles: complete && status == 0, packetsReceived: received, packetsSent: sent, cpuSeconds: cpu,
            seconds: seconds + 1)
    }

    /// Threads of process `pid` now (0 once it is gone).
    static func threadCount(_ pid: pid_t) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return 0 }
        let line = status.split(separator: "\n").first { $0.hasPrefix("Threads:") }
        return line.flatMap { Int($0.split(separator: "\t").last ?? "") } ?? 0
    }

    /// Sends `senders` streams for `seconds` at real time from one thread (absolute deadlines),
    /// sender `s` to `ports[s % ports.count]`. Returns the packets sent.
    static func send(senders: Int, seconds: Double, ports: [UInt16]) -> Int {
        let payloads = packets()
        let sockets = ports.map { DatagramSocket(ListenAddress(host: "127.0.0.1", port: $0)) }
        let count = Int(seconds * 50)
        var start = timespec()
        clock_gettime(CLOCK_MONOTONIC, &start)
        var sent = 0
        for k in 0..<count {
            var deadline = start
            let ns = Int(start.tv_nsec) + k * 20_000_000
            deadline.tv_sec += ns / 1_000_000_000
            deadline.tv_nsec = ns % 1_000_000_000
            clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, nil)
            for s in 0..<senders {
                let packet = RTPPacketBuilder(
                    payloadType: 111, sequenceNumber: UInt16(truncatingIfNeeded: k), timestamp: UInt32(k * 960),
                    ssrc: UInt32(0x1000 + s), payload: payloads[(k + s) % payloads.count]
                ).bytes()
                if sockets[s % sockets.count].send(packet) { sent += 1 }
            }
        }
        return sent
    }
}
