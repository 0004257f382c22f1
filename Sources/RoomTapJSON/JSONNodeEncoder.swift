/// Encodes an `Encodable` value as a ``JSONValue``, for roomtap's one writer (``JSONValue/text(_:)``):
/// the other half of ``JSONNodeDecoder``, so a `Codable` file (room.json) is written by the
/// same rules as every other JSON roomtap makes, never by Foundation's `JSONEncoder`.
///
/// As `JSONEncoder` with `.sortedKeys`: a nil optional of a synthesized `Codable` leaves its key
/// out (`encodeIfPresent`); a value that asks for no container is `{}`; the last of a key encoded
/// twice wins. Where it differs, it says so rather than write something else:
/// - a `Double` or `Float` that is not finite is a ``Failure`` (as `JSONEncoder`'s default);
/// - an integer beyond ±2^53 is a ``Failure``: a ``JSONValue`` number is a `Double`, which would
///   round it (no room.json count comes near: 2^53 samples at 48 kHz are 5,900 years);
/// - a `Float` is the number its shortest text says (`Float(0.1)` is `0.1`, ``JSONValue/init(_:)``),
///   written as that `Double`: the same text as `JSONEncoder`'s, except that a whole `Float` of
///   2^24 or more is written in full (`16777218`, where `JSONEncoder` writes `1.6777218e+07`);
/// - Foundation's types get no special treatment (`Data` is an array of bytes, not base64; a
///   `Date` is its own `Codable` number): room.json has none.
///
/// Thread: a value type, use anywhere; encoding is pure.
package struct JSONNodeEncoder {
    /// Why a value cannot be written: the field's path and what was wrong, for one line.
    package struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// The field's path, `tracks[2].samples`; empty for the top value.
        package var path: String
        /// What was wrong: `nan is not a number JSON can hold`.
        package var message: String

        package var description: String { path.isEmpty ? message : "\(path): \(message)" }

        package init(path: String, message: String) {
            self.path = path
            self.message = message
        }
    }

    package init() {}

    /// `value` as a ``JSONValue``; throws ``Failure`` for a number JSON cannot hold exactly, a
    /// container asked for in place of another, or a top value that encodes nothing. An error a
    /// type's own `encode(to:)` throws is a ``Failure`` with that error's description.
    package func encode<T: Encodable>(_ value: T) throws(Failure) -> JSONValue {
        let context = EncodingContext()
        let slot = Slot()
        do {
            try SlotEncoder(slot: slot, codingPath: [], context: context).encodeValue(value)
        } catch let failure as Failure {
            throw failure
        } catch {
            throw Failure(path: "", message: "\(error)")
        }
        if let failure = context.failure { throw failure }
        if case .unset = slot.kind { throw Failure(path: "", message: "\(T.self) encoded nothing") }
        return slot.json
    }
}

/// What one ``JSONNodeEncoder/encode(_:)`` call shares: the first misuse of a container (which
/// `Encoder`'s container functions cannot throw), thrown at the end.
private final class EncodingContext {
    var failure: JSONNodeEncoder.Failure?

    func record(_ failure: JSONNodeEncoder.Failure) {
        if self.failure == nil { self.failure = failure }
    }
}

/// Where an encoder puts what it encodes: one value, or an array or object its containers fill
/// (a reference, because a container is handed out before its values are encoded into it).
private final class Slot {
    enum Kind { case unset, value, array, object }
    private(set) var kind = Kind.unset
    private var value = JSONValue.null
    private(set) var elements: [Slot] = []
    private(set) var members: [String: Slot] = [:]

    /// The value encoded here; `{}` when nothing was (as `JSONEncoder` writes it).
    var json: JSONValue {
        switch kind {
        case .unset: .object([:])
        case .value: value
        case .array: .array(elements.map(\.json))
        case .object: .object(members.mapValues(\.json))
        }
    }

    /// Makes this slot `kind` (an array or object); false when it already holds something else.
    func become(_ kind: Kind) -> Bool {
        if self.kind == .unset { self.kind = kind }
        return self.kind == kind
    }

    /// Sets the one value; false when something was encoded here already.
    func set(_ value: JSONValue) -> Bool {
        guard kind == .unset else { return false }
        kind = .value
        self.value = value
        return true
    }

    func append() -> Slot {
        let slot = Slot()
        elements.append(slot)
        return slot
    }

    /// The slot for `key`: a new one (the last of a key encoded twice wins), or the existing one
    /// for a nested container asked for again.
    func member(_ key: String, reuse: Bool) -> Slot {
        if reuse, let slot = members[key] { return slot }
        let slot = Slot()
        members[key] = slot
        return slot
    }
}

/// An array index or the `super` key, for a failure's path.
private struct PathKey: CodingKey {
    var stringValue: String
    var intValue: Int?
    init(_ index: Int) {
        stringValue = "\(index)"
        intValue = index
    }
    init(stringValue: String) { self.stringValue = stringValue }
    init(intValue: Int) { self.init(intValue) }
}

private struct SlotEncoder: Encoder {
    let slot: Slot
    let codingPath: [any CodingKey]
    let context: EncodingContext
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func failure(_ message: String) -> JSONNodeEncoder.Failure {
        JSONNodeEncoder.Failure(path: JSONNodeDecoder.path(codingPath), message: message)
    }

    func child(_ slot: Slot, _ key: any CodingKey) -> SlotEncoder {
        SlotEncoder(slot: slot, codingPath: codingPath + [key], context: context)
    }

    /// `kind` of this slot, or a failure recorded (the container then fills a slot nobody reads).
    private func claim(_ kind: Slot.Kind, _ what: String) -> SlotEncoder {
        if slot.become(kind) { return self }
        context.record(failure("asked for \(what) where something else was encoded"))
        let spare = Slot()
        _ = spare.become(kind)
        return SlotEncoder(slot: spare, codingPath: codingPath, context: context)
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(KeyedSlotContainer<Key>(encoder: claim(.object, "an object")))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        UnkeyedSlotContainer(encoder: claim(.array, "an array"))
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { SingleSlotContainer(encoder: self) }

    // MARK: Values

    func set(_ value: JSONValue) throws {
        guard slot.set(value) else { throw failure("a second value encoded in one place") }
    }

    func encodeValue<T: Encodable>(_ value: T) throws {
        if let json = value as? JSONValue {
            try set(json)
        } else {
            try value.encode(to: self)
        }
    }

    func encodeDouble(_ value: Double) throws {
        guard value.isFinite else { throw failure("\(value) is not a number JSON can hold") }
        try set(.number(value))
    }

    func encodeFloat(_ value: Float) throws {
        guard value.isFinite else { throw failure("\(value) is not a number JSON can hold") }
        try set(JSONValue(value))
    }

    func encodeInteger<T: BinaryInteger>(_ value: T) throws {
        guard value.magnitude <= 9_007_199_254_740_992 else {
            throw failure("\(value) is beyond ±2^53, more than a JSON number holds exactly")
        }
        try set(.number(Double(value)))
    }
}

private struct SingleSlotContainer: SingleValueEncodingContainer {
    let encoder: SlotEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }

    mutating func encodeNil() throws { try encoder.set(.null) }
    mutating func encode(_ value: Bool) throws { try encoder.set(.bool(value)) }
    mutating func encode(_ value: String) throws { try encoder.set(.string(value)) }
    mutating func encode(_ value: Double) throws { try encoder.encodeDouble(value) }
    mutating func encode(_ value: Float) throws { try encoder.encodeFloat(value) }
    mutating func encode(_ value: Int) throws { try encoder.encodeInteger(value) }
    mutating func encode(_ value: Int8) throws { try encoder.encodeInteger(value) }
    mutating func encode(_ value: Int16) throws { try encoder.encodeInteger(value) }
    mutating func encode(_ value: Int32) throws { try encoder.encodeInteger(value) }
    mutating func encode(_ value: Int64) throws { try encoder.encodeInteger(value) }
    mutating func encode(_ value: UInt) throws { try encoder.encodeInteger(value) }
    mutating func encode(_ value: UInt8) throws { try encoder.encodeInteger(value) }
    mutating func encode(_ value: UInt16) throws { try encoder.encodeInteger(value) }
    mutating func encode(_ value: UInt32) throws { try encoder.encodeInteger(value) }
    mutating func encode(_ value: UInt64) throws { try encoder.encodeInteger(value) }
    mutating func encode<T: Encodable>(_ value: T) throws { try encoder.encodeValue(value) }
}

private struct KeyedSlotContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: SlotEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }

    private func child(_ key: Key, reuse: Bool = false) -> SlotEncoder {
        encoder.child(encoder.slot.member(key.stringValue, reuse: reuse), key)
    }

    mutating func encodeNil(forKey key: Key) throws { try child(key).set(.null) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { try child(key).set(.bool(value)) }
    mutating func encode(_ value: String, forKey key: Key) throws { try child(key).set(.string(value)) }
    mutating func encode(_ value: Double, forKey key: Key) throws { try child(key).encodeDouble(value) }
    mutating func encode(_ value: Float, forKey key: Key) throws { try child(key).encodeFloat(value) }
    mutating func encode(_ value: Int, forKey key: Key) throws { try child(key).encodeInteger(value) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { try child(key).encodeInteger(value) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { try child(key).encodeInteger(value) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { try child(key).encodeInteger(value) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { try child(key).encodeInteger(value) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { try child(key).encodeInteger(value) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { try child(key).encodeInteger(value) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { try child(key).encodeInteger(value) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { try child(key).encodeInteger(value) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { try child(key).encodeInteger(value) }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws { try child(key).encodeValue(value) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
        -> KeyedEncodingContainer<NestedKey>
    {
        child(key, reuse: true).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        child(key, reuse: true).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        encoder.child(encoder.slot.member("super", reuse: true), PathKey(stringValue: "super"))
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder { child(key, reuse: true) }
}

private struct UnkeyedSlotContainer: UnkeyedEncodingContainer {
    let encoder: SlotEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }
    var count: Int { encoder.slot.elements.count }

    private func next() -> SlotEncoder {
        let index = encoder.slot.elements.count
        return encoder.child(encoder.slot.append(), PathKey(index))
    }

    mutating func encodeNil() throws { try next().set(.null) }
    mutating func encode(_ value: Bool) throws { try next().set(.bool(value)) }
    mutating func encode(_ value: String) throws { try next().set(.string(value)) }
    mutating func encode(_ value: Double) throws { try next().encodeDouble(value) }
    mutating func encode(_ value: Float) throws { try next().encodeFloat(value) }
    mutating func encode(_ value: Int) throws { try next().encodeInteger(value) }
    mutating func encode(_ value: Int8) throws { try next().encodeInteger(value) }
    mutating func encode(_ value: Int16) throws { try next().encodeInteger(value) }
    mutating func encode(_ value: Int32) throws { try next().encodeInteger(value) }
    mutating func encode(_ value: Int64) throws { try next().encodeInteger(value) }
    mutating func encode(_ value: UInt) throws { try next().encodeInteger(value) }
    mutating func encode(_ value: UInt8) throws { try next().encodeInteger(value) }
    mutating func encode(_ value: UInt16) throws { try next().encodeInteger(value) }
    mutating func encode(_ value: UInt32) throws { try next().encodeInteger(value) }
    mutating func encode(_ value: UInt64) throws { try next().encodeInteger(value) }
    mutating func encode<T: Encodable>(_ value: T) throws { try next().encodeValue(value) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type)
        -> KeyedEncodingContainer<NestedKey>
    {
        next().container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { next().unkeyedContainer() }

    mutating func superEncoder() -> any Encoder { next() }
}
