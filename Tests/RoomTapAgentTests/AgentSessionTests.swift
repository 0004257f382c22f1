import Foundation
import RoomTapAgent
import RoomTapAgentTestSupport
import RoomTapCore
import RoomTapSync
import RoomTapTestSupport
import Testing

/// The agent's session against a local Realtime stand-in: what it sends, how it talks back, how
/// it survives its connection. Real rooms on the real-time clock; ports from the kernel.
@Suite(.serialized) struct AgentSessionTests {
    @Test func theSessionUpdateHasTheGAShapeAndTheKeyGoesOnlyInTheHeader() throws {
        let rig = try AgentTestRig(port: 0, humans: [("alice", SineSource(frequency: 440, amplitude: 8_000))]) {
            $0.session.instructions = "You are a food critic who will eat anything."
            $0.session.voice = "cedar"
        }
        #expect(rig.server.wait { $0.audio().count >= 12_000 })
        rig.finish()
        let first = try #require(rig.server.events.first)
        #expect(first.type == "session.update", "session.update is the first event")
        let session = try #require(first.object["session"] as? [String: Any])
        #expect(session["type"] as? String == "realtime")
        #expect(session["instructions"] as? String == "You are a food critic who will eat anything.")
        let audio = try #require(session["audio"] as? [String: Any])
        #expect(((audio["output"] as? [String: Any])?["voice"]) as? String == "cedar")
        let input = try #require(audio["input"] as? [String: Any])
        #expect((input["format"] as? [String: Any])?["rate"] as? Int == 24_000)
        #expect((input["turn_detection"] as? [String: Any])?["type"] as? String == "server_vad")
        let head = try #require(rig.server.upgradeRequests.first)
        #expect(head.contains("Authorization: Bearer \(AgentTestRig.key)"))
        #expect(!rig.server.events.contains { $0.json.contains(AgentTestRig.key) }, "the key is never in an event")
        #expect(!rig.log.all.contains { $0.contains(AgentTestRig.key) })
        let stats = String(decoding: try JSONEncoder().encode(rig.agent.statistics), as: UTF8.self)
        #expect(!stats.contains(AgentTestRig.key))
        #expect(!rig.agent.configuration.description.contains(AgentTestRig.key))
        #expect(rig.agent.statistics.audioChunksSent > 0)
        #expect(rig.agent.statistics.audioBytesSent == rig.server.audio().count * 2)
    }

    @Test func sayQueuesWhileAResponseIsActive() throws {
        let rig = try AgentTestRig(port: 0, humans: [("alice", ConstantSource(0))])
        rig.agent.say("What's for dinner?")
        #expect(rig.server.wait { $0.events(ofType: "response.create").count == 1 })
        rig.agent.say("And dessert?")
        // say decides at once: the second text waits behind the response in progress.
        #expect(rig.agent.statistics.saysWaiting == 1, "queued while the response is active")
        #expect(rig.server.events(ofType: "response.create").count == 1, "queued while the response is active")
        rig.server.reply(pcm: sine24(frequency: 500, count: 2_400), transcript: "Soup.")
        #expect(rig.server.wait { $0.events(ofType: "response.create").count == 2 })
        rig.finish()
        let items = rig.server.events(ofType: "conversation.item.create").map(\.object)
        let texts = items.compactMap { o -> String? in
            let item = o["item"] as? [String: Any]
            let content = item?["content"] as? [[String: Any]]
            guard item?["role"] as? String == "user", content?.first?["type"] as? String == "input_text" else {
                return nil
            }
            return content?.first?["text"] as? String
        }
        #expect(texts == ["What's for dinner?", "And dessert?"])
        let order = rig.server.events.map(\.type).filter { $0 == "conversation.item.create" || $0 == "response.create" }
        #expect(
            order == ["conversation.item.create", "response.create", "conversation.item.create", "response.create"])
    }

    @Test func aSayBeforeTheSessionIsSentOnceConnected() throws {
        let server = try FakeRealtimeServer(expectedKey: AgentTestRig.key)
        let agent = try RealtimeAgent(
            configuration: RealtimeAgentConfiguration(apiKey: AgentTestRig.key, url: server.url, log: { _ in }))
        agent.say("Hello room")
        agent.start()
        #expect(server.wait { $0.events(ofType: "response.create").count == 1 })
        agent.stop()
        server.stop()
        let types = server.events.map(\.type).filter { !$0.hasPrefix("input_audio_buffer") }
        #expect(Array(types.prefix(3)) == ["session.update", "conversation.item.create", "response.create"])
        #expect(server.events(ofType: "conversation.item.create").first?.json.contains("Hello room") == true)
        #expect(server.connections.first?.closeFrame?.code == 1000, "stop closes the session cleanly")
    }

    @Test func instructionsChangeLiveAndListeningPauses() throws {
        let rig = try AgentTestRig(port: 0, humans: [("alice", SineSource(frequency: 300, amplitude: 5_000))])
        rig.agent.setInstructions("Only talk about cheese.")
        #expect(rig.server.wait { $0.events(ofType: "session.update").count == 2 })
        let update = try #require(rig.server.events(ofType: "session.update").last?.object["session"] as? [String: Any])
        #expect(update["instructions"] as? String == "Only talk about cheese.")
        #expect(update["audio"] == nil, "only the instructions change")
        #expect(rig.server.wait { $0.events(ofType: "input_audio_buffer.append").count >= 3 })
        rig.agent.setListening(false)
        // The listen thread has taken frames since the mute (each one it dropped unheard), and the
        // server has everything the agent sent: then 0.3 s more of room frames change nothing.
        let mutedAt = rig.agent.listenSink.consumedFrames
        #expect(rig.wait { rig.agent.listenSink.consumedFrames >= mutedAt + 2 })
        #expect(
            rig.wait {
                rig.server.events(ofType: "input_audio_buffer.append").count
                    == rig.agent.statistics.audioChunksSent
            })
        let paused = rig.server.events(ofType: "input_audio_buffer.append").count
        let sentBefore = rig.agent.statistics.audioChunksSent
        let heardUpTo = rig.agent.listenSink.consumedFrames
        #expect(rig.wait { rig.agent.listenSink.consumedFrames >= heardUpTo + 30 })
        #expect(rig.agent.statistics.audioChunksSent == sentBefore, "nothing sent while muted")
        #expect(rig.server.events(ofType: "input_audio_buffer.append").count == paused, "nothing sent while muted")
        #expect(rig.server.connectionCount == 1, "the session stays")
        rig.agent.setListening(true)
        #expect(rig.server.wait { $0.events(ofType: "input_audio_buffer.append").count > paused + 2 })
        rig.finish()
    }

    @Test func closeAndDropReconnectAndResendTheSessionWithContext() throws {
        let dir = try TemporaryDirectory()
        let writer = try TranscriptWriter(path: dir.file("transcript.jsonl"))
        let rig = try AgentTestRig(port: 0, humans: [("alice", SineSource(frequency: 300, amplitude: 5_000))]) {
            $0.session.instructions = "Be brief."
            $0.transcript = writer
        }
        rig.server.speechStarted(audioStartMs: 0, itemID: "u1")
        rig.server.speechStopped(audioEndMs: 100, itemID: "u1")
        rig.server.transcriptionCompleted(itemID: "u1", transcript: "remember the soup")
        #expect(rig.wait { writer.lineCount == 1 })
        rig.server.sendError(code: "session_expired", message: "Your session hit the maximum duration of 60 minutes.")
        // The first session, by number: the agent may already have moved to a second one on the
        // error alone (on a loaded machine it did, and "the latest" then closed the new session).
        rig.server.close(code: 1001, reason: "session expired", connection: 0)
        #expect(
            rig.server.wait { $0.connectionCount == 2 && $0.events(ofType: "session.update").count == 2 },
            "connections \(rig.server.connectionCount), agent \(rig.agent.statistics), log \(rig.log.all)")
        #expect(rig.server.wait { $0.events(ofType: "conversation.item.create").contains { $0.connection == 1 } })
        let replay = rig.server.events(ofType: "conversation.item.create").filter { $0.connection == 1 }
        #expect(replay.count == 1, "the context is one item")
        #expect(replay.first?.json.contains("remember the soup") == true, "recent transcript replayed as context")
        #expect((replay.first?.object["item"] as? [String: Any])?["role"] as? String == "system")
        #expect(rig.server.wait { $0.audio(connection: 1).count > 4_800 }, "audio flows again")
        rig.server.drop(connection: 1)
        #expect(rig.server.wait { $0.connectionCount == 3 && $0.events(ofType: "session.update").count == 3 })
        let resent = try #require(rig.server.events(ofType: "session.update").last?.object["session"] as? [String: Any])
        #expect(resent["instructions"] as? String == "Be brief.")
        #expect(rig.wait { rig.agent.statistics.reconnects == 1 && rig.agent.statistics.rollovers == 1 })
        #expect(rig.agent.statistics.state == .connected)
        let framesBefore = rig.voiceSink.frameCount
        #expect(rig.wait { rig.voiceSink.frameCount > framesBefore }, "the voice track keeps its timeline")
        rig.finish()
        #expect(rig.log.all.contains { $0.contains("session_expired") })
    }

    @Test func aRefusedKeyIsOneClearLineAndTheRoomGoesOn() throws {
        let server = try FakeRealtimeServer(refuseStatus: 403)
        let rig = try AgentTestRig(
            port: 0, humans: [("alice", ConstantSource(100))], server: server, startRoomAfterConnect: false)
        #expect(rig.wait { rig.agent.statistics.state == .failed })
        let framesAtFailure = rig.voiceSink.frameCount
        #expect(rig.wait { rig.voiceSink.frameCount > framesAtFailure + 10 }, "the room goes on")
        rig.finish()
        #expect(rig.log.all.count == 1)
        let line = try #require(rig.log.all.first)
        #expect(line.contains("403") && line.contains("OPENAI_API_KEY"), "\(line)")
        #expect(!line.contains(AgentTestRig.key))
        #expect(server.upgradeRequests.count == 1, "no retry after a refused key")
        #expect(rig.voiceSink.statuses.allSatisfy { $0 == .silence })
    }

    @Test func aWrongKeyIs401AndOneClearLine() throws {
        let server = try FakeRealtimeServer(expectedKey: "sk-the-right-one")
        let rig = try AgentTestRig(
            port: 0, humans: [("alice", ConstantSource(100))], server: server, startRoomAfterConnect: false)
        #expect(rig.wait { rig.agent.statistics.state == .failed })
        rig.finish()
        #expect(rig.log.all.count == 1)
        #expect(rig.log.all.first?.contains("HTTP 401") == true, "\(rig.log.all)")
        #expect(rig.agent.statistics.failure?.contains("OPENAI_API_KEY") == true)
        #expect(server.connectionCount == 0)
    }

    @Test func aMissingKeyIsOneClearLine() throws {
        let log = LogCapture()
        var configuration = RealtimeAgentConfiguration(apiKey: "", url: "ws://127.0.0.1:28506/")
        configuration.log = log.sink
        let agent = try RealtimeAgent(configuration: configuration)
        agent.start()
        agent.stop()
        #expect(log.all.count == 1)
        #expect(log.all.first?.contains("OPENAI_API_KEY") == true)
        #expect(agent.statistics.state == .failed)
    }

    @Test func anUnreachableServerIsRetriedWithBackoffUntilItComes() throws {
        let port = try {
            let probe = try FakeRealtimeServer()
            defer { probe.stop() }
            return probe.port
        }()
        let log = LogCapture()
        let delays = Locked<[Int]>([])
        var configuration = RealtimeAgentConfiguration(
            apiKey: AgentTestRig.key, url: "ws://127.0.0.1:\(port)/v1/realtime",
            reconnectDelay: { attempt in
                delays.withLock { $0.append(attempt) }
                return 0.05
            })
        configuration.log = log.sink
        let agent = try RealtimeAgent(configuration: configuration)
        agent.start()
        #expect(AgentTestRig.waitFor { log.all.count >= 2 })
        var started: FakeRealtimeServer?
        #expect(
            waitUntil {
                started = try? FakeRealtimeServer(port: port)
                return started != nil
            })
        let server = try #require(started)
        #expect(server.wait { $0.events(ofType: "session.update").count == 1 })
        #expect(AgentTestRig.waitFor { agent.statistics.state == .connected })
        agent.stop()
        server.stop()
        #expect(log.all.first?.contains("cannot connect to 127.0.0.1:\(port)") == true, "\(log.all)")
        #expect(!log.all.contains { $0.contains(AgentTestRig.key) })
        let attempts = delays.withLock { $0 }
        #expect(attempts.prefix(2) == [1, 2], "each failure backs off further: \(attempts)")
        #expect(agent.statistics.reconnects == 0, "the first connection is not a reconnect")
        #expect(agent.statistics.errors >= 2)
        #expect(agent.statistics.state == .stopped)
    }

    @Test func errorEventsAreSurvivedUnlessFatal() throws {
        let rig = try AgentTestRig(port: 0, humans: [("alice", ConstantSource(0))])
        rig.server.sendError(code: "conversation_already_has_active_response", message: "busy")
        // The error is counted under the same lock that would have failed the agent: decided.
        #expect(rig.wait { rig.agent.statistics.errors == 1 })
        #expect(rig.agent.statistics.state == .connected)
        rig.server.sendError(code: "insufficient_quota", message: "You exceeded your quota.")
        #expect(rig.wait { rig.agent.statistics.state == .failed })
        // The agent ended its session (the server saw it close); a reconnect would be due 0.05 s
        // later (the rig's backoff): 0.5 s of room time after that, there is none.
        #expect(rig.wait { rig.server.connections.first?.closeFrame != nil }, "the session is closed")
        let framesAtClose = rig.voiceSink.frameCount
        #expect(rig.wait { rig.voiceSink.frameCount > framesAtClose + 50 }, "the room goes on")
        #expect(rig.server.connectionCount == 1, "no reconnect after a fatal error")
        #expect(rig.server.upgradeRequests.count == 1, "no reconnect after a fatal error")
        rig.finish()
        #expect(rig.log.all.contains { $0.contains("busy") })
        #expect(rig.log.all.contains { $0.contains("insufficient_quota") })
    }
}
