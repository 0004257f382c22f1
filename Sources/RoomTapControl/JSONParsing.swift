/// Why a text is not a JSON value: one line for the user, and the byte offset where it went wrong.
public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What was wrong ("invalid UTF-8", "unexpected 'x'", ...).
    public let message: String
    /// Byte offset in the input where the problem was found.
    public let offset: Int
    public var description: String { "\(message) at byte \(offset)" }

    public init(message: String, offset: Int) {
        self.message = message
        self.offset = offset
    }
}

extension JSONValue {
    /// Parses exactly one JSON value (RFC 8259 §2: optional whitespace around it, nothing else).
    /// The input must be UTF-8 (§8.1); `\u` escapes must form valid scalars (a lone surrogate is an
    /// error); numbers that overflow a `Double` are an error; nesting deeper than ``maxDepth`` is an
    /// error. Duplicate object keys: the last one wins.
    ///
    /// Thread: any; pure.
    public init(parsing bytes: UnsafeRawBufferPointer) throws(JSONParseError) {
        if String(validating: bytes, as: UTF8.self) == nil {
            throw JSONParseError(message: "invalid UTF-8", offset: 0)
        }
        var parser = JSONParser(bytes: bytes)
        parser.skipWhitespace()
        let value = try parser.parseValue(depth: 0)
        parser.skipWhitespace()
        if parser.index < bytes.count { throw parser.unexpected("after the value") }
        self = value
    }

    /// Parses a JSON text (see ``init(parsing:)-(UnsafeRawBufferPointer)``).
    public init(parsing text: String) throws(JSONParseError) {
        var text = text
        let result = text.withUTF8 { buffer in
            Result { () throws(JSONParseError) in try JSONValue(parsing: UnsafeRawBufferPointer(buffer)) }
        }
        self = try result.get()
    }
}

/// Recursive descent over UTF-8 bytes already known to be valid.
private struct JSONParser {
    let bytes: UnsafeRawBufferPointer
    var index = 0

    init(bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    func unexpected(_ context: String) -> JSONParseError {
        guard index < bytes.count else { return JSONParseError(message: "unexpected end of text", offset: index) }
        let byte = bytes[index]
        let shown = byte >= 0x20 && byte < 0x7F ? "'\(Character(Unicode.Scalar(byte)))'" : "byte 0x\(hex(byte))"
        return JSONParseError(message: "unexpected \(shown) \(context)", offset: index)
    }

    mutating func parseValue(depth: Int) throws(JSONParseError) -> JSONValue {
        guard index < bytes.count else { throw unexpected("where a value was expected") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject(depth: depth + 1)
        case UInt8(ascii: "["): return try parseArray(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"):
            try literal("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try literal("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try literal("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        default: throw unexpected("where a value was expected")
        }
    }

    mutating func literal(_ word: StaticString) throws(JSONParseError) {
        let start = index
        for i in 0..<word.utf8CodeUnitCount {
            guard index < bytes.count, bytes[index] == word.utf8Start[i] else {
                throw JSONParseError(message: "unknown literal (expected \(word))", offset: start)
            }
            index += 1
        }
    }

    mutating func parseObject(depth: Int) throws(JSONParseError) -> JSONValue {
        if depth > JSONValue.maxDepth { throw JSONParseError(message: "nested too deeply", offset: index) }
        index += 1
        var members: [String: JSONValue] = [:]
        skipWhitespace()
        if index < bytes.count && bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
                throw unexpected("where an object key was expected")
            }
            let key = try parseString()
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw unexpected("after a key") }
            index += 1
            skipWhitespace()
            members[key] = try parseValue(depth: depth)
            skipWhitespace()
            guard index < bytes.count else { throw unexpected("in an object") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
            } else if bytes[index] == UInt8(ascii: "}") {
                index += 1
                return .object(members)
            } else {
                throw unexpected("in an object")
            }
        }
    }

    mutating func parseArray(depth: Int) throws(JSONParseError) -> JSONValue {
        if depth > JSONValue.maxDepth { throw JSONParseError(message: "nested too deeply", offset: index) }
        index += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count && bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue(depth: depth))
            skipWhitespace()
            guard index < bytes.count else { throw unexpected("in an array") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
            } else if bytes[index] == UInt8(ascii: "]") {
                index += 1
                return .array(elements)
            } else {
                throw unexpected("in an array")
            }
        }
    }

    /// RFC 8259 §7. The input is valid UTF-8, so raw bytes are copied as they are.
    mutating func parseString() throws(JSONParseError) -> String {
        index += 1
        var out: [UInt8] = []
        while true {
            guard index < bytes.count else { throw JSONParseError(message: "unterminated string", offset: index) }
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return String(decoding: out, as: UTF8.self)
            case UInt8(ascii: "\\"):
                index += 1
                guard index < bytes.count else { throw JSONParseError(message: "unterminated string", offset: index) }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(escape)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"): try appendUnicodeEscape(to: &out)
                default: throw JSONParseError(message: "invalid escape in a string", offset: index - 1)
                }
            case 0..<0x20:
                throw JSONParseError(message: "control character in a string (escape it)", offset: index)
            default:
                // A run of plain bytes goes in at once.
                var end = index + 1
                while end < bytes.count, bytes[end] >= 0x20, bytes[end] != UInt8(ascii: "\""),
                    bytes[end] != UInt8(ascii: "\\")
                {
                    end += 1
                }
                out.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[index..<end]))
                index = end
            }
        }
    }

    /// After `\u`: four hex digits, or a surrogate pair written as two escapes.
    mutating func appendUnicodeEscape(to out: inout [UInt8]) throws(JSONParseError) {
        let start = index - 2
        var code = try hex4()
        if code >= 0xD800 && code < 0xDC00 {
            guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
            else { throw JSONParseError(message: "unpaired surrogate in \\u escape", offset: start) }
            index += 2
            let low = try hex4()
            guard low >= 0xDC00 && low < 0xE000 else {
                throw JSONParseError(message: "unpaired surrogate in \\u escape", offset: start)
            }
            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
        } else if code >= 0xDC00 && code < 0xE000 {
            throw JSONParseError(message: "unpaired surrogate in \\u escape", offset: start)
        }
        guard let scalar = Unicode.Scalar(code) else {
            throw JSONParseError(message: "invalid \\u escape", offset: start)
        }
        out.append(contentsOf: String(Character(scalar)).utf8)
    }

    mutating func hex4() throws(JSONParseError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard index < bytes.count else { throw JSONParseError(message: "short \\u escape", offset: index) }
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw JSONParseError(message: "invalid \\u escape", offset: index)
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    /// RFC 8259 §6: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    mutating func parseNumber() throws(JSONParseError) -> Double {
        let start = index
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count, isDigit(bytes[index]) else { throw unexpected("in a number") }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else {
            while index < bytes.count && isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count && bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else { throw unexpected("in a number") }
            while index < bytes.count && isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count && (bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E")) {
            index += 1
            if index < bytes.count && (bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-")) {
                index += 1
            }
            guard index < bytes.count, isDigit(bytes[index]) else { throw unexpected("in a number") }
            while index < bytes.count && isDigit(bytes[index]) { index += 1 }
        }
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        guard let value = Double(text), value.isFinite else {
            throw JSONParseError(message: "number out of range", offset: start)
        }
        return value
    }

    func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
}

private func hex(_ byte: UInt8) -> String {
    let digits = Array("0123456789abcdef")
    return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
}
