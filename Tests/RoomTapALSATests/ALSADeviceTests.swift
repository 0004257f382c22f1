import Foundation
import RoomTapTestSupport
import Testing

/// Every ALSA test runs in this serialized suite: each one points the process's ALSA configuration
/// at its own ``ALSATestConfig`` (the `file` plugin over `null`, no sound card needed).
@Suite(.serialized) struct ALSADeviceTests {}
