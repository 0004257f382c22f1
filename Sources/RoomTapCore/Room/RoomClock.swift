/// Drives a room: calls a tick once per 10 ms frame of room time.
///
/// The offline ``VirtualClock`` ticks as fast as the CPU allows; a live clock (real time, absolute
/// deadlines) implements the same protocol.
///
/// Thread: `run` is called once, on the room clock's thread, and returns when `tick` returns false.
public protocol RoomClock: Sendable {
    /// True when ticks follow the wall clock (sinks must then drop rather than wait when full).
    var isRealTime: Bool { get }
    /// Calls `tick(frameIndex)` for frame 0, 1, 2, ... until it returns false.
    func run(_ tick: (Int64) -> Bool)
}

/// A clock that ticks as fast as the room can render: offline work, tests.
public struct VirtualClock: RoomClock {
    /// Creates a virtual clock.
    public init() {}
    public var isRealTime: Bool { false }
    public func run(_ tick: (Int64) -> Bool) {
        var index: Int64 = 0
        while tick(index) { index += 1 }
    }
}
