import Foundation
import RoomTapCLITestSupport
import RoomTapTestSupport
import Testing

/// The WebRTC client's test peers, proven end to end before the client uses them: a real Janus
/// (JanusTestServer) with an aiortc publisher and the reference aiortc subscriber, and the WHEP
/// server with the reference WHEP client. All on 127.0.0.1.
@Suite struct WebRTCPeerHarnessTests {
    private func sourceWAV(_ label: String) throws -> (path: String, samples: [Int16]) {
        try speechWAV(label, speaker: "alice")
    }

    @Test func publishedWAVComesBackThroughJanus() throws {
        let janus = try JanusTestServer()
        try janus.createRoom(id: 4321, pin: "pw")
        let source = try sourceWAV("janus-source")
        let out = try TestScratch.directory("janus-recorded").path
        let subscriber = try PythonPeer(
            .janusSubscriber, arguments: ["--janus", janus.baseURL, "--room", "4321", "--pin", "pw", "--out", out])
        #expect(subscriber.firstLine.hasPrefix("joined "))
        // The WAV starts 8 s from now, once the subscriber has surely subscribed; the publisher leaves
        // by itself 12 s after it published (the WAV ends at +11 s at most).
        let startAt = Date().timeIntervalSince1970 + 8
        let publisher = try PythonPeer(
            .janusPublisher,
            arguments: [
                "--janus", janus.baseURL, "--room", "4321", "--pin", "pw", "--display", "alice", "--wav", source.path,
                "--seconds", "12", "--start-at-unix", String(startAt),
            ])
        let feed = try #require(publisher.firstLine.split(separator: " ").last.flatMap { UInt64($0) })
        #expect(publisher.firstLine == "published \(feed)")
        let subscribed = subscriber.waitForLine(startingWith: "subscribed \(feed) ")
        #expect(subscribed == "subscribed \(feed) alice", "\(subscriber.stderrTail())")
        #expect(Date().timeIntervalSince1970 < startAt, "the subscriber was too slow: the WAV began before it")
        #expect(publisher.waitForExit(timeout: .seconds(40)) == 0, "\(publisher.stderrTail())")
        #expect(subscriber.stop() == 0, "\(subscriber.stderrTail())")
        let recordedLine = try #require(subscriber.waitForLine(startingWith: "recorded \(feed) ", timeout: .seconds(1)))
        let recorded = try #require(pcmWAVFirstChannel("\(out)/\(feed).wav"), "\(recordedLine)")
        #expect(recorded.rate == 48_000)
        #expect(recordedLine == "recorded \(feed) \(recorded.samples.count) \(out)/\(feed).wav")
        let match = bestAlignment(source: source.samples, recorded: recorded.samples)
        #expect(match.correlation >= 0.95, "correlation \(match.correlation) at lag \(match.lag)")
        // The janus publisher's unpublish and leave reached the subscriber: Janus's log has no error.
        #expect(!janus.logTail(200).contains("[ERR]"), "\(janus.logTail())")
    }

    @Test func wrongPinIsOneClearLine() throws {
        let janus = try JanusTestServer()
        try janus.createRoom(id: 55, pin: "right")
        let source = try sourceWAV("janus-pin")
        let error = #expect(throws: PythonPeer.StartError.self) {
            _ = try PythonPeer(
                .janusPublisher,
                arguments: [
                    "--janus", janus.baseURL, "--room", "55", "--pin", "wrong", "--display", "x", "--wav", source.path,
                ])
        }
        #expect(error?.description.contains("exited (status 1)") == true, "\(String(describing: error))")
        #expect(error?.description.contains("Janus error 433: Unauthorized (wrong pin)") == true)
        #expect(throws: JanusTestServer.Failure.self) { try janus.createRoom(id: 55) }  // 427: it exists
    }

    @Test func whepServerAnswersAndStreams() throws {
        let source = try sourceWAV("whep-source")
        let server = try PythonPeer(.whepServer, arguments: ["--stream", "alice=\(source.path)", "--token", "T0k"])
        let port = try #require(server.firstLine.split(separator: " ").last.flatMap { UInt16($0) })
        let sdp = [("Content-Type", "application/sdp")]
        let auth = [("Authorization", "Bearer T0k")]
        let offer = Data("v=0\r\n".utf8)
        #expect(
            try LoopbackHTTP.request("POST", port: port, path: "/whep/alice", headers: sdp, body: offer).status == 401)
        #expect(
            try LoopbackHTTP.request("POST", port: port, path: "/whep/nobody", headers: sdp + auth, body: offer).status
                == 404)
        #expect(
            try LoopbackHTTP.request("POST", port: port, path: "/whep/alice", headers: sdp + auth, body: offer).status
                == 400)
        let out = try TestScratch.directory("whep-recorded").appendingPathComponent("alice.wav").path
        let client = try PythonPeer(
            .whepClient,
            arguments: [
                "--url", "http://127.0.0.1:\(port)/whep/alice", "--token", "T0k", "--out", out, "--seconds", "5",
            ])
        #expect(client.firstLine == "status 201")
        #expect(client.waitForExit(timeout: .seconds(40)) == 0, "\(client.stderrTail())")
        let lines = client.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.hasPrefix("header Location: /whep/alice/") })
        #expect(lines.contains("header Content-Type: application/sdp"))
        #expect(lines.contains("header Link: <stun:127.0.0.1:3478>; rel=\"ice-server\""))
        #expect(lines.contains("deleted 200"))
        let recorded = try #require(pcmWAVFirstChannel(out))
        let match = bestAlignment(source: source.samples, recorded: recorded.samples)
        #expect(match.correlation >= 0.95, "correlation \(match.correlation) at lag \(match.lag)")
        #expect(server.stop() == 0, "\(server.stderrTail())")
        #expect(server.stderr.contains("whep: DELETE /whep/alice/"))
    }
}
