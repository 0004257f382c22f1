import Foundation
import RoomTapAll
import RoomTapCLITestSupport
import RoomTapRTPTestSupport
import RoomTapTestSupport
import Testing

/// `roomtap record` on a live room over loopback UDP (ports the kernel gives out): test senders, real
/// senders (ffmpeg, GStreamer), a hostile flood, and bad setups.
@Suite("CLI: record a live room", .serialized)
struct LiveRecordTests {
    static let hasFFmpeg = FileManager.default.isExecutableFile(atPath: "/usr/bin/ffmpeg")
    static let hasGStreamer = FileManager.default.isExecutableFile(atPath: "/usr/bin/gst-launch-1.0")

    /// (a) Two test senders on one port, different SSRCs and signals, the second 1 s later.
    @Test func twoSendersOnOnePortBecomeTwoAlignedTracks() throws {
        let out = try temporaryDirectory()
        let port = try freeUDPPort()
        let address = try #require(ListenAddress("127.0.0.1:\(port)"))
        let tone = toneBursts(samples: 120 * 960)
        let speech = TestSignal.speechLike(samples: 100 * 960, seed: 21)
        let a = RTPTestSender(pcm: tone, to: address, ssrc: 0xA0A0_0001, firstSequence: 65_400)
        let b = RTPTestSender(pcm: speech, to: address, ssrc: 0xB0B0_0002, firstTimestamp: 4_294_000_000)
        let recorder = try CLIRunner.start(
            ["record", "--listen", address.description, "--duration", "4", "--out", out.path, "--quiet"]
                + RealtimeTestPriority.recordFlags)
        try waitUntilListening(port: port, pid: recorder.pid)
        let start = RealTimeClock.monotonicNow() + 100_000_000
        a.start(startNanos: start)
        b.start(startNanos: start + 1_000_000_000)
        let reportA = a.wait()
        let reportB = b.wait()
        let outcome = recorder.wait(timeout: 20)
        #expect(outcome.status == 0, "stderr: \(outcome.stderr)")

        let nameA = "ssrc-" + String(a.ssrc, radix: 16)
        let nameB = "ssrc-" + String(b.ssrc, radix: 16)
        #expect(try listing(out) == ["\(nameA).wav", "\(nameB).wav", "room.json"].sorted())
        let wavA = try WAVFile.readSamples(path: out.appendingPathComponent("\(nameA).wav").path).1
        let wavB = try WAVFile.readSamples(path: out.appendingPathComponent("\(nameB).wav").path).1
        // 4 s of reception, then the room drains the 2 s record delay: 6 s of room each.
        #expect(wavA.count == 288_000 && wavB.count == 288_000, "6 s of room each: \(wavA.count), \(wavB.count)")

        // Each WAV holds its sender's libopus decode; found by search, then compared.
        let decodedA = a.cleanDecode()
        let decodedB = b.cleanDecode()
        let onsetA = try #require(placement(of: decodedA, in: wavA), "sender A's audio is in \(nameA).wav")
        let onsetB = try #require(placement(of: decodedB, in: wavB), "sender B's audio is in \(nameB).wav")
        let expectedA = placed(decodedA, at: onsetA, length: wavA.count)
        let expectedB = placed(decodedB, at: onsetB, length: wavB.count)
        #expect(correlation(wavA, expectedA) > 0.9)
        #expect(correlation(wavB, expectedB) > 0.9)
        #expect(abs(correlation(wavA, expectedB)) < 0.3)
        #expect(abs(correlation(wavB, expectedA)) < 0.3)
        #expect(wavB[..<onsetB].allSatisfy { $0 == 0 }, "the late sender's file starts with silence")
        // The second sender's audio starts where it was sent: onset difference = send difference ± 20 ms.
        let sendDifference = Int(Int64(reportB.firstSendNanos) - Int64(reportA.firstSendNanos)) * 48 / 1_000_000
        #expect(
            abs((onsetB - onsetA) - sendDifference) <= 960, "onsets \(onsetA), \(onsetB); sent \(sendDifference) apart")

        let json = try roomJSON(out)
        #expect(json["durationSamples"] as? Int == 288_000)
        // And both are where they were sent on the room timeline: send time (wall clock) after the
        // room's startTime, plus the 2 s record delay (after the least-delayed packet: on loopback
        // about the send time), within 20 ms.
        let startTime = try #require(roomStartTime(json))
        for (onset, report) in [(onsetA, reportA), (onsetB, reportB)] {
            let sent = Double(report.firstSendWallNanos) / 1e9 - startTime.timeIntervalSince1970
            let expected = Int(sent * 48_000) + 96_000
            #expect(abs(onset - expected) <= 960, "onset \(onset), sent at room sample \(expected - 96_000)")
        }
        let tracks = try #require(json["tracks"] as? [[String: Any]])
        for (name, sender) in [(nameA, a), (nameB, b)] {
            let track = try #require(tracks.first { $0["name"] as? String == name })
            #expect(track["samples"] as? Int == 288_000)
            #expect(track["role"] as? String == "speaker-network")
            let rtp = try #require(track["rtp"] as? [String: Any], "per-track rtp statistics")
            #expect(rtp["packets"] as? Int == sender.packets.count)
            #expect(rtp["lost"] as? Int == 0 && rtp["late"] as? Int == 0 && rtp["duplicates"] as? Int == 0)
            #expect(rtp["reordered"] as? Int == 0 && rtp["recoveredByFEC"] as? Int == 0)
            #expect(rtp["concealedMs"] != nil && rtp["jitterMs"] != nil)
            let record = try #require(rtp["record"] as? [String: Any])
            #expect(record["lost"] as? Int == 0 && record["late"] as? Int == 0)
            #expect(rtp["live"] == nil, "nothing listened live: one decoder, no live figures")
            #expect(rtp["recordDelayMs"] as? Double == 2000)
        }
    }

    /// (b) Real senders: ffmpeg (its own SDP, as written by -sdp_file) and GStreamer (a second
    /// --listen). Each WAV's dominant frequency is its sender's; the onsets are checked loosely,
    /// against when each tool was started (their start-up latency is unknown): the audio starts no
    /// earlier than the tool's start + the 60 ms jitter delay − 20 ms and within 1.5 s of it.
    @Test(
        .enabled(if: hasFFmpeg, "ffmpeg is not installed (/usr/bin/ffmpeg); make deps installs it"),
        .enabled(if: hasGStreamer, "gst-launch-1.0 is not installed; make deps installs gstreamer1.0-tools"))
    func ffmpegAndGStreamerAreRecordedAsTwoSpeakers() throws {
        let out = try temporaryDirectory()
        let sdp = out.deletingLastPathComponent().appendingPathComponent("ffmpeg-\(UUID().uuidString.prefix(8)).sdp")
        // The recorder's two ports and the relays' two, each from the kernel.
        let (ffmpegPort, gstPort) = (try freeUDPPort(), try freeUDPPort())
        let (ffmpegRelayPort, gstRelayPort) = (try freeUDPPort(), try freeUDPPort())
        // ffmpeg writes its SDP when it starts: a first, tiny run gets it (the SSRC changes between
        // runs; the SDP does not name one).
        let ffmpegArguments = { (seconds: String) in
            [
                "-hide_banner", "-loglevel", "error", "-re", "-f", "lavfi", "-i", "sine=f=440:d=\(seconds)",
                "-c:a", "libopus", "-ac", "1", "-f", "rtp", "rtp://127.0.0.1:\(ffmpegPort)", "-sdp_file", sdp.path,
            ]
        }
        let probe = try CLIRunner.run(
            ffmpegArguments("0.05"), timeout: 20, executable: URL(fileURLWithPath: "/usr/bin/ffmpeg"))
        #expect(probe.status == 0, "ffmpeg: \(probe.stderr)")
        #expect(try String(contentsOf: sdp, encoding: .utf8).contains("m=audio \(ffmpegPort)"))

        let recorder = try CLIRunner.start(
            [
                "record", "--sdp", sdp.path, "--listen", "127.0.0.1:\(gstPort)", "--duration", "4", "--out", out.path,
                "--quiet",
            ] + RealtimeTestPriority.recordFlags)
        try waitUntilListening(port: ffmpegPort, pid: recorder.pid)
        try waitUntilListening(port: gstPort, pid: recorder.pid)
        // The tools send to relays that note when the first datagram arrived and forward at once:
        // that arrival is what anchors a stream in the recorder (+ the 2 s record delay).
        // (ffmpeg sends RTCP to its RTP port + 1, where no relay listens.)
        let ffmpegRelay = try UDPRelay(
            listen: try #require(ListenAddress("127.0.0.1:\(ffmpegRelayPort)")),
            forward: try #require(ListenAddress("127.0.0.1:\(ffmpegPort)")))
        let gstRelay = try UDPRelay(
            listen: try #require(ListenAddress("127.0.0.1:\(gstRelayPort)")),
            forward: try #require(ListenAddress("127.0.0.1:\(gstPort)")))
        let ffmpegStart = Date()
        let ffmpeg = try CLIRunner.start(
            Array(
                ffmpegArguments("2").map {
                    $0 == "rtp://127.0.0.1:\(ffmpegPort)" ? "rtp://127.0.0.1:\(ffmpegRelayPort)" : $0
                }.dropLast(2)),
            executable: URL(fileURLWithPath: "/usr/bin/ffmpeg"))
        usleep(300_000)  // the test's own pacing: the two senders start 0.3 s apart
        let gstStart = Date()
        let gst = try CLIRunner.start(
            [
                "-q", "audiotestsrc", "is-live=true", "wave=sine", "freq=660", "num-buffers=100", "!", "audioconvert",
                "!", "audioresample", "!", "opusenc", "!", "rtpopuspay", "pt=96", "!", "udpsink", "host=127.0.0.1",
                "port=\(gstRelayPort)",
            ], executable: URL(fileURLWithPath: "/usr/bin/gst-launch-1.0"))
        #expect(ffmpeg.wait(timeout: 15).status == 0)
        #expect(gst.wait(timeout: 15).status == 0)
        let outcome = recorder.wait(timeout: 20)
        let firstArrivals = [Int(ffmpegPort): ffmpegRelay.stop(), Int(gstPort): gstRelay.stop()]
        #expect(outcome.status == 0, "stderr: \(outcome.stderr)")

        let json = try roomJSON(out)
        let startTime = try #require(roomStartTime(json))
        let tracks = try #require(json["tracks"] as? [[String: Any]])
        func check(port: Int, frequency: Double, other: Double, started: Date) throws {
            let track = tracks.first { ($0["rtp"] as? [String: Any])?["port"] as? Int == port }
            guard let track, let file = track["file"] as? String else {
                Issue.record("no track for port \(port) in room.json: \(tracks.map { $0["name"] ?? "?" })")
                return
            }
            let samples = try WAVFile.readSamples(path: out.appendingPathComponent(file).path).1
            #expect(samples.count == json["durationSamples"] as? Int)
            let onset = try #require(samples.firstIndex { abs(Int($0)) > 1_000 }, "\(file) is silent")
            let active = Array(samples[onset..<min(samples.count, onset + 48_000)])
            let own = goertzelPower(active, frequency: frequency)
            let wrong = goertzelPower(active, frequency: other)
            #expect(own > 100 * wrong, "\(file): \(frequency) Hz power \(own), \(other) Hz \(wrong)")
            // Loose: no earlier than the tool's start, and before the tool had to be done (its
            // start-up time is the machine's load, not the recorder's: 1.6 s was seen under load;
            // the tight check below is the recorder's own placement).
            let toolStart = Int(started.timeIntervalSince(startTime) * 48_000)
            #expect(
                onset >= toolStart + 96_000 - 960 && onset <= toolStart + 96_000 + 15 * 48_000,
                "\(file): onset \(onset), tool started at room sample \(toolStart)")
            // Tight: within 20 ms of the first packet's arrival (+ 2 s). The onset is the first
            // sample above -30 dBFS; the tones start at full level at their first sample, give or
            // take the codec's ramp-in (a few ms).
            let arrival = try #require(firstArrivals[port] ?? nil, "the relay saw packets for \(port)")
            let anchor = Int(arrival.timeIntervalSince(startTime) * 48_000) + 96_000
            #expect(abs(onset - anchor) <= 960, "\(file): onset \(onset), first packet + 2 s at \(anchor)")
            let rtp = try #require(track["rtp"] as? [String: Any])
            #expect((rtp["packets"] as? Int ?? 0) >= 90, "\(file): \(rtp)")
            #expect(rtp["late"] as? Int == 0 && rtp["lost"] as? Int == 0)
        }
        try check(port: Int(ffmpegPort), frequency: 440, other: 660, started: ffmpegStart)
        try check(port: Int(gstPort), frequency: 660, other: 440, started: gstStart)
    }

    /// (c) A flood of garbage and of SSRCs beside a real sender, `--max-tracks 8`.
    @Test func aFloodOfDatagramsAndSSRCsIsBoundedAndCounted() throws {
        let out = try temporaryDirectory()
        let port = try freeUDPPort()
        let address = try #require(ListenAddress("127.0.0.1:\(port)"))
        let speech = TestSignal.speechLike(samples: 140 * 960, seed: 5)
        let sender = RTPTestSender(pcm: speech, to: address, ssrc: 0x600D_0001)
        let recorder = try CLIRunner.start(
            [
                "record", "--listen", address.description, "--max-tracks", "8", "--duration", "3.5", "--out", out.path,
                "--quiet",
            ] + RealtimeTestPriority.recordFlags)
        try waitUntilListening(port: port, pid: recorder.pid)
        sender.start(startNanos: RealTimeClock.monotonicNow() + 50_000_000)
        // The real sender has its track (room.json lists its file) before the flood.
        let real = "ssrc-" + String(sender.ssrc, radix: 16) + ".wav"
        #expect(
            waitUntil(timeout: .seconds(30)) {
                (currentRoomJSON(out)?["tracks"] as? [[String: Any]])?.contains { $0["file"] as? String == real }
                    == true
            }, "the real sender's track before the flood")
        var peakKiB = 0
        let flood = DatagramSocket(address)
        var rng = SplitMix64(seed: 99)
        for i in 0..<7_000 {
            if i < 5_000 {
                let length = 1 + Int(rng.next() % 300)
                flood.send((0..<length).map { _ in UInt8(truncatingIfNeeded: rng.next()) })
            } else {
                let ssrc = 0x0BAD_0000 + UInt32(i)
                flood.send(
                    RTPPacketBuilder(
                        payloadType: 111, sequenceNumber: UInt16(i & 0xFFFF), timestamp: UInt32(i * 960), ssrc: ssrc,
                        payload: [0xF8, 0xFF, 0xFE]
                    ).bytes())
            }
            if i % 500 == 0 {
                peakKiB = max(peakKiB, highWaterKiB(pid: recorder.pid) ?? 0)
                usleep(20_000)  // the test's own pacing of the flood
            }
        }
        flood.close()
        while recorder.isRunning {
            peakKiB = max(peakKiB, highWaterKiB(pid: recorder.pid) ?? 0)
            usleep(50_000)  // sampling the memory high-water mark until the recorder ends
        }
        sender.wait()
        let outcome = recorder.wait(timeout: 20)
        #expect(outcome.status == 0, "stderr: \(outcome.stderr)")
        #expect(peakKiB > 0 && peakKiB < 300 * 1024, "VmHWM \(peakKiB) KiB")

        let wavs = try listing(out).filter { $0.hasSuffix(".wav") }
        #expect(wavs.contains(real), "the real sender's track survives the flood: \(wavs)")
        #expect(wavs.count <= 8, "at most --max-tracks files: \(wavs.count)")
        let samples = try WAVFile.readSamples(path: out.appendingPathComponent(real).path).1
        #expect(samples.count == 168_000 + 96_000, "3.5 s received + the 2 s record delay drained")
        let decoded = sender.cleanDecode()
        let onset = try #require(placement(of: decoded, in: samples), "the real sender's audio is intact")
        #expect(correlation(samples, placed(decoded, at: onset, length: samples.count)) > 0.9)

        let network = try #require(try roomJSON(out)["network"] as? [String: Any])
        #expect((network["droppedTooManyTracks"] as? Int ?? 0) >= 1_900, "\(network)")
        #expect((network["invalidRTP"] as? Int ?? 0) > 1_000, "\(network)")
        #expect((network["datagrams"] as? Int ?? 0) >= 7_000, "\(network)")
    }

    /// (d) Bad setups: one clear stderr line and a non-zero exit.
    @Test func aPortAlreadyInUseIsOneErrorLine() throws {
        let out = try temporaryDirectory()
        let holder = try UDPSocket(address: ListenAddress(host: "127.0.0.1", port: 0))
        defer { holder.close() }
        let outcome = try roomtap(
            ["record", "--listen", holder.address.description, "--duration", "1", "--out", out.path], expect: 1,
            timeout: 20)
        #expect(outcome.stderrLines.count == 1, "\(outcome.stderr)")
        #expect(outcome.stderr.contains("already in use"))
    }

    @Test func anSDPWithoutAudioIsOneErrorLine() throws {
        let out = try temporaryDirectory()
        let sdp = out.appendingPathComponent("video.sdp")
        try """
        v=0\r
        o=- 0 0 IN IP4 127.0.0.1\r
        s=video only\r
        c=IN IP4 127.0.0.1\r
        t=0 0\r
        m=video 27541 RTP/AVP 96\r
        a=rtpmap:96 VP8/90000\r

        """.write(to: sdp, atomically: true, encoding: .utf8)
        let outcome = try roomtap(
            ["record", "--sdp", sdp.path, "--duration", "1", "--out", out.appendingPathComponent("rec").path],
            expect: 1, timeout: 20)
        #expect(outcome.stderrLines.count == 1, "\(outcome.stderr)")
        #expect(outcome.stderr.lowercased().contains("audio"), "\(outcome.stderr)")
    }

    @Test(arguments: [
        (["--record-delay", "10"], "--record-delay must be"),
        (["--record-delay", "abc"], "--record-delay must be"),
        (["--record-delay", "50", "--jitter-ms", "60"], "--record-delay (50) must be at least --jitter-ms (60)"),
    ])
    func aBadRecordDelayIsAUsageErrorAndNothingIsCreated(options: [String], message: String) throws {
        let out = try temporaryDirectory().appendingPathComponent("rec")
        let outcome = try roomtap(
            ["record", "--listen", "127.0.0.1:\(try freeUDPPort())", "--out", out.path] + options, expect: 64,
            timeout: 20)
        #expect(outcome.stderrLines.count == 1 && outcome.stderr.contains(message), "\(outcome.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out.path))
    }

    @Test func aListenPortOutOfRangeIsAUsageError() throws {
        let out = try temporaryDirectory()
        let outcome = try roomtap(
            ["record", "--listen", "127.0.0.1:99999", "--duration", "1", "--out", out.path], expect: 64, timeout: 20)
        #expect(outcome.stderr.contains("99999"), "\(outcome.stderr)")
    }
}

// MARK: - Helpers

/// 440 Hz in 200 ms bursts with 100 ms gaps.
func toneBursts(samples: Int) -> [Int16] {
    let sine = TestSignal.sine(frequency: 440, samples: samples, amplitude: 0.5)
    return sine.enumerated().map { i, v in i % 14_400 < 9_600 ? v : 0 }
}

/// Waits until process `pid` has a UDP socket bound to `port` (from /proc/net/udp and udp6).
func waitUntilListening(port: UInt16, pid: Int32, timeout: Double = 10) throws {
    let hex = ":" + String(format: "%04X", port) + " "
    let bound = try waitUntil(timeout: .milliseconds(Int(timeout * 1000)), every: .milliseconds(20)) {
        let found = ["/proc/net/udp", "/proc/net/udp6"].contains { table in
            let text = (try? String(contentsOfFile: table, encoding: .utf8)) ?? ""
            return text.split(separator: "\n").contains {
                $0.split(separator: " ").dropFirst().first.map { ($0 + " ").hasSuffix(hex) } ?? false
            }
        }
        guard found || kill(pid, 0) == 0 else { throw LiveTestError("roomtap (pid \(pid)) exited before listening") }
        return found
    }
    guard bound else { throw LiveTestError("roomtap did not bind UDP port \(port) within \(timeout) s") }
}

/// Forwards UDP datagrams from `listen` to `forward` on a thread of its own and notes when the
/// first RTP packet arrived (wall clock), for tools whose send times the test cannot see.
final class UDPRelay: @unchecked Sendable {
    private let socket: UDPSocket
    private let out: DatagramSocket
    private let lock = NSLock()
    private var first: Date?
    private let done = DispatchSemaphore(value: 0)

    init(listen: ListenAddress, forward: ListenAddress) throws {
        socket = try UDPSocket(address: listen)
        out = DatagramSocket(forward)
        let thread = Thread { [self] in
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 2048, alignment: 8)
            defer { buffer.deallocate() }
            while let n = socket.receive(into: buffer, timeoutMilliseconds: 50) {
                guard n > 0 else { continue }
                let now = Date()
                // RTCP (RFC 5761 §4: second byte 192-223) is forwarded but is no stream's first packet:
                // ffmpeg sends its RTCP to its RTP port + 1, which may be another relay's port (the
                // tests' ports are consecutive), 300 ms before that relay's own sender starts.
                let isRTCP = n >= 2 && (192...223).contains(buffer[1])
                lock.withLock { if first == nil && !isRTCP { first = now } }
                out.send(Array(buffer[0..<n]))
            }
            done.signal()
        }
        thread.start()
    }

    /// Stops relaying; returns when the first RTP packet arrived (nil: none did).
    func stop() -> Date? {
        socket.close()
        done.wait()
        return lock.withLock { first }
    }
}

struct LiveTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// VmHWM (peak resident set, KiB) of `pid`, nil once it is gone.
func highWaterKiB(pid: Int32) -> Int? {
    guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
    let line = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") }
    return line.flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") }
}

/// room.json of a recording.
/// room.json as it is now, nil while it is not there (read without #require: polling it is no
/// failure).
func currentRoomJSON(_ out: URL) -> [String: Any]? {
    guard let data = try? Data(contentsOf: out.appendingPathComponent("room.json")) else { return nil }
    return (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
}

func roomJSON(_ out: URL) throws -> [String: Any] {
    let data = try Data(contentsOf: out.appendingPathComponent("room.json"))
    return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
}

/// The room's start (room.json `startTime`, ISO 8601 with milliseconds).
func roomStartTime(_ json: [String: Any]) -> Date? {
    guard let text = json["startTime"] as? String else { return nil }
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    return formatter.date(from: text)
}

/// Where `decoded` (a sender's libopus decode) starts in `track`: the lag at which its second
/// 20 ms appear sample-exact (a lossless live track is the decode itself), else the lag of the
/// best correlation around the first loud sample. Nil when the track is silent.
func placement(of decoded: [Int16], in track: [Int16]) -> Int? {
    let probe = decoded[960..<1920]
    if probe.contains(where: { $0 != 0 }) {
        var lag = 0
        while lag + 1920 <= track.count {
            if track[lag + 960] == probe.first!, track[(lag + 960)..<(lag + 1920)].elementsEqual(probe) { return lag }
            lag += 1
        }
    }
    guard let loud = track.firstIndex(where: { abs(Int($0)) > 1_000 }),
        let source = decoded.firstIndex(where: { abs(Int($0)) > 1_000 })
    else { return nil }
    let guess = loud - source
    var best = (lag: guess, c: -2.0)
    for lag in max(0, guess - 960)...max(0, guess + 960) where lag + 9_600 <= track.count {
        let c = correlation(Array(track[lag..<(lag + 9_600)]), Array(decoded[0..<min(9_600, decoded.count)]))
        if c > best.c { best = (lag, c) }
    }
    return best.lag
}

/// `decoded` at `offset` in `length` samples of silence.
func placed(_ decoded: [Int16], at offset: Int, length: Int) -> [Int16] {
    var out = [Int16](repeating: 0, count: length)
    for (i, v) in decoded.enumerated() where offset + i >= 0 && offset + i < length { out[offset + i] = v }
    return out
}

/// Pearson correlation of two equally long Int16 signals (``TestSignal/correlation(_:_:)``).
func correlation(_ a: [Int16], _ b: [Int16]) -> Double { TestSignal.correlation(a, b) }

/// Goertzel power of `frequency` in `samples` (48 kHz).
func goertzelPower(_ samples: [Int16], frequency: Double) -> Double {
    let k = 2 * cos(2 * .pi * frequency / 48_000)
    var s1 = 0.0
    var s2 = 0.0
    for x in samples {
        let s = Double(x) + k * s1 - s2
        s2 = s1
        s1 = s
    }
    return s1 * s1 + s2 * s2 - k * s1 * s2
}
