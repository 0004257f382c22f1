/// Cuts a byte stream into `\n`-terminated lines, bounding each line's length.
///
/// A line longer than `maxLineBytes` (newline excluded) is reported once as ``Piece/tooLong`` as
/// soon as it is known to be too long, and its bytes are discarded through the next newline. Lines
/// wholly inside one chunk are handed over without copying; only a line split across chunks is
/// buffered (at most `maxLineBytes`).
///
/// Thread: a value, used by one thread.
package struct LineSplitter {
    package enum Piece {
        /// One line without its newline; the bytes are valid only during the callback.
        case line(UnsafeRawBufferPointer)
        /// A line over the limit (reported once per line).
        case tooLong
    }

    package let maxLineBytes: Int
    private var partial: [UInt8] = []
    private var discarding = false

    package init(maxLineBytes: Int = ControlLimits.maxLineBytes) {
        self.maxLineBytes = maxLineBytes
    }

    /// Feeds the next bytes of the stream; calls `body` for every line or overflow they complete.
    package mutating func feed(_ chunk: UnsafeRawBufferPointer, _ body: (Piece) -> Void) {
        var start = 0
        while start < chunk.count {
            let rest = UnsafeRawBufferPointer(rebasing: chunk[start...])
            guard let newline = rest.firstIndex(of: 0x0A) else {
                if !discarding {
                    if partial.count + rest.count > maxLineBytes {
                        body(.tooLong)
                        discarding = true
                        partial = []
                    } else {
                        partial.append(contentsOf: rest)
                    }
                }
                return
            }
            let segment = UnsafeRawBufferPointer(rebasing: rest[..<newline])
            start += newline + 1
            if discarding {
                discarding = false
            } else if partial.count + segment.count > maxLineBytes {
                body(.tooLong)
                partial = []
            } else if partial.isEmpty {
                body(.line(segment))
            } else {
                partial.append(contentsOf: segment)
                partial.withUnsafeBytes { body(.line($0)) }
                if partial.count > 4096 { partial = [] } else { partial.removeAll(keepingCapacity: true) }
            }
        }
    }

    /// The stream ended: a final line without a newline is handed over as a line.
    package mutating func finish(_ body: (Piece) -> Void) {
        if !discarding && !partial.isEmpty { partial.withUnsafeBytes { body(.line($0)) } }
        partial = []
        discarding = false
    }
}
