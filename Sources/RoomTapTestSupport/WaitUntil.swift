import Foundation

/// Polls `condition` every 2 ms until it holds or `timeout` has passed; returns whether it held.
/// Tests wait for what they need this way, never for a fixed time, with a bound generous enough
/// for a loaded machine. Thread: the caller's; `condition` runs there.
public func waitUntil(timeout: Duration = .seconds(30), _ condition: () -> Bool) -> Bool {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        if ContinuousClock.now >= deadline { return false }
        usleep(2000)
    }
    return true
}
