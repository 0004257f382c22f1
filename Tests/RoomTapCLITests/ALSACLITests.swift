import Foundation
import RoomTapAll
import RoomTapCLITestSupport
import RoomTapMediaTestSupport
import Testing

/// `record --play` and `--mic` through the real CLI, without a sound card: ALSA's `file` plugin
/// (configured through ALSA_CONFIG_PATH in the recorder's environment) writes what is played to a
/// file and reads what is captured from one.
@Suite("CLI: ALSA playback and capture")
struct ALSACLITests {
    @Test func playTheMixAsHeardWhileRecording() throws {
        let alsa = try ALSATestConfig()
        let out = try temporaryDirectory()
        let outcome = try CLIRunner.run(
            [
                "record", "--file", "alice=\(sample("alice"))", "--realtime", "--duration", "2", "--play",
                alsa.playbackDevice, "--out", out.path, "--quiet",
            ], environment: alsa.environment, timeout: 30)
        #expect(outcome.status == 0, "stderr: \(outcome.stderr)")
        let played = try alsa.playedSamples()
        let recorded = try WAVFile.readSamples(path: out.appendingPathComponent("alice.wav").path).1
        #expect(recorded.count == 96_000)
        #expect(played.count == 96_000, "every frame of the room played once: \(played.count)")
        let same = played == recorded  // a Bool: a failing array comparison would print every sample
        #expect(same, "the mix of one speaker is that speaker, sample for sample")
        #expect(try listing(out) == ["alice.wav", "room.json"], "--play without --mix writes no mix file")
        let report = try JSONSerialization.jsonObject(with: Data(contentsOf: out.appendingPathComponent("room.json")))
        let playback = (report as? [String: Any])?["playback"] as? [String: Any]
        #expect(playback?["device"] as? String == alsa.playbackDevice && playback?["droppedFrames"] as? Int == 0)
    }

    @Test func playOneTrackAndABadDeviceIsOneLine() throws {
        let alsa = try ALSATestConfig()
        let out = try temporaryDirectory()
        let started = Date()
        let outcome = try CLIRunner.run(
            [
                "record", "--file", "alice=\(sample("alice"))", "--file", "bob=\(sample("bob"))",
                "--duration", "1", "--play-track", "bob", "--out", out.path, "--quiet",
            ], environment: alsa.environment, timeout: 30)
        #expect(outcome.status == 0, "stderr: \(outcome.stderr)")
        #expect(Date().timeIntervalSince(started) >= 0.9, "playback paces the files at real time")
        let bob = try WAVFile.readSamples(path: out.appendingPathComponent("bob.wav").path).1
        let playedBob = try alsa.playedSamples() == bob
        #expect(playedBob, "the default device plays the chosen track")

        let bad = try temporaryDirectory()
        let refused = try CLIRunner.run(
            [
                "record", "--file", "alice=\(sample("alice"))", "--realtime", "--play", "nosuchdevice", "--out",
                bad.path,
            ],
            environment: alsa.environment, timeout: 30)
        #expect(refused.status == 1)
        #expect(
            refused.stderrLines == [
                "roomtap: error: cannot open ALSA playback device \"nosuchdevice\": No such file or directory"
            ])
        #expect(try listing(bad).isEmpty, "nothing recorded, nothing left")
    }

    @Test func aMicrophoneIsATrackOfTheRoom() throws {
        let tone = (0..<48_000).map { Int16(12_000 * sin(2 * Double.pi * 440 * Double($0) / 48_000)) }
        let alsa = try ALSATestConfig(captureSamples: tone)
        let out = try temporaryDirectory()
        let outcome = try CLIRunner.run(
            [
                "record", "--mic", alsa.captureDevice, "--mic-name", "desk", "--duration", "1.5", "--out", out.path,
                "--quiet",
            ], environment: alsa.environment, timeout: 30)
        #expect(outcome.status == 0, "stderr: \(outcome.stderr)")
        let desk = try WAVFile.readSamples(path: out.appendingPathComponent("desk.wav").path).1
        #expect(desk.count == 72_000, "exactly --duration")
        // The capture starts within the first frames (the device's first period); from there the
        // file holds the captured signal sample for sample.
        let start = try #require(desk.firstIndex { $0 != 0 }.map { $0 - (tone.firstIndex { $0 != 0 } ?? 0) })
        #expect(start >= 0 && start <= 4_800, "capture latency \(start) samples")
        // Unchanged unless room.json says the device and the room clock did not meet after the
        // first sound (a machine too loaded to keep real time: then each 10 ms of sound in the
        // file is still a piece of the tone, in order).
        let tracks = try #require(try roomJSON(out)["tracks"] as? [[String: Any]])
        let capture = try #require(tracks.first?["capture"] as? [String: Int], "room.json: \(tracks)")
        let startUnderflows = start / AudioFrame.samplesPerChannel
        let missed =
            (capture["underflows"] ?? 0) > startUnderflows || capture["droppedSamples"] != 0 || capture["overruns"] != 0
        if !missed {
            let unchanged = Array(desk[start..<(start + 48_000)]) == tone
            #expect(unchanged, "the microphone's samples, unchanged (\(capture))")
        } else {
            // What the device gave: the tone, then zeros (ALSATestConfig).
            let given = tone + [Int16](repeating: 0, count: 2 * ALSATestConfig.trailingSilence)
            var cursor = 0
            for frame in stride(from: start, to: desk.count - 479, by: 480) {
                let block = desk[frame..<frame + 480]
                guard block.contains(where: { $0 != 0 }) else { continue }
                let found = (cursor..<max(cursor, given.count - 479)).first {
                    given[$0..<$0 + 480].elementsEqual(block)
                }
                #expect(found != nil, "the sound at sample \(frame) is a piece of the tone, in order (\(capture))")
                guard let found else { break }
                cursor = found + 480
            }
        }
    }
}
