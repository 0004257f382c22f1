import Foundation
import RoomTapAll
import RoomTapSync
import Synchronization

/// What the supervisor of a recording watches: the room and its parts, and what it does for them.
struct SupervisedRoom {
    let room: Room
    let live: LiveRoom?
    let join: RoomJoin?
    let soraStreaming: SoraAudioStreaming?
    let progress: ProgressReporter
    /// Samples a network room's record runs behind its reception (0: none).
    let drain: Int64
    /// `--duration`'s end of reception, in room samples.
    let receiveUntil: Int64?
    let roomJSON: RoomJSONWriter
    /// A stop (signal, `roomtap stop`, a failed join) has come.
    let isInterrupted: () -> Bool
    /// room.json's snapshot now.
    let currentReport: () -> RoomReport
    /// Stops the room as `roomtap stop` does (draining what is on its way).
    let stop: () -> Void

    /// What the supervisor saw of reception, for the run's last words.
    struct Reception {
        /// Whether the room reached the check that something was received.
        var checked = false
        /// Where reception ended (room samples), when it ended before the room.
        var end: Int64?
    }
}

extension RoomRecording {
    /// The supervisor: the calling thread (the CLI's main thread) drains the room's bus
    /// (``RoomBus``) until the clock stops. What happens is posted there by the thread that saw
    /// it: the clock's end, a track added or removed, a sink's failure, a control change, a join's
    /// or the streaming server's warning. Besides the events, it wakes only for what is due at a
    /// time: the progress line (``ProgressReporter/updateInterval``), room.json every
    /// ``reportInterval``, the end of reception and the first check that something was received.
    /// Returns once the clock has stopped and the bus is drained.
    func supervise(_ s: SupervisedRoom) -> SupervisedRoom.Reception {
        let room = s.room
        let options = plan.options
        s.join?.postWarnings(to: room.bus)
        s.soraStreaming?.postLogLines(to: room.bus)
        var lastReport = MonotonicClock.now
        var reception = SupervisedRoom.Reception()
        var joinFailed = false
        let progressTick = s.progress.updateInterval
        func handle(_ event: RoomBus.Event) {
            switch event {
            case .sinkFailed: noteFailedFiles(announce: options.usesRealTimeClock)
            case .warningQueued:
                for warning in s.join?.takeWarnings() ?? [] { plan.context.console.error(warning + "\n") }
                if !joinFailed, let failure = s.join?.failure {
                    // The server would not take the join back: the files so far are finalized, exit 1.
                    joinFailed = true
                    shared.withLock { $0.errors.append(.init(file: nil, error: failure)) }
                    s.stop()
                }
                printSoraStreamingWarnings(s.soraStreaming)
            case .controlChanged, .trackAdded, .trackRemoved: noteReportDue()
            case .clockStopped, .streamAppeared, .wake: break
            }
        }
        while true {
            s.progress.update(room.position, tracks: room.tracks.count { !$0.isDerived })
            if s.drain > 0, s.isInterrupted() || room.position >= s.receiveUntil ?? .max {
                s.join?.stop()
                s.soraStreaming?.stop()
                s.live?.stop()  // draining: nothing more is received
                reception.end = reception.end ?? min(room.position, s.receiveUntil ?? .max)
            }
            if let live = s.live, !reception.checked, reception.end == nil,
                room.position >= Self.nothingReceivedAfter
            {
                reception.checked = true
                warnNothingReceived(live, seconds: Double(Self.nothingReceivedAfter) / 48_000)
            }
            if takeReportDue() || MonotonicClock.now - lastReport >= Self.reportInterval {
                lastReport = .now
                s.roomJSON.submit(s.currentReport())
            }
            if let failure = s.roomJSON.takeFailure() {
                plan.context.console.printWarning("\(failure); the recording goes on and room.json is tried again")
            }
            guard room.isRunning else { break }
            // The next thing due at a time, in room time ahead of the clock (1 ms at least).
            var due = lastReport + Self.reportInterval
            if let progressTick { due = min(due, .now + progressTick) }
            func aheadOfTheClock(_ sample: Int64) -> MonotonicClock.Instant {
                .now + .microseconds(max(1_000, (sample - room.position) * 1_000 / 48))
            }
            if s.drain > 0, reception.end == nil, let receiveUntil = s.receiveUntil {
                due = min(due, aheadOfTheClock(receiveUntil))
            }
            if s.live != nil, !reception.checked, reception.end == nil {
                due = min(due, aheadOfTheClock(Self.nothingReceivedAfter))
            }
            if let event = room.bus.next(until: due) { handle(event) }
        }
        // What was posted as the clock stopped (a last failure, a last warning).
        while let event = room.bus.next(waitingAtMost: 0) { handle(event) }
        return reception
    }
}
