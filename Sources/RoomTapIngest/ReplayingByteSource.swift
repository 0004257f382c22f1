/// A byte source that can be read twice from its start although its own bytes can be read only
/// once (a pipe): it keeps a copy of what is read until ``rewind()``, then serves that copy again
/// before reading on.
///
/// Used to inspect an Ogg Opus stream's headers on standard input and then decode it from its
/// first byte: only the bytes read before `rewind` are kept (the header pages, a chunk or two).
///
/// Thread: confined to the reader that owns it (first the inspection, then the decoder).
package final class ReplayingByteSource: ByteSource {
    private let base: any ByteSource
    private var kept: [UInt8] = []
    private var keeping = true
    private var replayed = 0

    /// Reads from `base`, keeping a copy of everything until ``rewind()``.
    package init(_ base: any ByteSource) { self.base = base }

    /// From now on, reads start again at the first byte: the kept bytes, then `base` onward.
    /// Nothing more is kept. Call once.
    package func rewind() {
        keeping = false
        replayed = 0
    }

    package func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        guard let destination = buffer.baseAddress, buffer.count > 0 else { return 0 }
        if !keeping && replayed < kept.count {
            let n = min(buffer.count, kept.count - replayed)
            kept.withUnsafeBytes { destination.copyMemory(from: $0.baseAddress! + replayed, byteCount: n) }
            replayed += n
            return n
        }
        let n = base.read(into: buffer)
        if keeping && n > 0 { kept.append(contentsOf: UnsafeRawBufferPointer(start: destination, count: n)) }
        return n
    }
}
