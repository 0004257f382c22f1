import Synchronization

/// Whether the room a control handler acts on is set up. A recorder opens its control socket before
/// its room has its first tracks (so that a second recorder on the same socket fails before making
/// anything); until ``open()``, a command about tracks (``ControlCommand/namesTracks``) is refused
/// at once with ``ControlFailure/starting``. The handler never waits for the set-up on the server's
/// thread; a client sends the request again (``ControlClient/request(_:timeout:whileStarting:)``),
/// so `roomtap mute alice` issued as the recorder starts still finds alice.
///
/// Thread: any; each member is one atomic load or store, and never waits.
public final class SetUpGate: Sendable {
    private let isSetUp = Atomic<Bool>(false)

    public init() {}

    /// The room is set up (or will never be: it is stopping): every command is served from now on.
    /// Idempotent.
    public func open() { isSetUp.store(true, ordering: .releasing) }

    /// True once ``open()`` has been called.
    public var isOpen: Bool { isSetUp.load(ordering: .acquiring) }

    /// The `starting` failure while `command` must wait for the set-up; nil when it may be served.
    public func refusal(of command: ControlCommand) -> ControlFailure? {
        command.namesTracks && !isOpen ? .starting : nil
    }
}
