import Foundation
import RoomTapCore
import RoomTapSync
import RoomTapTestSupport
import Testing

/// The room's bus: what the clock and the sinks post there, once each, in order, bounded; the
/// supervisor that drains it never has to poll for a room's end or a failed file.
@Suite struct RoomBusTests {
    /// Everything the bus yields within `seconds`, until `last` (included) or the bound.
    private func drain(_ bus: RoomBus, until last: RoomBus.Event, seconds: Double = 30) -> [RoomBus.Event] {
        var events: [RoomBus.Event] = []
        let deadline = MonotonicClock.now + .seconds(seconds)
        while MonotonicClock.now < deadline, let event = bus.next(until: deadline) {
            events.append(event)
            if event == last { break }
        }
        return events
    }

    @Test func theClockPostsItsStopOnceAsItsLastAct() {
        let room = Room(clock: VirtualClock())
        let track = room.addTrack(name: "a", source: RampSource(length: 100 * 480))
        room.start()
        let events = drain(room.bus, until: .clockStopped)
        #expect(events == [.trackAdded(track.id), .clockStopped])
        #expect(!room.isRunning, "the clock had stopped when it said so")
        #expect(room.position == 100 * 480)
        room.waitUntilFinished()
        #expect(room.bus.next(waitingAtMost: 0.05) == .trackRemoved(track.id), "the room's end removes it")
        #expect(room.bus.next(waitingAtMost: 0.05) == nil, "each said once")
    }

    @Test func tracksAddedAndRemovedArePostedAfterTheirHandlersRan() {
        let handled = Locked<[String]>([])
        let room = Room(
            clock: VirtualClock(),
            events: RoomEvents(
                onTrackAdded: { track in handled.withLock { $0.append("added \(track.name)") } },
                onTrackRemoved: { track in handled.withLock { $0.append("removed \(track.name)") } }))
        let a = room.addTrack(name: "a", source: RampSource(length: 4_800))
        #expect(room.bus.next(waitingAtMost: 0) == .trackAdded(a.id))
        #expect(handled.withLock { $0 } == ["added a"], "posted once the handler had run")
        let b = room.addTrack(name: "b", source: RampSource(length: 4_800))
        room.removeTrack(a)
        #expect(room.bus.next(waitingAtMost: 0) == .trackAdded(b.id))
        #expect(room.bus.next(waitingAtMost: 0) == .trackRemoved(a.id))
        #expect(handled.withLock { $0 } == ["added a", "added b", "removed a"])
        #expect(room.bus.next(waitingAtMost: 0) == nil)
    }

    @Test func aLinkPostsNowhereUntilConnectedThenToItsLastBus() {
        let link = RoomBusLink()
        let first = RoomBus(capacity: 4)
        let second = RoomBus(capacity: 4)
        link.post(.warningQueued)  // before any room: dropped, not queued anywhere
        link.connect(first)
        link.post(.controlChanged)
        link.connect(second)
        link.post(.sinkFailed)
        #expect(first.next(waitingAtMost: 0) == .controlChanged)
        #expect(first.next(waitingAtMost: 0) == nil)
        #expect(second.next(waitingAtMost: 0) == .sinkFailed)
        #expect(second.next(waitingAtMost: 0) == nil)
    }

    @Test func aStoppedLiveRoomSaysSoToo() {
        let room = Room(clock: RealTimeClock())
        room.start()
        room.stop()
        #expect(drain(room.bus, until: .clockStopped) == [.clockStopped])
        room.waitUntilFinished()
    }

    @Test func aFailingWriterIsPostedOnceWhateverTheDelivery() throws {
        for delivery in ["queued", "inline"] {
            let room = Room(clock: VirtualClock())
            let track = room.addTrack(name: "a", source: RampSource(length: 200 * 480))
            let consumer = RecordingConsumer(failAt: 3)
            let sink: any AudioTrackSink =
                delivery == "queued"
                ? QueuedSink(consumer: consumer, channels: 1, capacity: 8, policy: .wait, failureBus: room.bus)
                : InlineSink(consumer: consumer, failureBus: room.bus)
            track.addSink(sink)
            room.run()
            let events = drain(room.bus, until: .clockStopped) + drain(room.bus, until: .sinkFailed, seconds: 0.2)
            #expect(events.count { $0 == .sinkFailed } == 1, "\(delivery): \(events)")
            #expect(events.contains(.clockStopped), "\(delivery)")
            if let queued = sink as? QueuedSink {
                #expect(throws: RecordingConsumer.Failure(frame: 3)) { try queued.close() }
                #expect(
                    queued.consumedFrames == 3 && queued.consumedFrames + queued.droppedFrames == 200, "\(delivery)")
            } else if let inline = sink as? InlineSink {
                #expect(throws: RecordingConsumer.Failure(frame: 3)) { try inline.close() }
                #expect(
                    inline.consumedFrames == 3 && inline.consumedFrames + inline.droppedFrames == 200, "\(delivery)")
            }
        }
    }

    @Test func aFullBusRefusesCountsAndKeepsOrder() {
        let bus = RoomBus(capacity: 3)
        #expect(bus.post(.sinkFailed) && bus.post(.controlChanged) && bus.post(.warningQueued))
        #expect(!bus.post(.clockStopped))
        #expect(bus.refused == 1)
        #expect(drain(bus, until: .warningQueued) == [.sinkFailed, .controlChanged, .warningQueued])
        #expect(bus.next(waitingAtMost: 0) == nil)
        #expect(bus.post(.clockStopped), "room again once drained")
        #expect(bus.next(waitingAtMost: 0) == .clockStopped)
    }

    @Test func postingFromManyThreadsLosesNothingWithinCapacity() async {
        let bus = RoomBus(capacity: 400)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<4 { group.addTask { for _ in 0..<100 { bus.post(.controlChanged) } } }
        }
        var count = 0
        while bus.next(waitingAtMost: 0) != nil { count += 1 }
        #expect(count == 400 && bus.refused == 0)
    }
}
