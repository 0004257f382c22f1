import Foundation
import RoomTap
import RoomTapTestSupport

/// The live capacity run: N synthetic senders at real time (20 ms Opus packets, one UDP port,
/// distinct SSRCs) into one `roomtap record --listen` writing N WAVs. A run passes when the
/// recorder reports no late clock tick, every track received every packet, and every file has
/// the room's length.
enum LiveCapacity {
    struct Outcome {
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

    static func run(senders: Int, seconds: Double, port: UInt16) throws -> Outcome {
        let out = "\(BenchFiles.directory)/live-\(senders)"
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("roomtap").path
        let arguments = [
            binary, "record", "--listen", "127.0.0.1:\(port)", "--max-tracks", "\(senders)", "--duration",
            "\(seconds + 1)", "--out", out, "--force", "--quiet",
        ]
        try? FileManager.default.removeItem(atPath: out)
        var pid: pid_t = 0
        let argv = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        guard posix_spawn(&pid, binary, nil, nil, argv, environ) == 0 else {
            throw NSError(domain: "bench", code: 1, userInfo: [NSLocalizedDescriptionKey: "cannot start \(binary)"])
        }
        usleep(300_000)
        let sent = send(senders: senders, seconds: seconds, port: port)
        var status: Int32 = 0
        var usage = rusage()
        wait4(pid, &status, 0, &usage)
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
            senders: senders, lateTicks: network["lateTicks"] as? Int ?? -1, tracks: tracks.count,
            completeFiles: complete && status == 0, packetsReceived: received, packetsSent: sent, cpuSeconds: cpu,
            seconds: seconds + 1)
    }

    /// Sends `senders` streams for `seconds` at real time from one thread (absolute deadlines).
    /// Returns the packets sent.
    static func send(senders: Int, seconds: Double, port: UInt16) -> Int {
        let payloads = packets()
        let socket = DatagramSocket(ListenAddress(host: "127.0.0.1", port: port))
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
                if socket.send(packet) { sent += 1 }
            }
        }
        return sent
    }
}
