import CAllocationCounter
import RoomTapAll
import RoomTapRTPTestSupport
import RoomTapTestSupport
import Testing

extension AllocationCounting {
    /// The live path: `insert` (receive thread) and `render` (room clock) of the Opus jitter buffer
    /// make no heap allocation, through loss, FEC recovery and PLC.
    @Suite(
        "The jitter buffer does not allocate", .serialized)
    struct JitterBufferAllocationTests {
        /// 300 packets of 20 ms speech-like audio with in-band FEC.
        static func packets() -> [[UInt8]] {
            Array(RTPTestSender.encode(TestSignal.speechLike(samples: 300 * 960)).packets.prefix(300))
        }

        /// Live only; the record and the live playout side by side.
        @Test(arguments: [false, true])
        func insertAndRenderMakeNoAllocation(withRecord: Bool) throws {
            let packets = Self.packets()
            let mapping: RoomTimeMapping = { Int64($0 * 48 / 1_000_000) }
            let made = JitterBuffer(recordDelayMilliseconds: withRecord ? 300 : nil, arrivalToRoom: mapping)
            let buffer = try #require(made)
            var frame = [Int16](repeating: 0, count: 480)
            var next = 0
            var random = SplitMix64(seed: 3)
            roomtap_reset_counted_allocations()
            for k in 0..<700 {
                let now = UInt64(k) * 10_000_000
                while next < packets.count && UInt64(next) * 20_000_000 + 5_000_000 <= now {
                    if random.nextUnit() > 0.1 || next > 250 {  // 10 % loss, then a clean tail
                        let arrival = UInt64(next) * 20_000_000 + 5_000_000
                        packets[next].withUnsafeBytes { payload in
                            roomtap_count_allocations_on_this_thread(1)
                            buffer.insert(
                                sequence: UInt16(truncatingIfNeeded: 65_400 + next), timestamp: UInt32(next * 960),
                                payload: payload, arrival: arrival)
                            roomtap_count_allocations_on_this_thread(0)
                        }
                    }
                    next += 1
                }
                frame.withUnsafeMutableBufferPointer { samples in
                    roomtap_count_allocations_on_this_thread(1)
                    _ = buffer.render(into: samples, at: Int64(k) * 480)
                    if withRecord { _ = buffer.renderLive(into: samples, at: Int64(k) * 480) }
                    roomtap_count_allocations_on_this_thread(0)
                }
            }
            #expect(buffer.statistics.lost > 0, "the run must exercise loss")
            #expect(buffer.statistics.recoveredByFEC + buffer.statistics.concealedSamples > 0)
            #expect(
                !allocationCountsAsserted || roomtap_counted_allocations() == 0,
                "\(roomtap_counted_allocations()) allocations")
        }

        /// The PBX codecs: libspandsp's decoders and PLC, the fade, libsoxr's conversion to 48 kHz,
        /// through 10 % loss, with the record and the live playout side by side.
        @Test(arguments: [
            (AudioCodec.pcmu, 160), (.pcma, 160), (.g722, 160), (.l16(rate: 16_000), 320),
            (.l16(rate: 44_100), 441), (.l16(rate: 48_000, channels: 2), 240),
        ])
        func pbxCodecsInsertAndRenderMakeNoAllocation(codec: AudioCodec, samplesPerPacket: Int) throws {
            let mapping: RoomTimeMapping = { Int64($0 * 48 / 1_000_000) }
            let buffer = try #require(
                JitterBuffer(codec: codec, recordDelayMilliseconds: 300, arrivalToRoom: mapping))
            var random = SplitMix64(seed: 5)
            let bytes = samplesPerPacket * (codec.encoding == .l16 ? 2 * codec.channels : 1)
            let packets = (0..<300).map { _ in (0..<bytes).map { _ in UInt8(truncatingIfNeeded: random.next()) } }
            let packetNanos = UInt64(samplesPerPacket) * 1_000_000_000 / UInt64(codec.clockRate)
            var frame = [Int16](repeating: 0, count: 480)
            var next = 0
            roomtap_reset_counted_allocations()
            for k in 0..<400 {
                let now = UInt64(k) * 10_000_000
                while next < packets.count && UInt64(next) * packetNanos + 5_000_000 <= now {
                    if random.nextUnit() > 0.1 || next > 250 {
                        packets[next].withUnsafeBytes { payload in
                            roomtap_count_allocations_on_this_thread(1)
                            buffer.insert(
                                sequence: UInt16(truncatingIfNeeded: 65_400 + next),
                                timestamp: UInt32(next * samplesPerPacket), payload: payload,
                                arrival: UInt64(next) * packetNanos + 5_000_000)
                            roomtap_count_allocations_on_this_thread(0)
                        }
                    }
                    next += 1
                }
                frame.withUnsafeMutableBufferPointer { samples in
                    roomtap_count_allocations_on_this_thread(1)
                    _ = buffer.render(into: samples, at: Int64(k) * 480)
                    _ = buffer.renderLive(into: samples, at: Int64(k) * 480)
                    roomtap_count_allocations_on_this_thread(0)
                }
            }
            #expect(buffer.statistics.lost > 0 && buffer.statistics.concealedSamples > 0, "loss concealed")
            #expect(buffer.statistics.invalid == 0)
            #expect(
                !allocationCountsAsserted || roomtap_counted_allocations() == 0,
                "\(codec): \(roomtap_counted_allocations()) allocations")
        }
    }
}
