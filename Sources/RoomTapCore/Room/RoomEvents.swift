/// The room's stream lifecycle handlers (the Sora SDK's add-stream / remove-stream / disconnect).
///
/// Set them before adding tracks. Thread: `onTrackAdded` runs on the thread that called
/// `addTrack`, before the track renders its first frame, so a sink attached there sees every frame.
/// `onTrackRemoved` runs on the thread that called `removeTrack` (or `finish`), after the track's
/// last frame and after its sinks were detached: close the sink's resources there.
/// `onFinished` runs once, after every track was removed.
public struct RoomEvents: Sendable {
    /// A track appeared.
    public var onTrackAdded: (@Sendable (AudioTrack) -> Void)?
    /// A track left; its sinks have been detached and will receive nothing more.
    public var onTrackRemoved: (@Sendable (AudioTrack) -> Void)?
    /// The room ended (the Sora disconnect handler).
    public var onFinished: (@Sendable () -> Void)?

    /// No handlers.
    public init(
        onTrackAdded: (@Sendable (AudioTrack) -> Void)? = nil,
        onTrackRemoved: (@Sendable (AudioTrack) -> Void)? = nil,
        onFinished: (@Sendable () -> Void)? = nil
    ) {
        self.onTrackAdded = onTrackAdded
        self.onTrackRemoved = onTrackRemoved
        self.onFinished = onFinished
    }
}
