import CAllocationCounter
import RoomTapAll
import RoomTapRTPTestSupport
import RoomTapTestSupport
import Testing

extension AllocationCounting {
    /// A Sora track (pieces of recordings, each at its place, one cut where the next begins)
    /// played on the clock: `SegmentedRecordingSource.render` copies each piece's frame in and
    /// renders without a heap allocation, through loss, a gap and a cut.
    @Suite("A track of recorded pieces does not allocate on the clock", .serialized)
    struct SegmentedRecordingAllocationTests {
        @Test func renderingPiecesMakesNoAllocation() throws {
            let packets = Array(RTPTestSender.encode(TestSignal.speechLike(samples: 200 * 960)).packets.prefix(200))
            var builder = JanusRecordingBuilder(header: JanusRecordingBuilder.opusHeader(u: 1_796_070_494_461_418))
            for i in packets.indices where i % 23 != 7 {  // some loss
                builder.append(
                    payload: packets[i], sequence: UInt16(i), timestamp: UInt32(i * 960), ms: UInt32(i * 20))
            }
            let stream = try JanusRecording.parse(builder.bytes(), path: "a.mjr").stream
            // Piece 1 at 1 234, cut at 150 000 where piece 2 begins; a gap; piece 3 at 500 000.
            let source = try #require(
                SegmentedRecordingSource(
                    segments: [(stream, 1_234, nil), (stream, 150_000, nil), (stream, 500_000, nil)], end: 800_000))
            #expect(source.cuts == [150_000, 150_000 + stream.durationSamples, 500_000 + stream.durationSamples])
            var frame = [Int16](repeating: 0, count: 480)
            var room: Int64 = 0
            var statuses: [FrameStatus] = []
            statuses.reserveCapacity(2_000)
            roomtap_reset_counted_allocations()
            while !source.isFinished {
                frame.withUnsafeMutableBufferPointer { samples in
                    roomtap_count_allocations_on_this_thread(1)
                    let status = source.render(into: samples, at: room)
                    roomtap_count_allocations_on_this_thread(0)
                    statuses.append(status)
                }
                room += 480
            }
            #expect(room == 800_160, "the track ends at its end, rounded up to a frame")
            #expect(statuses[800] == .silence && statuses[1_500] == .silence, "in the gap, after the last piece")
            #expect(statuses[400] != .silence && statuses[1_200] != .silence)
            #expect(source.pieces.allSatisfy { $0.statistics.lost > 0 })
            #expect(
                !allocationCountsAsserted || roomtap_counted_allocations() == 0,
                "\(roomtap_counted_allocations()) allocations")
        }
    }
}
