import Foundation
import RoomTapAll
import RoomTapCLITestSupport
import RoomTapMediaTestSupport
import RoomTapRTPTestSupport
import RoomTapTestSupport
import Testing

/// `roomtap record` of a secured live room, end to end: SRTP from real senders (ffmpeg's `srtp://`
/// output with its own SDP, GStreamer's `srtpenc` with a room file in Janus's terms), a sender with
/// the wrong key, a flood from a source `allow` does not name, SSRCs nobody described.
@Suite("CLI: secured live rooms (SRTP, who may send)", .serialized)
struct SecuredLiveRecordTests {
    static let hasFFmpeg = FileManager.default.isExecutableFile(atPath: "/usr/bin/ffmpeg")
    static let hasGStreamer = FileManager.default.isExecutableFile(atPath: "/usr/bin/gst-launch-1.0")
    static let ffmpeg = URL(fileURLWithPath: "/usr/bin/ffmpeg")
    static let key = "zRCoQsnTDbsRqanw1ZL3PFeLJF+Nt+ALhQJRgnWA"
    static let wrongKey = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwd"

    /// ffmpeg's arguments to send `input` as Opus over SRTP (`AES_CM_128_HMAC_SHA1_80`, `key`) to
    /// 127.0.0.1:`rtpPort`, its SRTCP to `rtcpPort`, writing its SDP to `sdp` if given.
    static func srtpSender(input: [String], key: String, rtpPort: UInt16, rtcpPort: UInt16, sdp: URL?) -> [String] {
        ["-hide_banner", "-loglevel", "error", "-re"] + input + [
            "-c:a", "libopus", "-ac", "1", "-f", "rtp", "-srtp_out_suite", "AES_CM_128_HMAC_SHA1_80",
            "-srtp_out_params", key, "srtp://127.0.0.1:\(rtpPort)?rtcpport=\(rtcpPort)",
        ] + (sdp.map { ["-sdp_file", $0.path] } ?? [])
    }

    /// ffmpeg writes its SDP as it starts: a first, tiny run to `port` gets it into `sdp`.
    static func probeSDP(of sourcePath: String, port: UInt16, into sdp: URL) throws {
        let probe = try CLIRunner.run(
            srtpSender(input: ["-t", "0.05", "-i", sourcePath], key: key, rtpPort: port, rtcpPort: port, sdp: sdp),
            timeout: 20, executable: ffmpeg)
        #expect(probe.status == 0, "ffmpeg: \(probe.stderr)")
    }

    /// The track of room.json on `port` and its samples.
    static func track(on port: UInt16, _ out: URL, _ json: [String: Any]) throws -> ([String: Any], [Int16]) {
        let tracks = try #require(json["tracks"] as? [[String: Any]])
        let track = try #require(tracks.first { ($0["rtp"] as? [String: Any])?["port"] as? Int == Int(port) })
        let file = try #require(track["file"] as? String)
        return (track, try WAVFile.readSamples(path: out.appendingPathComponent(file).path).1)
    }

    /// The counters room.json keeps for the listen address on `port`.
    static func received(on port: UInt16, _ json: [String: Any]) throws -> [String: Any] {
        let network = try #require(json["network"] as? [String: Any])
        let received = try #require(network["received"] as? [[String: Any]])
        return try #require(received.first { ($0["listen"] as? String)?.hasSuffix(":\(port)") == true })
    }

    /// ffmpeg's `srtp://` output and the SDP it writes (with `a=crypto`), used as the room as is.
    /// A second ffmpeg with another key sends to the same port at the same time: it is rejected,
    /// counted, and makes no track. The file correlates with the source, starts within 20 ms of
    /// the first packet's arrival + the record delay, has the room's length, and SRTCP's sender
    /// report placed it. No key in room.json or on stderr.
    @Test(.enabled(if: hasFFmpeg, "ffmpeg is not installed (/usr/bin/ffmpeg); make deps installs it"))
    func ffmpegSRTPIsRecordedFromItsOwnSDPAndAWrongKeyIsNot() throws {
        let out = try temporaryDirectory()
        let work = try temporaryDirectory()
        let port = try freeUDPPort()
        let relayPort = try freeUDPPort()
        let source = TestSignal.speechLike(samples: 120 * 960, seed: 21)  // 2.4 s
        let sourcePath = work.appendingPathComponent("source.wav").path
        try WAVFixtures.write(source, channels: 1, to: sourcePath)
        let sdp = work.appendingPathComponent("ffmpeg.sdp")
        // SRTCP goes straight to the recorder's port (RFC 5761 mux), RTP to `target`.
        func sender(input: [String], key: String, to target: UInt16) -> [String] {
            Self.srtpSender(input: input, key: key, rtpPort: target, rtcpPort: port, sdp: nil)
        }
        try Self.probeSDP(of: sourcePath, port: port, into: sdp)
        #expect(try String(contentsOf: sdp, encoding: .utf8).contains("a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:"))

        // 6 s of room for 2.4 s of audio: ffmpeg may take seconds to start on a loaded machine
        // (seen: a 4 s room ended 18 packets before ffmpeg did).
        let recorder = try CLIRunner.start(["record", "--sdp", sdp.path, "--duration", "6", "--out", out.path])
        try waitUntilListening(port: port, pid: recorder.pid)
        let relay = try UDPRelay(
            listen: try #require(ListenAddress("127.0.0.1:\(relayPort)")),
            forward: try #require(ListenAddress("127.0.0.1:\(port)")))
        let good = try CLIRunner.start(
            sender(input: ["-i", sourcePath], key: Self.key, to: relayPort), executable: Self.ffmpeg)
        let bad = try CLIRunner.start(
            sender(input: ["-f", "lavfi", "-i", "sine=f=660:d=2"], key: Self.wrongKey, to: port),
            executable: Self.ffmpeg)
        #expect(good.wait(timeout: 15).status == 0)
        #expect(bad.wait(timeout: 15).status == 0)
        let outcome = recorder.wait(timeout: 30)
        let firstArrival = relay.stop()
        #expect(outcome.status == 0, "stderr: \(outcome.stderr)")

        let json = try roomJSON(out)
        let wavs = try listing(out).filter { $0.hasSuffix(".wav") }
        #expect(wavs.count == 1, "one track: the sender with the key; \(wavs)")
        let (track, samples) = try Self.track(on: port, out, json)
        #expect(samples.count == json["durationSamples"] as? Int, "the room's length")
        let onset = try #require(placement(of: source, in: samples), "the source is in the file")
        let c = correlation(samples, placed(source, at: onset, length: samples.count))
        #expect(c > 0.9, "correlation with the source \(c)")
        let startTime = try #require(roomStartTime(json))
        let arrival = try #require(firstArrival, "the relay saw packets")
        let anchor = Int(arrival.timeIntervalSince(startTime) * 48_000) + 96_000
        // Placement: the record puts the stream where its least-delayed packets say (here the SRTCP
        // report), so never later than the first packet's arrival + the 2 s record delay (20 ms of
        // slack), and earlier only by how late that first packet was: the relay's own thread, on a
        // loaded machine, may forward the first packets late (seen: 0.2-0.6 s at a load of 12 on
        // 2 cores), so the lower bound is loose; the exact placement of SRTP is checked sample for
        // sample below (an SRTP sender whose send times the test knows). Opus's 312-sample encoder
        // delay (ffmpeg's RTP does not carry pre-skip) is in the onset.
        let early = anchor - (onset - 312)
        #expect(early >= -960 && early <= 96_000, "onset \(onset) - 312, first packet + 2 s at \(anchor)")
        let rtp = try #require(track["rtp"] as? [String: Any])
        #expect(rtp["senderReportTiming"] as? Bool == true, "the SRTCP sender report placed the stream: \(rtp)")
        #expect((rtp["packets"] as? Int ?? 0) >= 110, "\(rtp)")
        let counters = try Self.received(on: port, json)
        #expect((counters["srtpRejected"] as? Int ?? 0) >= 95, "the wrong key's ~100 packets: \(counters)")
        let text = try String(contentsOf: out.appendingPathComponent("room.json"), encoding: .utf8)
        for secret in [Self.key, Self.wrongKey] {
            #expect(!text.contains(secret.prefix(12)) && !outcome.stderr.contains(secret.prefix(12)), "no key shown")
        }
    }

    /// GStreamer's `srtpenc` (AES_CM_128_HMAC_SHA1_32: what Janus's `srtp_suite: 32` means) with a
    /// room file saying it the Janus way; the same pipeline with another key records nothing.
    @Test(.enabled(if: hasGStreamer, "gst-launch-1.0 is not installed; make deps installs gstreamer1.0-plugins-bad"))
    func gstreamerSrtpencIsRecordedFromAJanusStyleRoomFile() throws {
        let out = try temporaryDirectory()
        let work = try temporaryDirectory()
        let port = try freeUDPPort()
        let wrongPort = try freeUDPPort()
        let keyBytes = (1...30).map { UInt8($0) }
        let room = work.appendingPathComponent("people.json")
        let base64 = Data(keyBytes).base64EncodedString()
        try """
        {"listen": "127.0.0.1", "participants": [
          {"name": "gst", "port": \(port), "srtp": {"suite": 32, "key": "\(base64)"}},
          {"name": "wrong", "port": \(wrongPort), "srtp": {"suite": 32, "key": "\(base64)"}}
        ]}
        """.write(to: room, atomically: true, encoding: .utf8)
        let plan = try roomtap(["record", "--room", room.path, "--out", out.path, "--dry-run"], expect: 0)
        #expect(plan.stdout.contains("rtp port \(port) srtp AES_CM_128_HMAC_SHA1_32"), "\(plan.stdout)")
        #expect(!plan.stdout.contains(base64.prefix(12)) && !plan.stderr.contains(base64.prefix(12)), "no key shown")
        let recorder = try CLIRunner.start(["record", "--room", room.path, "--duration", "3.5", "--out", out.path])
        try waitUntilListening(port: port, pid: recorder.pid)
        try waitUntilListening(port: wrongPort, pid: recorder.pid)
        func pipeline(key: [UInt8], port: UInt16) throws -> CLIRunner.Running {
            try CLIRunner.start(
                [
                    "-q", "audiotestsrc", "is-live=true", "wave=sine", "freq=660", "num-buffers=100", "!",
                    "audioconvert", "!", "audioresample", "!", "opusenc", "!", "rtpopuspay", "pt=96", "!", "srtpenc",
                    "key=" + key.map { String(format: "%02x", $0) }.joined(), "rtp-cipher=aes-128-icm",
                    "rtp-auth=hmac-sha1-32", "rtcp-cipher=aes-128-icm", "rtcp-auth=hmac-sha1-80", "!", "udpsink",
                    "host=127.0.0.1", "port=\(port)",
                ], executable: URL(fileURLWithPath: "/usr/bin/gst-launch-1.0"))
        }
        let good = try pipeline(key: keyBytes, port: port)
        let bad = try pipeline(key: keyBytes.map { $0 ^ 0x5A }, port: wrongPort)
        #expect(good.wait(timeout: 15).status == 0)
        #expect(bad.wait(timeout: 15).status == 0)
        let outcome = recorder.wait(timeout: 30)
        #expect(outcome.status == 0, "stderr: \(outcome.stderr)")

        let json = try roomJSON(out)
        let (_, samples) = try Self.track(on: port, out, json)
        #expect(samples.count == json["durationSamples"] as? Int)
        let onset = try #require(samples.firstIndex { abs(Int($0)) > 1_000 }, "gst.wav is silent")
        let active = Array(samples[onset..<min(samples.count, onset + 48_000)])
        let tone = TestSignal.sine(frequency: 660, samples: active.count, amplitude: 0.5)
        let best =
            (0..<73).map { lag in
                correlation(Array(active[lag...]), Array(tone.prefix(active.count - lag)))
            }.max() ?? 0
        #expect(best > 0.9, "gst.wav is the 660 Hz tone (correlation \(best))")
        let (_, silent) = try Self.track(on: wrongPort, out, json)
        #expect(silent.allSatisfy { $0 == 0 }, "the wrong key recorded nothing")
        #expect((try Self.received(on: wrongPort, json)["srtpRejected"] as? Int ?? 0) >= 90)
        #expect(try Self.received(on: port, json)["srtpRejected"] as? Int == 0)
    }

    /// An SRTP sender whose every datagram the test knows (AEAD_AES_256_GCM, loss, reorder, jitter,
    /// SRTCP sender reports): the file equals libopus's decode of the packets that arrived, sample for
    /// sample, with the room's length; SRTCP placed it.
    @Test func anSRTPStreamIsRecordedExactlyThroughLossAndReorder() throws {
        let out = try temporaryDirectory()
        let work = try temporaryDirectory()
        let port = try freeUDPPort()
        let address = try #require(ListenAddress("127.0.0.1:\(port)"))
        let keyBytes = (0..<44).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
        let keying = try #require(SRTPKeying(suite: .aeadAES256GCM, keyAndSalt: keyBytes))
        let room = work.appendingPathComponent("people.json")
        try """
        {"listen": "127.0.0.1", "participants": [
          {"name": "alice", "port": \(port), "ssrc": "0x5EC0A11C",
           "srtp": {"suite": "AEAD_AES_256_GCM", "key": "\(Data(keyBytes).base64EncodedString())"}}
        ]}
        """.write(to: room, atomically: true, encoding: .utf8)
        let sender = RTPTestSender(
            pcm: TestSignal.speechLike(samples: 150 * 960, seed: 41), to: address, ssrc: 0x5EC0_A11C,
            impairments: .init(loss: 0.03, reorder: 0.05, jitterMilliseconds: 10, seed: 5),
            srtp: try #require(SRTPProtector(keying)))
        let recorder = try CLIRunner.start(["record", "--room", room.path, "--duration", "4", "--out", out.path])
        try waitUntilListening(port: port, pid: recorder.pid)
        sender.start(startNanos: RealTimeClock.monotonicNow() + 100_000_000)
        _ = sender.wait()
        let outcome = recorder.wait(timeout: 30)
        #expect(outcome.status == 0, "stderr: \(outcome.stderr)")
        let json = try roomJSON(out)
        let (track, samples) = try Self.track(on: port, out, json)
        #expect(samples.count == json["durationSamples"] as? Int)
        let expected = ExactLiveRecordTests.reference(sender)
        let onset = try #require(placement(of: expected, in: samples), "alice's audio is in her file")
        let n = min(expected.count, samples.count - onset)
        #expect(n == expected.count, "the whole stream is in the file")
        let mismatch = (0..<n).first { samples[onset + $0] != expected[$0] }
        #expect(mismatch == nil, "alice.wav differs from libopus's decode at sample \(mismatch ?? -1)")
        let rtp = try #require(track["rtp"] as? [String: Any])
        #expect(rtp["senderReportTiming"] as? Bool == true, "SRTCP sender reports placed the stream: \(rtp)")
        #expect(try Self.received(on: port, json)["srtpRejected"] as? Int == 0)
    }

    /// `allow` in the room file and SSRCs given: 50 000 packets from a source not allowed (valid
    /// RTP of 5 000 SSRCs and garbage) and a stray SSRC from an allowed source, while alice
    /// records: alice's file equals libopus's decode of her packets, sample for sample; the flood
    /// and the stray make no track and no file, and are counted.
    @Test func aFloodFromASourceNotAllowedCostsNoTrackAndTheSpeakerIsExact() throws {
        let out = try temporaryDirectory()
        let work = try temporaryDirectory()
        let port = try freeUDPPort()
        let address = try #require(ListenAddress("127.0.0.1:\(port)"))
        let room = work.appendingPathComponent("people.json")
        try """
        {"listen": "127.0.0.1", "allow": ["127.0.0.1/32"], "participants": [
          {"name": "alice", "port": \(port), "ssrc": "0xA11CE"}
        ]}
        """.write(to: room, atomically: true, encoding: .utf8)
        let alice = RTPTestSender(
            pcm: TestSignal.speechLike(samples: 150 * 960, seed: 31), to: address, ssrc: 0xA11CE, sendsRTCP: false)
        let stray = RTPTestSender(
            pcm: TestSignal.speechLike(samples: 50 * 960, seed: 32), to: address, ssrc: 0x57EA, sendsRTCP: false)
        let recorder = try CLIRunner.start(["record", "--room", room.path, "--out", out.path])
        try waitUntilListening(port: port, pid: recorder.pid)
        let start = RealTimeClock.monotonicNow() + 100_000_000
        alice.start(startNanos: start)
        stray.start(startNanos: start)
        let flood = try #require(SourceBoundSocket(from: "127.0.0.2", to: address))
        var rng = SplitMix64(seed: 77)
        for i in 0..<50_000 {
            let bytes =
                i % 5 == 4
                ? (0..<(1 + Int(rng.next() % 200))).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
                : RTPPacketBuilder(
                    payloadType: 111, sequenceNumber: UInt16(i & 0xFFFF), timestamp: UInt32(i * 960),
                    ssrc: i % 10 == 0 ? 0xA11CE : 0x0BAD_0000 + UInt32(i % 5_000), payload: [0xF8, 0xFF, 0xFE]
                ).bytes()
            while !flood.send(bytes) { usleep(1_000) }  // the socket's buffer full: try again
            if i % 250 == 249 { usleep(25_000) }  // the test's own pacing: 10 000 a second, in bursts of 250
        }
        let aliceSent = alice.wait().sendNanos.count
        _ = stray.wait()
        // The last datagrams read (room.json, refreshed every second, counts them), then stop
        // (the room drains its record delay).
        let counted = waitUntil(timeout: .seconds(60)) {
            guard let json = currentRoomJSON(out), let tracks = json["tracks"] as? [[String: Any]],
                let network = json["network"] as? [String: Any],
                let received = network["received"] as? [[String: Any]]
            else { return false }
            let rtp = tracks.compactMap { $0["rtp"] as? [String: Any] }.first { $0["port"] as? Int == Int(port) }
            let listen = received.first { ($0["listen"] as? String)?.hasSuffix(":\(port)") == true }
            return rtp?["packets"] as? Int == aliceSent
                && (listen?["notAllowed"] as? Int ?? 0) >= 45_000
                && (network["droppedUndescribedSSRC"] as? Int ?? 0) >= 45
        }
        #expect(counted, "room.json counts alice's \(aliceSent) packets, the flood and the stray")
        recorder.signal(SIGINT)
        let outcome = recorder.wait(timeout: 30)
        #expect(outcome.status == 0, "stderr: \(outcome.stderr)")

        let json = try roomJSON(out)
        #expect(try listing(out).filter { $0.hasSuffix(".wav") } == ["alice.wav"], "no file for the flood or stray")
        let (_, samples) = try Self.track(on: port, out, json)
        #expect(samples.count == json["durationSamples"] as? Int)
        let expected = ExactLiveRecordTests.reference(alice)
        let onset = try #require(placement(of: expected, in: samples), "alice's audio is in her file")
        #expect(onset + expected.count <= samples.count)
        let mismatch = (0..<min(expected.count, samples.count - onset)).first { samples[onset + $0] != expected[$0] }
        #expect(mismatch == nil, "alice.wav differs from libopus's decode at sample \(mismatch ?? -1)")
        let counters = try Self.received(on: port, json)
        // Sent: 50 000; on a busy machine the kernel may drop some of the flood before the receive
        // thread reads it (alice's file above says none of hers).
        #expect((counters["notAllowed"] as? Int ?? 0) >= 45_000, "\(counters)")
        let network = try #require(json["network"] as? [String: Any])
        #expect((network["droppedUndescribedSSRC"] as? Int ?? 0) >= 45, "the stray's packets: \(network)")
        #expect(network["invalidRTP"] as? Int == 0, "nothing from the flood was parsed: \(network)")
    }

    /// Keys from outside the room description (--srtp), as an operator gives them: ffmpeg's SDP with
    /// its `a=crypto` line removed (so it keys nothing) is the room, with a second `m=audio` section for
    /// a second ffmpeg. One key comes from the environment (`port-P=AES_CM_128_HMAC_SHA1_80:env:VAR`),
    /// the other from the command line in Janus's terms (`port-Q=80:BASE64`). Each file carries its
    /// sender's audio; no key is in room.json, on stdout or stderr, or in --dry-run's plan.
    @Test(.enabled(if: hasFFmpeg, "ffmpeg is not installed (/usr/bin/ffmpeg); make deps installs it"))
    func keysGivenBySRTPOptionAndEnvironmentRecordFFmpegsSRTP() throws {
        let out = try temporaryDirectory()
        let work = try temporaryDirectory()
        let (envPort, inlinePort) = (try freeUDPPort(), try freeUDPPort())
        let source = TestSignal.speechLike(samples: 100 * 960, seed: 23)  // 2 s
        let sourcePath = work.appendingPathComponent("source.wav").path
        try WAVFixtures.write(source, channels: 1, to: sourcePath)
        let sdp = work.appendingPathComponent("ffmpeg.sdp")
        func sender(input: [String], key: String, to port: UInt16) -> [String] {
            Self.srtpSender(input: input, key: key, rtpPort: port, rtcpPort: port, sdp: nil)
        }
        try Self.probeSDP(of: sourcePath, port: envPort, into: sdp)
        // The SDP without its key, and the same section again for the second port.
        let lines = try String(contentsOf: sdp, encoding: .utf8).split(whereSeparator: \.isNewline).map(String.init)
        #expect(lines.contains { $0.hasPrefix("a=crypto:") }, "ffmpeg's SDP carries the key: \(lines)")
        let keyless = lines.filter { !$0.hasPrefix("a=crypto:") }
        let media = try #require(keyless.firstIndex { $0.hasPrefix("m=audio ") })
        let second = keyless[media...].map {
            $0.hasPrefix("m=audio \(envPort) ")
                ? $0.replacingOccurrences(of: "m=audio \(envPort) ", with: "m=audio \(inlinePort) ") : $0
        }
        try (keyless + second).joined(separator: "\n").appending("\n").write(to: sdp, atomically: true, encoding: .utf8)

        let variable = "ROOMTAP_TEST_SRTP_KEY"
        let arguments = [
            "record", "--sdp", sdp.path, "--srtp", "port-\(envPort)=AES_CM_128_HMAC_SHA1_80:env:\(variable)",
            "--srtp", "port-\(inlinePort)=80:\(Self.wrongKey)", "--out", out.path,
        ]
        let plan = try CLIRunner.run(arguments + ["--dry-run"], environment: [variable: Self.key], timeout: 20)
        #expect(plan.status == 0, "\(plan.stderr)")
        #expect(plan.stdout.contains("rtp port \(envPort) srtp AES_CM_128_HMAC_SHA1_80"), "\(plan.stdout)")
        #expect(plan.stdout.contains("rtp port \(inlinePort) srtp AES_CM_128_HMAC_SHA1_80"), "\(plan.stdout)")
        let recorder = try CLIRunner.start(
            arguments + ["--duration", "6"], environment: [variable: Self.key])  // ffmpeg's start-up may be slow
        try waitUntilListening(port: envPort, pid: recorder.pid)
        try waitUntilListening(port: inlinePort, pid: recorder.pid)
        let speech = try CLIRunner.start(
            sender(input: ["-i", sourcePath], key: Self.key, to: envPort), executable: Self.ffmpeg)
        let tone = try CLIRunner.start(
            sender(input: ["-f", "lavfi", "-i", "sine=f=660:d=2"], key: Self.wrongKey, to: inlinePort),
            executable: Self.ffmpeg)
        #expect(speech.wait(timeout: 15).status == 0)
        #expect(tone.wait(timeout: 15).status == 0)
        let outcome = recorder.wait(timeout: 30)
        #expect(outcome.status == 0, "stderr: \(outcome.stderr)")

        let json = try roomJSON(out)
        let (_, speechSamples) = try Self.track(on: envPort, out, json)
        #expect(speechSamples.count == json["durationSamples"] as? Int, "the room's length")
        let onset = try #require(placement(of: source, in: speechSamples), "the env-keyed sender is in its file")
        let c = correlation(speechSamples, placed(source, at: onset, length: speechSamples.count))
        #expect(c > 0.9, "correlation with the source \(c)")
        let (_, toneSamples) = try Self.track(on: inlinePort, out, json)
        let toneOnset = try #require(toneSamples.firstIndex { abs(Int($0)) > 1_000 }, "the --srtp KEY sender is silent")
        let active = Array(toneSamples[toneOnset..<min(toneSamples.count, toneOnset + 48_000)])
        #expect(goertzelPower(active, frequency: 660) > 100 * goertzelPower(active, frequency: 440), "660 Hz")
        for port in [envPort, inlinePort] {
            #expect(try Self.received(on: port, json)["srtpRejected"] as? Int == 0, "port \(port)")
        }
        let text = try String(contentsOf: out.appendingPathComponent("room.json"), encoding: .utf8)
        for secret in [Self.key, Self.wrongKey] {
            for shown in [text, outcome.stdout, outcome.stderr, plan.stdout, plan.stderr] {
                #expect(!shown.contains(secret.prefix(12)), "a key is shown")
            }
        }
    }

    /// A bad --srtp is one line naming what is wrong, exit 64, nothing created, and no key in it.
    @Test func aBadSRTPOptionIsOneUsageLineWithoutTheKey() throws {
        let work = try temporaryDirectory()
        let sdp = work.appendingPathComponent("room.sdp")
        try "v=0\r\nc=IN IP4 127.0.0.1\r\nm=audio 25000 RTP/AVP 97\r\na=rtpmap:97 opus/48000/2\r\na=label:alice\r\n"
            .appending("m=audio 25002 RTP/AVP 97\r\na=rtpmap:97 opus/48000/2\r\na=label:bob\r\n")
            .appending("a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:\(Self.key)\r\n")
            .write(to: sdp, atomically: true, encoding: .utf8)
        let rec = work.appendingPathComponent("rec")
        let short = String(Self.key.dropLast(4))
        let cases: [(arguments: [String], says: String)] = [
            (["--srtp", "alice"], "--srtp must be NAME=SUITE:KEY or NAME=SUITE:env:VAR"),
            (["--srtp", "alice=\(Self.key)"], "--srtp alice: give the suite and the key"),
            (["--srtp", "alice=\(Self.key):80"], "--srtp alice: unknown suite"),
            (["--srtp", "alice=AES_CM_128_HMAC_SHA1_80:\(short)"], "--srtp alice: the key is not 30 bytes"),
            (["--srtp", "alice=AEAD_AES_256_GCM:\(Self.key)"], "--srtp alice: the key is not 44 bytes"),
            (
                ["--srtp", "alice=32:env:ROOMTAP_TEST_UNSET_KEY"],
                "the environment variable ROOMTAP_TEST_UNSET_KEY is not set"
            ),
            (
                ["--srtp", "alice=32:env:ROOMTAP_TEST_SHORT_KEY"],
                "the environment variable ROOMTAP_TEST_SHORT_KEY is not 30"
            ),
            (["--srtp", "carol=32:\(Self.key)"], "--srtp carol: \(sdp.path) has no participant of that name"),
            (["--srtp", "bob=32:\(Self.key)"], "has an SRTP key in the description already"),
            (["--srtp", "alice=32:\(Self.key)", "--srtp", "alice=80:\(Self.key)"], "--srtp alice is given twice"),
        ]
        for (extra, says) in cases {
            let outcome = try CLIRunner.run(
                ["record", "--sdp", sdp.path, "--out", rec.path] + extra,
                environment: ["ROOMTAP_TEST_SHORT_KEY": short], timeout: 20)
            #expect(outcome.status == 64, "\(extra): \(outcome.stderr)")
            #expect(outcome.stderrLines.count == 1 && outcome.stderr.hasPrefix("roomtap: error: "), "\(outcome.stderr)")
            #expect(outcome.stderr.contains(says), "\(extra): \(outcome.stderr)")
            #expect(!outcome.stderr.contains(short.prefix(12)), "the key is shown: \(outcome.stderr)")
            #expect(!FileManager.default.fileExists(atPath: rec.path), "\(extra) created \(rec.path)")
        }
        let described = try roomtap(
            ["record", "--listen", "127.0.0.1:25000", "--srtp", "alice=32:env:X", "--out", rec.path], expect: 64,
            timeout: 20)
        #expect(described.stderr.contains("--srtp keys a participant of --sdp or --room"), "\(described.stderr)")
    }

    /// What roomtap cannot honour is one line and exit 1, before anything is bound or created; a bad
    /// --allow is a usage error.
    @Test func whatCannotBeHonouredIsOneLineAndNothingIsCreated() throws {
        let work = try temporaryDirectory()
        let sdp = work.appendingPathComponent("room.sdp")
        try "v=0\r\nc=IN IP4 127.0.0.1\r\nm=audio 25000 RTP/AVP 97\r\na=rtpmap:97 opus/48000/2\r\n"
            .appending("a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:\(Self.key)|2^20|1:4\r\n")
            .write(to: sdp, atomically: true, encoding: .utf8)
        let rec = work.appendingPathComponent("rec")
        let refused = try roomtap(["record", "--sdp", sdp.path, "--out", rec.path], expect: 1, timeout: 20)
        #expect(refused.stderrLines.count == 1, "\(refused.stderr)")
        #expect(refused.stderr.contains("MKI") && !refused.stderr.contains(Self.key.prefix(12)), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: rec.path))
        let usage = try roomtap(
            ["record", "--listen", "127.0.0.1:25000", "--allow", "10.0.0.0/40", "--out", rec.path], expect: 64,
            timeout: 20)
        #expect(
            usage.stderrLines.first?.hasPrefix(
                "roomtap: error: --allow '10.0.0.0/40' must be an IP address or network ADDR[/PREFIX] "
                    + "(e.g. 192.0.2.7, 10.0.0.0/8, 2001:db8::/32)") == true, "\(usage.stderr)")
    }
}
