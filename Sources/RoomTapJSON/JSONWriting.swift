extension JSONValue {
    /// Compact, single-line JSON text: no whitespace, object keys sorted, control characters
    /// escaped (so the text never holds a newline), non-ASCII written as UTF-8. Non-finite numbers
    /// (which JSON cannot express) are written as `null`; whole numbers below 2^53 without a
    /// fraction (`3`, not `3.0`).
    public var jsonText: String {
        var bytes: [UInt8] = []
        write(to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the compact JSON text (see ``jsonText``) to `bytes`.
    public func write(to bytes: inout [UInt8]) {
        switch self {
        case .null:
            bytes.append(contentsOf: "null".utf8)
        case .bool(let value):
            bytes.append(contentsOf: (value ? "true" : "false").utf8)
        case .number(let value):
            JSONValue.writeNumber(value, to: &bytes)
        case .string(let value):
            JSONValue.writeString(value, to: &bytes)
        case .array(let elements):
            bytes.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                element.write(to: &bytes)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let members):
            bytes.append(UInt8(ascii: "{"))
            for (index, key) in members.keys.sorted().enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                JSONValue.writeString(key, to: &bytes)
                bytes.append(UInt8(ascii: ":"))
                members[key]!.write(to: &bytes)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    package static func writeNumber(_ value: Double, to bytes: inout [UInt8]) {
        if !value.isFinite {
            bytes.append(contentsOf: "null".utf8)
        } else if value.rounded(.towardZero) == value && abs(value) < 9_007_199_254_740_992 {
            bytes.append(contentsOf: String(Int64(value)).utf8)
        } else {
            // Swift prints the shortest text that reads back as the same Double ("0.1", "1e-07",
            // "1.5e+20"): all valid JSON numbers.
            bytes.append(contentsOf: value.description.utf8)
        }
    }

    package static func writeString(_ value: String, to bytes: inout [UInt8]) {
        let hex: [UInt8] = Array("0123456789abcdef".utf8)
        bytes.append(UInt8(ascii: "\""))
        if !value.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            bytes.append(contentsOf: value.utf8)
            bytes.append(UInt8(ascii: "\""))
            return
        }
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x0A: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
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
