import Foundation
import RoomTapAgent
import RoomTapAgentTestSupport
import RoomTapCore
import RoomTapTestSupport
import Synchronization
import Testing

/// What the agent does against a stand-in as strict as the service: barge-in without a redundant
/// cancel, clean reconnects, failures that stop the retries, `say` that waits its turn, refused
/// settings as warnings, transcripts that say what the room heard, rollovers before expiry.
/// Ports from the kernel.
@Suite(.serialized) struct AgentBehaviourTests {
    private func lines(_ path: String) throws -> [[String: Any]] {
        try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] ?? [:]
        }
    }

    @Test func withServerInterruptionOffTheAgentCancelsOnce() throws {
        let rig = try AgentTestRig(port: 0, humans: [("alice", ConstantSource(0))]) {
            $0.session.interruptResponse = false
        }
        rig.server.reply(pcm: sine24(frequency: 500, count: 48_000), itemID: "item_a", chunkMs: 100, paced: true)
        #expect(rig.wait { rig.voice.contains { $0 != 0 } })
        rig.server.speechStarted(audioStartMs: 500, itemID: "u1")
        #expect(rig.server.wait { $0.events(ofType: "response.cancel").count == 1 })
        #expect(rig.server.wait { $0.events(ofType: "conversation.item.truncate").count == 1 })
        #expect(rig.server.wait { !$0.hasActiveResponse() }, "the cancel ended the reply on the server")
        rig.finish()
        #expect(rig.agent.statistics.errors == 0, "\(rig.log.all)")
        #expect(rig.agent.statistics.bargeIns == 1)
    }

    @Test func aReconnectStartsCleanAndNeverTruncatesAnOldItem() throws {
        let rig = try AgentTestRig(port: 0, humans: [("alice", ConstantSource(0))])
        rig.server.reply(pcm: sine24(frequency: 500, count: 72_000), itemID: "item_old", chunkMs: 100)
        #expect(rig.wait { rig.voice.contains { $0 != 0 } })
        rig.server.drop()
        #expect(rig.server.wait { $0.connectionCount == 2 && $0.events(ofType: "session.update").count == 2 })
        #expect(rig.wait { rig.agent.statistics.state == .connected })
        rig.server.speechStarted(audioStartMs: 0, itemID: "u1")
        #expect(rig.wait { rig.agent.statistics.bargeIns == 1 }, "the old reply still playing is cut")
        rig.agent.say("Still there?")
        rig.server.speechStopped(audioEndMs: 200, itemID: "u1")
        #expect(rig.server.wait { $0.events(ofType: "response.create").contains { $0.connection == 1 } })
        rig.finish()
        let second = rig.server.events.filter { $0.connection == 1 }
        #expect(!second.contains { $0.json.contains("item_old") }, "nothing refers to an item the new session lacks")
        #expect(rig.agent.statistics.errors == 0, "\(rig.log.all)")
    }

    @Test(arguments: ["insufficient_quota", "billing_hard_limit_reached", "model_not_found"])
    func aFatalFailedResponseEndsTheAgentWithOneLine(code: String) throws {
        let rig = try AgentTestRig(port: 0, humans: [("alice", ConstantSource(100))])
        rig.server.failNextResponses(code: code)
        rig.agent.say("Hello?")
        #expect(rig.wait { rig.agent.statistics.state == .failed })
        let frames = rig.voiceSink.frameCount
        #expect(rig.wait { rig.voiceSink.frameCount > frames + 10 }, "the room goes on")
        rig.finish()
        #expect(rig.server.connectionCount == 1, "no retry")
        #expect(rig.log.all.count == 1 && rig.log.all[0].contains(code), "\(rig.log.all)")
        #expect(rig.agent.statistics.failure?.contains(code) == true)
        #expect(rig.agent.statistics.state == .failed)
    }

    @Test func aRateLimitedResponseIsLoggedAndTheAgentGoesOn() throws {
        let rig = try AgentTestRig(port: 0, humans: [("alice", ConstantSource(0))])
        rig.server.failNextResponses(code: "rate_limit_exceeded")
        rig.agent.say("One")
        #expect(rig.wait { rig.agent.statistics.lastError?.contains("rate_limit_exceeded") == true })
        rig.agent.say("Two")
        #expect(rig.server.wait { $0.events(ofType: "response.create").count == 2 }, "the next say goes out")
        rig.finish()
        #expect(rig.agent.statistics.state == .stopped)
        #expect(rig.server.connectionCount == 1)
    }

    @Test(arguments: [(404, false), (400, false), (429, true), (500, true), (408, true)])
    func refusedUpgradesBackOffOrStop(status: Int, heals: Bool) throws {
        let server = try FakeRealtimeServer(expectedKey: AgentTestRig.key)
        server.refuseNextUpgrades(status: status, count: heals ? 3 : 100)
        let rig = try AgentTestRig(
            port: 0, humans: [("alice", ConstantSource(0))], server: server, startRoomAfterConnect: false)
        if heals {
            #expect(rig.wait(timeout: 10) { rig.agent.statistics.state == .connected })
            #expect(rig.agent.statistics.retries == 3)
            #expect(rig.agent.statistics.lastError?.contains("\(status)") == true)
        } else {
            #expect(rig.wait(timeout: 10) { rig.agent.statistics.state == .failed })
            #expect(server.upgradeRequests.count == 2, "fatal after one retry")
            #expect(rig.agent.statistics.failure?.contains("HTTP \(status)") == true)
        }
        rig.finish()
        #expect(!rig.log.all.contains { $0.contains(AgentTestRig.key) })
    }

    @Test func sayWaitsForThePersonToStopTalking() throws {
        let rig = try AgentTestRig(port: 0, humans: [("alice", ConstantSource(0))])
        rig.server.speechStarted(audioStartMs: 0, itemID: "u1")
        #expect(rig.wait { rig.agent.statistics.humanTalking }, "the agent heard that alice talks")
        rig.agent.say("When you're done")
        // say decides at once: the text waits, nothing was asked of the server.
        #expect(rig.agent.statistics.saysWaiting == 1, "not while alice talks")
        #expect(rig.server.events(ofType: "response.create").isEmpty, "not while alice talks")
        rig.server.speechStopped(audioEndMs: 400, itemID: "u1")
        #expect(rig.server.wait { $0.events(ofType: "response.create").count == 1 })
        rig.finish()
        let ids = rig.server.events.filter { $0.type != "input_audio_buffer.append" }.map(\.eventID)
        #expect(ids.allSatisfy { $0?.hasPrefix("rt_") == true }, "an event_id on every client event")
    }

    @Test func aCancelledReplyDoesNotReleaseASayWhileThePersonTalks() throws {
        let rig = try AgentTestRig(port: 0, humans: [("alice", ConstantSource(0))])
        rig.agent.say("First")
        #expect(rig.server.wait { $0.events(ofType: "response.create").count == 1 })
        rig.server.reply(pcm: sine24(frequency: 500, count: 72_000), itemID: "item_a", chunkMs: 100, paced: true)
        #expect(rig.wait { rig.voice.contains { $0 != 0 } })
        rig.agent.say("Second")
        #expect(rig.agent.statistics.saysWaiting == 1, "queued behind the reply in progress")
        rig.server.speechStarted(audioStartMs: 300, itemID: "u1")
        #expect(rig.server.wait { !$0.hasActiveResponse() }, "the server cancelled the reply")
        // The agent has seen the cancelled reply end (its response.done) and decided: the say waits.
        #expect(rig.wait { rig.agent.statistics.responsesDone == 1 })
        #expect(rig.agent.statistics.saysWaiting == 1, "alice still talks")
        #expect(rig.server.events(ofType: "response.create").count == 1, "alice still talks")
        rig.server.speechStopped(audioEndMs: 900, itemID: "u1")
        #expect(rig.server.wait { $0.events(ofType: "response.create").count == 2 })
        rig.finish()
        #expect(rig.agent.statistics.errors == 0, "\(rig.log.all)")
    }

    @Test func aCreateRefusedAsBusyIsQueuedAgainWithoutASecondMessage() throws {
        let rig = try AgentTestRig(port: 0, humans: [("alice", ConstantSource(0))])
        rig.server.startResponseUnannounced()
        rig.agent.say("Crossing on the wire")
        let create = try #require(
            rig.server.wait { $0.events(ofType: "response.create").count == 1 }
                ? rig.server.events(ofType: "response.create").first?.eventID : nil)
        rig.server.reply(pcm: sine24(frequency: 500, count: 4_800), itemID: "item_vad", transcript: "First.")
        #expect(rig.server.wait { $0.events(ofType: "response.create").count == 2 }, "sent again after response.done")
        rig.finish()
        #expect(create.hasPrefix("rt_"))
        #expect(rig.server.events(ofType: "conversation.item.create").count == 1, "the message is made once")
        #expect(rig.agent.statistics.errors == 0, "the refusal is benign: \(rig.log.all)")
        #expect(rig.log.all.isEmpty, "\(rig.log.all)")
    }

    @Test func aRefusedSessionUpdateIsAWarningInTheStatistics() throws {
        let rig = try AgentTestRig(port: 0, humans: [("alice", ConstantSource(0))]) { $0.session.voice = "robot" }
        #expect(rig.wait { rig.agent.statistics.sessionWarning != nil })
        rig.finish()
        let warning = try #require(rig.agent.statistics.sessionWarning)
        #expect(warning.contains("invalid_value") && warning.contains("previous settings"), "\(warning)")
        #expect(rig.log.all.contains(warning))
        #expect(!rig.log.all.contains { $0.hasPrefix("roomtap") || $0.hasPrefix("agent:") }, "no prefix in the library")
    }

    @Test func failedTranscriptionsAndTextRepliesAreLoggedAndCounted() throws {
        let dir = try TemporaryDirectory()
        let writer = try TranscriptWriter(path: dir.file("transcript.jsonl"))
        let rig = try AgentTestRig(port: 0, humans: [("alice", ConstantSource(0))]) { $0.transcript = writer }
        rig.server.transcriptionFailed(itemID: "u1", message: "audio unintelligible")
        rig.server.send(object: ["type": "response.output_text.done", "item_id": "item_t", "text": "In writing."])
        #expect(rig.wait { rig.agent.statistics.textReplies == 1 && rig.agent.statistics.transcriptionFailures == 1 })
        rig.finish()
        writer.close()
        #expect(rig.log.all.contains { $0.contains("audio unintelligible") })
        #expect(rig.log.all.contains { $0.contains("text") })
        let written = try lines(dir.file("transcript.jsonl"))
        #expect(written.count == 1 && written[0]["text"] as? String == "In writing.")
        #expect(rig.voice.allSatisfy { $0 == 0 }, "nothing spoken")
    }
}
