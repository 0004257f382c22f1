import RoomTapAll
import Synchronization

/// How a recording room stops. SIGINT, SIGTERM and the control socket's `stop` stop it alike:
/// the first drains what is still arriving (`drain`: the record delay), so no file loses the
/// audio it was still waiting to place. Only a second Ctrl-C (SIGINT: a person at the terminal)
/// ends the room at once; SIGTERM and `stop` always drain, however often they come (a dying fleet
/// worker's recorder gets its SIGTERM and may get more: its drained audio is what the room's
/// assembly keeps before the gap).
///
/// Thread: ``stop(interactive:)`` from any (a signal's dispatch source, the control server's
/// thread, the supervisor); the flags from any.
final class RoomStop: Sendable {
    private let room: Room
    private let handler: RoomControlHandler?
    /// Samples a network room's record runs behind its reception (0: none).
    private let drain: Int64
    /// Where the one line about draining goes (nil: `--quiet`).
    private let console: Console?
    private let stops = Atomic<Int>(0)
    private let interactiveStops = Atomic<Int>(0)
    private let interruptedFlag = Atomic<Bool>(false)
    private let atOnceFlag = Atomic<Bool>(false)

    init(room: Room, handler: RoomControlHandler?, drain: Int64, console: Console?) {
        self.room = room
        self.handler = handler
        self.drain = drain
        self.console = console
    }

    /// A stop has come (a signal, `roomtap stop`, a failed join).
    var interrupted: Bool { interruptedFlag.load(ordering: .relaxed) }
    /// A second Ctrl-C ended the room without draining (room.json `stoppedAtOnce`).
    var stoppedAtOnce: Bool { atOnceFlag.load(ordering: .relaxed) }

    /// Stops the room: the first stop drains, a second interactive one (Ctrl-C again) stops at
    /// once. Wakes the supervisor (reception ends now) and tells the control handler.
    func stop(interactive: Bool) {
        interruptedFlag.store(true, ordering: .relaxed)
        room.bus.post(.wake)
        handler?.noteStopping()
        let count = stops.wrappingAdd(1, ordering: .relaxed).newValue
        let presses = interactive ? interactiveStops.wrappingAdd(1, ordering: .relaxed).newValue : 0
        guard drain > 0 else { return room.stop() }
        if presses > 1 {
            atOnceFlag.store(true, ordering: .relaxed)
            room.stop()
        } else if count == 1 {
            room.stop(atSample: room.position + drain)
            if let console {
                let seconds = String(format: "%.1f", Double(drain) / 48_000)
                console.error(
                    "roomtap: stopping: draining \(seconds) s of audio still on its way"
                        + (interactive ? " (Ctrl-C again to stop at once; that audio is then not recorded)\n" : "\n"))
            }
        }
    }
}
