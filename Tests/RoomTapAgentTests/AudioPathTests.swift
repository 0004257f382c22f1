import Foundation
import RoomTapAgent
import RoomTapCore
import RoomTapSync
import RoomTapTestSupport
import Testing

/// Collects what a listen sink hands over; can refuse audio for a range of frames (by the count
/// of `wantsAudio` questions: one per frame) and stall once, to overflow the sink's queue.
final class ChunkCollector: AgentAudioInput, @unchecked Sendable {
    private struct Store {
        var chunks: [(room: Int64, samples: [Int16])] = []
        var questions = 0
        var stalled = false
    }
    private let store = Locked(Store())
    private let refuse: Range<Int>
    private let stallSeconds: Double

    init(refuse: Range<Int> = 0..<0, stallSeconds: Double = 0) {
        self.refuse = refuse
        self.stallSeconds = stallSeconds
    }

    var wantsAudio: Bool {
        store.withLock { s in
            defer { s.questions += 1 }
            return !refuse.contains(s.questions)
        }
    }

    func appendAudio(_ chunk: UnsafeBufferPointer<Int16>, roomSample: Int64) {
        let stall = store.withLock { s -> Bool in
            s.chunks.append((roomSample, Array(chunk)))
            defer { s.stalled = true }
            return !s.stalled && stallSeconds > 0
        }
        if stall { Thread.sleep(forTimeInterval: stallSeconds) }  // the test's slow consumer, on purpose
    }

    var chunks: [(room: Int64, samples: [Int16])] { store.withLock { $0.chunks } }
}

/// The agent's audio path through real rooms: what it hears (48 → 24 kHz chunks with room
/// times), what it says (a ring played out 10 ms per tick, flushed within one frame), who talks.
@Suite struct AudioPathTests {
    @Test func theListenSinkHandsOver24kHzChunksWithTheirRoomTimes() throws {
        let room = Room(clock: VirtualClock())
        let sine = SineSource(frequency: 1_000, amplitude: 10_000, length: 48_000)
        let collector = ChunkCollector()
        let sink = try AgentListenSink(input: collector, chunkMilliseconds: 40)
        room.addTrack(name: "alice", source: sine).addSink(sink)
        room.run()
        sink.close()
        let chunks = collector.chunks
        #expect(sink.droppedFrames == 0)
        #expect(chunks.count >= 24 && chunks.count <= 25)
        for (k, chunk) in chunks.enumerated() {
            #expect(chunk.room == Int64(k) * 1_920, "chunk \(k) starts at room sample \(chunk.room)")
            if k < chunks.count - 1 { #expect(chunk.samples.count == 960) }
        }
        let all = chunks.flatMap(\.samples)
        #expect(all.count > 23_200 && all.count <= 24_000, "all but the filter delay (≤ 30 ms) is handed over")
        // Sample k of the stream is the room's sample 2k.
        var worst = 0
        for k in 1_000..<23_000 { worst = max(worst, abs(Int(all[k]) - Int(sine.expected(at: Int64(2 * k))))) }
        #expect(worst < 30, "24 kHz stream differs from the room by \(worst)")
    }

    @Test func aPauseRestartsTheChunksAtTheRightRoomTime() throws {
        let collector = ChunkCollector(refuse: 50..<80)
        let sink = try AgentListenSink(input: collector, chunkMilliseconds: 20)
        let room = Room(clock: VirtualClock())
        room.addTrack(name: "alice", source: SineSource(frequency: 200, amplitude: 5_000, length: 120 * 480))
            .addSink(sink)
        room.run()
        sink.close()
        let starts = collector.chunks.map(\.room)
        #expect(sink.droppedFrames == 0)
        #expect(starts.first == 0)
        #expect(starts.contains(80 * 480), "a chunk starts where listening resumed: \(starts)")
        #expect(!starts.contains { $0 >= 50 * 480 && $0 < 80 * 480 }, "nothing heard while paused")
        for (a, b) in zip(collector.chunks, collector.chunks.dropFirst()) {
            #expect(b.room >= a.room + 2 * Int64(a.samples.count), "chunks never overlap in room time")
        }
    }

    @Test func anOverflowingQueueDropsFramesAndTheChunksSayWhereAudioResumes() throws {
        let collector = ChunkCollector(stallSeconds: 0.3)
        let sink = try AgentListenSink(input: collector, chunkMilliseconds: 20, capacityFrames: 16)
        let room = Room(clock: RealTimeClock())  // 1 s; the listener stalls 0.3 s, the queue holds 0.16 s
        room.addTrack(name: "alice", source: SineSource(frequency: 200, amplitude: 5_000, length: 100 * 480))
            .addSink(sink)
        room.run()
        sink.close()
        #expect(sink.droppedFrames > 0, "the stalled listener made the queue overflow")
        let chunks = collector.chunks
        var jumps = 0
        for (a, b) in zip(chunks, chunks.dropFirst()) {
            let end = a.room + 2 * Int64(a.samples.count)
            #expect(b.room >= end, "chunks never overlap in room time")
            if b.room != end {
                jumps += 1
                #expect(b.room % 480 == 0, "audio resumes at a frame the room rendered")
            }
        }
        #expect(jumps >= 1)
        let heard = chunks.reduce(0) { $0 + $1.samples.count }
        #expect(heard <= (100 - sink.droppedFrames) * 240, "dropped frames are not invented")
    }

    @Test func replyAudioPlaysOutOnTheRoomTimelineAndCountsOverflow() {
        let voice = AgentVoiceSource(seconds: 1)
        let reply = TestSignal.sine(frequency: 440, samples: 30_000, amplitude: 0.4)
        let pushed = reply.withUnsafeBufferPointer { voice.push($0) }
        #expect(pushed == 30_000)
        let more = [Int16](repeating: 7, count: 30_000).withUnsafeBufferPointer { voice.push($0) }
        #expect(more == 18_000)
        #expect(voice.overflowSamples == 12_000)
        let room = Room(clock: VirtualClock())
        let sink = CollectingSink()
        room.addTrack(name: "agent", source: voice).addSink(sink)
        room.addTrack(name: "timer", source: ConstantSource(0, length: 72_000))
        room.run()
        let out = sink.samples
        #expect(Array(out[0..<30_000]) == reply)
        #expect(out[30_000..<48_000].allSatisfy { $0 == 7 })
        #expect(out[48_000...].allSatisfy { $0 == 0 })
        #expect(sink.statuses[99] == .normal && sink.statuses[100] == .silence)
        #expect(voice.playPosition == 48_000)
        #expect(voice.roomSample(atPosition: 30_000) == 30_000)
    }

    @Test func playbackWaitsForAPrebufferOrTheEndOfTheReply() {
        let voice = AgentVoiceSource(seconds: 1, prebufferMilliseconds: 100)
        let out = UnsafeMutableBufferPointer<Int16>.allocate(capacity: 480)
        defer { out.deallocate() }
        _ = [Int16](repeating: 9, count: 2_400).withUnsafeBufferPointer { voice.push($0) }
        #expect(voice.render(into: out, at: 0) == .silence, "50 ms queued: still gathering")
        _ = [Int16](repeating: 9, count: 2_400).withUnsafeBufferPointer { voice.push($0) }
        #expect(voice.render(into: out, at: 480) == .normal, "100 ms queued: plays")
        for f in 2..<11 { _ = voice.render(into: out, at: Int64(f) * 480) }
        #expect(voice.playPosition == 4_800)
        #expect(voice.render(into: out, at: 5_280) == .silence, "ran dry")
        _ = [Int16](repeating: 5, count: 1_000).withUnsafeBufferPointer { voice.push($0) }
        #expect(voice.render(into: out, at: 5_760) == .silence, "after running dry it gathers again")
        voice.markComplete()
        #expect(voice.render(into: out, at: 6_240) == .normal, "the end of a reply plays at once")
        #expect(out[0] == 5 && out[479] == 5)
        #expect(voice.roomSample(atPosition: 4_800) == 6_240, "mapped to where it really played")
        #expect(voice.roomSample(atPosition: 4_000) == 4_480, "the first sample played at room sample 480")
    }

    @Test func aFlushStopsPlaybackWithinOneFrame() throws {
        let clock = RealTimeClock()
        let room = Room(clock: clock, endsWhenSourcesFinish: false)
        let voice = AgentVoiceSource(seconds: 10)
        let sink = CollectingSink(reserveFrames: 200)
        room.addTrack(name: "agent", source: voice).addSink(sink)
        let reply = [Int16](repeating: 1_000, count: 48_000 * 3)
        _ = reply.withUnsafeBufferPointer { voice.push($0) }
        room.start()
        #expect(waitUntil(timeout: .seconds(30)) { room.position >= 14_400 }, "0.3 s of the reply played")
        let stoppedAt = voice.flush()
        let lastRendered = voice.lastRenderedRoomSample
        // 0.1 s of room rendered after the flush, all of it to be silent.
        #expect(waitUntil(timeout: .seconds(30)) { sink.frameCount * 480 >= Int(stoppedAt) + 4_800 })
        room.stop()
        room.waitUntilFinished()
        let out = sink.samples
        let firstSilent = try #require(out.firstIndex(of: 0))
        #expect(Int64(firstSilent) == stoppedAt, "played exactly up to the stop position")
        #expect(out[firstSilent...].allSatisfy { $0 == 0 }, "nothing plays after the flush")
        #expect(Int64(firstSilent) <= lastRendered + 480, "stopped within a frame of the flush returning")
        #expect(stoppedAt > 9_600 && stoppedAt < 48_000)
    }

    @Test func speakerActivityNamesWhoTalked() {
        let activity = SpeakerActivity()
        let room = Room(clock: VirtualClock())
        let alice = room.addTrack(name: "alice", source: SineSource(frequency: 300, amplitude: 8_000, length: 48_000))
        let bob = room.addTrack(
            name: "bob", source: SineSource(frequency: 500, amplitude: 8_000, offset: 24_000, length: 48_000))
        room.addTrack(name: "quiet", source: ConstantSource(40, length: 96_000))
        alice.addSink(activity.sink(for: alice))
        bob.addSink(activity.sink(for: bob))
        room.run()
        #expect(activity.speakers(from: 0, to: 20_000) == ["alice"])
        #expect(activity.speakers(from: 50_000, to: 70_000) == ["bob"])
        #expect(activity.speakers(from: 24_000, to: 48_000) == ["alice", "bob"])
        #expect(activity.speakers(from: 80_000, to: 96_000) == [])
    }

    @Test func twoTracksWithOneNameGetASinkEach() {
        let activity = SpeakerActivity()
        let room = Room(clock: VirtualClock())
        let first = room.addTrack(name: "alice", source: SineSource(frequency: 300, amplitude: 8_000, length: 24_000))
        let second = room.addTrack(
            name: "alice", source: SineSource(frequency: 500, amplitude: 8_000, offset: 48_000, length: 24_000))
        let a = activity.sink(for: first)
        let b = activity.sink(for: second)
        #expect(a !== b, "one sink per track: two render threads never share one")
        #expect(activity.sink(for: first) === a, "asking again gives the same sink")
        first.addSink(a)
        second.addSink(b)
        room.run()
        #expect(activity.speakers(from: 0, to: 20_000) == ["alice"])
        #expect(activity.speakers(from: 50_000, to: 70_000) == ["alice"], "the second track's talk counts too")
        #expect(activity.speakers(from: 0, to: 72_000) == ["alice"], "a name is listed once")
    }

    @Test func transcriptLinesAreJSONWithRoomSeconds() throws {
        let dir = try TemporaryDirectory()
        let writer = try TranscriptWriter(path: dir.file("transcript.jsonl"))
        writer.write(startSample: 48_000, endSample: 120_000, speaker: "alice+bob", text: "say \"cheese\"\n/ok")
        writer.write(startSample: 0, endSample: 4_800, speaker: "agent", text: "cut", interrupted: true)
        writer.close()
        let text = try String(contentsOfFile: dir.file("transcript.jsonl"), encoding: .utf8)
        #expect(
            text
                == "{\"start\": 1, \"end\": 2.5, \"speaker\": \"alice+bob\", \"text\": \"say \\\"cheese\\\"\\n/ok\"}\n"
                + "{\"start\": 0, \"end\": 0.1, \"speaker\": \"agent\", \"text\": \"cut\", \"interrupted\": true}\n"
        )
    }
}
