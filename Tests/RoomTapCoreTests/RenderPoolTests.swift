import Foundation
import RoomTapCore
import RoomTapSync
import RoomTapTestSupport
import Synchronization
import Testing

/// A room rendering on a pool of threads produces exactly what one thread does: every frame of
/// every track, in order, with its content, and mixes that hear every input of the same tick;
/// each source track is rendered by the one thread that owns it.
@Suite("Render pool")
struct RenderPoolTests {
    /// Records the thread of every frame it gets.
    final class ThreadRecordingSink: AudioTrackSink, @unchecked Sendable {
        private let threads = Locked<Set<pthread_t>>([])
        func onFrame(_ frame: AudioFrame) {
            let tid = pthread_self()
            threads.withLock { _ = $0.insert(tid) }
        }
        var seen: Set<pthread_t> { threads.withLock { $0 } }
    }

    /// A source that remembers what the room told it about decoding ahead.
    final class StaggerProbe: StaggeredSource, @unchecked Sendable {
        let channels = 1
        let ahead = Atomic<Int>(-1)  // -1: never told
        private let rendered = Atomic<Int>(0)
        func decodeAhead(_ ahead: Bool) { self.ahead.store(ahead ? 1 : 0, ordering: .relaxed) }
        func render(into samples: UnsafeMutableBufferPointer<Int16>, at roomSample: Int64) -> FrameStatus {
            samples.update(repeating: 0)
            rendered.add(1, ordering: .relaxed)
            return .silence
        }
        var isFinished: Bool { rendered.load(ordering: .relaxed) >= 2 }
    }

    /// A source of known size (as a file is), rendering silence for a few frames.
    final class SizedProbe: SizedSource, @unchecked Sendable {
        let channels = 1
        let renderWork: Int64?
        private let rendered = Atomic<Int>(0)
        init(work: Int64) { renderWork = work }
        func render(into samples: UnsafeMutableBufferPointer<Int16>, at roomSample: Int64) -> FrameStatus {
            samples.update(repeating: 0)
            rendered.add(1, ordering: .relaxed)
            return .silence
        }
        var isFinished: Bool { rendered.load(ordering: .relaxed) >= 4 }
    }

    @Test(arguments: [1, 2, 3, 4, 8])
    func everyTrackGetsEveryFrameWithItsContent(renderThreads: Int) {
        let room = Room(clock: VirtualClock(), renderThreads: renderThreads, parallelThreshold: 2)
        var sources: [SyntheticSource] = []
        var sinks: [CollectingSink] = []
        var tracks: [AudioTrack] = []
        for i in 0..<17 {
            let offset = Int64(i * 373)
            let length = Int64(48_000 + i * 1_111)
            // The first four are small constants (on four threads with four or more), so their mix
            // is a plain sum (no limiting) in which a frame of another tick would show at their
            // starts and ends.
            let source: SyntheticSource =
                i < 4
                ? ConstantSource(Int16(100 * (i + 1)), offset: offset, length: length)
                : RampSource(step: Int64(i + 1), offset: offset, length: length)
            let track = room.addTrack(name: "t\(i)", source: source)
            let sink = CollectingSink(reserveFrames: 200)
            track.addSink(sink)
            sources.append(source)
            sinks.append(sink)
            tracks.append(track)
        }
        let mix = room.addMix(name: "mix", inputs: Array(tracks.prefix(4)))
        let mixSink = CollectingSink(reserveFrames: 200)
        mix.addSink(mixSink)
        room.run()
        let end = Int64(16 * 373 + 48_000 + 16 * 1_111)
        let frames = Int((end + 479) / 480)
        #expect(room.position == Int64(frames) * 480)
        for (i, sink) in sinks.enumerated() {
            #expect(sink.roomSamples == (0..<Int64(frames)).map { $0 * 480 }, "track \(i) frames")
            #expect(sink.samples == sources[i].expectedSamples(0..<Int64(frames) * 480), "track \(i) content")
        }
        // The mix of t0...t3 in the same tick: their sum (small values, no limiting).
        let heard = sinks.map(\.samples)  // one snapshot each, not one per sample
        let expectedMix = (0..<heard[0].count).map { n in Int16((0..<4).reduce(0) { $0 + Int(heard[$1][n]) }) }
        #expect(mixSink.samples == expectedMix)
    }

    @Test(arguments: [2, 4])
    func eachSourceTrackStaysOnTheOneThreadThatOwnsIt(renderThreads: Int) {
        let room = Room(clock: VirtualClock(), renderThreads: renderThreads, parallelThreshold: 2)
        let sinks = (0..<8).map { i in
            let track = room.addTrack(name: "t\(i)", source: ConstantSource(1, length: 48_000))
            let sink = ThreadRecordingSink()
            track.addSink(sink)
            return sink
        }
        let mixSink = ThreadRecordingSink()
        room.addMix(name: "mix", inputs: room.tracks).addSink(mixSink)
        room.run()
        let owners = sinks.map(\.seen)
        #expect(owners.allSatisfy { $0.count == 1 }, "a track moved between threads: \(owners)")
        let threads = owners.map { $0.first ?? 0 }
        #expect(Set(threads).count == renderThreads, "\(renderThreads) threads expected, saw \(Set(threads))")
        // Round-robin: track i on thread i % threads; the mix on the clock's, with track 0.
        for i in 0..<8 { #expect(threads[i] == threads[i % renderThreads], "track \(i)") }
        #expect(mixSink.seen == owners[0])
    }

    /// Long and short files alternating: round-robin would give one thread every long file; the
    /// plan deals them out by size, so both threads get one long file and the same total.
    @Test func filesAreSharedByTheirSizeNotTheirCount() {
        let room = Room(clock: VirtualClock(), renderThreads: 2, parallelThreshold: 2)
        let work: [Int64] = [100, 10, 100, 10, 10, 10]
        let sinks = work.enumerated().map { i, work in
            let track = room.addTrack(name: "t\(i)", source: SizedProbe(work: work))
            let sink = ThreadRecordingSink()
            track.addSink(sink)
            return sink
        }
        room.run()
        let threads = sinks.map { $0.seen.first ?? 0 }
        #expect(sinks.allSatisfy { $0.seen.count == 1 })
        #expect(Set(threads).count == 2)
        #expect(threads[0] != threads[2], "both long files on one thread")
        let load = Dictionary(zip(threads, work).map { ($0, $1) }, uniquingKeysWith: +)
        #expect(Set(load.values) == [120], "unequal shares: \(load.values)")
    }

    @Test func aLiveSizedRoomBelowTheThresholdRendersOnOneThread() {
        let room = Room(clock: VirtualClock(), renderThreads: 4)
        let sinks = (0..<Room.defaultParallelThreshold - 1).map { i in
            let track = room.addTrack(name: "t\(i)", source: ConstantSource(1, length: 9_600))
            let sink = ThreadRecordingSink()
            track.addSink(sink)
            return sink
        }
        room.run()
        #expect(Set(sinks.flatMap(\.seen)).count == 1)
    }

    /// Every other track a thread owns decodes a frame ahead, so its 20 ms decodes fall on both ticks.
    @Test(arguments: [1, 2, 4])
    func everyOtherTrackOfEachThreadDecodesAhead(renderThreads: Int) {
        let room = Room(clock: VirtualClock(), renderThreads: renderThreads, parallelThreshold: 2)
        let probes = (0..<8).map { _ in StaggerProbe() }
        for (i, probe) in probes.enumerated() { room.addTrack(name: "t\(i)", source: probe) }
        room.run()
        // Thread t owns t, t + threads, t + 2 threads, ...: its second, fourth, ... track decodes ahead.
        let expected = (0..<8).map { ($0 / renderThreads) % 2 }
        #expect(probes.map { $0.ahead.load(ordering: .relaxed) } == expected)
    }
}
