import Foundation
import RoomTapCore
import Synchronization
import Testing

/// The sample ring between a producer thread and the room clock: both overflow policies at the
/// boundaries, wraparound, discard, and a real producer/consumer pair checking order and counts.
@Suite struct SampleRingTests {
    /// Writes `values` (mono) and returns what the ring accepted.
    @discardableResult
    private func write(_ ring: SampleRing, _ values: [Int16]) -> Int {
        values.withUnsafeBufferPointer { ring.write($0.baseAddress!, frames: values.count / ring.channels) }
    }

    /// Reads up to `frames` samples per channel.
    private func read(_ ring: SampleRing, upTo frames: Int) -> [Int16] {
        var out = [Int16](repeating: -1, count: max(1, frames * ring.channels))
        let n = out.withUnsafeMutableBufferPointer { ring.read(upTo: frames, into: $0.baseAddress!) }
        return Array(out[0..<(n * ring.channels)])
    }

    /// Reads exactly `frames` samples per channel, or nil.
    private func read(_ ring: SampleRing, exactly frames: Int) -> [Int16]? {
        var out = [Int16](repeating: -1, count: max(1, frames * ring.channels))
        let ok = out.withUnsafeMutableBufferPointer { ring.read(exactly: frames, into: $0.baseAddress!) }
        return ok ? Array(out[0..<(frames * ring.channels)]) : nil
    }

    private func ramp(_ range: Range<Int>) -> [Int16] { range.map { Int16($0) } }

    // MARK: - .dropNewest

    @Test func dropNewestTakesAnExactFillAndDropsOneOver() {
        let ring = SampleRing(capacity: 8, policy: .dropNewest)
        #expect(write(ring, ramp(0..<8)) == 8)
        #expect(ring.count == 8 && ring.droppedSamples == 0)
        #expect(write(ring, [99]) == 0)
        #expect(ring.droppedSamples == 1 && ring.writePosition == 8 && ring.count == 8)
        #expect(read(ring, upTo: 100) == ramp(0..<8))
        #expect(ring.readPosition == 8 && ring.count == 0)
    }

    @Test func dropNewestKeepsThePartThatFits() {
        let ring = SampleRing(capacity: 8, policy: .dropNewest)
        write(ring, ramp(0..<5))
        #expect(write(ring, ramp(5..<10)) == 3)
        #expect(ring.droppedSamples == 2)
        #expect(read(ring, exactly: 8) == ramp(0..<8))
        // A write larger than the ring: the first `capacity` samples go in.
        #expect(write(ring, ramp(100..<120)) == 8)
        #expect(ring.droppedSamples == 14)
        #expect(read(ring, upTo: 8) == ramp(100..<108))
    }

    // MARK: - .dropOldest

    @Test func dropOldestTakesAnExactFillWithoutDropping() {
        let ring = SampleRing(capacity: 8, policy: .dropOldest(keeping: 4))
        #expect(write(ring, ramp(0..<8)) == 8)
        #expect(ring.count == 8 && ring.droppedSamples == 0 && ring.readPosition == 0)
        #expect(read(ring, exactly: 8) == ramp(0..<8))
    }

    @Test func dropOldestOneOverDropsDownToKeeping() {
        let ring = SampleRing(capacity: 8, policy: .dropOldest(keeping: 4))
        write(ring, ramp(0..<8))
        #expect(write(ring, [8]) == 1)
        // 9 offered, 4 kept: the 5 oldest dropped.
        #expect(ring.droppedSamples == 5 && ring.count == 4 && ring.readPosition == 5)
        #expect(read(ring, upTo: 8) == ramp(5..<9))
        // A write larger than `keeping` into a full ring keeps just the write.
        write(ring, ramp(9..<17))
        #expect(write(ring, ramp(17..<23)) == 6)
        #expect(ring.droppedSamples == 5 + 8 && ring.count == 6)
        #expect(read(ring, upTo: 8) == ramp(17..<23))
    }

    @Test func dropOldestInterleavedStereoKeepsFramesWhole() {
        let ring = SampleRing(capacity: 4, channels: 2, policy: .dropOldest(keeping: 2))
        write(ring, ramp(0..<8))  // 4 frames: (0,1) (2,3) (4,5) (6,7)
        write(ring, [8, 9])
        #expect(ring.droppedSamples == 3)
        #expect(read(ring, upTo: 4) == [6, 7, 8, 9])
    }

    // MARK: - Wraparound, reads, discard

    @Test(arguments: [SampleRing.OverflowPolicy.dropNewest, .dropOldest(keeping: 3)])
    func wrapsAroundManyTimesInOrder(policy: SampleRing.OverflowPolicy) {
        let ring = SampleRing(capacity: 7, channels: 2, policy: policy)
        var next = 0
        var expected = 0
        for i in 0..<5_000 {
            let frames = 1 + i % 4
            let values = (next..<(next + frames)).flatMap {
                [Int16(truncatingIfNeeded: $0), Int16(truncatingIfNeeded: ~$0)]
            }
            #expect(write(ring, values) == frames)
            next += frames
            let got = read(ring, upTo: 1 + (i * 3) % 7)
            for k in stride(from: 0, to: got.count, by: 2) {
                #expect(got[k] == Int16(truncatingIfNeeded: expected) && got[k + 1] == ~got[k])
                expected += 1
            }
        }
        expected += ring.count
        #expect(ring.droppedSamples == 0 && expected == next && ring.writePosition == next)
        #expect(ring.writePosition > 700 * ring.capacity)
    }

    @Test func readExactlyTakesNothingUnlessEnoughIsWaiting() {
        let ring = SampleRing(capacity: 8, policy: .dropNewest)
        write(ring, ramp(0..<3))
        #expect(read(ring, exactly: 4) == nil)
        #expect(ring.readPosition == 0 && ring.count == 3)
        #expect(read(ring, exactly: 0) == [])
        #expect(read(ring, exactly: 3) == ramp(0..<3))
        #expect(read(ring, upTo: 5) == [])
    }

    @Test func discardSkipsUpToAPositionClampedToWhatWasWritten() {
        let ring = SampleRing(capacity: 8, policy: .dropNewest)
        write(ring, ramp(0..<6))
        #expect(ring.discard(upTo: 4) == 4)
        #expect(ring.discard(upTo: 4) == 0)
        #expect(ring.discard(upTo: 2) == 0)
        #expect(ring.readPosition == 4 && ring.droppedSamples == 0)
        #expect(ring.discard(upTo: 100) == 2)
        #expect(ring.readPosition == 6 && ring.count == 0)
        write(ring, ramp(6..<8))
        #expect(read(ring, upTo: 8) == ramp(6..<8))
    }

    @Test func takeSaysWhereItsSamplesCameFromAfterADiscardOrADrop() {
        let ring = SampleRing(capacity: 8, policy: .dropNewest)
        write(ring, ramp(0..<6))
        var buffer = [Int16](repeating: 0, count: 8)
        var taken = buffer.withUnsafeMutableBufferPointer { ring.take(upTo: 2, into: $0.baseAddress!) }
        #expect(taken.frames == 2 && taken.position == 0 && Array(buffer.prefix(2)) == ramp(0..<2))
        ring.discard(upTo: 5)  // a barge-in's flush: samples 2, 3, 4 never play
        taken = buffer.withUnsafeMutableBufferPointer { ring.take(upTo: 8, into: $0.baseAddress!) }
        #expect(taken.frames == 1 && taken.position == 5 && buffer[0] == 5)
        taken = buffer.withUnsafeMutableBufferPointer { ring.take(upTo: 8, into: $0.baseAddress!) }
        #expect(taken.frames == 0 && taken.position == 6, "nothing taken: the read position seen")

        let oldest = SampleRing(capacity: 4, policy: .dropOldest(keeping: 2))
        write(oldest, ramp(0..<4))
        write(oldest, ramp(4..<5))  // drops 0, 1, 2: keeps 3 and 4
        taken = buffer.withUnsafeMutableBufferPointer { oldest.take(upTo: 4, into: $0.baseAddress!) }
        #expect(taken.frames == 2 && taken.position == 3 && Array(buffer.prefix(2)) == ramp(3..<5))
    }

    // MARK: - Two threads

    final class Flag: Sendable {
        let done = Atomic<Bool>(false)
    }

    /// A producer thread writes a counting pattern (each stereo frame holds its index: low and high
    /// 16 bits) in uneven chunks; this thread reads in uneven chunks. Every frame read must come
    /// after the previous one, the gaps must be exactly the drops, and read + dropped == offered.
    @Test(arguments: [SampleRing.OverflowPolicy.dropNewest, .dropOldest(keeping: 128)])
    func twoThreadsKeepOrderAndCountEveryDrop(policy: SampleRing.OverflowPolicy) {
        let total = 1_000_000
        let ring = SampleRing(capacity: 256, channels: 2, policy: policy)
        let flag = Flag()
        Thread.detachNewThread {
            let chunk = UnsafeMutablePointer<Int16>.allocate(capacity: 2 * 97)
            defer { chunk.deallocate() }
            var next = 0
            var i = 0
            while next < total {
                let frames = min(total - next, 1 + (i * 37) % 97)
                for k in 0..<frames {
                    chunk[2 * k] = Int16(truncatingIfNeeded: next + k)
                    chunk[2 * k + 1] = Int16(truncatingIfNeeded: (next + k) >> 16)
                }
                ring.write(chunk, frames: frames)
                next += frames
                i += 1
                if i % 64 == 0 { sched_yield() }
            }
            flag.done.store(true, ordering: .releasing)
        }
        var buffer = [Int16](repeating: 0, count: 2 * 200)
        var last = -1
        var readCount = 0
        var gaps = 0
        var outOfOrder = 0
        var j = 0
        while true {
            let finished = flag.done.load(ordering: .acquiring)
            let want = 1 + (j * 53) % 200
            j += 1
            let n = buffer.withUnsafeMutableBufferPointer { ring.read(upTo: want, into: $0.baseAddress!) }
            for k in 0..<n {
                let index = Int(UInt16(bitPattern: buffer[2 * k])) | Int(UInt16(bitPattern: buffer[2 * k + 1])) << 16
                if index <= last { outOfOrder += 1 }
                gaps += index - last - 1
                last = index
            }
            readCount += n
            if n == 0 {
                if finished { break }
                sched_yield()
            }
        }
        gaps += total - 1 - last  // drops after the last sample read
        #expect(outOfOrder == 0)
        #expect(readCount + ring.droppedSamples == total)
        #expect(gaps == ring.droppedSamples)
        #expect(ring.readPosition + (policy == .dropNewest ? ring.droppedSamples : 0) == total)
    }
}
