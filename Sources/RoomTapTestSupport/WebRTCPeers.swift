public import Foundation

/// Where the WebRTC test peers live: the package's root (found from this file's path, so a test
/// binary run from anywhere finds them), its `Tests/Interop/webrtc/` scripts and the project's
/// `.venv` Python (`make venv` installs aiortc there).
public enum WebRTCPeers {
    /// The package root: two levels above `Sources/RoomTapTestSupport/`.
    public static let packageRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// `Tests/Interop/webrtc/` of the package.
    public static var scripts: URL { packageRoot.appendingPathComponent("Tests/Interop/webrtc") }

    /// `.venv/bin/python` of the package (`make venv`).
    public static var python: URL { packageRoot.appendingPathComponent(".venv/bin/python") }
}
