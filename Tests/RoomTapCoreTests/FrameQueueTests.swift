import Foundation
import RoomTapCore
import RoomTapTestSupport
import Testing

/// The ring between the clock and a sink's thread: FIFO across wraparound, full and empty
/// behaviour, channel conversion, and a real producer/consumer pair.
@Suite struct FrameQueueTests {
    /// A mono frame whose samples all hold `value`.
    private func push(_ queue: FrameQueue, value: Int16, roomSample: Int64, status: FrameStatus = .normal) -> Bool {
        let samples = [Int16](repeating: value, count: 480)
        return FrameFeeding.withFrame(samples[...], channels: 1, roomSample: roomSample, status: status) {
            queue.push($0)
        }
    }

    /// The oldest frame as (first sample, room sample, status), popping it.
    private func pop(_ queue: FrameQueue) -> (Int16, Int64, FrameStatus)? {
        let head = queue.peek { frame -> (Int16, Int64, FrameStatus) in
            #expect(frame.samples.allSatisfy { $0 == frame.samples[0] })
            return (frame.samples[0], frame.roomSample, frame.status)
        }
        if head != nil { queue.pop() }
        return head
    }

    @Test func aFullQueueRefusesAndAnEmptyOneHasNothing() {
        let queue = FrameQueue(capacity: 3, channels: 1)
        #expect(queue.count == 0 && pop(queue) == nil)
        #expect(push(queue, value: 1, roomSample: 0) && push(queue, value: 2, roomSample: 480))
        #expect(push(queue, value: 3, roomSample: 960, status: .concealed))
        #expect(!push(queue, value: 4, roomSample: 1_440), "full")
        #expect(queue.count == 3)
        #expect(pop(queue)! == (1, 0, .normal))
        #expect(push(queue, value: 5, roomSample: 1_920, status: .muted))
        #expect(pop(queue)! == (2, 480, .normal))
        #expect(pop(queue)! == (3, 960, .concealed))
        #expect(pop(queue)! == (5, 1_920, .muted), "the refused frame left no trace")
        #expect(pop(queue) == nil && queue.count == 0)
    }

    @Test func framesComeOutInOrderAcrossManyWraparounds() {
        let queue = FrameQueue(capacity: 3, channels: 1)
        var next: Int16 = 0
        var expected: Int16 = 0
        for round in 0..<50 {
            for _ in 0..<(1 + round % 3) {
                #expect(push(queue, value: next, roomSample: Int64(next) * 480))
                next += 1
            }
            while let (value, roomSample, _) = pop(queue) {
                #expect(value == expected && roomSample == Int64(expected) * 480)
                expected += 1
            }
        }
        #expect(expected == next && expected > 90)
    }

    @Test func pushConvertsTheChannelCount() {
        let mono = FrameQueue(capacity: 2, channels: 1)
        let stereo: [Int16] = (0..<480).flatMap { _ in [Int16(-7), Int16(2)] }  // (-7 + 2) / 2 = -2 (toward zero)
        FrameFeeding.withFrame(stereo[...], channels: 2, roomSample: 960, status: .concealed) { #expect(mono.push($0)) }
        mono.peek { frame in
            #expect(frame.channels == 1 && frame.roomSample == 960 && frame.status == .concealed)
            #expect(frame.samples.allSatisfy { $0 == -2 })
        }
        let wide = FrameQueue(capacity: 2, channels: 2)
        let ramp = (0..<480).map { Int16($0) }
        FrameFeeding.withFrame(ramp[...], channels: 1, roomSample: 0) { #expect(wide.push($0)) }
        wide.peek { frame in #expect(Array(frame.samples) == ramp.flatMap { [$0, $0] }) }
    }

    @Test func aProducerAndAConsumerThreadPassEveryFrameIntact() {
        let queue = FrameQueue(capacity: 7, channels: 2)
        let total = 5_000
        let producer = Thread {
            var samples = [Int16](repeating: 0, count: 960)
            for i in 0..<total {
                for j in 0..<960 { samples[j] = Int16(truncatingIfNeeded: i &+ j) }
                let pushed = samples.withUnsafeBufferPointer { buffer in
                    let frame = AudioFrame(samples: buffer, channels: 2, roomSample: Int64(i) * 480, status: .normal)
                    while !queue.push(frame) { sched_yield() }
                    return true
                }
                precondition(pushed)
            }
        }
        producer.start()
        var received = 0
        var corrupt = 0
        while received < total {
            let ok = queue.peek { frame -> Bool in
                let i = Int(frame.roomSample / 480)
                guard i == received else { return false }
                return frame.samples.enumerated().allSatisfy { $0.element == Int16(truncatingIfNeeded: i &+ $0.offset) }
            }
            guard let ok else {
                sched_yield()
                continue
            }
            if !ok { corrupt += 1 }
            queue.pop()
            received += 1
        }
        #expect(received == total && corrupt == 0 && queue.count == 0)
    }
}
