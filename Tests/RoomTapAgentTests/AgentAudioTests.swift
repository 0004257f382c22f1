import Foundation
import RoomTapAgent
import RoomTapCore
import RoomTapTestSupport
import Testing

/// What the agent hears and says, end to end through a live room and a local Realtime stand-in:
/// the heard mix-minus at 24 kHz, replies on the voice track at the right room time, barge-in,
/// transcripts. Ports from the kernel.
@Suite(.serialized) struct AgentAudioTests {
    @Test func theServerReceivesTheMixMinusAt24kHzAndNeverTheAgentsVoice() throws {
        let alice = SineSource(frequency: 440, amplitude: 6_000)
        let bob = SineSource(frequency: 700, amplitude: 4_000)
        let rig = try AgentTestRig(port: 0, humans: [("alice", alice), ("bob", bob)])
        rig.server.reply(pcm: sine24(frequency: 1_500, count: 24_000), paced: true)
        #expect(rig.server.wait { $0.audio().count >= 36_000 })
        rig.finish()
        let heard = rig.server.audio()
        // The session started with the room: 24 kHz sample k is room sample 2k of alice + bob.
        var dot = 0.0
        var e1 = 0.0
        var e2 = 0.0
        var worst = 0
        for k in 1_200..<(heard.count - 1_200) {
            let expected = Int(alice.expected(at: Int64(2 * k))) + Int(bob.expected(at: Int64(2 * k)))
            let got = Int(heard[k])
            dot += Double(expected * got)
            e1 += Double(expected * expected)
            e2 += Double(got * got)
            worst = max(worst, abs(expected - got))
        }
        #expect(dot / sqrt(e1 * e2) > 0.999, "correlation with the expected mix at 24 kHz")
        #expect(worst < 60, "worst difference \(worst)")
        #expect(toneAmplitude(1_500, in: heard[1_200..<36_000], rate: 24_000) < 5, "the agent's voice is not heard")
        #expect(rms(rig.voice[...]) > 1_000, "while the agent really talked")
    }

    @Test func aReplyLandsInTheVoiceTrackAtTheRightRoomTime() throws {
        let rig = try AgentTestRig(port: 0, humans: [("alice", ConstantSource(0))])
        #expect(rig.wait { rig.room.position >= 14_400 }, "the room has run 0.3 s")
        let reply = sine24(frequency: 600, count: 12_000)  // 0.5 s
        let sentAt = rig.room.position
        rig.server.reply(pcm: reply, transcript: "Delicious.")
        #expect(rig.wait { rig.voice.count > Int(sentAt) + 72_000 })
        let arrivedBy = rig.room.position
        rig.finish()
        let voice = rig.voice
        let start = try #require(voice.firstIndex { $0 != 0 })
        #expect(Int64(start) >= sentAt, "not before it was sent")
        #expect(Int64(start) - sentAt < 9_600, "within 200 ms of being sent (\(Int64(start) - sentAt) samples)")
        let end = try #require(voice.lastIndex { $0 != 0 })
        #expect(abs(end + 1 - start - 24_000) <= 48, "0.5 s of reply played: \(end + 1 - start)")
        #expect(voice[(end + 1)...].allSatisfy { $0 == 0 })
        let played = voice[(start + 2_400)..<(start + 21_600)]
        #expect(abs(toneAmplitude(600, in: played, rate: 48_000) - 12_000) < 240, "the reply's tone at its level")
        #expect(rig.agent.statistics.responses == 1)
        #expect(arrivedBy > sentAt)
    }

    @Test func bargeInStopsPlaybackAndTruncatesToWhatWasPlayed() throws {
        let dir = try TemporaryDirectory()
        let writer = try TranscriptWriter(path: dir.file("transcript.jsonl"))
        let rig = try AgentTestRig(port: 0, humans: [("alice", ConstantSource(0))]) { $0.transcript = writer }
        let words = (1...30).map { "w\($0)" }.joined(separator: " ")
        rig.server.reply(
            pcm: sine24(frequency: 500, count: 72_000), itemID: "item_long", transcript: words, chunkMs: 100,
            paced: true)
        // 0.8 s of the reply played (frames of the voice track with sound), then alice barges in.
        #expect(rig.wait { rig.voiceSink.statuses.count { !$0.isZero } >= 80 })
        rig.server.speechStarted(audioStartMs: 1_000, itemID: "u1")
        #expect(rig.server.wait { $0.events(ofType: "conversation.item.truncate").count == 1 })
        let stopObservedAt = rig.room.position
        #expect(rig.wait { writer.lineCount == 1 }, "the cancelled reply's line, once its full transcript came")
        // The agent saw the cancelled reply end; 0.3 s of room after that, still nothing plays.
        #expect(rig.wait { rig.agent.statistics.responsesDone == 1 })
        let framesAtDone = rig.voiceSink.frameCount
        #expect(rig.wait { rig.voiceSink.frameCount >= framesAtDone + 30 })
        rig.finish()
        let voice = rig.voice
        let start = try #require(voice.firstIndex { $0 != 0 })
        let stop = try #require(voice.lastIndex { $0 != 0 }) + 1
        #expect(Int64(stop) <= stopObservedAt + 480, "stopped by the time the truncate went out")
        #expect(voice[stop...].allSatisfy { $0 == 0 }, "nothing plays after the barge-in")
        let truncate = try #require(rig.server.events(ofType: "conversation.item.truncate").first?.object)
        #expect(truncate["item_id"] as? String == "item_long")
        #expect(truncate["content_index"] as? Int == 0)
        // Played = the samples between start and stop, less any gap (a late chunk on a loaded machine).
        let playedMs = Double(stop - start - silentRuns(voice[start..<stop])) / 48
        let endMs = try #require(truncate["audio_end_ms"] as? Int)
        #expect(abs(Double(endMs) - playedMs) <= 10, "truncate says \(endMs) ms, played \(playedMs) ms")
        #expect(playedMs > 500 && playedMs < 2_500)
        #expect(rig.agent.statistics.bargeIns == 1)
        #expect(rig.server.events(ofType: "response.cancel").isEmpty, "the server cancelled it: no redundant cancel")
        #expect(rig.agent.statistics.errors == 0, "the truncate was accepted: \(rig.log.all)")
        writer.close()
        let line = try #require(
            (try JSONSerialization.jsonObject(
                with: Data(String(contentsOfFile: dir.file("transcript.jsonl"), encoding: .utf8).utf8)))
                as? [String: Any])
        #expect(line["speaker"] as? String == "agent")
        #expect(line["text"] as? String == words, "all the model generated, marked interrupted")
        #expect(line["interrupted"] as? Bool == true)
        let lineEnd = try #require(line["end"] as? Double)
        #expect(abs(lineEnd - Double(stop) / 48_000) < 0.002, "the line ends where playback stopped")
    }

    @Test func transcriptsAreAttributedToWhoTalked() throws {
        let dir = try TemporaryDirectory()
        let writer = try TranscriptWriter(path: dir.file("transcript.jsonl"))
        let alice = SineSource(frequency: 300, amplitude: 6_000, offset: 9_600, length: 38_400)  // 0.2–1.0 s
        let bob = SineSource(frequency: 500, amplitude: 6_000, offset: 67_200, length: 38_400)  // 1.4–2.2 s
        let rig = try AgentTestRig(port: 0, humans: [("alice", alice), ("bob", bob)]) {
            $0.transcript = writer
        }
        #expect(rig.server.wait(timeout: .seconds(10)) { $0.audio().count >= 24 * 2_400 })
        rig.server.speechStarted(audioStartMs: 200, itemID: "u1")
        rig.server.speechStopped(audioEndMs: 1_000, itemID: "u1")
        rig.server.transcriptionCompleted(itemID: "u1", transcript: "The soup is cold.")
        rig.server.speechStarted(audioStartMs: 1_400, itemID: "u2")
        rig.server.speechStopped(audioEndMs: 2_200, itemID: "u2")
        rig.server.transcriptionCompleted(itemID: "u2", transcript: "Mine is fine.")
        rig.server.speechStarted(audioStartMs: 600, itemID: "u3")
        rig.server.speechStopped(audioEndMs: 1_800, itemID: "u3")
        rig.server.transcriptionCompleted(itemID: "u3", transcript: "Both of us!")
        rig.server.reply(pcm: sine24(frequency: 800, count: 4_800), itemID: "a1", transcript: "I will eat anything.")
        #expect(rig.wait { writer.lineCount == 4 })
        rig.finish()
        writer.close()
        let lines = try String(contentsOfFile: dir.file("transcript.jsonl"), encoding: .utf8)
            .split(separator: "\n").map { line in
                (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] ?? [:]
            }
        #expect(lines.count == 4)
        func line(_ text: String) -> [String: Any]? { lines.first { $0["text"] as? String == text } }
        #expect(line("The soup is cold.")?["speaker"] as? String == "alice")
        #expect(line("The soup is cold.")?["start"] as? Double == 0.2)
        #expect(line("The soup is cold.")?["end"] as? Double == 1.0)
        #expect(line("Mine is fine.")?["speaker"] as? String == "bob")
        #expect(line("Both of us!")?["speaker"] as? String == "alice+bob")
        let agentLine = try #require(line("I will eat anything."))
        #expect(agentLine["speaker"] as? String == "agent")
        let start = try #require(agentLine["start"] as? Double)
        let end = try #require(agentLine["end"] as? Double)
        #expect(abs(end - start - 0.2) < 0.002, "the agent line spans its 0.2 s of audio")
        let voice = rig.voice
        let firstVoice = Double(try #require(voice.firstIndex { $0 != 0 })) / 48_000
        #expect(abs(start - firstVoice) < 0.002, "the agent line starts where its audio played")
    }
}

/// Samples in runs of 8 or more zeros (gaps, not zero crossings).
func silentRuns(_ signal: ArraySlice<Int16>) -> Int {
    var total = 0
    var run = 0
    for v in signal {
        if v == 0 {
            run += 1
        } else {
            if run >= 8 { total += run }
            run = 0
        }
    }
    return total + (run >= 8 ? run : 0)
}

/// Barge-in edge cases (issue 25).
@Suite(.serialized) struct BargeInEdgeTests {
    /// A reply that arrived but had not started playing when someone talked over it is deleted
    /// (`conversation.item.delete`), not truncated to 0 ms, and never plays.
    @Test func aReplyThatNeverPlayedIsDeletedNotTruncated() throws {
        // The room's clock parks at frame 50 (0.5 s), so the reply is queued and nothing of it plays.
        let gate = GatedSource(ConstantSource(0), gateFrame: 50)
        let rig = try AgentTestRig(port: 0, humans: [("alice", gate)])
        #expect(gate.waitUntilReached())
        rig.server.reply(pcm: sine24(frequency: 500, count: 12_000), itemID: "item_unheard", transcript: "Unheard.")
        #expect(rig.wait { rig.agent.voice.writePosition >= 23_000 }, "the reply is queued")
        rig.server.speechStarted(audioStartMs: 400, itemID: "u1")
        #expect(rig.server.wait { $0.events(ofType: "conversation.item.delete").count == 1 })
        gate.release()
        #expect(rig.wait { rig.agent.statistics.bargeIns == 1 && rig.agent.statistics.responsesDone == 1 })
        let frames = rig.voiceSink.frameCount
        #expect(rig.wait { rig.voiceSink.frameCount >= frames + 30 })
        rig.finish()
        let delete = try #require(rig.server.events(ofType: "conversation.item.delete").first?.object)
        #expect(delete["item_id"] as? String == "item_unheard")
        #expect(rig.server.events(ofType: "conversation.item.truncate").isEmpty, "no truncate to 0 ms")
        #expect(rig.agent.statistics.errors == 0, "the server took the delete: \(rig.log.all)")
        #expect(rig.voice.allSatisfy { $0 == 0 }, "nothing of it played")
    }
}

extension BargeInEdgeTests {
    /// `agent mute` while someone talks: the input buffer is cleared, so the turn does not stay
    /// open forever and a `say` is not held behind it.
    @Test func muteMidSpeechClearsTheInputBufferAndFreesTheTurn() throws {
        let rig = try AgentTestRig(port: 0, humans: [("alice", ConstantSource(0))])
        rig.server.speechStarted(audioStartMs: 100, itemID: "u1")
        #expect(rig.wait { rig.agent.statistics.humanTalking })
        rig.agent.say("Are you there?")
        #expect(rig.agent.statistics.saysWaiting == 1, "held while alice talks")
        rig.agent.setListening(false)
        #expect(rig.server.wait { $0.events(ofType: "input_audio_buffer.clear").count == 1 })
        #expect(rig.server.wait { $0.events(ofType: "response.create").count == 1 }, "the say is not stuck")
        #expect(!rig.agent.statistics.humanTalking && rig.agent.statistics.saysWaiting == 0)
        rig.finish()
        #expect(rig.agent.statistics.errors == 0, "\(rig.log.all)")
    }
}
