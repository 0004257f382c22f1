import RoomTapCore
import RoomTapTestSupport
import Testing

/// The frame's channel conversion (used by queues and the mixer) and its place on the timeline.
@Suite struct AudioFrameTests {
    private func copy(_ samples: [Int16], from channels: Int, to destinationChannels: Int) -> [Int16] {
        var out = [Int16](repeating: 0x5A5A, count: 480 * destinationChannels + 4)
        FrameFeeding.withFrame(samples[...], channels: channels, roomSample: 0) { frame in
            out.withUnsafeMutableBufferPointer { frame.copy(into: $0.baseAddress!, channels: destinationChannels) }
        }
        #expect(out.suffix(4).allSatisfy { $0 == 0x5A5A }, "nothing written past the frame")
        return Array(out.prefix(480 * destinationChannels))
    }

    @Test func stereoToMonoAveragesRoundingTowardZeroWithoutOverflow() {
        let pairs: [(Int16, Int16, Int16)] = [
            (3, 0, 1), (-3, 0, -1), (-7, 2, -2), (32_767, 32_767, 32_767), (-32_768, -32_768, -32_768),
            (32_767, -32_768, 0), (-32_768, 32_767, 0), (1, 1, 1), (100, -301, -100),
        ]
        var stereo: [Int16] = []
        var expected: [Int16] = []
        for i in 0..<480 {
            let (l, r, m) = pairs[i % pairs.count]
            stereo += [l, r]
            expected.append(m)
        }
        #expect(copy(stereo, from: 2, to: 1) == expected)
    }

    @Test func monoToStereoDuplicatesAndSameChannelsCopies() {
        let mono = TestSignal.noise(samples: 480, amplitude: 1, seed: 3)
        #expect(copy(mono, from: 1, to: 2) == mono.flatMap { [$0, $0] })
        #expect(copy(mono, from: 1, to: 1) == mono)
        let stereo = TestSignal.noise(samples: 480, amplitude: 1, channels: 2, seed: 4)
        #expect(copy(stereo, from: 2, to: 2) == stereo)
    }

    @Test func theIndexIsTheFramesPlaceOnTheTimeline() {
        let zeros = [Int16](repeating: 0, count: 480)
        for index in [Int64(0), 1, 99, 360_000] {
            FrameFeeding.withFrame(zeros[...], channels: 1, roomSample: index * 480, status: .silence) {
                #expect($0.index == index && $0.status.isZero)
            }
        }
        #expect(FrameStatus.allCases.filter(\.isZero) == [.silence, .muted])
    }

    @Test func aFrameBufferViewsItsStorage() {
        let buffer = FrameBuffer(channels: 2)
        #expect(buffer.samples.count == 960 && buffer.samples.allSatisfy { $0 == 0 })
        buffer.samples[5] = 42
        buffer.roomSample = 4_800
        buffer.status = .concealed
        let frame = buffer.frame
        #expect(frame.samples[5] == 42 && frame.roomSample == 4_800)
        #expect(frame.status == .concealed && frame.channels == 2)
        buffer.clear()
        #expect(buffer.frame.samples.allSatisfy { $0 == 0 })
    }
}
