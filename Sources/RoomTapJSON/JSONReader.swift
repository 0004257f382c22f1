/// A JSON value (RFC 8259, https://www.rfc-editor.org/rfc/rfc8259) as written, with where it
/// starts: object members in order and repeated keys kept (so a reader can refuse them), numbers
/// kept as their text (so `70000`, `1e3` and `25000.0` are reported as written, never rounded).
///
/// This is roomtap's one JSON reader: the room file and `.mjr` headers read ``JSONNode``s
/// directly (their messages name lines); control requests and Realtime events read the plain
/// ``JSONValue`` made from one. Read by hand because Foundation's decoders drop repeated keys
/// silently and report no place for a value. Strict (RFC 8259: UTF-8 only, no trailing commas,
/// lone surrogates refused) and bounded: nesting deeper than a reader's `maximumDepth` is refused,
/// so hostile input cannot exhaust the stack. Fuzzed (`roomtap-fuzz`, `json`).
///
/// Thread: a value type, use anywhere; reading is pure.
package struct JSONNode: Sendable {
    package enum Kind: Sendable {
        case null
        case bool(Bool)
        /// The number as written (RFC 8259 §6 grammar checked).
        case number(String)
        case string(String)
        case array([JSONNode])
        /// Members in document order, repeated keys included.
        case object([(key: String, value: JSONNode)])
    }

    package var kind: Kind
    /// The 1-based line the value starts on.
    package var line: Int
    /// The byte offset the value starts at.
    package var offset: Int

    package init(kind: Kind, line: Int, offset: Int = 0) {
        self.kind = kind
        self.line = line
        self.offset = offset
    }

    /// Deepest nesting of arrays and objects a room file may have (it needs 3).
    package static let maximumDepth = 32

    /// A syntax error: where (line, and byte offset) and what was found.
    package struct SyntaxError: Error, Sendable {
        package var line: Int
        package var offset: Int
        package var message: String
    }

    /// Reads one JSON text: a value with only whitespace around it. A UTF-8 byte order mark is
    /// skipped if `allowByteOrderMark` (files written by editors); text that is not UTF-8 is
    /// refused before anything is read.
    package static func read(
        _ bytes: UnsafeRawBufferPointer, maximumDepth: Int = maximumDepth, allowByteOrderMark: Bool = true
    ) throws(SyntaxError) -> JSONNode {
        var start = 0
        if allowByteOrderMark, bytes.starts(with: [0xEF, 0xBB, 0xBF]) { start = 3 }
        if String(validating: UnsafeRawBufferPointer(rebasing: bytes[start...]), as: UTF8.self) == nil {
            throw SyntaxError(line: 1, offset: 0, message: "invalid UTF-8")
        }
        var reader = Reader(bytes: bytes, maximumDepth: maximumDepth)
        reader.position = start
        let value = try reader.value(depth: 0)
        reader.skipWhitespace()
        guard reader.position == bytes.count else {
            throw reader.failure("unexpected \(reader.found) after the JSON value")
        }
        return value
    }

    /// ``read(_:maximumDepth:allowByteOrderMark:)-(UnsafeRawBufferPointer,_,_)`` of an array of bytes.
    package static func read(
        _ bytes: [UInt8], maximumDepth: Int = maximumDepth, allowByteOrderMark: Bool = true
    ) throws(SyntaxError) -> JSONNode {
        let result = bytes.withUnsafeBytes { raw in
            Result { () throws(SyntaxError) in
                try read(raw, maximumDepth: maximumDepth, allowByteOrderMark: allowByteOrderMark)
            }
        }
        return try result.get()
    }

    /// The value as a user would recognise it in a message: a number or string as written (a string
    /// quoted, long ones cut), else `true`, `false`, `null`, `an array`, `an object`.
    package var quoted: String {
        switch kind {
        case .null: "null"
        case .bool(let value): value ? "true" : "false"
        case .number(let text): text.count > 40 ? String(text.prefix(40)) + "..." : text
        case .string(let text): text.quotedForMessage
        case .array: "an array"
        case .object: "an object"
        }
    }

    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        let maximumDepth: Int
        var position = 0
        var line = 1

        init(bytes: UnsafeRawBufferPointer, maximumDepth: Int) {
            self.bytes = bytes
            self.maximumDepth = maximumDepth
        }

        func failure(_ message: String) -> SyntaxError { SyntaxError(line: line, offset: position, message: message) }

        var tooDeep: SyntaxError { failure("arrays and objects nested deeper than \(maximumDepth) levels") }

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

        mutating func value(depth: Int) throws(SyntaxError) -> JSONNode {
            skipWhitespace()
            guard position < bytes.count else { throw failure("unexpected end of file; expected a JSON value") }
            let start = line
            let at = position
            switch bytes[position] {
            case UInt8(ascii: "{"):
                guard depth < maximumDepth else { throw tooDeep }
                position += 1
                var members: [(key: String, value: JSONNode)] = []
                skipWhitespace()
                if position < bytes.count, bytes[position] == UInt8(ascii: "}") {
                    position += 1
                    return JSONNode(kind: .object(members), line: start, offset: at)
                }
                while true {
                    skipWhitespace()
                    guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else {
                        throw failure("unexpected \(found); expected a key in double quotes")
                    }
                    let key = try string()
                    skipWhitespace()
                    try expect(":", "after the key \(key.quotedForMessage)")
                    members.append((key, try value(depth: depth + 1)))
                    skipWhitespace()
                    if try endOf("}", in: "an object") {
                        return JSONNode(kind: .object(members), line: start, offset: at)
                    }
                }
            case UInt8(ascii: "["):
                guard depth < maximumDepth else { throw tooDeep }
                position += 1
                var elements: [JSONNode] = []
                skipWhitespace()
                if position < bytes.count, bytes[position] == UInt8(ascii: "]") {
                    position += 1
                    return JSONNode(kind: .array(elements), line: start, offset: at)
                }
                while true {
                    elements.append(try value(depth: depth + 1))
                    skipWhitespace()
                    if try endOf("]", in: "an array") {
                        return JSONNode(kind: .array(elements), line: start, offset: at)
                    }
                }
            case UInt8(ascii: "\""):
                return JSONNode(kind: .string(try string()), line: start, offset: at)
            case UInt8(ascii: "t"):
                try literal("true")
                return JSONNode(kind: .bool(true), line: start, offset: at)
            case UInt8(ascii: "f"):
                try literal("false")
                return JSONNode(kind: .bool(false), line: start, offset: at)
            case UInt8(ascii: "n"):
                try literal("null")
                return JSONNode(kind: .null, line: start, offset: at)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                return JSONNode(kind: .number(try number()), line: start, offset: at)
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
            guard bytes.count - position >= utf8.count, bytes[position..<position + utf8.count].elementsEqual(utf8)
            else {
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
            return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
        }

        /// A string from its opening quote to its closing one, escapes decoded (RFC 8259 §7). The
        /// text was checked to be UTF-8 before reading.
        mutating func string() throws(SyntaxError) -> String {
            position += 1
            var out: [UInt8] = []
            while true {
                guard position < bytes.count else { throw failure("unexpected end of file in a string") }
                let byte = bytes[position]
                if byte == UInt8(ascii: "\"") {
                    position += 1
                    return String(decoding: out, as: UTF8.self)
                }
                if byte < 0x20 { throw failure("control character \(String(format: byte)) in a string; escape it") }
                if byte != UInt8(ascii: "\\") {
                    // A run of plain bytes (valid UTF-8: checked before reading) goes in at once.
                    var end = position + 1
                    while end < bytes.count, bytes[end] >= 0x20, bytes[end] != UInt8(ascii: "\""),
                        bytes[end] != UInt8(ascii: "\\")
                    {
                        end += 1
                    }
                    out.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[position..<end]))
                    position = end
                    continue
                }
                position += 1
                guard position < bytes.count else { throw failure("unexpected end of file in a string") }
                let escape = bytes[position]
                position += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(escape)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
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
                    out.append(contentsOf: String(Character(scalar)).utf8)
                default:
                    position -= 1
                    throw failure("unknown escape '\\\(found.dropFirst().dropLast())' in a string")
                }
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

extension StringProtocol {
    /// The text quoted for a one-line error message: at most 60 characters, control characters and
    /// line separators shown as `?`.
    package var quotedForMessage: String {
        var out = "\""
        for scalar in unicodeScalars.prefix(60) {
            switch scalar.properties.generalCategory {
            case .control, .lineSeparator, .paragraphSeparator: out += "?"
            default: out.unicodeScalars.append(scalar)
            }
        }
        if unicodeScalars.count > 60 { out += "..." }
        return out + "\""
    }
}
