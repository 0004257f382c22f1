/// A JSON value (RFC 8259, https://www.rfc-editor.org/rfc/rfc8259) with the line it starts on, as the
/// room file parser needs it: object members in order and repeated keys kept (so they can be refused),
/// numbers kept as their text (so `70000`, `1e3` and `25000.0` are reported as written, never rounded).
///
/// Read by hand because Foundation's decoders drop repeated keys silently and report no line for a
/// value. Bounded: nesting deeper than ``maximumDepth`` is refused, so hostile input cannot exhaust
/// the stack. Thread: a value type, use anywhere; reading is pure.
struct JSONValue {
    enum Kind {
        case null
        case bool(Bool)
        /// The number as written (RFC 8259 §6 grammar checked).
        case number(String)
        case string(String)
        case array([JSONValue])
        /// Members in document order, repeated keys included.
        case object([(key: String, value: JSONValue)])
    }

    var kind: Kind
    /// The 1-based line the value starts on.
    var line: Int

    /// Deepest nesting of arrays and objects read (a room file needs 3).
    static let maximumDepth = 32

    /// A syntax error: the line and what was found.
    struct SyntaxError: Error {
        var line: Int
        var message: String
    }

    /// Reads one JSON text: a value with only whitespace around it (a UTF-8 byte order mark is skipped).
    static func read(_ bytes: [UInt8]) throws(SyntaxError) -> JSONValue {
        var reader = Reader(bytes: bytes)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { reader.position = 3 }
        let value = try reader.value(depth: 0)
        reader.skipWhitespace()
        guard reader.position == bytes.count else {
            throw reader.failure("unexpected \(reader.found) after the JSON value")
        }
        return value
    }

    /// The value as a user would recognise it in a message: a number or string as written (a string
    /// quoted, long ones cut), else `true`, `false`, `null`, `an array`, `an object`.
    var quoted: String {
        switch kind {
        case .null: "null"
        case .bool(let value): value ? "true" : "false"
        case .number(let text): text.count > 40 ? String(text.prefix(40)) + "..." : text
        case .string(let text): text.quotedForRoomMessage
        case .array: "an array"
        case .object: "an object"
        }
    }

    private struct Reader {
        let bytes: [UInt8]
        var position = 0
        var line = 1

        func failure(_ message: String) -> SyntaxError { SyntaxError(line: line, message: message) }

        var tooDeep: SyntaxError { failure("arrays and objects nested deeper than \(JSONValue.maximumDepth) levels") }

        /// What is at the current position, for messages: `end of file` or the character quoted.
        var found: String {
            guard position < bytes.count else { return "end of file" }
            let byte = bytes[position]
            return (0x21..<0x7F).contains(byte) ? "'\(Character(Unicode.Scalar(byte)))'" : String(format: byte)
        }

        mutating func skipWhitespace() {
            while position < bytes.count {
                switch bytes[position] {
                case 0x0A: line += 1
                case 0x20, 0x09, 0x0D: break
                default: return
                }
                position += 1
            }
        }

        mutating func value(depth: Int) throws(SyntaxError) -> JSONValue {
            skipWhitespace()
            guard position < bytes.count else { throw failure("unexpected end of file; expected a JSON value") }
            let start = line
            switch bytes[position] {
            case UInt8(ascii: "{"):
                guard depth < JSONValue.maximumDepth else { throw tooDeep }
                position += 1
                var members: [(key: String, value: JSONValue)] = []
                skipWhitespace()
                if position < bytes.count, bytes[position] == UInt8(ascii: "}") {
                    position += 1
                    return JSONValue(kind: .object(members), line: start)
                }
                while true {
                    skipWhitespace()
                    guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else {
                        throw failure("unexpected \(found); expected a key in double quotes")
                    }
                    let key = try string()
                    skipWhitespace()
                    try expect(":", "after the key \(key.quotedForRoomMessage)")
                    members.append((key, try value(depth: depth + 1)))
                    skipWhitespace()
                    if try endOf("}", in: "an object") { return JSONValue(kind: .object(members), line: start) }
                }
            case UInt8(ascii: "["):
                guard depth < JSONValue.maximumDepth else { throw tooDeep }
                position += 1
                var elements: [JSONValue] = []
                skipWhitespace()
                if position < bytes.count, bytes[position] == UInt8(ascii: "]") {
                    position += 1
                    return JSONValue(kind: .array(elements), line: start)
                }
                while true {
                    elements.append(try value(depth: depth + 1))
                    skipWhitespace()
                    if try endOf("]", in: "an array") { return JSONValue(kind: .array(elements), line: start) }
                }
            case UInt8(ascii: "\""):
                return JSONValue(kind: .string(try string()), line: start)
            case UInt8(ascii: "t"):
                try literal("true")
                return JSONValue(kind: .bool(true), line: start)
            case UInt8(ascii: "f"):
                try literal("false")
                return JSONValue(kind: .bool(false), line: start)
            case UInt8(ascii: "n"):
                try literal("null")
                return JSONValue(kind: .null, line: start)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                return JSONValue(kind: .number(try number()), line: start)
            default:
                throw failure("unexpected \(found); expected a JSON value")
            }
        }

        /// After a member or element: `,` (false, more follow) or the closing bracket (true).
        mutating func endOf(_ close: Unicode.Scalar, in container: String) throws(SyntaxError) -> Bool {
            guard position < bytes.count else { throw failure("unexpected end of file in \(container)") }
            if bytes[position] == UInt8(ascii: ",") {
                position += 1
                return false
            }
            if bytes[position] == UInt8(ascii: close) {
                position += 1
                return true
            }
            throw failure("unexpected \(found) in \(container); expected ',' or '\(close)'")
        }

        mutating func expect(_ scalar: Unicode.Scalar, _ context: String) throws(SyntaxError) {
            guard position < bytes.count, bytes[position] == UInt8(ascii: scalar) else {
                throw failure("unexpected \(found); expected '\(scalar)' \(context)")
            }
            position += 1
        }

        mutating func literal(_ word: String) throws(SyntaxError) {
            let utf8 = Array(word.utf8)
            guard bytes.count - position >= utf8.count, Array(bytes[position..<position + utf8.count]) == utf8 else {
                throw failure("unexpected \(found); expected a JSON value")
            }
            position += utf8.count
        }

        /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?` (RFC 8259 §6).
        mutating func number() throws(SyntaxError) -> String {
            let start = position
            func digits(_ reader: inout Reader) -> Int {
                let first = reader.position
                while reader.position < reader.bytes.count, (0x30...0x39).contains(reader.bytes[reader.position]) {
                    reader.position += 1
                }
                return reader.position - first
            }
            if bytes[position] == UInt8(ascii: "-") { position += 1 }
            let leadingZero = position < bytes.count && bytes[position] == UInt8(ascii: "0")
            let integerDigits = digits(&self)
            guard integerDigits > 0, !(leadingZero && integerDigits > 1) else { throw failure("malformed number") }
            if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
                position += 1
                guard digits(&self) > 0 else { throw failure("malformed number") }
            }
            if position < bytes.count, bytes[position] | 0x20 == UInt8(ascii: "e") {
                position += 1
                if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-")
                {
                    position += 1
                }
                guard digits(&self) > 0 else { throw failure("malformed number") }
            }
            return String(decoding: bytes[start..<position], as: UTF8.self)
        }

        /// A string from its opening quote to its closing one, escapes decoded (RFC 8259 §7). The
        /// document was checked to be UTF-8 before reading.
        mutating func string() throws(SyntaxError) -> String {
            position += 1
            var scalars = String.UnicodeScalarView()
            var runStart = position
            func flush(_ reader: Reader, upTo end: Int) {
                scalars.append(contentsOf: String(decoding: reader.bytes[runStart..<end], as: UTF8.self).unicodeScalars)
            }
            while true {
                guard position < bytes.count else { throw failure("unexpected end of file in a string") }
                let byte = bytes[position]
                if byte == UInt8(ascii: "\"") {
                    flush(self, upTo: position)
                    position += 1
                    return String(scalars)
                }
                if byte < 0x20 { throw failure("control character \(String(format: byte)) in a string; escape it") }
                if byte != UInt8(ascii: "\\") {
                    position += 1
                    continue
                }
                flush(self, upTo: position)
                position += 1
                guard position < bytes.count else { throw failure("unexpected end of file in a string") }
                let escape = bytes[position]
                position += 1
                switch escape {
                case UInt8(ascii: "\""): scalars.append("\"")
                case UInt8(ascii: "\\"): scalars.append("\\")
                case UInt8(ascii: "/"): scalars.append("/")
                case UInt8(ascii: "b"): scalars.append("\u{08}")
                case UInt8(ascii: "f"): scalars.append("\u{0C}")
                case UInt8(ascii: "n"): scalars.append("\n")
                case UInt8(ascii: "r"): scalars.append("\r")
                case UInt8(ascii: "t"): scalars.append("\t")
                case UInt8(ascii: "u"):
                    var code = try hex4()
                    if (0xD800..<0xDC00).contains(code) {
                        guard bytes.count - position >= 2, bytes[position] == UInt8(ascii: "\\"),
                            bytes[position + 1] == UInt8(ascii: "u")
                        else { throw failure("unpaired surrogate \\u\(String(code, radix: 16)) in a string") }
                        position += 2
                        let low = try hex4()
                        guard (0xDC00..<0xE000).contains(low) else {
                            throw failure("unpaired surrogate \\u\(String(code, radix: 16)) in a string")
                        }
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let scalar = Unicode.Scalar(code) else {
                        throw failure("unpaired surrogate \\u\(String(code, radix: 16)) in a string")
                    }
                    scalars.append(scalar)
                default:
                    position -= 1
                    throw failure("unknown escape '\\\(found.dropFirst().dropLast())' in a string")
                }
                runStart = position
            }
        }

        mutating func hex4() throws(SyntaxError) -> UInt32 {
            guard bytes.count - position >= 4 else { throw failure("unexpected end of file in a \\u escape") }
            var code: UInt32 = 0
            for _ in 0..<4 {
                guard let digit = Character(Unicode.Scalar(bytes[position])).hexDigitValue else {
                    throw failure("malformed \\u escape in a string; expected four hex digits")
                }
                code = code << 4 | UInt32(digit)
                position += 1
            }
            return code
        }
    }
}

extension String {
    /// `0x1F`-style text for a byte in messages.
    fileprivate init(format byte: UInt8) {
        let hex = String(byte, radix: 16, uppercase: true)
        self = "byte 0x" + (hex.count == 1 ? "0" + hex : hex)
    }
}
