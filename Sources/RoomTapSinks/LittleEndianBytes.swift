/// Little-endian field access on byte arrays, for the RIFF/RF64 headers (every RIFF field is
/// little endian). Internal helpers; they never allocate except `append*`, which grow the array.

extension Array where Element == UInt8 {
    mutating func appendLE16(_ value: UInt16) {
        append(UInt8(truncatingIfNeeded: value))
        append(UInt8(truncatingIfNeeded: value >> 8))
    }

    mutating func appendLE32(_ value: UInt32) {
        for shift in stride(from: 0, to: 32, by: 8) { append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }

    mutating func appendLE64(_ value: UInt64) {
        for shift in stride(from: 0, to: 64, by: 8) { append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    mutating func append(_ id: FourCC) { appendLE32(id.rawValue) }

    /// Appends `text` as UTF-8, cut to `length` bytes on a scalar boundary and padded with NULs
    /// (the fixed-size text fields of the bext chunk).
    mutating func appendFixedText(_ text: String, length: Int) {
        var bytes: [UInt8] = []
        for scalar in text.unicodeScalars {
            let encoded = Array(String(scalar).utf8)
            if bytes.count + encoded.count > length { break }
            bytes += encoded
        }
        append(contentsOf: bytes)
        append(contentsOf: repeatElement(0, count: length - bytes.count))
    }

    mutating func setLE32(_ value: UInt32, at offset: Int) {
        for i in 0..<4 { self[offset + i] = UInt8(truncatingIfNeeded: value >> UInt32(8 * i)) }
    }

    mutating func setLE64(_ value: UInt64, at offset: Int) {
        for i in 0..<8 { self[offset + i] = UInt8(truncatingIfNeeded: value >> UInt64(8 * i)) }
    }

    mutating func set(_ id: FourCC, at offset: Int) { setLE32(id.rawValue, at: offset) }

    func le16(at offset: Int) -> UInt16 { UInt16(self[offset]) | UInt16(self[offset + 1]) << 8 }

    func le32(at offset: Int) -> UInt32 {
        (0..<4).reduce(UInt32(0)) { $0 | UInt32(self[offset + $1]) << UInt32(8 * $1) }
    }

    func le64(at offset: Int) -> UInt64 {
        (0..<8).reduce(UInt64(0)) { $0 | UInt64(self[offset + $1]) << UInt64(8 * $1) }
    }

    func fourCC(at offset: Int) -> FourCC { FourCC(rawValue: le32(at: offset)) }

    /// A fixed-size text field: the bytes up to the first NUL, decoded as UTF-8 (invalid bytes
    /// repaired), trailing spaces kept.
    func fixedText(at offset: Int, length: Int) -> String {
        let field = self[offset..<(offset + length)]
        let end = field.firstIndex(of: 0) ?? field.endIndex
        return String(decoding: field[field.startIndex..<end], as: UTF8.self)
    }
}

/// A RIFF chunk identifier: four ASCII bytes, stored as the little-endian `UInt32` they form.
struct FourCC: Equatable, Hashable, CustomStringConvertible {
    let rawValue: UInt32

    init(rawValue: UInt32) { self.rawValue = rawValue }

    /// From four ASCII characters, e.g. `"fmt "`.
    init(_ text: StaticString) {
        precondition(text.utf8CodeUnitCount == 4, "a FourCC has four characters")
        let p = text.utf8Start
        rawValue = UInt32(p[0]) | UInt32(p[1]) << 8 | UInt32(p[2]) << 16 | UInt32(p[3]) << 24
    }

    static let riff = FourCC("RIFF")
    static let rf64 = FourCC("RF64")
    static let wave = FourCC("WAVE")
    static let junk = FourCC("JUNK")
    static let ds64 = FourCC("ds64")
    static let fmt = FourCC("fmt ")
    static let bext = FourCC("bext")
    static let data = FourCC("data")

    /// True when all four bytes are printable ASCII (how a real chunk id looks).
    var isPrintable: Bool {
        (0..<4).allSatisfy { (0x20...0x7E).contains((rawValue >> UInt32(8 * $0)) & 0xFF) }
    }

    var description: String {
        let bytes = (0..<4).map { UInt8(truncatingIfNeeded: rawValue >> UInt32(8 * $0)) }
        guard isPrintable else { return bytes.map { String($0, radix: 16) }.joined(separator: " ") }
        return String(decoding: bytes, as: UTF8.self)
    }
}
