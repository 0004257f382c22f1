import Foundation
import RoomTapAll
import RoomTapCLITestSupport
import RoomTapRTPTestSupport
import RoomTapTestSupport
import Testing

/// `record --metrics HOST:PORT`: a recorder's own Prometheus endpoint while the room runs.
@Suite("CLI: record --metrics")
struct RecordMetricsCLITests {
    /// The first `roomtap: <what> ADDR` line of a running recorder's stderr.
    static func address(after marker: String, in running: CLIRunner.Running) throws -> String? {
        var found: String?
        _ = try waitUntil(timeout: .seconds(30), every: .milliseconds(20)) {
            found = running.stderrSoFar.split(separator: "\n").first { $0.hasPrefix(marker) }.map {
                String($0.dropFirst(marker.count))
            }
            return found != nil || !running.isRunning
        }
        return found
    }

    func get(_ url: String) -> (status: Int, body: String) { httpGet(url) }

    /// The value of the sample `name` (with its labels, e.g. `roomtap_tracks` or
    /// `roomtap_packets_received_total{track="ssrc-abc"}`) in an exposition text.
    static func value(_ name: String, in text: String) -> Double? {
        text.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap { Double($0.split(separator: " ")[1]) }
    }

    @Test func aLiveRecorderCountsItsPacketsAndTracksWhileItRuns() throws {
        let out = try temporaryDirectory().appendingPathComponent("room")
        let recorder = try CLIRunner.start([
            "record", "--listen", "127.0.0.1:0", "--metrics", "127.0.0.1:0", "--out", out.path, "--quiet",
        ])
        let listen = try #require(try Self.address(after: "roomtap: listening on ", in: recorder))
        let metricsLine = try #require(try Self.address(after: "roomtap: metrics on ", in: recorder))
        let metrics = try #require(metricsLine.hasSuffix("/metrics") ? metricsLine : nil)
        let address = try #require(ListenAddress(listen))
        let sender = RTPTestSender(
            pcm: TestSignal.sine(frequency: 440, samples: 48_000 * 2, amplitude: 0.5), to: address, ssrc: 0xABC,
            firstSequence: 1, firstTimestamp: 1)
        sender.run()
        let label = "{track=\"ssrc-abc\"}"
        var text = ""
        #expect(
            try waitUntil(timeout: .seconds(30), every: .milliseconds(50)) {
                text = get(metrics).body
                return Self.value("roomtap_packets_received_total" + label, in: text) == Double(sender.packets.count)
            }, "every packet sent is counted: \(sender.packets.count) sent; \(text)")
        #expect(Self.value("roomtap_tracks", in: text) == 1)
        #expect(Self.value("roomtap_packets_lost_total" + label, in: text) == 0)
        #expect((Self.value("roomtap_written_bytes", in: text) ?? 0) > 0)
        #expect(text.contains("# TYPE roomtap_packets_received_total counter"))
        #expect(get(metrics.replacingOccurrences(of: "/metrics", with: "/healthz")).status == 200)
        recorder.signal(SIGINT)
        let outcome = recorder.wait(timeout: 60)
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(get(metrics).status == 0, "the endpoint closes with the room")
    }

    @Test func aTakenOrBadAddressIsOneClearLineAndNothingIsCreated() throws {
        let taken = try MetricsServer(address: "127.0.0.1:0") { _ in (200, "text/plain", "") }
        let out = try temporaryDirectory().appendingPathComponent("room")
        let busy = InProcessCLI.run([
            "record", "--listen", "127.0.0.1:0", "--metrics", taken.address, "--out", out.path, "--duration", "1",
        ])
        #expect(busy.status == 1 && busy.stderrLines.count == 1, "\(busy.stderr)")
        #expect(busy.stderr.contains("cannot listen on \(taken.address) for --metrics"), "\(busy.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out.path), "nothing created")
        let bad = InProcessCLI.run(["record", "--listen", "127.0.0.1:0", "--metrics", "9464", "--out", out.path])
        #expect(bad.status == 64 && bad.stderr.contains("--metrics '9464' must be HOST:PORT"), "\(bad.stderr)")
    }
}
