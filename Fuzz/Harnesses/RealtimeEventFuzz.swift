import RoomTapAgent

/// A fuzzing entry point for the Realtime event decoder (for the libFuzzer target in `Fuzz/`).
///
/// Thread: pure, thread-safe.
package enum RealtimeEventFuzz {
    /// Decodes `bytes` as a server event and discards the result. Must never crash or hang,
    /// whatever the bytes.
    package static func exercise(_ bytes: UnsafeRawBufferPointer) {
        _ = RealtimeServerEvent.decode(bytes)
    }
}
