/// Why a text is not a JSON value: one line for the user, and the byte offset where it went wrong.
public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What was wrong ("invalid UTF-8", "unexpected 'x'; expected a JSON value", ...).
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
    /// Parses exactly one JSON value with roomtap's one reader (``JSONNode``): RFC 8259 §2, optional
    /// whitespace around it and nothing else; UTF-8 only (§8.1), no byte order mark; `\u` escapes
    /// must form valid scalars (a lone surrogate is an error); numbers that overflow a `Double` are
    /// an error; nesting deeper than ``maxDepth`` is an error. Duplicate object keys: the last one
    /// wins.
    ///
    /// Thread: any; pure.
    public init(parsing bytes: UnsafeRawBufferPointer) throws(JSONParseError) {
        let node: JSONNode
        do {
            node = try JSONNode.read(bytes, maximumDepth: Self.maxDepth, allowByteOrderMark: false)
        } catch {
            throw JSONParseError(message: error.message, offset: error.offset)
        }
        self = try JSONValue(node)
    }

    /// Parses a JSON text (see ``init(parsing:)-(UnsafeRawBufferPointer)``).
    public init(parsing text: String) throws(JSONParseError) {
        var text = text
        let result = text.withUTF8 { buffer in
            Result { () throws(JSONParseError) in try JSONValue(parsing: UnsafeRawBufferPointer(buffer)) }
        }
        self = try result.get()
    }

    /// The plain value of a node read as written: numbers as `Double`, the last of repeated keys.
    package init(_ node: JSONNode) throws(JSONParseError) {
        switch node.kind {
        case .null: self = .null
        case .bool(let value): self = .bool(value)
        case .string(let value): self = .string(value)
        case .number(let text):
            guard let value = Double(text), value.isFinite else {
                throw JSONParseError(message: "number out of range", offset: node.offset)
            }
            self = .number(value)
        case .array(let elements):
            var values: [JSONValue] = []
            values.reserveCapacity(elements.count)
            for element in elements { values.append(try JSONValue(element)) }
            self = .array(values)
        case .object(let members):
            var values: [String: JSONValue] = [:]
            values.reserveCapacity(members.count)
            for member in members { values[member.key] = try JSONValue(member.value) }
            self = .object(values)
        }
    }
}
