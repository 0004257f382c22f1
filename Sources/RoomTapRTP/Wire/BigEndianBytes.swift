// Network byte order reads for the wire parsers. Callers check bounds first; these do not.

extension UnsafeRawBufferPointer {
    /// The big-endian 16-bit value at `offset` (`offset + 2 <= count`, checked by the caller).
    @inline(__always)
    func bigEndianUInt16(at offset: Int) -> UInt16 {
        UInt16(self[offset]) << 8 | UInt16(self[offset + 1])
    }

    /// The big-endian 32-bit value at `offset` (`offset + 4 <= count`, checked by the caller).
    @inline(__always)
    package func bigEndianUInt32(at offset: Int) -> UInt32 {
        UInt32(self[offset]) << 24 | UInt32(self[offset + 1]) << 16 | UInt32(self[offset + 2]) << 8
            | UInt32(self[offset + 3])
    }
}
