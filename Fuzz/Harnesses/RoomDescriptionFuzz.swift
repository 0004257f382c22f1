import RoomTapRTP

/// A fuzzing entry point for the room description parsers (for the libFuzzer target in `Fuzz/`).
///
/// Thread: pure, thread-safe.
package enum RoomDescriptionFuzz {
    /// Runs ``RoomDescription/parseSDP(_:source:)`` and ``RoomDescription/parseJSON(_:source:)`` on
    /// `bytes` (as UTF-8 text, invalid sequences replaced) and discards the result or error. Must never
    /// crash, hang or grow memory beyond a small multiple of the input, whatever the bytes.
    package static func exercise(_ bytes: UnsafeRawBufferPointer) {
        let text = String(decoding: bytes, as: UTF8.self)
        _ = try? RoomDescription.parseSDP(text, source: "fuzz.sdp")
        _ = try? RoomFileParser(source: "fuzz.json").parse(bytes)
    }
}
