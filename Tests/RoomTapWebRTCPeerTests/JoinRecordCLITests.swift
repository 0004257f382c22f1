import Foundation
import RoomTapAgentTestSupport
import RoomTapCLITestSupport
import RoomTapTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `roomtap record --join` and `--whep` against real servers and real WebRTC peers: a Janus
/// VideoRoom (Debian's janus) with aiortc publishers, and an aiortc WHEP server. Everything on
/// 127.0.0.1 (`--ice-host 127.0.0.1`; Janus through the loopback shim of JanusTestServer).
@Suite(.serialized) struct JoinRecordCLITests {
    private func roomJSON(_ dir: String) throws -> [String: Any] {
        let data = try Data(contentsOf: URL(fileURLWithPath: dir + "/room.json"))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    @Test func everyPublisherOfAJanusRoomIsATrackByDisplayNameAlignedAndExact() throws {
        let janus = try JanusTestServer()
        try janus.createRoom(id: 1234, pin: "pw")
        let alice = try speechWAV("join-alice", speaker: "alice")
        let bob = try speechWAV("join-bob", speaker: "bob")
        let out = try TestScratch.directory("join-janus").appendingPathComponent("room").path
        // Both speak at the same wall-clock instant, after everyone is connected.
        let startAt = Date().timeIntervalSince1970 + 9
        func publish(_ name: String, _ wav: String, seconds: Int) throws -> PythonPeer {
            try PythonPeer(
                .janusPublisher,
                arguments: [
                    "--janus", janus.baseURL, "--room", "1234", "--pin", "pw", "--display", name, "--wav", wav,
                    "--seconds", String(seconds), "--start-at-unix", String(startAt), "--quiet",
                ])
        }
        // Alice is in the room before the recorder; Bob joins after it (a late joiner) and stays
        // longer; Alice leaves first.
        let alicePeer = try publish("Alice Smith", alice.path, seconds: 13)
        let recorder = try CLIRunner.start([
            "record", "--join", "janus+http://127.0.0.1:\(janus.port)/janus?room=1234&pin=pw", "--ice-host",
            "127.0.0.1",
            "--duration", "18", "--out", out, "--quiet",
        ])
        #expect(waitUntil(timeout: .seconds(30)) { FileManager.default.fileExists(atPath: out + "/room.json") })
        let bobPeer = try publish("bob", bob.path, seconds: 16)
        #expect(Date().timeIntervalSince1970 < startAt, "the peers were too slow: the audio began before all joined")
        #expect(alicePeer.waitForExit(timeout: .seconds(40)) == 0, "\(alicePeer.stderrTail())")
        let outcome = recorder.wait(timeout: 60)
        #expect(outcome.status == 0, "\(outcome.stderr)\n\(janus.logTail())")
        _ = bobPeer.stop()
        let aliceRecorded = try #require(pcmWAVFirstChannel(out + "/Alice-Smith.wav"), "\(outcome.stderr)")
        let bobRecorded = try #require(pcmWAVFirstChannel(out + "/bob.wav"), "\(outcome.stderr)")
        #expect(aliceRecorded.samples.count == bobRecorded.samples.count)
        let a = bestAlignment(source: alice.samples, recorded: aliceRecorded.samples)
        let b = bestAlignment(source: bob.samples, recorded: bobRecorded.samples)
        #expect(a.correlation >= 0.95, "alice: correlation \(a.correlation) at lag \(a.lag)")
        #expect(b.correlation >= 0.95, "bob: correlation \(b.correlation) at lag \(b.lag)")
        // Sent together, placed together. The publishers are aiortc processes that start their WAV
        // at one wall-clock instant; under the whole suite's load their own start varies by a few
        // ms (7.8 ms seen beside 900 other tests, under 4 ms alone), which no recorder can undo: 10 ms
        // (480 samples) here. The recorder's own placement is held to 2 ms by the RTP suites.
        #expect(abs(a.lag - b.lag) <= 480, "alice at \(a.lag), bob at \(b.lag) samples")
        let room = try roomJSON(out)
        let join = try #require(room["join"] as? [String: Any])
        #expect(join["kind"] as? String == "janus")
        #expect(!(String(describing: room)).contains("pw\""), "the pin is in room.json")
        let publishers = try #require(join["publishers"] as? [[String: Any]])
        #expect(publishers.compactMap { $0["name"] as? String }.sorted() == ["Alice-Smith", "bob"])
        let aliceEntry = try #require(publishers.first { $0["name"] as? String == "Alice-Smith" })
        #expect(aliceEntry["present"] as? Bool == false, "alice left before the end")
        for entry in publishers {
            #expect((entry["receiverReportsSent"] as? Int ?? 0) > 0)
            #expect((entry["setUpMs"] as? [Double])?.count == 1)
        }
        let tracks = try #require(room["tracks"] as? [[String: Any]])
        let aliceRTP = try #require(tracks.first { $0["name"] as? String == "Alice-Smith" }?["rtp"] as? [String: Any])
        #expect(aliceRTP["leftAtEnd"] as? Bool == true)
        #expect(aliceRTP["senderReportTiming"] as? Bool == true)
    }

    @Test func aRoomThatCannotBeJoinedIsOneLineAndNoFiles() throws {
        let janus = try JanusTestServer()
        try janus.createRoom(id: 77, pin: "right")
        let scratch = try TestScratch.directory("join-errors")
        // A server that is down: a port held by a socket that never listens (connections are refused).
        let refusing = try RefusingTCPPort()
        defer { refusing.close() }
        let cases: [(url: String, message: String)] = [
            ("janus+http://127.0.0.1:\(janus.port)/janus?room=78", "No such room (78) (error 426)"),
            ("janus+http://127.0.0.1:\(janus.port)/janus?room=77&pin=wrong", "Unauthorized (wrong pin) (error 433)"),
            ("janus+http://127.0.0.1:\(janus.port)/janus?room=77", "Missing mandatory element (pin) (error 429)"),
            ("janus+http://127.0.0.1:\(refusing.port)/janus?room=77", "cannot reach the Janus server at"),
        ]
        for (index, item) in cases.enumerated() {
            let out = scratch.appendingPathComponent("room\(index)").path
            let outcome = try CLIRunner.run([
                "record", "--join", item.url, "--ice-host", "127.0.0.1", "--duration", "2", "--out", out,
            ])
            #expect(outcome.status == 1, "\(item.url): \(outcome.stderr)")
            #expect(outcome.stderrLines.count == 1, "\(outcome.stderr)")
            #expect(outcome.stderr.contains(item.message), "\(item.url): \(outcome.stderr)")
            #expect(!FileManager.default.fileExists(atPath: out), "\(out) was made")
        }
        let usage = try CLIRunner.run(["record", "--join", "http://127.0.0.1/janus?room=1", "--out", "x"])
        #expect(usage.status == 64)
        #expect(usage.stderr.contains("must be janus+http://HOST:PORT/janus?room=ID"))
    }

    @Test func aWHEPEndpointIsATrackAndItsSessionIsDeleted() throws {
        let bob = try speechWAV("whep-bob", speaker: "bob")
        let server = try PythonPeer(.whepServer, arguments: ["--stream", "bob=\(bob.path)", "--token", "T0k"])
        let port = try #require(server.firstLine.split(separator: " ").last.flatMap { UInt16($0) })
        let scratch = try TestScratch.directory("whep-record")
        let out = scratch.appendingPathComponent("room").path
        let url = "http://127.0.0.1:\(port)/whep/bob"
        let outcome = try CLIRunner.run(
            ["record", "--whep", "bob=\(url)", "--ice-host", "127.0.0.1", "--duration", "6", "--out", out, "--quiet"],
            environment: ["ROOMTAP_WHEP_TOKEN": "T0k"])
        #expect(outcome.status == 0, "\(outcome.stderr)\n\(server.stderrTail())")
        let recorded = try #require(pcmWAVFirstChannel(out + "/bob.wav"))
        let match = bestAlignment(source: bob.samples, recorded: recorded.samples)
        #expect(match.correlation >= 0.95, "correlation \(match.correlation) at lag \(match.lag)")
        #expect(waitUntil(timeout: .seconds(10)) { server.stderr.contains("whep: DELETE /whep/bob/") })
        #expect(!(try String(contentsOfFile: out + "/room.json", encoding: .utf8)).contains("T0k"))

        for (args, environment, message) in [
            (["--whep", "bob=\(url)"], [String: String](), "refused the token (HTTP 401)"),
            (["--whep", "bob=\(url)", "--whep-token", "wrong"], [:], "refused the token (HTTP 401)"),
            (
                ["--whep", "x=http://127.0.0.1:\(port)/whep/nobody", "--whep-token", "T0k"], [:],
                "does not exist (HTTP 404)"
            ),
        ] {
            let dir = scratch.appendingPathComponent("refused").path
            let refused = try CLIRunner.run(
                ["record"] + args + ["--ice-host", "127.0.0.1", "--duration", "2", "--out", dir],
                environment: environment)
            #expect(refused.status == 1, "\(refused.stderr)")
            #expect(refused.stderrLines.count == 1 && refused.stderr.contains(message), "\(refused.stderr)")
            #expect(!FileManager.default.fileExists(atPath: dir))
        }
        #expect(server.stop() == 0, "\(server.stderrTail())")
    }
}

/// `--agent-publish`: the agent's voice as a publisher of the joined Janus room, heard by another
/// participant (a second roomtap joined to the same room records it as the track `agent`).
@Suite struct AgentPublishCLITests {
    @Test func theAgentsVoiceIsAPublisherEveryoneInTheRoomHears() throws {
        let key = "sk-test-DO-NOT-PRINT-0123456789"
        let server = try FakeRealtimeServer(expectedKey: key)
        defer { server.stop() }
        let janus = try JanusTestServer()
        try janus.createRoom(id: 99)
        let scratch = try TestScratch.directory("agent-publish")
        let url = "janus+http://127.0.0.1:\(janus.port)/janus?room=99"
        // The other participant: records whoever publishes. Both rooms run until they are stopped,
        // so the test waits on what happened, never on how long set-up takes on a loaded machine.
        let listenerControl = uniqueControlPath()
        let listener = try CLIRunner.start([
            "record", "--join", url + "&display=listener", "--ice-host", "127.0.0.1", "--duration", "120", "--out",
            scratch.appendingPathComponent("listener").path, "--quiet", "--control", listenerControl,
        ])
        defer { if listener.isRunning { listener.signal(SIGKILL) } }
        let alice = WebRTCPeers.packageRoot.appendingPathComponent("Samples/room/alice.opus").path
        let room = scratch.appendingPathComponent("room")
        let recorderControl = uniqueControlPath()
        let recorder = try CLIRunner.start(
            [
                "record", "--file", "alice=\(alice)", "--join", url, "--ice-host", "127.0.0.1", "--duration", "120",
                "--agent", "--agent-url", server.url, "--agent-publish", "--out", room.path, "--quiet",
                "--control", recorderControl,
            ], environment: ["OPENAI_API_KEY": key])
        defer { if recorder.isRunning { recorder.signal(SIGKILL) } }
        #expect(server.wait(timeout: .seconds(30)) { $0.audio().count > 12_000 })
        try agentSpeaksToAListener(
            server: server, itemID: "item_publish", listenerControl: listenerControl, recorderControl: recorderControl)
        let outcome = recorder.wait(timeout: 60)
        #expect(outcome.status == 0, "\(outcome.stderr)\n\(janus.logTail())")
        let heard = listener.wait(timeout: 60)
        #expect(heard.status == 0, "\(heard.stderr)")
        let spoken = try #require(pcmWAVFirstChannel(room.appendingPathComponent("agent.wav").path)).samples
        let received = try #require(
            pcmWAVFirstChannel(scratch.appendingPathComponent("listener/agent.wav").path),
            "the listener has no agent track: \(heard.stderr)"
        ).samples
        let match = try #require(
            agentVoiceMatch(spoken: spoken, received: received), "the room heard nothing of the agent")
        let loudest = received.map { abs(Int($0)) }.max() ?? 0
        let detail =
            "correlation \(match.correlation); \(received.count) samples heard, loudest \(loudest) at "
            + "\(received.firstIndex { abs($0) > 500 } ?? -1); spoken \(spoken.count) from "
            + "\(spoken.firstIndex { abs($0) > 500 } ?? -1); "
            + ((try? String(contentsOfFile: room.path + "/room.json", encoding: .utf8)) ?? "").split(separator: "\n")
            .filter { $0.contains("rtpSent") || $0.contains("rtpUnsent") }.joined() + "\n"
            + ((try? String(contentsOfFile: scratch.path + "/listener/room.json", encoding: .utf8)) ?? "")
            .split(separator: "\n").filter {
                $0.contains("\"lost\"") || $0.contains("concealedMs") || $0.contains("late\"")
                    || $0.contains("\"packets\"")
            }.joined()
        // Measured 0.99 here, idle and with both cores loaded (0.77-0.9 before the test waited for
        // the listener's subscription): the 700 Hz tone through a second Opus encode, Janus and the
        // listener's decode; a silent, cut or garbled voice scores well below.
        #expect(match.correlation >= 0.9, "the room hears the agent: \(detail)")
    }
}

/// A TCP port on 127.0.0.1 the kernel gave out, bound and never listening: a connection to it is
/// refused at once, and nobody else can take it while this lives.
final class RefusingTCPPort {
    let port: UInt16
    private let fd: Int32

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.fd = fd
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard fd >= 0, bound else { throw BindFailure() }
        port = UInt16(bigEndian: address.sin_port)
    }

    func close() { _ = Glibc.close(fd) }

    struct BindFailure: Error, CustomStringConvertible {
        var description: String { "cannot bind a TCP socket on 127.0.0.1" }
    }
}
