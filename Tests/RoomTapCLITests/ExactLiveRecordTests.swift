import Foundation
import RoomTapAll
import RoomTapCLITestSupport
import RoomTapMediaTestSupport
import RoomTapRTPTestSupport
import RoomTapTestSupport
import Testing

/// `roomtap record` of a live room through a bad network, end to end (real UDP on loopback, the
/// real binary): every speaker's file is what libopus gives for the packets that arrived with one
/// PLC call per lost packet, sample for sample; streams sent together land together; the record
/// never moves with jitter, while a live consumer adapts.
@Suite("CLI: exact live recordings", .serialized)
struct ExactLiveRecordTests {
    /// The reference for one sender: its packets, each it dropped concealed by one PLC call, or
    /// decoded from the next packet's FEC when that carries it (the sender encodes with FEC).
    static func reference(_ sender: RTPTestSender) -> [Int16] {
        let dropped = Set(sender.dropped)
        return ReferenceOpusDecode.decode(
            sender.packets.map { .init(payload: $0.payload, arrived: !dropped.contains($0.index)) }, fec: true)
    }

    /// Dropped packets the next packet's FEC recovers.
    static func recoverable(_ sender: RTPTestSender) -> Int {
        let dropped = Set(sender.dropped)
        return sender.dropped.filter {
            !dropped.contains($0 + 1) && RTPTestSender.hasFEC(sender.packets[$0 + 1].payload)
        }
        .count
    }

    /// Three speakers on one port, sent in the same instant with their own impairments and no
    /// RTCP (so each is placed by its own least-delayed packets); the room records for `seconds`,
    /// then drains its record delay.
    static func recordThree(
        impairments: (UInt64) -> RTPTestSender.Impairments, seconds: Int, extra: [String] = []
    ) throws -> (out: URL, senders: [RTPTestSender], json: [String: Any]) {
        let out = try temporaryDirectory()
        let port = try freeUDPPort()
        let address = try #require(ListenAddress("127.0.0.1:\(port)"))
        var senders: [RTPTestSender] = []
        for k in 0..<3 {
            let pcm = TestSignal.speechLike(samples: 150 * 960, seed: 40 + UInt64(k))
            let ssrc: UInt32 = 0xE0A0_0001 + UInt32(k)
            let sequence = UInt16(1000 * (k + 1))
            senders.append(
                RTPTestSender(
                    pcm: pcm, to: address, ssrc: ssrc, firstSequence: sequence,
                    impairments: impairments(UInt64(k + 1)), sendsRTCP: false))
        }
        let recorder = try CLIRunner.start(
            ["record", "--listen", address.description, "--duration", "\(seconds)", "--out", out.path, "--quiet"]
                + RealtimeTestPriority.recordFlags + extra)
        try waitUntilListening(port: port, pid: recorder.pid)
        let start = RealTimeClock.monotonicNow() + 200_000_000
        for sender in senders { sender.start(startNanos: start) }
        for sender in senders { _ = sender.wait() }
        let outcome = recorder.wait(timeout: 60)
        #expect(outcome.status == 0, "stderr: \(outcome.stderr)")
        return (out, senders, try roomJSON(out))
    }

    /// Checks each speaker's file against its reference, sample for sample; returns the onsets.
    static func checkExact(_ out: URL, _ senders: [RTPTestSender], json: [String: Any]) throws -> [Int] {
        let tracks = try #require(json["tracks"] as? [[String: Any]])
        let roomSamples = try #require(json["durationSamples"] as? Int)
        var onsets: [Int] = []
        for sender in senders {
            let name = "ssrc-" + String(sender.ssrc, radix: 16)
            let wav = try WAVFile.readSamples(path: out.appendingPathComponent("\(name).wav").path).1
            #expect(wav.count == roomSamples, "every file has the room's length")
            let expected = reference(sender)
            let onset = try #require(placement(of: expected, in: wav), "\(name)'s audio is in its file")
            let n = min(expected.count, wav.count - onset)
            #expect(n == expected.count, "the whole stream is in \(name).wav (the stop drained the record delay)")
            let mismatch = (0..<n).first { wav[onset + $0] != expected[$0] }
            #expect(mismatch == nil, "\(name).wav differs from the libopus reference at sample \(mismatch ?? -1)")
            #expect(wav[..<onset].allSatisfy { $0 == 0 } && wav[(onset + n)...].allSatisfy { $0 == 0 })
            onsets.append(onset)
            let track = try #require(tracks.first { $0["name"] as? String == name })
            let rtp = try #require(track["rtp"] as? [String: Any])
            let record = try #require(rtp["record"] as? [String: Any], "per-track record figures")
            #expect(record["lost"] as? Int == sender.dropped.count)
            #expect(record["late"] as? Int == 0)
            #expect(record["recoveredByFEC"] as? Int == Self.recoverable(sender))
            #expect(
                record["concealedMs"] as? Double == Double((sender.dropped.count - Self.recoverable(sender)) * 20),
                "concealed: the lost packets' duration, less what FEC recovered")
            #expect(rtp["duplicates"] as? Int == sender.duplicated.count)
        }
        return onsets
    }

    @Test func lossReorderDuplicatesAndJitterRecordEveryFileExactlyAndTogether() throws {
        let run = try Self.recordThree(
            impairments: { seed in
                RTPTestSender.Impairments(
                    loss: 0.05, reorder: 0.02, duplicate: 0.01, jitterMilliseconds: 30, seed: seed)
            }, seconds: 4)
        #expect(run.senders.contains { !$0.dropped.isEmpty } && run.senders.contains { !$0.reordered.isEmpty })
        let onsets = try Self.checkExact(run.out, run.senders, json: run.json)
        let spread = onsets.max()! - onsets.min()!
        #expect(spread <= 96, "the three tracks, sent together, are \(Double(spread) / 48) ms apart")
    }

    @Test func aJitterStormWithoutLossIsBitExactAndTogether() throws {
        let run = try Self.recordThree(
            impairments: { seed in RTPTestSender.Impairments(jitterMilliseconds: 100, seed: seed + 10) }, seconds: 4)
        for sender in run.senders { #expect(sender.dropped.isEmpty) }
        let onsets = try Self.checkExact(run.out, run.senders, json: run.json)
        let spread = onsets.max()! - onsets.min()!
        #expect(spread <= 240, "the three tracks, sent together, are \(Double(spread) / 48) ms apart")
    }

    /// Jitter stepping 5 → 120 → 5 ms while `--play` (ALSA's file plugin) listens: the live
    /// playout's delay rises and falls again, the record never moves and stays exact.
    @Test func theRecordStaysExactWhileTheLivePlayoutAdaptsToJitterSteps() throws {
        let alsa = try ALSATestConfig()
        let out = try temporaryDirectory()
        let port = try freeUDPPort()
        let address = try #require(ListenAddress("127.0.0.1:\(port)"))
        var impairments = RTPTestSender.Impairments(jitterMilliseconds: 5, seed: 3)
        impairments.jitterSteps = [.init(from: 60, milliseconds: 120), .init(from: 110, milliseconds: 5)]
        let sender = RTPTestSender(
            pcm: toneBursts(samples: 480 * 960), to: address, ssrc: 0x57E9_0001, impairments: impairments)
        let recorder = try CLIRunner.start(
            [
                "record", "--listen", address.description, "--duration", "10", "--record-delay", "1000", "--play",
                alsa.playbackDevice, "--out", out.path, "--quiet",
            ] + RealtimeTestPriority.recordFlags, environment: alsa.environment)
        try waitUntilListening(port: port, pid: recorder.pid)
        sender.start(startNanos: RealTimeClock.monotonicNow() + 100_000_000)
        _ = sender.wait()
        let outcome = recorder.wait(timeout: 60)
        #expect(outcome.status == 0, "stderr: \(outcome.stderr)")

        let name = "ssrc-" + String(sender.ssrc, radix: 16)
        let wav = try WAVFile.readSamples(path: out.appendingPathComponent("\(name).wav").path).1
        let expected = Self.reference(sender)
        let onset = try #require(placement(of: expected, in: wav))
        let n = min(expected.count, wav.count - onset)
        let mismatch = (0..<n).first { wav[onset + $0] != expected[$0] }
        #expect(n == expected.count && mismatch == nil, "the record differs from libopus at \(mismatch ?? -1)")

        let json = try roomJSON(out)
        let track = try #require((json["tracks"] as? [[String: Any]])?.first { $0["name"] as? String == name })
        let rtp = try #require(track["rtp"] as? [String: Any])
        let maxDelay = rtp["maxDelayMs"] as? Double ?? 0
        #expect(maxDelay >= 120, "the live delay rose with the jitter: \(rtp)")
        #expect((rtp["delayMs"] as? Double ?? .infinity) < maxDelay, "and fell again: \(rtp)")
        #expect((rtp["delayAdaptations"] as? Int ?? 0) >= 2)
        let record = try #require(rtp["record"] as? [String: Any])
        #expect(
            record["late"] as? Int == 0 && record["lost"] as? Int == 0 && record["driftCorrectedSamples"] as? Int == 0)
        #expect(rtp["live"] is [String: Any], "the live playout's own figures")
        // What was played is the live playout: the same bursts, about a second earlier.
        let played = try alsa.playedSamples()
        #expect(played.count == json["durationSamples"] as? Int)
        let playedOnset = try #require(played.firstIndex { abs(Int($0)) > 1_000 })
        let recordedOnset = try #require(wav.firstIndex { abs(Int($0)) > 1_000 })
        let ahead = Double(recordedOnset - playedOnset) / 48
        #expect(ahead > 900 && ahead < 960, "the live playout is \(ahead) ms ahead of the record")
    }
}
