import Dispatch
import Foundation
import RoomTapCore
import RoomTapSync
import RoomTapTestSupport
import Testing

/// The stream lifecycle (the Sora SDK's add-stream / remove-stream): a sink attached in
/// onTrackAdded sees frame 0, onTrackRemoved runs after the last frame with the sinks detached.
@Suite struct RoomEventsTests {
    @Test func aSinkAttachedInOnTrackAddedSeesEveryFrameAndNoneAfterOnTrackRemoved() {
        let sinks = Locked<[String: CollectingSink]>([:])
        let log = Locked<[String]>([])
        let room = Room(
            clock: VirtualClock(),
            events: RoomEvents(
                onTrackAdded: { track in
                    let sink = CollectingSink()
                    track.addSink(sink)
                    sinks.withLock { $0[track.name] = sink }
                    log.withLock { $0.append("added \(track.name)") }
                },
                onTrackRemoved: { track in
                    let count = sinks.withLock { $0[track.name]!.frameCount }
                    let line = "removed \(track.name) after \(count) frames, \(track.sinks.count) sinks"
                    log.withLock { $0.append(line) }
                },
                onFinished: { log.withLock { $0.append("finished") } }))
        room.addTrack(name: "a", source: RampSource(length: 4_800))
        room.addTrack(name: "b", source: ConstantSource(9, offset: 960, length: 100))
        room.run()
        room.waitUntilFinished()  // idempotent: no second round of events

        let frames = 10
        #expect(
            log.withLock { $0 } == [
                "added a", "added b", "removed a after \(frames) frames, 0 sinks",
                "removed b after \(frames) frames, 0 sinks", "finished",
            ])
        for name in ["a", "b"] {
            let sink = sinks.withLock { $0[name]! }
            let expected = (0..<Int64(frames)).map { $0 * 480 }
            #expect(sink.roomSamples == expected, "\(name): frame 0 first, every frame once")
        }
        #expect(room.tracks.isEmpty)
    }

    @Test func addingASinkTwiceAttachesItOnceAndRemovingAnUnknownSinkDoesNothing() {
        let room = Room(clock: VirtualClock())
        let track = room.addTrack(name: "a", source: RampSource(length: 48_000))
        let sink = CollectingSink()
        let stranger = CollectingSink()
        track.addSink(sink)
        track.addSink(sink)
        track.removeSink(stranger)
        #expect(track.sinks.count == 1)
        room.run()
        #expect(sink.frameCount == 100 && stranger.frameCount == 0)
    }

    @Test func sinkChangesTakeEffectAtTheNextTick() throws {
        let room = Room(clock: VirtualClock())
        let gate = GatedSource(RampSource(length: 48_000), gateFrame: 10)
        let track = room.addTrack(name: "a", source: gate)
        let early = CollectingSink()
        let late = CollectingSink()
        track.addSink(early)
        room.start()
        #expect(gate.waitUntilReached())
        // The clock is inside frame 10 (its sink list was taken when the frame started).
        track.removeSink(early)
        track.addSink(late)
        #expect(track.sinks.count == 1 && track.sinks.first === late)
        gate.release()
        room.waitUntilFinished()
        #expect(early.roomSamples == (0...10).map { Int64($0) * 480 })
        #expect(late.roomSamples == (11..<100).map { Int64($0) * 480 })
    }

    @Test func removeTrackReturnsAfterTheTracksLastFrameWithItsSinksDetached() throws {
        let removed = Locked<[String]>([])
        let victimSink = CollectingSink()
        let room = Room(
            clock: VirtualClock(),
            events: RoomEvents(onTrackRemoved: { track in
                let line = "\(track.name): \(victimSink.frameCount) frames, \(track.sinks.count) sinks"
                removed.withLock { $0.append(line) }
            }))
        let gate = GatedSource(RampSource(length: 48_000), gateFrame: 50)
        room.addTrack(name: "clock", source: gate)
        let victim = room.addTrack(name: "victim", source: RampSource(length: 48_000))
        victim.addSink(victimSink)
        room.start()
        #expect(gate.waitUntilReached())
        // removeTrack waits for the clock to take up the new routing, so it runs on another thread
        // while the clock is parked in frame 50 (before the victim renders frame 50).
        let done = DispatchSemaphore(value: 0)
        Thread {
            room.removeTrack(victim)
            done.signal()
        }.start()
        // removeTrack took the track out of the list; the clock is still parked in frame 50, so
        // however long removeTrack is given it cannot have seen the clock take up the routing.
        #expect(waitUntil(timeout: .seconds(30)) { !room.tracks.contains(where: { $0 === victim }) })
        #expect(done.wait(timeout: .now() + 0.2) == .timedOut, "removeTrack waits for the clock")
        gate.release()
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(removed.withLock { $0 } == ["victim: 51 frames, 0 sinks"])
        room.waitUntilFinished()
        #expect(victimSink.frameCount == 51, "nothing after onTrackRemoved")
        #expect(removed.withLock { $0.count } == 2)
        room.removeTrack(victim)  // not in the room any more: nothing happens
        #expect(removed.withLock { $0.count } == 2)
    }
}
