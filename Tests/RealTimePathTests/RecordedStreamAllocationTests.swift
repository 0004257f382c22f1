import CAllocationCounter
import RoomTapAll
import RoomTapRTPTestSupport
import RoomTapTestSupport
import Testing

extension AllocationCounting {
    /// A recording (Janus .mjr) played on the clock: `RecordedStreamSource.render` hands packets to
    /// the jitter buffer and renders without a heap allocation, through loss, reordering and a
    /// timestamp gap.
    @Suite("A recorded stream does not allocate on the clock", .serialized)
    struct RecordedStreamAllocationTests {
        @Test func renderingARecordingMakesNoAllocation() throws {
            let packets = Array(RTPTestSender.encode(TestSignal.speechLike(samples: 300 * 960)).packets.prefix(300))
            var builder = JanusRecordingBuilder(header: JanusRecordingBuilder.opusHeader(u: 1_796_070_494_461_418))
            var order = Array(packets.indices).filter { $0 % 17 != 5 }  // some loss
            order.swapAt(40, 41)  // stored out of order
            for i in order {
                let gap = i >= 200 ? 96_000 : 0  // 2 s of DTX-like silence
                builder.append(
                    payload: packets[i], sequence: UInt16(truncatingIfNeeded: 65_500 + i),
                    timestamp: UInt32(i * 960 + gap), ms: UInt32(i * 20))
            }
            let recording = try JanusRecording.parse(builder.bytes(), path: "a.mjr")
            let source = try #require(RecordedStreamSource(stream: recording.stream, offset: 4_321))
            var frame = [Int16](repeating: 0, count: 480)
            var room: Int64 = 0
            roomtap_reset_counted_allocations()
            while !source.isFinished {
                frame.withUnsafeMutableBufferPointer { samples in
                    roomtap_count_allocations_on_this_thread(1)
                    _ = source.render(into: samples, at: room)
                    roomtap_count_allocations_on_this_thread(0)
                }
                room += 480
            }
            #expect(source.statistics.lost > 0 && source.statistics.packets == order.count)
            #expect(
                !allocationCountsAsserted || roomtap_counted_allocations() == 0,
                "\(roomtap_counted_allocations()) allocations")
        }
    }
}
