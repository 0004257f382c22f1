import CAllocationCounter
import Foundation
import RoomTapAll
import RoomTapTestSupport
import Synchronization
import Testing

extension AllocationCounting {
    /// The agent's clock-side parts: its voice source (playing, flushed), its listen sink and the
    /// speaker-activity sinks make no allocation on the room clock's thread.
    @Suite("The agent's clock path does not allocate", .serialized)
    struct AgentNoAllocationTests {
        final class CountingSwitch: AudioTrackSink, @unchecked Sendable {
            let lastFrame: Int64
            init(lastFrame: Int64) { self.lastFrame = lastFrame }
            func onFrame(_ frame: AudioFrame) {
                if frame.index == 0 { roomtap_count_allocations_on_this_thread(1) }
                if frame.index == lastFrame { roomtap_count_allocations_on_this_thread(0) }
            }
        }

        final class Sine: FrameSource, @unchecked Sendable {
            let channels = 1
            var isFinished: Bool { false }
            func render(into samples: UnsafeMutableBufferPointer<Int16>, at roomSample: Int64) -> FrameStatus {
                for i in 0..<samples.count { samples[i] = Int16(8_000 * sin(Double(roomSample + Int64(i)) * 0.06)) }
                return .normal
            }
        }

        @Test func theAgentsVoiceListenAndSpeakerSinksMakeNoAllocationOnTheClockThread() throws {
            let agent = try RealtimeAgent(configuration: RealtimeAgentConfiguration(apiKey: ""))
            let room = Room(clock: VirtualClock(), endsWhenSourcesFinish: false)
            let alice = room.addTrack(name: "alice", source: Sine())
            let lastFrame: Int64 = 1_000
            alice.addSink(CountingSwitch(lastFrame: lastFrame))
            agent.attach(to: room, hearing: [alice])
            let reply = [Int16](repeating: 1_000, count: 48_000 * 12)
            _ = reply.withUnsafeBufferPointer { agent.voice.push($0) }
            room.stop(atSample: (lastFrame + 1) * 480)
            roomtap_reset_counted_allocations()
            room.start()
            // The voice plays (the clock took frames of it), then a barge-in flushes it.
            #expect(waitUntil(timeout: .seconds(30)) { room.position > 0 })
            _ = agent.voice.flush()
            _ = reply.withUnsafeBufferPointer { agent.voice.push(UnsafeBufferPointer(rebasing: $0[0..<48_000])) }
            room.waitUntilFinished()
            #expect(
                !allocationCountsAsserted || roomtap_counted_allocations() == 0,
                "the clock thread allocated \(roomtap_counted_allocations()) times in \(lastFrame + 1) ticks")
            agent.stop()
        }
    }
}
