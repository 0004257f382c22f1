/// A JSON value (RFC 8259, https://www.rfc-editor.org/rfc/rfc8259): what control requests, replies
/// and events, and the Realtime API's events, are made of.
///
/// Numbers are `Double` (integers up to 2^53 are exact). Objects are unordered; ``jsonText`` and
/// ``prettyJSONText`` (roomtap's one writer, JSONWriting.swift) write their keys sorted, so output
/// is deterministic. Parsing is ``init(parsing:)-(UnsafeRawBufferPointer)`` (roomtap's one JSON
/// reader, ``JSONNode``: strict RFC 8259, UTF-8 only, nesting limited to ``maxDepth``). A `Codable`
/// type becomes one through ``JSONNodeEncoder`` and is read back through ``JSONNodeDecoder``.
///
/// Thread: a value.
public enum JSONValue: Sendable, Equatable, Codable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// Deepest nesting of arrays and objects the parser accepts.
    public static let maxDepth = 64

    /// A `Float` (a gain, a level) as the number its shortest text says: `Float(0.1)` becomes
    /// `0.1`, not `0.10000000149011612`.
    public init(_ value: Float) {
        self = .number(value.isFinite ? Double(value.description) ?? Double(value) : Double(value))
    }

    // MARK: Accessors

    /// The member `key` of an object; nil for a missing key or a value that is not an object.
    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    /// The string, or nil for any other kind of value.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The number, or nil for any other kind of value.
    public var doubleValue: Double? {
        if case .number(let value) = self { return value }
        return nil
    }

    /// The number if it is a whole number that fits an `Int` exactly, else nil.
    public var intValue: Int? {
        guard case .number(let value) = self, value.rounded(.towardZero) == value,
            abs(value) <= 9_007_199_254_740_992
        else { return nil }
        return Int(value)
    }

    /// The boolean, or nil for any other kind of value.
    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The elements of an array, or nil for any other kind of value.
    public var arrayValue: [JSONValue]? {
        if case .array(let value) = self { return value }
        return nil
    }

    /// The members of an object, or nil for any other kind of value.
    public var objectValue: [String: JSONValue]? {
        if case .object(let value) = self { return value }
        return nil
    }

    /// True for `null`.
    public var isNull: Bool { self == .null }

    // MARK: Codable

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}

extension JSONValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int) { self = .number(Double(value)) }
    public init(floatLiteral value: Double) { self = .number(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

extension JSONValue: CustomStringConvertible {
    /// The compact JSON text (same as ``jsonText``).
    public var description: String { jsonText }
}
