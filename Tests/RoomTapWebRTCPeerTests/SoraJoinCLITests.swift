import Foundation
import RoomTapAgentTestSupport
import RoomTapCLITestSupport
import RoomTapTestSupport
import Testing

/// `roomtap record --join sora+ws://...` against the Sora stand-in (`Tests/Interop/webrtc/
/// sora_standin.py`: Sora's signaling as the SDKs speak it, strict about the connect message,
/// aiortc relaying real aiortc publishers, `sora_publisher.py`). Everything on 127.0.0.1.
@Suite(.serialized) struct SoraJoinCLITests {
    private static let token = "tok-DO-NOT-WRITE-0123456789"

    private func standin(_ extra: [String] = []) throws -> (peer: PythonPeer, port: UInt16, second: UInt16) {
        let peer = try PythonPeer(.soraStandin, arguments: ["--channel", "ch-1", "--quiet"] + extra)
        let fields = peer.firstLine.split(separator: " ")
        let port = try #require(fields.count == 3 ? UInt16(fields[1]) : nil, "\(peer.firstLine)")
        return (peer, port, UInt16(fields[2]) ?? 0)
    }

    private func publish(
        _ port: UInt16, name: String, client: String, wav: String, until leaveAt: Double, startAt: Double
    ) throws -> PythonPeer {
        let peer = try PythonPeer(
            .soraPublisher,
            arguments: [
                "--url", "ws://127.0.0.1:\(port)/signaling", "--channel", "ch-1", "--name", name, "--client-id", client,
                "--wav", wav, "--seconds", String(format: "%.2f", leaveAt - Date().timeIntervalSince1970),
                "--start-at-unix", String(startAt), "--metadata", #"{"access_token": "\#(Self.token)"}"#, "--quiet",
            ])
        #expect(peer.firstLine.hasPrefix("published "), "\(name): \(peer.firstLine) \(peer.stderrTail())")
        return peer
    }

    @Test func threePublishersOneLateOneLeavingAreTracksByMetadataNameAlignedAndExact() throws {
        let server = try standin(["--redirect", "--access-token", Self.token, "--ping-interval", "2"])
        defer { server.peer.stop() }
        let alice = try speechWAV("sora-alice", speaker: "alice")
        let bob = try speechWAV("sora-bob", speaker: "bob")
        let carol = try speechWAV("sora-carol", speaker: "carol")
        let out = try TestScratch.directory("sora-join").appendingPathComponent("room").path
        let t0 = Date().timeIntervalSince1970
        // All three speak at one wall-clock instant, once bob (5 s late) is in; carol leaves 1 s
        // after her 3 s of speech, the others stay to the end.
        let startAt = t0 + 19
        let end = startAt + 8
        let alicePeer = try publish(
            server.port, name: "Alice Smith", client: "alice", wav: alice.path, until: end + 10, startAt: startAt)
        let carolPeer = try publish(
            server.port, name: "Carol", client: "carol", wav: carol.path, until: startAt + 4, startAt: startAt)
        let recorderStart = Date().timeIntervalSince1970
        let recorder = try CLIRunner.start(
            [
                "record", "--join", "sora+ws://127.0.0.1:\(server.port)/signaling?channel_id=ch-1", "--ice-host",
                "127.0.0.1", "--duration", String(format: "%.1f", end - recorderStart), "--out", out, "--quiet",
            ], environment: ["ROOMTAP_SORA_METADATA": #"{"access_token": "\#(Self.token)"}"#])
        #expect(waitUntil(timeout: .seconds(30)) { FileManager.default.fileExists(atPath: out + "/room.json") })
        let joinedAt = Date().timeIntervalSince1970
        // Bob joins 5 s after the recorder (the test's own pacing of a publisher, not a wait for a state).
        while Date().timeIntervalSince1970 < joinedAt + 5 { Thread.sleep(forTimeInterval: 0.05) }
        let bobPeer = try publish(
            server.port, name: "Bob B.", client: "bob", wav: bob.path, until: end + 10, startAt: startAt)
        #expect(Date().timeIntervalSince1970 < startAt, "the peers were too slow: the audio began before all joined")
        #expect(carolPeer.waitForExit(timeout: .seconds(40)) == 0, "\(carolPeer.stderrTail())")
        let outcome = recorder.wait(timeout: 90)
        let log = server.peer.stdout
        #expect(outcome.status == 0, "\(outcome.stderr)\n\(log)\n\(server.peer.stderrTail(20))")
        _ = alicePeer.stop()
        _ = bobPeer.stop()
        #expect(!outcome.stderr.contains(Self.token))

        let recorded = try ["Alice-Smith", "Bob-B.", "Carol"].map { name in
            try #require(pcmWAVFirstChannel(out + "/\(name).wav"), "no \(name).wav: \(outcome.stderr)\n\(log)").samples
        }
        #expect(Set(recorded.map(\.count)).count == 1, "lengths \(recorded.map(\.count))")
        let matches = zip([alice.samples, bob.samples, carol.samples], recorded).map {
            bestAlignment(source: $0, recorded: $1)
        }
        for (name, match) in zip(["alice", "bob", "carol"], matches) {
            #expect(match.correlation >= 0.95, "\(name): correlation \(match.correlation) at lag \(match.lag)")
        }
        let lags = matches.map(\.lag)
        print("SoraJoinCLITests: correlations \(matches.map(\.correlation)), onsets \(lags) samples")
        // Sent together, placed together. The publishers are aiortc processes that start their WAV
        // at one wall-clock instant; under the whole suite's load their own start varies by a few
        // ms (7.8 ms seen beside 900 other tests, under 4 ms alone), which no recorder can undo: 10 ms
        // (480 samples) here. The recorder's own placement is held to 2 ms by the RTP suites.
        #expect(lags.max()! - lags.min()! <= 480, "onsets at \(lags) samples")
        // Carol is silent from 1.5 s after her speech (she left 1 s after it) to the end.
        let carolGone = matches[2].lag + carol.samples.count + 72_000
        let tail = recorded[2][min(carolGone, recorded[2].count)...]
        #expect(
            !tail.isEmpty && tail.allSatisfy { $0 == 0 },
            "carol after leaving: max \(tail.map { abs(Int($0)) }.max() ?? -1)")

        let text = try String(contentsOfFile: out + "/room.json", encoding: .utf8)
        #expect(!text.contains(Self.token), "the metadata is in room.json")
        let room = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let join = try #require(room["join"] as? [String: Any])
        #expect(join["kind"] as? String == "sora")
        #expect(join["room"] as? String == "ch-1")
        let sora = try #require(join["sora"] as? [String: Any])
        #expect((sora["redirects"] as? [String])?.count == 1, "the redirect was followed")
        #expect((sora["reOffers"] as? Int ?? 0) >= 2, "bob's join and carol's leave")
        #expect((sora["pongs"] as? Int ?? 0) >= 2)
        #expect((sora["unknownMessages"] as? Int ?? 0) >= 1)
        let events = sora["events"] as? [[String: Any]] ?? []
        #expect(events.contains { $0["type"] as? String == "push" })
        #expect(
            events.contains {
                $0["eventType"] as? String == "connection.destroyed" && $0["clientID"] as? String == "carol"
            })
        let publishers = try #require(join["publishers"] as? [[String: Any]])
        #expect(publishers.compactMap { $0["name"] as? String }.sorted() == ["Alice-Smith", "Bob-B.", "Carol"])
        let carolEntry = try #require(publishers.first { $0["name"] as? String == "Carol" })
        #expect(carolEntry["present"] as? Bool == false)
        #expect(carolEntry["clientID"] as? String == "carol")
        #expect(((carolEntry["presence"] as? [[String: Any]])?.first?["left"] as? Double) != nil)
        for entry in publishers { #expect((entry["rtpPackets"] as? Int ?? 0) > 100, "\(entry)") }

        // The stand-in's side: the redirect, our connect there, the trickled candidates, the
        // re-answers, the pongs with stats, and the hang-up.
        let lines = log.split(separator: "\n")
        #expect(lines.contains { $0.hasPrefix("redirect ws://127.0.0.1:\(server.second)/signaling") })
        #expect(
            lines.contains { $0.hasPrefix("connect ") && $0.contains(" recvonly ") && $0.hasSuffix("roomtap 0.1.0") })
        #expect(lines.contains { $0.hasPrefix("candidates ") })
        #expect(lines.filter { $0.hasPrefix("re-answer ") }.count >= 2)
        #expect(
            lines.contains { $0.hasPrefix("pong ") && !$0.hasSuffix(" -") && !$0.hasSuffix(" 0") }, "pong with stats")
        #expect(lines.contains { $0.hasPrefix("disconnect ") && $0.hasSuffix(" NO-ERROR") })
        #expect(!lines.contains { $0.hasPrefix("refused") }, "\(log)")
    }

    /// Alice publishes speech from 16 s on while a recorder joins for 5 s of it and the stand-in
    /// does `fault` (`--drop-after`, `--break-media-after`) 2 s into the recorder's connection.
    private func recordAliceThroughAFault(_ fault: String, label: String) throws -> (
        outcome: CLIRunner.Outcome, log: String, out: String, alice: (path: String, samples: [Int16])
    ) {
        let server = try standin(["--access-token", Self.token, fault, "2"])
        defer { server.peer.stop() }
        let alice = try speechWAV(label + "-alice", speaker: "alice")
        let out = try TestScratch.directory(label).appendingPathComponent("room").path
        let startAt = Date().timeIntervalSince1970 + 16
        let end = startAt + 5
        let alicePeer = try publish(
            server.port, name: "Alice", client: "alice", wav: alice.path, until: end + 10, startAt: startAt)
        defer { alicePeer.stop() }
        let recorderStart = Date().timeIntervalSince1970
        let outcome = try CLIRunner.run(
            [
                "record", "--join", "sora+ws://127.0.0.1:\(server.port)/signaling?channel_id=ch-1", "--ice-host",
                "127.0.0.1", "--duration", String(format: "%.1f", end - recorderStart), "--out", out, "--quiet",
            ], environment: ["ROOMTAP_SORA_METADATA": #"{"access_token": "\#(Self.token)"}"#])
        return (outcome, server.peer.stdout, out, alice)
    }

    @Test func aLostSignalingConnectionIsReconnectedAndTheTrackContinues() throws {
        let (outcome, log, out, alice) = try recordAliceThroughAFault("--drop-after", label: "sora-reconnect")
        #expect(outcome.status == 0, "\(outcome.stderr)\n\(log)")
        #expect(log.contains("cut "), "the stand-in did not cut: \(log)")
        #expect(outcome.stderr.contains("reconnecting in"), "\(outcome.stderr)")
        let recorded = try #require(pcmWAVFirstChannel(out + "/Alice.wav"), "\(outcome.stderr)").samples
        #expect(recorded.filter { abs(Int($0)) > 500 }.count > 24_000, "the speech after the reconnect is recorded")
        let match = bestAlignment(source: alice.samples, recorded: recorded)
        // The restarted stream's new anchor is no drifting clock (DriftEstimator.restart): the
        // speech after the reconnect is the sender's, unstretched.
        #expect(match.correlation >= 0.95, "after the reconnect: correlation \(match.correlation) at \(match.lag)")
        let room = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out + "/room.json")))
                as? [String: Any])
        let join = try #require(room["join"] as? [String: Any])
        #expect((join["sora"] as? [String: Any])?["reconnects"] as? Int == 1)
        let publishers = try #require(join["publishers"] as? [[String: Any]])
        #expect(publishers.count == 1, "the returning client_id continues its track: \(publishers)")
        #expect((publishers.first?["presence"] as? [[String: Any]])?.count == 2, "a gap between two spans")
    }

    /// The offer's `config.iceServers` (a STUN and a TURN URL with credentials) with
    /// `iceTransportPolicy: relay`, a real coturn on loopback: the recorder's candidates are all
    /// `typ relay`, so every packet comes through the TURN server, and the track is still exact.
    @Test func aRelayOnlyOfferIsRecordedThroughItsTURNServer() throws {
        let turn = try TURNTestServer()
        defer { turn.stop() }
        let server = try standin([
            "--access-token", Self.token, "--ice-server", "stun:127.0.0.1:\(turn.port)", "--ice-server", turn.url,
            "--ice-credential", "\(turn.username):\(turn.credential)", "--ice-transport-policy", "relay",
        ])
        defer { server.peer.stop() }
        let alice = try speechWAV("sora-turn-alice", speaker: "alice")
        let out = try TestScratch.directory("sora-turn").appendingPathComponent("room").path
        let startAt = Date().timeIntervalSince1970 + 14
        let end = startAt + 5
        let alicePeer = try publish(
            server.port, name: "Alice", client: "alice", wav: alice.path, until: end + 10, startAt: startAt)
        defer { alicePeer.stop() }
        let recorderStart = Date().timeIntervalSince1970
        let outcome = try CLIRunner.run(
            [
                "record", "--join", "sora+ws://127.0.0.1:\(server.port)/signaling?channel_id=ch-1", "--ice-host",
                "127.0.0.1", "--duration", String(format: "%.1f", end - recorderStart), "--out", out, "--quiet",
            ], environment: ["ROOMTAP_SORA_METADATA": #"{"access_token": "\#(Self.token)"}"#])
        let log = server.peer.stdout
        #expect(outcome.status == 0, "\(outcome.stderr)\n\(log)")
        #expect(!outcome.stderr.contains(turn.credential), "the TURN credential is in the log")
        let lines = log.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
        let recorderID = try #require(
            lines.first { $0.count >= 3 && $0[0] == "connect" && $0[2] == "recvonly" }?[1], "\(log)")
        let types = lines.filter { $0.count == 4 && $0[0] == "candidates" && $0[1] == recorderID }.map { $0[3] }
        #expect(!types.isEmpty && types.allSatisfy { $0 == "relay" }, "the recorder's candidates: \(types)")
        let recorded = try #require(pcmWAVFirstChannel(out + "/Alice.wav"), "\(outcome.stderr)").samples
        let match = bestAlignment(source: alice.samples, recorded: recorded)
        #expect(match.correlation >= 0.95, "through TURN: correlation \(match.correlation) at \(match.lag)")
        let text = try String(contentsOfFile: out + "/room.json", encoding: .utf8)
        #expect(!text.contains(turn.credential), "the TURN credential is in room.json")
        let room = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let sora = try #require((room["join"] as? [String: Any])?["sora"] as? [String: Any])
        #expect(sora["iceServers"] as? [String] == ["stun:127.0.0.1:\(turn.port)", turn.url])
        // coturn's side: the recorder's allocation, and the permission (or channel) to the
        // publisher's address that the relayed packets need (RFC 8656 §9, §12).
        let turnLog = turn.log
        #expect(turnLog.contains("user <\(turn.username)>: incoming packet ALLOCATE processed, success"))
        #expect(
            turnLog.contains("incoming packet CREATE_PERMISSION processed, success")
                || turnLog.contains("incoming packet CHANNEL_BIND processed, success"),
            "no permission on coturn: \(turnLog.split(separator: "\n").filter { $0.contains("processed") }.suffix(20))")
    }

    /// The media path lost mid-room with the WebSocket still up (the stand-in closes its
    /// PeerConnection for the recorder: DTLS close_notify, then no ICE answers): a warning naming
    /// it, a new Sora connection, the track continued in the same file, the gap silent and named
    /// in room.json's presence.
    @Test func aMidRoomDTLSFailureIsReconnectedAndTheGapIsSilentAndNamed() throws {
        let (outcome, log, out, alice) = try recordAliceThroughAFault("--break-media-after", label: "sora-break")
        #expect(outcome.status == 0, "\(outcome.stderr)\n\(log)")
        #expect(log.contains("broke "), "the stand-in did not break the media: \(log)")
        let lines = log.split(separator: "\n")
        #expect(lines.filter { $0.hasPrefix("connect ") && $0.contains(" recvonly ") }.count == 2, "\(log)")
        let warnings = outcome.stderrLines.filter {
            $0.hasPrefix("roomtap: warning:") && $0.contains("reconnecting in")
        }
        #expect(warnings.count == 1, "\(outcome.stderr)")
        #expect(warnings.first?.contains("DTLS") == true, "the warning names the lost media path: \(outcome.stderr)")
        let recorded = try #require(pcmWAVFirstChannel(out + "/Alice.wav"), "\(outcome.stderr)").samples
        let match = bestAlignment(source: alice.samples, recorded: recorded)
        #expect(match.correlation >= 0.95, "after the reconnect: correlation \(match.correlation) at \(match.lag)")
        let room = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out + "/room.json")))
                as? [String: Any])
        let join = try #require(room["join"] as? [String: Any])
        #expect((join["sora"] as? [String: Any])?["reconnects"] as? Int == 1)
        let publishers = try #require(join["publishers"] as? [[String: Any]])
        #expect(publishers.count == 1, "one track, continued: \(publishers)")
        let spans = try #require(publishers.first?["presence"] as? [[String: Any]], "\(publishers)")
        #expect(spans.count == 2, "the gap between two spans: \(spans)")
        // The gap, placed by the file's start (room.json's startTime): silence in the file.
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let started = try #require(
            (room["startTime"] as? String).flatMap { formatter.date(from: $0) ?? ISO8601DateFormatter().date(from: $0) }
        )
        if spans.count == 2, let left = spans[0]["left"] as? Double, let back = spans[1]["joined"] as? Double {
            #expect(back > left, "\(spans)")
            let from = Int((left - started.timeIntervalSince1970 + 0.3) * 48_000)
            let to = Int((back - started.timeIntervalSince1970 - 0.1) * 48_000)
            print("SoraJoinCLITests: DTLS loss gap \(String(format: "%.2f", back - left)) s, silent \(from)..<\(to)")
            #expect(from < to && to <= recorded.count, "the gap \(spans) is in the file of \(recorded.count)")
            if from < to, to <= recorded.count {
                #expect(recorded[from..<to].allSatisfy { $0 == 0 }, "the gap is silence")
            }
        }
    }

    /// The loss is a cut WebSocket or a broken media path (ICE/DTLS); either way a server that
    /// keeps refusing ends the room with one fatal line.
    @Test(arguments: ["--drop-after", "--break-media-after"])
    func aServerThatKeepsRefusingEndsTheRoomWithOneLineAndFinalFiles(loss: String) throws {
        let server = try standin(["--access-token", Self.token, loss, "2", "--refuse-after-cut"])
        defer { server.peer.stop() }
        let alice = try speechWAV("sora-refusing-alice", speaker: "alice")
        let out = try TestScratch.directory("sora-refusing").appendingPathComponent("room").path
        let alicePeer = try publish(
            server.port, name: "Alice", client: "alice", wav: alice.path,
            until: Date().timeIntervalSince1970 + 300, startAt: Date().timeIntervalSince1970 + 5)
        defer { alicePeer.stop() }
        // Six reconnections with backoff (1, 2, 4, 8, 16, 30 s ±20 %) fail, then the room stops.
        let outcome = try CLIRunner.run(
            [
                "record", "--join", "sora+ws://127.0.0.1:\(server.port)/signaling?channel_id=ch-1", "--ice-host",
                "127.0.0.1", "--duration", "200", "--out", out, "--quiet",
            ], environment: ["ROOMTAP_SORA_METADATA": #"{"access_token": "\#(Self.token)"}"#], timeout: 180)
        #expect(outcome.status == 1, "\(outcome.stderr)")
        let errors = outcome.stderrLines.filter { $0.hasPrefix("roomtap: error:") }
        #expect(errors.count == 1, "\(outcome.stderr)")
        #expect(errors.first?.contains("failed 6 times") == true, "\(outcome.stderr)")
        #expect(outcome.stderr.contains("refused to connect: CHANNEL-CLOSED"), "Sora's reason: \(outcome.stderr)")
        let room = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out + "/room.json")))
                as? [String: Any])
        #expect(room["state"] as? String == "complete", "room.json is final")
        #expect(((room["join"] as? [String: Any])?["failure"] as? String)?.contains("failed 6 times") == true)
        let recorded = try #require(pcmWAVFirstChannel(out + "/Alice.wav"))
        #expect(recorded.samples.count > 48_000 * 30, "the file covers the room until it stopped")
    }

    @Test func aRefusedConnectIsSorasReasonInOneLineAndNoFiles() throws {
        let server = try standin(["--access-token", Self.token])
        defer { server.peer.stop() }
        let scratch = try TestScratch.directory("sora-refused")
        let url = "sora+ws://127.0.0.1:\(server.port)/signaling?channel_id="
        let cases: [(args: [String], message: String)] = [
            (["--join", url + "ch-1", "--join-metadata", #"{"access_token": "wrong"}"#], "AUTH-WEBHOOK-REJECTED"),
            (
                ["--join", url + "no-such", "--join-metadata", #"{"access_token": "\#(Self.token)"}"#],
                "INVALID-CHANNEL-ID"
            ),
        ]
        for (index, item) in cases.enumerated() {
            let out = scratch.appendingPathComponent("room\(index)").path
            let outcome = try CLIRunner.run(
                ["record"] + item.args + ["--ice-host", "127.0.0.1", "--duration", "2", "--out", out])
            #expect(outcome.status == 1, "\(outcome.stderr)")
            #expect(outcome.stderrLines.count == 1, "\(outcome.stderr)")
            #expect(outcome.stderr.contains("refused to connect: \(item.message)"), "\(outcome.stderr)")
            #expect(!outcome.stderr.contains("wrong") && !outcome.stderr.contains(Self.token))
            #expect(!FileManager.default.fileExists(atPath: out), "\(out) was made")
        }
        let bad = try CLIRunner.run([
            "record", "--join", url + "ch-1", "--join-metadata", "{not json", "--out", scratch.path + "/x",
        ])
        #expect(bad.status == 64)
        #expect(bad.stderr.contains("--join-metadata is not JSON") && !bad.stderr.contains("{not json"))
        let noChannel = try CLIRunner.run(["record", "--join", "sora+wss://h/signaling", "--out", scratch.path + "/x"])
        #expect(noChannel.status == 64)
        #expect(noChannel.stderr.contains("must be sora+wss://HOST[:PORT]/signaling?channel_id=ID"))
    }

    @Test func theStandinDropsAClientThatDoesNotPong() throws {
        let server = try standin(["--ping-interval", "1", "--pong-timeout", "1"])
        defer { server.peer.stop() }
        let wav = try speechWAV("sora-nopong", speaker: "alice", seconds: 1)
        let peer = try PythonPeer(
            .soraPublisher,
            arguments: [
                "--url", "ws://127.0.0.1:\(server.port)/signaling", "--channel", "ch-1", "--name", "x", "--wav",
                wav.path, "--seconds", "30", "--no-pong", "--quiet",
            ])
        #expect(peer.waitForLine(startingWith: "dropped 4000 PONG-TIMEOUT") != nil, "\(peer.stdout)")
        #expect(server.peer.waitForLine(startingWith: "dropped ") != nil)
    }

    /// `--agent --agent-publish` into a Sora channel: the agent's voice goes in as a second,
    /// `sendonly` connection named `agent` in its notify metadata, and another participant (a
    /// second roomtap joined to the channel) records it; the recorder never records its own voice
    /// back as a joined track.
    @Test func theAgentsVoiceIsASendonlyConnectionEveryoneInTheChannelHears() throws {
        let key = "sk-test-DO-NOT-PRINT-SORA-0123456789"
        let realtime = try FakeRealtimeServer(expectedKey: key)
        defer { realtime.stop() }
        let server = try standin(["--access-token", Self.token])
        defer { server.peer.stop() }
        let scratch = try TestScratch.directory("sora-agent-publish")
        let url = "sora+ws://127.0.0.1:\(server.port)/signaling?channel_id=ch-1"
        let metadata = ["ROOMTAP_SORA_METADATA": #"{"access_token": "\#(Self.token)"}"#]
        // Both rooms run until they are stopped (agentSpeaksToAListener), never on a fixed schedule.
        let listenerControl = uniqueControlPath()
        let listener = try CLIRunner.start(
            [
                "record", "--join", url, "--ice-host", "127.0.0.1", "--duration", "120", "--out",
                scratch.appendingPathComponent("listener").path, "--quiet", "--control", listenerControl,
            ], environment: metadata)
        defer { if listener.isRunning { listener.signal(SIGKILL) } }
        let alice = WebRTCPeers.packageRoot.appendingPathComponent("Samples/room/alice.opus").path
        let room = scratch.appendingPathComponent("room")
        let recorderControl = uniqueControlPath()
        let recorder = try CLIRunner.start(
            [
                "record", "--file", "alice=\(alice)", "--join", url, "--ice-host", "127.0.0.1", "--duration", "120",
                "--agent", "--agent-url", realtime.url, "--agent-publish", "--out", room.path, "--quiet",
                "--control", recorderControl,
            ], environment: metadata.merging(["OPENAI_API_KEY": key]) { $1 })
        defer { if recorder.isRunning { recorder.signal(SIGKILL) } }
        #expect(realtime.wait(timeout: .seconds(30)) { $0.audio().count > 12_000 })
        try agentSpeaksToAListener(
            server: realtime, itemID: "item_sora_publish", listenerControl: listenerControl,
            recorderControl: recorderControl)
        let outcome = recorder.wait(timeout: 60)
        let log = server.peer.stdout
        #expect(outcome.status == 0, "\(outcome.stderr)\n\(log)")
        let heard = listener.wait(timeout: 60)
        #expect(heard.status == 0, "\(heard.stderr)")
        #expect(!outcome.stderr.contains(key) && !outcome.stderr.contains(Self.token))
        #expect(log.split(separator: "\n").contains { $0.hasPrefix("connect ") && $0.contains(" sendonly ") }, "\(log)")
        let made = (try? FileManager.default.contentsOfDirectory(atPath: room.path)) ?? []
        #expect(!made.contains { $0.hasPrefix("agent-") }, "the recorder recorded its own voice back: \(made)")
        let spoken = try #require(pcmWAVFirstChannel(room.appendingPathComponent("agent.wav").path)).samples
        let received = try #require(
            pcmWAVFirstChannel(scratch.appendingPathComponent("listener/agent.wav").path),
            "the listener has no agent track: \(heard.stderr)\n\(log)"
        ).samples
        let match = try #require(
            agentVoiceMatch(spoken: spoken, received: received), "the channel heard nothing of the agent")
        print("sora agent-publish: the listener's agent.wav against the agent's own: correlation \(match.correlation)")
        // As through Janus (0.99 there): the tone through a second Opus encode, the stand-in's
        // relay and the listener's decode; a silent, cut or garbled voice scores well below.
        #expect(match.correlation >= 0.9, "the channel hears the agent: correlation \(match.correlation)")
    }

    /// The agent's sendonly connection lost mid-room (the stand-in closes its PeerConnection, the
    /// WebSocket kept): one warning says the room no longer hears the agent; the recording goes on
    /// and ends whole. (It is not connected again: a known limit, said in the line.)
    @Test func theAgentsLostSendonlyConnectionIsSaidOnceAndTheRecordingGoesOn() throws {
        let key = "sk-test-DO-NOT-PRINT-SORA-LOST-0123456789"
        let realtime = try FakeRealtimeServer(expectedKey: key)
        defer { realtime.stop() }
        let server = try standin(["--access-token", Self.token, "--break-publisher-after", "1"])
        defer { server.peer.stop() }
        let room = try TestScratch.directory("sora-agent-lost").appendingPathComponent("room")
        let alice = WebRTCPeers.packageRoot.appendingPathComponent("Samples/room/alice.opus").path
        let control = uniqueControlPath()
        let recorder = try CLIRunner.start(
            [
                "record", "--file", "alice=\(alice)", "--join",
                "sora+ws://127.0.0.1:\(server.port)/signaling?channel_id=ch-1", "--ice-host", "127.0.0.1", "--duration",
                "120", "--agent", "--agent-url", realtime.url,
                "--agent-publish", "--out", room.path, "--quiet", "--control", control,
            ],
            environment: [
                "ROOMTAP_SORA_METADATA": #"{"access_token": "\#(Self.token)"}"#, "OPENAI_API_KEY": key,
            ])
        defer { if recorder.isRunning { recorder.signal(SIGKILL) } }
        let said = "the agent's sendonly Sora connection was lost"
        #expect(
            try waitUntil(timeout: .seconds(60), every: .milliseconds(100)) { recorder.stderrSoFar.contains(said) },
            "\(recorder.stderrSoFar)\n\(server.peer.stdout)")
        #expect(server.peer.stdout.contains("broke-publisher "), "\(server.peer.stdout)")
        #expect(try CLIRunner.run(["stop", "--control", control], timeout: 60).status == 0)
        let outcome = recorder.wait(timeout: 60)
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let lines = outcome.stderr.split(separator: "\n").filter { $0.contains(said) }
        #expect(lines.count == 1, "said once: \(outcome.stderr)")
        #expect(lines.first?.contains("the room no longer hears the agent") == true)
        #expect(!outcome.stderr.contains(key) && !outcome.stderr.contains(Self.token))
        let recorded = try #require(pcmWAVFirstChannel(room.appendingPathComponent("alice.wav").path)).samples
        #expect(recorded.contains { abs($0) > 500 }, "alice is recorded")
    }
}
