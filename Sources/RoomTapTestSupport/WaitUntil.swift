import Foundation

/// Polls `condition` every `interval` (2 ms; longer when a look is costly, such as starting a
/// process) until it holds or `timeout` has passed; returns whether it held. Tests wait for what
/// they need this way, never for a fixed time, with a bound generous enough for a loaded machine.
/// Thread: the caller's; `condition` runs there.
public func waitUntil(
    timeout: Duration = .seconds(30), every interval: Duration = .milliseconds(2), _ condition: () throws -> Bool
) rethrows -> Bool {
    let deadline = ContinuousClock.now + timeout
    let pause = UInt32(interval.components.seconds * 1_000_000 + interval.components.attoseconds / 1_000_000_000_000)
    while try !condition() {
        if ContinuousClock.now >= deadline { return false }
        usleep(pause)
    }
    return true
}
