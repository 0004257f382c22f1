import Foundation
import RoomTapALSA
import RoomTapCore
import RoomTapMediaTestSupport
import RoomTapTestSupport
import Testing

extension ALSADeviceTests {
    /// Capture through the `file` plugin's `infile`: the samples in the file come out as frames.
    @Suite struct Capture {
        /// Captures all of `config`'s input before the room starts (the test device does not pace,
        /// so this is quick), then renders it in an offline room; returns what the track held.
        private func captureThenRender(
            _ config: ALSATestConfig, channels: Int, maxLatencyFrames: Int
        ) throws -> (CollectingSink, ALSACapture, Room) {
            config.activate()
            let capture = try ALSACapture(
                device: config.captureDevice, channels: channels, maxLatencyFrames: maxLatencyFrames,
                maxSamples: config.captureSampleCount, paceFastDevices: false)
            capture.start()
            #expect(waitUntil { capture.hasEnded })
            let room = Room(clock: VirtualClock())
            let sink = CollectingSink()
            room.addTrack(name: "local", source: capture).addSink(sink)
            room.run()
            capture.close()
            return (sink, capture, room)
        }

        @Test func aPreparedFileComesOutAsExactlyThoseSamples() throws {
            let input = TestSignal.noise(samples: 48_000 + 200, amplitude: 0.5, seed: 42)
            let config = try ALSATestConfig(captureSamples: input)
            let (sink, capture, room) = try captureThenRender(config, channels: 1, maxLatencyFrames: 200)
            #expect(room.position == 101 * 480, "the room ends on the frame holding the last sample")
            #expect(sink.samples == input + [Int16](repeating: 0, count: 101 * 480 - input.count))
            #expect(sink.statuses.allSatisfy { $0 == .normal })
            #expect(capture.capturedSamples == 48_200 && capture.underflows == 0 && capture.droppedSamples == 0)
            #expect(capture.isFinished && capture.failure == nil)
        }

        @Test func stereoCaptureKeepsTheChannelsInterleaved() throws {
            let input = TestSignal.sine(frequency: 300, samples: 4_800, channels: 2)
            let config = try ALSATestConfig(captureSamples: input, captureChannels: 2)
            let (sink, capture, _) = try captureThenRender(config, channels: 2, maxLatencyFrames: 20)
            #expect(sink.samples == input)
            #expect(sink.entries.allSatisfy { $0.channels == 2 })
            #expect(capture.channels == 2 && capture.capturedSamples == 4_800)
        }

        @Test func whenTheDeviceRunsAheadTheOldestAudioIsDroppedToBoundTheLatency() throws {
            let input = TestSignal.noise(samples: 48_000, seed: 9)
            let config = try ALSATestConfig(captureSamples: input)
            let (sink, capture, _) = try captureThenRender(config, channels: 1, maxLatencyFrames: 10)
            // Nothing rendered while 1 s arrived: at most 100 ms is kept, the newest.
            let kept = 48_000 - capture.droppedSamples
            #expect(capture.droppedSamples > 0 && kept <= 4_800 && kept >= 2_400)
            #expect(Array(sink.samples.prefix(kept)) == Array(input.suffix(kept)), "the newest audio, unbroken")
            #expect(sink.samples.count == (kept + 479) / 480 * 480, "then the room ends")
        }

        @Test func aTickWithTooLittleAudioIsSilenceAndCountedAsAnUnderflow() throws {
            let input = TestSignal.noise(samples: 960, seed: 3)
            let config = try ALSATestConfig(captureSamples: input)
            config.activate()
            let capture = try ALSACapture(
                device: config.captureDevice, maxSamples: config.captureSampleCount, paceFastDevices: false)
            let frame = UnsafeMutableBufferPointer<Int16>.allocate(capacity: 480)
            defer { frame.deallocate() }
            frame.initialize(repeating: 7)
            // Not started yet: nothing has arrived.
            #expect(capture.render(into: frame, at: 0) == .silence)
            #expect(capture.render(into: frame, at: 480) == .silence)
            #expect(frame.allSatisfy { $0 == 0 })
            #expect(capture.underflows == 2 && !capture.isFinished)
            capture.start()
            #expect(waitUntil { capture.hasEnded })
            #expect(capture.render(into: frame, at: 960) == .normal)
            #expect(Array(frame) == Array(input[0..<480]))
            #expect(capture.render(into: frame, at: 1_440) == .normal)
            #expect(capture.isFinished)
            #expect(capture.render(into: frame, at: 1_920) == .silence)
            #expect(capture.underflows == 2, "a finished source renders silence without counting")
            capture.close()
            capture.close()  // idempotent
        }

        @Test func theTestDevicesDoNotPace() throws {
            let config = try ALSATestConfig(captureSamples: [Int16](repeating: 1, count: 480_000))  // 10 s
            config.activate()
            let capture = try ALSACapture(
                device: config.captureDevice, maxSamples: config.captureSampleCount, paceFastDevices: false)
            let began = Date()
            capture.start()
            #expect(waitUntil { capture.hasEnded })
            #expect(Date().timeIntervalSince(began) < 5, "10 s of audio read much faster than real time")
            #expect(!capture.isPaced)
            capture.close()
        }

        @Test func aDeviceFasterThanRealTimeIsHeldToRealTimeAndItsFileEndsInSilence() throws {
            let input = TestSignal.noise(samples: 14_400, seed: 11)  // 0.3 s
            let config = try ALSATestConfig(captureSamples: input)
            config.activate()
            let capture = try ALSACapture(device: config.captureDevice, maxLatencyFrames: 100)
            let began = Date()
            capture.start()
            #expect(waitUntil { capture.capturedSamples >= 24_000 })  // 0.5 s: past the end of the file
            let elapsed = Date().timeIntervalSince(began)
            capture.close()
            #expect(capture.isPaced)
            // Held to real time: never faster (the device alone gives it at once); a loaded machine
            // may make it slower.
            #expect(elapsed > 0.35 && elapsed < 30, "0.5 s of audio took \(elapsed) s")
            #expect(capture.droppedSamples == 0 && capture.failure == nil)
            var rendered: [Int16] = []
            let frame = UnsafeMutableBufferPointer<Int16>.allocate(capacity: 480)
            defer { frame.deallocate() }
            var at: Int64 = 0
            while !capture.isFinished {
                _ = capture.render(into: frame, at: at)
                rendered += frame
                at += 480
            }
            #expect(rendered.count >= 24_000)
            #expect(Array(rendered.prefix(14_400)) == input)
            #expect(rendered.dropFirst(14_400).allSatisfy { $0 == 0 }, "after the file: its trailing silence")
        }

        @Test func aBadDeviceNameIsOneClearLine() {
            #expect {
                _ = try ALSACapture(device: "no-such-mic")
            } throws: { error in
                "\(error)" == "cannot open ALSA capture device \"no-such-mic\": No such file or directory"
            }
        }
    }
}
