import Foundation
import RoomTapAll
import RoomTapCLITestSupport
import RoomTapMediaTestSupport
import Testing

/// Samples/RecordEveryone: the Sora documentation's example (a WAV sink attached on add-track,
/// closed on remove-track), run as a program on the sample room.
@Suite("The sample program records every stream")
struct SampleProgramTests {
    @Test func recordEveryoneWritesOneAlignedWAVPerTrack() throws {
        let out = try temporaryDirectory()
        let outcome = try CLIRunner.run(
            [out.path, "alice=\(sample("alice"))", "carol=\(sample("carol"))"],
            executable: CLIRunner.executable(named: "record-everyone"))
        #expect(outcome.status == 0, "stderr: \(outcome.stderr)")
        #expect(try listing(out) == ["1-alice.wav", "2-carol.wav"])
        // The remove-track handler closed every file; then the disconnect handler ran.
        #expect(outcome.stdout.contains("1-alice.wav: 432000 samples"))
        #expect(outcome.stdout.contains("2-carol.wav: 432000 samples"))
        #expect(outcome.stdout.hasSuffix("room finished\n"))
        let (_, carol) = try WAVFile.readSamples(path: out.appendingPathComponent("2-carol.wav").path)
        let reference = try referenceDecode(of: sample("carol"))
        #expect(Array(carol[..<reference.count]) == reference)
        #expect(carol[reference.count...].allSatisfy { $0 == 0 })
    }
}
