import Foundation
import RoomTapAll
import RoomTapCLITestSupport
import RoomTapMediaTestSupport
import RoomTapRTPTestSupport
import RoomTapTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The PBX codecs from a real sender: ffmpeg encodes a 48 kHz source as G.711 µ-law, A-law, G.722
/// or L16 (big-endian, 16 kHz, as Asterisk's `slin16`) to `-f rtp`, and its own `-sdp_file` is the
/// room. Each file correlates with the source, is placed within 20 ms of its first packet (+ the
/// record delay) and has the room's length; room.json names the codec.
@Suite(.serialized) struct PBXCodecInteropTests {
    static let hasFFmpeg = FileManager.default.isExecutableFile(atPath: "/usr/bin/ffmpeg")
    static let ffmpeg = URL(fileURLWithPath: "/usr/bin/ffmpeg")

    /// A 2 s chirp from 150 to 1350 Hz at 48 kHz: inside every codec's band, and unlike itself at
    /// any other lag, so where it lands is unambiguous.
    static let source: [Int16] = (0..<96_000).map { i in
        let t = Double(i) / 48_000
        return Int16(0.4 * 32_767 * sin(2 * .pi * (150 * t + 300 * t * t)))
    }

    @Test(
        .enabled(if: hasFFmpeg, "ffmpeg is not installed (/usr/bin/ffmpeg); make deps installs it"),
        arguments: [
            (["-c:a", "pcm_mulaw", "-ar", "8000"], "PCMU/8000"),
            (["-c:a", "pcm_alaw", "-ar", "8000"], "PCMA/8000"),
            (["-c:a", "g722", "-ar", "16000"], "G722/8000"),
            (["-c:a", "pcm_s16be", "-ar", "16000"], "L16/16000/1"),
        ])
    func ffmpegSendsEachPBXCodecAndTheFileIsTheSource(codecArguments: [String], codec: String) throws {
        let out = try temporaryDirectory("pbx-\(codec.prefix(4))")
        let work = try temporaryDirectory("pbx-work")
        let wav = work.appendingPathComponent("source.wav")
        try WAVFixtures.write(Self.source, channels: 1, to: wav.path)
        let sdp = work.appendingPathComponent("room.sdp")
        let port = try freeUDPPort()
        let relayPort = try freeUDPPort()
        let sender = { (input: [String], target: UInt16) in
            ["-hide_banner", "-loglevel", "error", "-re"] + input + codecArguments
                + ["-ac", "1", "-f", "rtp", "rtp://127.0.0.1:\(target)", "-sdp_file", sdp.path]
        }
        // A first, tiny run writes the SDP (the codec's, with the recorder's port).
        let probe = try CLIRunner.run(
            sender(["-f", "lavfi", "-i", "anullsrc=r=48000:cl=mono:d=0.05"], port), timeout: 20, executable: Self.ffmpeg
        )
        #expect(probe.status == 0, "ffmpeg: \(probe.stderr)")

        let recorder = try CLIRunner.start(
            [
                "record", "--sdp", sdp.path, "--duration", "5", "--out", out.path, "--quiet",
            ] + RealtimeTestPriority.recordFlags)
        try waitUntilListening(port: port, pid: recorder.pid)
        // The relay notes every datagram's arrival and RTP timestamp: where the stream belongs.
        let relay = try RTPArrivalRelay(
            listen: try #require(ListenAddress("127.0.0.1:\(relayPort)")),
            forward: try #require(ListenAddress("127.0.0.1:\(port)")))
        let send = try CLIRunner.start(sender(["-i", wav.path], relayPort).dropLast(2), executable: Self.ffmpeg)
        #expect(send.wait(timeout: 20).status == 0)
        let outcome = recorder.wait(timeout: 30)
        let arrivals = relay.stop()
        #expect(outcome.status == 0, "stderr: \(outcome.stderr)")

        let json = try roomJSON(out)
        let startTime = try #require(roomStartTime(json))
        let tracks = try #require(json["tracks"] as? [[String: Any]])
        let track = try #require(tracks.first { $0["rtp"] != nil }, "no live track: \(tracks)")
        let rtp = try #require(track["rtp"] as? [String: Any])
        #expect(rtp["codec"] as? String == codec)
        #expect(rtp["invalid"] as? Int == 0 && rtp["lost"] as? Int == 0, "\(rtp)")
        let samples = try WAVFile.readSamples(
            path: out.appendingPathComponent(try #require(track["file"] as? String)).path
        )
        .samples
        #expect(samples.count == json["durationSamples"] as? Int, "the file has the room's length")

        // Placed: the source's first sample at its first packet's arrival + the record delay, less
        // how much earlier the stream's least-delayed packets put it (ffmpeg sends its first
        // packets late, while it starts up, then catches up): the record places a stream by its
        // least-delayed packets (docs/ARCHITECTURE.md), and says by how much in recordAnchorMs.
        let first = try #require(arrivals.first, "the relay saw no packet")
        let clockRate = Double(codec.split(separator: "/")[1])!
        let leastSkew = arrivals.map { a in
            a.arrival.timeIntervalSince(first.arrival) - Double(Int32(bitPattern: a.timestamp &- first.timestamp))
                / clockRate
        }.min()!
        let recordDelay = Int(try #require(rtp["recordDelayMs"] as? Double) * 48)
        let firstPacket = Int(first.arrival.timeIntervalSince(startTime) * 48_000) + recordDelay
        let anchor = firstPacket + Int((leastSkew * 48_000).rounded())
        let window = Array(Self.source[0..<24_000])
        // Every 8th lag, then every lag around the best: the chirp's correlation peak (1200 Hz of
        // band) is about 40 samples wide, and a debug build on a loaded machine needs minutes for
        // all 9 601 lags.
        var best = (lag: 0, c: -2.0)
        func search(_ lags: StrideThrough<Int>) {
            for lag in lags {
                let from = anchor + lag
                guard from >= 0, from + window.count <= samples.count else { continue }
                let c = TestSignal.correlation(samples[from..<(from + window.count)], window)
                if c > best.c { best = (lag, c) }
            }
        }
        search(stride(from: -4_800, through: 4_800, by: 8))
        search(stride(from: best.lag - 8, through: best.lag + 8, by: 1))
        let anchorMs = rtp["recordAnchorMs"] as? Double ?? 0
        #expect(abs(best.lag) <= 960, "\(codec): placed \(best.lag) samples from its least-delayed packets")
        #expect(abs(Double(anchor - firstPacket) / 48 - anchorMs) <= 20, "room.json's recordAnchorMs \(anchorMs)")
        let start = anchor + best.lag
        let whole = TestSignal.correlation(samples[start..<min(samples.count, start + Self.source.count)], Self.source)
        #expect(whole >= 0.95, "\(codec): correlation \(whole) with the source")
        print(
            "PBX interop \(codec): \(Double(best.lag) / 48) ms from the least-delayed packets' place, "
                + "\(Double(anchor + best.lag - firstPacket) / 48) ms from the first packet's; recordAnchorMs "
                + "\(anchorMs); correlation \(whole)")
    }

    /// A payload type nobody described is counted and dropped, never guessed at: PCMA sent to a
    /// room whose SDP says PCMU records silence and counts every packet.
    @Test(.enabled(if: hasFFmpeg, "ffmpeg is not installed (/usr/bin/ffmpeg); make deps installs it"))
    func aPayloadTypeNobodyDescribedIsCountedAndDropped() throws {
        let out = try temporaryDirectory("pbx-undescribed")
        let work = try temporaryDirectory("pbx-undescribed-work")
        let port = try freeUDPPort()
        let sdp = work.appendingPathComponent("room.sdp")
        try "v=0\no=- 0 0 IN IP4 127.0.0.1\ns=pbx\nc=IN IP4 127.0.0.1\nt=0 0\nm=audio \(port) RTP/AVP 0\n"
            .write(to: sdp, atomically: true, encoding: .utf8)
        let recorder = try CLIRunner.start(
            [
                "record", "--sdp", sdp.path, "--duration", "3", "--out", out.path, "--quiet",
            ] + RealtimeTestPriority.recordFlags)
        try waitUntilListening(port: port, pid: recorder.pid)
        let send = try CLIRunner.run(
            [
                "-hide_banner", "-loglevel", "error", "-re", "-f", "lavfi", "-i", "sine=f=440:d=0.5", "-c:a",
                "pcm_alaw",
                "-ar", "8000", "-ac", "1", "-f", "rtp", "rtp://127.0.0.1:\(port)",
            ], timeout: 20, executable: Self.ffmpeg)
        #expect(send.status == 0)
        let outcome = recorder.wait(timeout: 30)
        #expect(outcome.status == 0, "stderr: \(outcome.stderr)")
        let json = try roomJSON(out)
        let network = try #require(json["network"] as? [String: Any])
        #expect((network["droppedUnknownPayloadType"] as? Int ?? 0) >= 20, "\(network)")
        for track in try #require(json["tracks"] as? [[String: Any]]) {
            let rtp = track["rtp"] as? [String: Any]
            #expect(rtp?["packets"] as? Int ?? 0 == 0, "\(track)")
        }
    }
}

/// Forwards UDP datagrams from `listen` to `forward` on a thread of its own and notes each RTP
/// packet's arrival (wall clock) and timestamp, for senders whose send times the test cannot see.
final class RTPArrivalRelay: @unchecked Sendable {
    struct Arrival {
        var arrival: Date
        var timestamp: UInt32
    }

    private let socket: UDPSocket
    private let out: DatagramSocket
    private let lock = NSLock()
    private var arrivals: [Arrival] = []
    private let done = DispatchSemaphore(value: 0)

    init(listen: ListenAddress, forward: ListenAddress) throws {
        socket = try UDPSocket(address: listen)
        out = DatagramSocket(forward)
        let thread = Thread { [self] in
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 2048, alignment: 8)
            defer { buffer.deallocate() }
            while let n = socket.receive(into: buffer, timeoutMilliseconds: 50) {
                guard n >= 12 else { continue }
                let now = Date()
                let timestamp =
                    UInt32(buffer[4]) << 24 | UInt32(buffer[5]) << 16 | UInt32(buffer[6]) << 8 | UInt32(buffer[7])
                lock.withLock { arrivals.append(Arrival(arrival: now, timestamp: timestamp)) }
                out.send(Array(buffer[0..<n]))
            }
            done.signal()
        }
        thread.start()
    }

    /// Stops relaying; returns every packet's arrival, in arrival order.
    func stop() -> [Arrival] {
        socket.close()
        done.wait()
        return lock.withLock { arrivals }
    }
}
