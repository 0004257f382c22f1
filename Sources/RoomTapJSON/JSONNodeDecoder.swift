/// Decodes a `Decodable` value from a ``JSONNode`` (roomtap's one JSON reader), so a file read with
/// it is never read a second time by Foundation's `JSONDecoder`, and an error names the line of
/// the value that was wrong and the field's path (`tracks[2].samples`), never Foundation's "The
/// data isn't in the correct format".
///
/// Numbers are decoded from their text as written: an integer type refuses `1.5` and a value out
/// of its range; a repeated key in an object is refused (a hand-edited file that says two things).
/// Unknown keys are ignored, as with `JSONDecoder`.
///
/// Thread: a value type, use anywhere; decoding is pure.
package struct JSONNodeDecoder {
    /// Why a node is not the value asked for: the line it starts on, the field's path and what was
    /// wrong, for one line to the user.
    package struct Failure: Error, Sendable, CustomStringConvertible {
        /// The 1-based line of the value (or of the object missing a key).
        package var line: Int
        /// The field's path, `tracks[2].samples`; empty for the top value.
        package var path: String
        /// What was wrong: `expected a number, found "abc"`, `no "tracks" field`.
        package var message: String

        package var description: String {
            path.isEmpty ? "line \(line): \(message)" : "line \(line): \(path): \(message)"
        }
    }

    package init() {}

    /// Decodes `type` from `node`; throws ``Failure`` (as `any Error`, as `Decodable` requires) for a
    /// value of the wrong kind, a missing field or a repeated key. An error thrown by a type's own
    /// `init(from:)` passes through as it is.
    package func decode<T: Decodable>(_ type: T.Type, from node: JSONNode) throws -> T {
        try T(from: NodeDecoder(node: node, codingPath: []))
    }

    /// The field path of `codingPath` as a user reads it: `tracks[2].samples`.
    static func path(_ codingPath: [any CodingKey]) -> String {
        var text = ""
        for key in codingPath {
            if let index = key.intValue {
                text += "[\(index)]"
            } else {
                text += text.isEmpty ? key.stringValue : "." + key.stringValue
            }
        }
        return text
    }
}

private struct IndexKey: CodingKey {
    var stringValue: String { "\(intValue!)" }
    var intValue: Int?
    init(_ index: Int) { intValue = index }
    init?(stringValue: String) { nil }
    init?(intValue: Int) { self.intValue = intValue }
}

private struct NodeDecoder: Decoder {
    let node: JSONNode
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func failure(_ message: String) -> JSONNodeDecoder.Failure {
        .init(line: node.line, path: JSONNodeDecoder.path(codingPath), message: message)
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let members) = node.kind else { throw failure("expected an object, found \(node.quoted)") }
        var byKey: [String: JSONNode] = [:]
        for member in members {
            guard byKey.updateValue(member.value, forKey: member.key) == nil else {
                throw JSONNodeDecoder.Failure(
                    line: member.value.line, path: JSONNodeDecoder.path(codingPath),
                    message: "\(member.key.quotedForMessage) appears twice")
            }
        }
        return KeyedDecodingContainer(KeyedNodeContainer<Key>(decoder: self, members: byKey))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let elements) = node.kind else { throw failure("expected an array, found \(node.quoted)") }
        return UnkeyedNodeContainer(decoder: self, elements: elements)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { SingleNodeContainer(decoder: self) }
}

private struct SingleNodeContainer: SingleValueDecodingContainer {
    let decoder: NodeDecoder
    var codingPath: [any CodingKey] { decoder.codingPath }

    func decodeNil() -> Bool {
        if case .null = decoder.node.kind { return true }
        return false
    }

    func decode(_ type: Bool.Type) throws -> Bool {
        guard case .bool(let value) = decoder.node.kind else { throw mismatch("true or false") }
        return value
    }

    func decode(_ type: String.Type) throws -> String {
        guard case .string(let value) = decoder.node.kind else { throw mismatch("a string") }
        return value
    }

    func decode(_ type: Double.Type) throws -> Double {
        guard case .number(let text) = decoder.node.kind, let value = Double(text), value.isFinite else {
            throw mismatch("a number")
        }
        return value
    }

    /// A number in `Float`'s range (`1e300` is refused, not made infinite).
    func decode(_ type: Float.Type) throws -> Float {
        let value = Float(try decode(Double.self))
        guard value.isFinite else { throw mismatch("a number from -3.4e+38 to 3.4e+38") }
        return value
    }
    func decode(_ type: Int.Type) throws -> Int { try integer() }
    func decode(_ type: Int8.Type) throws -> Int8 { try integer() }
    func decode(_ type: Int16.Type) throws -> Int16 { try integer() }
    func decode(_ type: Int32.Type) throws -> Int32 { try integer() }
    func decode(_ type: Int64.Type) throws -> Int64 { try integer() }
    func decode(_ type: UInt.Type) throws -> UInt { try integer() }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try integer() }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try integer() }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try integer() }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try integer() }

    func decode<T: Decodable>(_ type: T.Type) throws -> T { try T(from: decoder) }

    /// An integer as written (`12`, also `12.0` and `1e3` when they are whole and in range).
    private func integer<T: FixedWidthInteger>() throws -> T {
        guard case .number(let text) = decoder.node.kind else { throw mismatch("a whole number") }
        if let value = T(text) { return value }
        guard let double = Double(text), double.rounded(.towardZero) == double, let value = T(exactly: double) else {
            throw mismatch("a whole number from \(T.min) to \(T.max)")
        }
        return value
    }

    private func mismatch(_ expected: String) -> JSONNodeDecoder.Failure {
        decoder.failure("expected \(expected), found \(decoder.node.quoted)")
    }
}

private struct KeyedNodeContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: NodeDecoder
    let members: [String: JSONNode]
    var codingPath: [any CodingKey] { decoder.codingPath }
    var allKeys: [Key] { members.keys.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { members[key.stringValue] != nil }

    private func child(_ key: Key) throws -> NodeDecoder {
        guard let node = members[key.stringValue] else {
            throw decoder.failure("no \(key.stringValue.quotedForMessage) field")
        }
        return NodeDecoder(node: node, codingPath: codingPath + [key])
    }

    func decodeNil(forKey key: Key) throws -> Bool { SingleNodeContainer(decoder: try child(key)).decodeNil() }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try SingleNodeContainer(decoder: try child(key)).decode(type)
    }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try single(key).decode(type) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try single(key).decode(type) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try single(key).decode(type) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try single(key).decode(type) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try single(key).decode(type) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try single(key).decode(type) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try single(key).decode(type) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try single(key).decode(type) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try single(key).decode(type) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try single(key).decode(type) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try single(key).decode(type) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try single(key).decode(type) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try single(key).decode(type) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try single(key).decode(type) }

    /// A missing key or `null` is nil, as with `JSONDecoder`.
    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard let node = members[key.stringValue] else { return nil }
        if case .null = node.kind { return nil }
        return try decode(type, forKey: key)
    }

    private func single(_ key: Key) throws -> SingleNodeContainer { SingleNodeContainer(decoder: try child(key)) }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        try child(key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try child(key).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder { decoder }
    func superDecoder(forKey key: Key) throws -> any Decoder { try child(key) }
}

private struct UnkeyedNodeContainer: UnkeyedDecodingContainer {
    let decoder: NodeDecoder
    let elements: [JSONNode]
    var currentIndex = 0
    var codingPath: [any CodingKey] { decoder.codingPath }
    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }

    init(decoder: NodeDecoder, elements: [JSONNode]) {
        self.decoder = decoder
        self.elements = elements
    }

    private mutating func next() throws -> NodeDecoder {
        guard !isAtEnd else { throw decoder.failure("expected more than \(elements.count) element(s)") }
        defer { currentIndex += 1 }
        return NodeDecoder(node: elements[currentIndex], codingPath: codingPath + [IndexKey(currentIndex)])
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, case .null = elements[currentIndex].kind else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try SingleNodeContainer(decoder: try next()).decode(type)
    }
    mutating func decode(_ type: Bool.Type) throws -> Bool { try SingleNodeContainer(decoder: try next()).decode(type) }
    mutating func decode(_ type: String.Type) throws -> String {
        try SingleNodeContainer(decoder: try next()).decode(type)
    }
    mutating func decode(_ type: Double.Type) throws -> Double {
        try SingleNodeContainer(decoder: try next()).decode(type)
    }
    mutating func decode(_ type: Float.Type) throws -> Float {
        try SingleNodeContainer(decoder: try next()).decode(type)
    }
    mutating func decode(_ type: Int.Type) throws -> Int { try SingleNodeContainer(decoder: try next()).decode(type) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try SingleNodeContainer(decoder: try next()).decode(type) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 {
        try SingleNodeContainer(decoder: try next()).decode(type)
    }
    mutating func decode(_ type: Int32.Type) throws -> Int32 {
        try SingleNodeContainer(decoder: try next()).decode(type)
    }
    mutating func decode(_ type: Int64.Type) throws -> Int64 {
        try SingleNodeContainer(decoder: try next()).decode(type)
    }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try SingleNodeContainer(decoder: try next()).decode(type) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 {
        try SingleNodeContainer(decoder: try next()).decode(type)
    }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 {
        try SingleNodeContainer(decoder: try next()).decode(type)
    }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 {
        try SingleNodeContainer(decoder: try next()).decode(type)
    }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 {
        try SingleNodeContainer(decoder: try next()).decode(type)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        try next().container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { try next().unkeyedContainer() }

    mutating func superDecoder() throws -> any Decoder { try next() }
}
