import CAllocationCounter
import RoomTapAll
import Testing

extension AllocationCounting {
    /// The sample ring (ALSA capture, the agent's voice) makes no allocation after init: writes
    /// under both overflow policies, reads of both kinds and discards, wrapping many times.
    @Suite("The sample ring does not allocate", .serialized)
    struct SampleRingAllocationTests {
        @Test(arguments: [SampleRing.OverflowPolicy.dropNewest, .dropOldest(keeping: 480)])
        func writesReadsAndDiscardsMakeNoAllocation(policy: SampleRing.OverflowPolicy) {
            let ring = SampleRing(capacity: 960, channels: 2, policy: policy)
            let buffer = UnsafeMutablePointer<Int16>.allocate(capacity: 2 * 960)
            buffer.initialize(repeating: 7, count: 2 * 960)
            defer { buffer.deallocate() }
            roomtap_reset_counted_allocations()
            roomtap_count_allocations_on_this_thread(1)
            for i in 0..<2_000 {
                ring.write(buffer, frames: 300 + i % 200)
                _ = ring.read(exactly: 480, into: buffer)
                _ = ring.read(upTo: 100, into: buffer)
                if i % 10 == 0 { ring.discard(upTo: ring.writePosition) }
                _ = ring.count + ring.droppedSamples + ring.readPosition
            }
            roomtap_count_allocations_on_this_thread(0)
            #expect(ring.writePosition > 100 * ring.capacity)
            #expect(
                !allocationCountsAsserted || roomtap_counted_allocations() == 0,
                "the ring allocated \(roomtap_counted_allocations()) times")
        }
    }
}
