import Foundation
import RoomTapAll
import RoomTapRTPTestSupport
import RoomTapTestSupport

/// The "exact live" figures: three speakers sent in the same instant to one `roomtap record
/// --listen` through a seeded bad network (5 % loss, 2 % reorder, 1 % duplicates, 0–30 ms
/// jitter; then a 0–100 ms jitter storm without loss), without RTCP (each stream placed by its
/// own least-delayed packets) and with sender reports (placed by NTP). Each file is compared with libopus itself
/// given the packets that arrived and one PLC call per lost packet (``ReferenceOpusDecode``):
/// sample-exact or not, its correlation with the clean decode next to the reference's, and how
/// far apart the three tracks landed.
enum ImpairmentRun {
    struct Track {
        let exact: Bool
        let fileVsClean: Double
        let referenceVsClean: Double
        let onset: Int
    }

    static func run(jitter: Double, loss: Double, rtcp: Bool = false, port: UInt16, seconds: Int = 10) throws -> [Track]
    {
        let out = "\(BenchFiles.directory)/impairment"
        try? FileManager.default.removeItem(atPath: out)
        let address = ListenAddress(host: "127.0.0.1", port: port)
        var senders: [RTPTestSender] = []
        for k in 0..<3 {
            let impairments = RTPTestSender.Impairments(
                loss: loss, reorder: loss > 0 ? 0.02 : 0, duplicate: loss > 0 ? 0.01 : 0, jitterMilliseconds: jitter,
                seed: 100 + UInt64(k))
            senders.append(
                RTPTestSender(
                    pcm: TestSignal.speechLike(samples: seconds * 48_000, seed: 60 + UInt64(k)), to: address,
                    ssrc: 0xBE00_0001 + UInt32(k), impairments: impairments, sendsRTCP: rtcp))
        }
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("roomtap").path
        let recorder = Process()
        recorder.executableURL = URL(fileURLWithPath: binary)
        recorder.arguments = [
            "record", "--listen", address.description, "--duration", "\(seconds + 1)", "--out", out, "--quiet",
        ]
        try recorder.run()
        usleep(500_000)
        let start = RealTimeClock.monotonicNow() + 100_000_000
        for sender in senders { sender.start(startNanos: start) }
        for sender in senders { _ = sender.wait() }
        recorder.waitUntilExit()
        return try senders.map { sender in
            let name = "ssrc-" + String(sender.ssrc, radix: 16)
            let wav = try WAVFile.readSamples(path: "\(out)/\(name).wav").1
            let dropped = Set(sender.dropped)
            let reference = ReferenceOpusDecode.decode(
                sender.packets.map { .init(payload: $0.payload, arrived: !dropped.contains($0.index)) }, fec: true)
            let clean = sender.cleanDecode()
            let probe = Array(reference[960..<1920])
            var onset = 0
            while onset + 1920 <= wav.count && Array(wav[(onset + 960)..<(onset + 1920)]) != probe { onset += 1 }
            let n = min(reference.count, wav.count - onset)
            let file = Array(wav[onset..<(onset + n)])
            return Track(
                exact: file == Array(reference[..<n]) && n == reference.count,
                fileVsClean: TestSignal.correlation(file, clean),
                referenceVsClean: TestSignal.correlation(reference[..<n], clean), onset: onset)
        }
    }

    static func report(_ label: String, _ tracks: [Track]) -> String {
        let spread = Double((tracks.map(\.onset).max() ?? 0) - (tracks.map(\.onset).min() ?? 0)) / 48
        let rows = tracks.enumerated().map { i, t in
            String(
                format: "    track %d: %@, correlation with the clean decode %.4f (the libopus reference: %.4f)", i,
                t.exact ? "sample-exact with the reference" : "DIFFERS from the reference", t.fileVsClean,
                t.referenceVsClean)
        }
        return "  \(label): tracks sent together landed \(String(format: "%.2f", spread)) ms apart\n"
            + rows.joined(separator: "\n")
    }
}
