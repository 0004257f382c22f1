import RoomTapAgent

/// The fuzz entry of the pipeline agent's parsers of outside input (the libFuzzer target in
/// `Fuzz/`): the bytes as an event stream, fed in two pieces split at the first byte's value,
/// and every event's data decoded as a chat chunk. Must never crash or hang.
///
/// Thread: pure, thread-safe.
package enum ChatStreamFuzz {
    package static func exercise(_ bytes: UnsafeRawBufferPointer) {
        var parser = ServerSentEventParser(maxEventBytes: 64 << 10)
        let cut = bytes.isEmpty ? 0 : min(bytes.count, Int(bytes[0]))
        let handle: (ServerSentEventParser.Event) -> Void = { _ = ChatCompletionStream.decode($0.data) }
        do throws(ServerSentEventParser.Overflow) {
            try parser.feed(UnsafeRawBufferPointer(rebasing: bytes[0..<cut]), handle)
            try parser.feed(UnsafeRawBufferPointer(rebasing: bytes[cut...]), handle)
        } catch {}
    }
}
