/// roomtap's one JSON writer: every JSON text roomtap makes (control replies and events, Realtime
/// client events, room.json, transcript.jsonl, the review page's data) is written here, so every
/// one escapes, orders and formats numbers the same way.
///
/// The text is the one Foundation's `JSONEncoder` writes with `.sortedKeys` and
/// `.withoutEscapingSlashes` (and, pretty, with `.prettyPrinted`), byte for byte, so room.json
/// reads as it always has, with one exception: a negative zero is written `0`, not `-0`.
/// - Object keys sorted by their UTF-8 bytes.
/// - Strings: `"` and `\` escaped, `\b \t \n \f \r` as such, other control characters as
///   `\u00XX` (lowercase hex), so the text never holds a raw control character or newline;
///   `/`, DEL and all non-ASCII (U+2028 too) written as they are, in UTF-8.
/// - Numbers: a whole number below 2^53 as an integer (`3`, not `3.0`); any other as the
///   shortest text that reads back as the same `Double` (`0.1`, `1e-05`, `1e+16`); both read back
///   exactly. A non-finite number, which JSON cannot express, is written `null`.
///
/// Thread: any; pure (values, and the caller's array).
extension JSONValue {
    /// How a text is laid out.
    public enum Layout: Sendable {
        /// One line, no whitespace (`{"a":[1,2]}`).
        case compact
        /// `JSONEncoder`'s `.prettyPrinted`: two spaces of indent per level, `"key" : value`, an
        /// empty array or object as its brackets with a blank line between. No final newline.
        case pretty
    }

    /// Compact, single-line JSON text (see ``Layout/compact``).
    public var jsonText: String { text(.compact) }

    /// Pretty-printed JSON text (see ``Layout/pretty``), without a final newline: room.json's
    /// layout.
    public var prettyJSONText: String { text(.pretty) }

    /// The JSON text in `layout`.
    public func text(_ layout: Layout) -> String {
        var bytes: [UInt8] = []
        write(to: &bytes, layout: layout)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the compact JSON text (see ``jsonText``) to `bytes`.
    public func write(to bytes: inout [UInt8]) {
        write(to: &bytes, layout: .compact)
    }

    /// Appends the JSON text in `layout` to `bytes`.
    public func write(to bytes: inout [UInt8], layout: Layout) {
        switch layout {
        case .compact: writeCompact(to: &bytes)
        case .pretty: writePretty(to: &bytes, indent: 0)
        }
    }

    /// Appends an object whose members go in the order given, not sorted, on one line with a space
    /// after each `:` and `,` (`{"start": 1.234, "end": 2.5}`): for a line format whose field
    /// order is documented (transcript.jsonl). Values are written compact; a repeated key is
    /// written twice, so give each once.
    package static func writeOrderedObject(_ members: [(key: String, value: JSONValue)], to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "{"))
        for (index, member) in members.enumerated() {
            if index > 0 { bytes.append(contentsOf: ", ".utf8) }
            writeString(member.key, to: &bytes)
            bytes.append(contentsOf: ": ".utf8)
            member.value.writeCompact(to: &bytes)
        }
        bytes.append(UInt8(ascii: "}"))
    }

    /// The object's keys in the order they are written: by their UTF-8 bytes (as `JSONEncoder`'s
    /// `.sortedKeys`).
    package static func sortedKeys(_ members: [String: JSONValue]) -> [String] {
        members.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    private func writeCompact(to bytes: inout [UInt8]) {
        switch self {
        case .array(let elements):
            bytes.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                element.writeCompact(to: &bytes)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let members):
            bytes.append(UInt8(ascii: "{"))
            for (index, key) in Self.sortedKeys(members).enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                Self.writeString(key, to: &bytes)
                bytes.append(UInt8(ascii: ":"))
                members[key]?.writeCompact(to: &bytes)
            }
            bytes.append(UInt8(ascii: "}"))
        default:
            writeScalar(to: &bytes)
        }
    }

    private func writePretty(to bytes: inout [UInt8], indent: Int) {
        switch self {
        case .array(let elements):
            bytes.append(UInt8(ascii: "["))
            bytes.append(0x0A)
            if elements.isEmpty { bytes.append(0x0A) }
            for (index, element) in elements.enumerated() {
                Self.writeIndent(indent + 1, to: &bytes)
                element.writePretty(to: &bytes, indent: indent + 1)
                if index < elements.count - 1 { bytes.append(UInt8(ascii: ",")) }
                bytes.append(0x0A)
            }
            Self.writeIndent(indent, to: &bytes)
            bytes.append(UInt8(ascii: "]"))
        case .object(let members):
            bytes.append(UInt8(ascii: "{"))
            bytes.append(0x0A)
            if members.isEmpty { bytes.append(0x0A) }
            let keys = Self.sortedKeys(members)
            for (index, key) in keys.enumerated() {
                Self.writeIndent(indent + 1, to: &bytes)
                Self.writeString(key, to: &bytes)
                bytes.append(contentsOf: " : ".utf8)
                members[key]?.writePretty(to: &bytes, indent: indent + 1)
                if index < keys.count - 1 { bytes.append(UInt8(ascii: ",")) }
                bytes.append(0x0A)
            }
            Self.writeIndent(indent, to: &bytes)
            bytes.append(UInt8(ascii: "}"))
        default:
            writeScalar(to: &bytes)
        }
    }

    /// null, a boolean, a number or a string (arrays and objects are their layout's).
    private func writeScalar(to bytes: inout [UInt8]) {
        switch self {
        case .null: bytes.append(contentsOf: "null".utf8)
        case .bool(let value): bytes.append(contentsOf: (value ? "true" : "false").utf8)
        case .number(let value): Self.writeNumber(value, to: &bytes)
        case .string(let value): Self.writeString(value, to: &bytes)
        case .array, .object: writeCompact(to: &bytes)
        }
    }

    private static func writeIndent(_ level: Int, to bytes: inout [UInt8]) {
        bytes.append(contentsOf: repeatElement(UInt8(ascii: " "), count: 2 * level))
    }

    /// Appends `value` as a JSON number (see the rules above).
    package static func writeNumber(_ value: Double, to bytes: inout [UInt8]) {
        if !value.isFinite {
            bytes.append(contentsOf: "null".utf8)
        } else if value.rounded(.towardZero) == value && abs(value) < 9_007_199_254_740_992 {
            bytes.append(contentsOf: String(Int64(value)).utf8)
        } else {
            // Swift prints the shortest text that reads back as the same Double ("0.1", "1e-07",
            // "1.5e+20", "9007199254740992.0"): valid JSON once a whole number loses its ".0", as
            // JSONEncoder writes it.
            var text = value.description
            if text.hasSuffix(".0") { text.removeLast(2) }
            bytes.append(contentsOf: text.utf8)
        }
    }

    /// Appends `value` as a JSON string (see the rules above).
    package static func writeString(_ value: String, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        if !value.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            bytes.append(contentsOf: value.utf8)
            bytes.append(UInt8(ascii: "\""))
            return
        }
        let hex: [UInt8] = Array("0123456789abcdef".utf8)
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x08: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "b")])
            case 0x09: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0x0A: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0C: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "f")])
            case 0x0D: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0..<0x20:
                bytes.append(contentsOf: "\\u00".utf8)
                bytes.append(hex[Int(byte >> 4)])
                bytes.append(hex[Int(byte & 0xF)])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
