import Foundation
import RoomTapCLITestSupport
import RoomTapStorage
import RoomTapTestSupport
import Testing

/// WebhookSender against a loopback receiver; the signature is checked with the openssl command
/// (an oracle independent of roomtap's code).
@Suite("Storage: webhooks")
struct WebhookSenderTests {
    static func opensslHMAC(_ body: [UInt8], secret: String) throws -> String {
        let dir = try TestScratch.directory("hmac")
        let file = dir.appendingPathComponent("body")
        try Data(body).write(to: file)
        let outcome = try CLIRunner.run(
            ["dgst", "-sha256", "-hmac", secret, "-r", file.path], executable: URL(fileURLWithPath: "/usr/bin/openssl"))
        #expect(outcome.status == 0, "openssl: \(outcome.stderr)")
        return String(outcome.stdout.prefix(64))
    }

    @Test func eventsArriveSignedInOrderAfterRetries() throws {
        let receiver = try WebhookTestReceiver(failFirst: 2)
        let sender = WebhookSender(
            url: receiver.url, secret: "s3cr3t", retry: RetryPolicy(attempts: 4, baseDelay: 0.01, maxDelay: 0.05))
        #expect(sender.post(event: "recording.segment", body: ["track": "alice", "firstSample": 480_000]))
        #expect(sender.post(event: "job.done", json: "{\"job\":\"j1\"}"))
        #expect(sender.flush(timeout: 20))
        sender.close()
        let got = receiver.delivered
        #expect(got.count == 2 && receiver.answered == 4, "two 503s retried")
        #expect(got.map { $0.headers["x-roomtap-event"] } == ["recording.segment", "job.done"])
        for request in got {
            #expect(request.method == "POST" && request.path == "/hook")
            #expect(request.headers["content-type"] == "application/json")
            let expected = try Self.opensslHMAC(request.body, secret: "s3cr3t")
            #expect(request.headers["x-roomtap-signature"] == "sha256=" + expected)
        }
        let first = try JSONSerialization.jsonObject(with: Data(got[0].body)) as? [String: Any]
        #expect(first?["event"] as? String == "recording.segment" && first?["track"] as? String == "alice")
        #expect(first?["firstSample"] as? Int == 480_000 && first?["sentAt"] is String)
        #expect(String(decoding: got[1].body, as: UTF8.self) == "{\"job\":\"j1\"}")
        #expect(sender.counts == (sent: 2, failed: 0, dropped: 0))
    }

    @Test func aFullQueueDropsAndCountsWithoutBlocking() throws {
        let refusing = try RefusingTCPPort()
        let sender = WebhookSender(
            url: "http://127.0.0.1:\(refusing.port)/", secret: nil, capacity: 4,
            retry: RetryPolicy(attempts: 2, baseDelay: 0.2, maxDelay: 0.2))
        let started = ContinuousClock.now
        var accepted = 0
        for i in 0..<100 where sender.post(event: "e", body: ["i": .number(Double(i))]) { accepted += 1 }
        #expect(ContinuousClock.now - started < .milliseconds(200), "post never waits for the network")
        // The queue holds 4 and the sender takes one at a time, each held 0.2 s by its retry: a
        // loaded machine may let it take one or two more while the loop runs, never the flood.
        #expect(
            accepted <= 10 && sender.counts.dropped == 100 - accepted,
            "accepted \(accepted), dropped \(sender.counts.dropped)")
        sender.close(timeout: 1)
        #expect(sender.counts.sent == 0 && sender.counts.failed >= 1)
        #expect(sender.lastError?.contains("webhook e") == true)
    }

    @Test func noSecretNoSignatureAndBadURLsAreNamed() throws {
        let receiver = try WebhookTestReceiver()
        let sender = WebhookSender(url: receiver.url, secret: nil)
        sender.post(event: "upload.done", body: [:])
        #expect(sender.flush(timeout: 20))
        sender.close()
        #expect(receiver.delivered.first?.headers["x-roomtap-signature"] == nil)
        #expect(WebhookSender.problem(with: "ftp://x") != nil && WebhookSender.problem(with: "http://a b") != nil)
        #expect(WebhookSender.problem(with: "https://hooks.example.com/x") == nil)
    }
}
