/// Acts on control requests: the recorder's commands (`ping`, `tracks`, `mute`, ...).
///
/// Thread: ``handle(_:)`` is called on the ``ControlServer``'s thread, one request at a time, in
/// the order requests arrive. Contract: it returns promptly (microseconds to a few milliseconds),
/// never waits on the room clock or does I/O that can block, because every client waits behind it.
/// Unknown commands should answer ``ControlResponse/unknownCommand(_:)``; a thrown
/// ``ControlFailure`` from the typed parameter accessors becomes ``ControlResponse/failure(_:)``.
/// The handler may call ``ControlServer/publish(_:)`` and ``ControlServer/stop()`` (which then
/// does not wait).
public protocol ControlHandler: AnyObject, Sendable {
    /// The reply to `request`. `request.id` is echoed by the server; the handler need not copy it.
    func handle(_ request: ControlRequest) -> ControlResponse
}
