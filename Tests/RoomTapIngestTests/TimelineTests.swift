import RoomTapCore
import RoomTapIngest
import RoomTapMediaTestSupport
import RoomTapSync
import RoomTapTestSupport
import Synchronization
import Testing

@Suite("A file on the room timeline")
struct TimelineTests {
    static let length = 30_011

    static func file() -> OggOpusFile {
        OggOpusWriter(frameMilliseconds: 20, packetsPerPage: 4).encode(TestSignal.chirp(samples: length))
    }

    @Test(arguments: [0, 1, 479, 480, 12_345, 96_017] as [Int64])
    func theFirstSamplePlaysExactlyAtTheOffset(_ offset: Int64) throws {
        let scratch = Scratch()
        let file = Self.file()
        let path = try scratch.write(file.bytes)
        let reference = referenceDecode(
            packets: file.packets, channels: 1, preSkip: file.preSkip, totalSamples: Self.length)
        let source = try OggOpusFileSource(path: path, offset: offset)
        #expect(source.offset == offset)
        #expect(source.endRoomSample == offset + Int64(Self.length))
        let r = renderAll(source, extra: 3)
        let end = Int(offset) + Self.length
        let frames = (end + 479) / 480
        #expect(!r.finishedBeforeStart)
        #expect(r.finishedAfterFrame == frames - 1, "isFinished flips in the frame holding the last sample")
        #expect(r.frames == frames + 3)
        #expect(r.samples.prefix(Int(offset)).allSatisfy { $0 == 0 })
        #expect(Array(r.samples[Int(offset)..<end]) == reference)
        #expect(r.samples[end...].allSatisfy { $0 == 0 })
        let firstAudioFrame = Int(offset) / 480
        #expect(r.statuses.prefix(firstAudioFrame).allSatisfy { $0 == .silence })
        #expect(
            r.statuses[firstAudioFrame..<frames].allSatisfy { $0 == .normal },
            "frames that mix audio and silence are normal")
        #expect(r.statuses[frames...].allSatisfy { $0 == .silence })
    }

    @Test func stereoOutputKeepsTheSameTimeline() throws {
        let scratch = Scratch()
        let file = Self.file()
        let path = try scratch.write(file.bytes)
        let reference = referenceDecode(
            packets: file.packets, channels: 2, preSkip: file.preSkip, totalSamples: Self.length)
        let source = try OggOpusFileSource(path: path, channels: 2, offset: 12_345)
        #expect(source.channels == 2)
        let r = renderAll(source)
        #expect(r.samples.prefix(2 * 12_345).allSatisfy { $0 == 0 })
        #expect(Array(r.samples[(2 * 12_345)..<(2 * (12_345 + Self.length))]) == reference)
        #expect(r.frames == (12_345 + Self.length + 479) / 480)
    }

    /// Counts frames and samples on the clock thread (allocates; a test sink).
    final class Tally: AudioTrackSink, @unchecked Sendable {
        let frames = Atomic<Int>(0)
        let nonzero = Locked<(first: Int64, last: Int64)>((-1, -1))
        func onFrame(_ frame: AudioFrame) {
            frames.add(1, ordering: .relaxed)
            for (i, s) in frame.samples.enumerated() where s != 0 {
                let at = frame.roomSample + Int64(i / frame.channels)
                nonzero.withLock {
                    if $0.first < 0 { $0.first = at }
                    $0.last = at
                }
            }
        }
    }

    @Test func aRoomOfTheSampleFilesEndsWithBobsFileAt10Point5Seconds() throws {
        let room = Room(clock: VirtualClock())
        var tallies: [String: Tally] = [:]
        for (name, offset) in [("alice", Int64(0)), ("bob", Int64(120_000)), ("carol", Int64(0))] {
            let track = room.addTrack(name: name, source: try OggOpusFileSource(path: sampleFile(name), offset: offset))
            let tally = Tally()
            track.addSink(tally)
            tallies[name] = tally
        }
        room.run()
        #expect(room.position == 504_000)
        for tally in tallies.values { #expect(tally.frames.load(ordering: .relaxed) == 1_050) }
        // bob speaks from 0.50 s of his file, which is 3.00 s of room time.
        let bob = tallies["bob"]!.nonzero.withLock { $0 }
        #expect(
            bob.first >= 120_000 + 23_000 && bob.first <= 120_000 + 25_000, "bob's first sound near 3.0 s: \(bob.first)"
        )
        #expect(bob.last < 504_000)
        let carol = tallies["carol"]!.nonzero.withLock { $0 }
        #expect(carol.last < 216_000)
    }
}
