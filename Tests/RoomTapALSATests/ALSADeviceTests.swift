import Foundation
import RoomTapTestSupport
import Testing

/// Every ALSA test runs in this serialized suite: each one points the process's ALSA configuration
/// at its own ``ALSATestConfig`` (the `file` plugin over `null`, no sound card needed).
@Suite(.serialized) struct ALSADeviceTests {}

/// Waits (polling) until `condition` holds or `seconds` pass; returns whether it held.
func eventually(_ seconds: Double = 30, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while !condition() {
        if Date() > deadline { return false }
        usleep(1_000)  // between looks
    }
    return true
}
