import RoomTapJSON

/// The fuzz target's exercise of the one JSON reader (`roomtap-fuzz`, `make fuzz`); it traps when
/// an invariant fails:
/// - reading never crashes, with or without a byte order mark allowed, at any depth limit;
/// - every node and error lies inside the input (line ≥ 1, offset ≤ size);
/// - ``JSONValue`` parses exactly the texts the reader reads whose numbers are finite Doubles,
///   and what it parses survives the one writer (compact and pretty) and back unchanged;
/// - ``JSONNodeDecoder`` (room.json's reader) decodes what it reads into room-file shapes or
///   fails with a ``JSONNodeDecoder/Failure`` whose line lies inside the input, never a crash or
///   another error;
/// - a room-file shape decoded survives ``JSONNodeEncoder``, the pretty writer, the reader and
///   the decoder unchanged (room.json as `record` writes it and every command reads it), or the
///   encoder refuses an integer beyond ±2^53 with a ``JSONNodeEncoder/Failure``.
///
/// Thread: any; pure.
package enum JSONFuzz {
    package static func exercise(_ bytes: UnsafeRawBufferPointer) {
        let node = try? JSONNode.read(bytes, maximumDepth: JSONValue.maxDepth, allowByteOrderMark: false)
        if let node { check(node, size: bytes.count) }
        do {
            _ = try JSONNode.read(bytes, maximumDepth: 2)
        } catch {
            precondition(error.line >= 1 && error.offset <= bytes.count, "a syntax error outside the input")
        }
        if let node { decodeShapes(node, lines: 1 + bytes.count(where: { $0 == 0x0A })) }
        let value = try? JSONValue(parsing: bytes)
        precondition((value != nil) == (node.map(hasOnlyFiniteNumbers) ?? false), "JSONValue and JSONNode disagree")
        if let value {
            precondition((try? JSONValue(parsing: value.jsonText)) == value, "JSON does not survive a round trip")
            precondition(
                (try? JSONValue(parsing: value.prettyJSONText)) == value, "pretty JSON does not survive a round trip")
        }
    }

    /// A room file's shapes: optional and required fields, integers of several widths, nested
    /// arrays and dictionaries.
    private struct RoomShape: Codable, Equatable {
        var version: Int?
        var state: String?
        var durationSeconds: Double?
        var tracks: [TrackShape]
        var controls: [[String: String]]?
    }

    private struct TrackShape: Codable, Equatable {
        var id: Int
        var name: String
        var channels: UInt8?
        var samples: Int64?
        var talking: Bool?
        var volume: Float?
        var loudness: [String: Double]?
    }

    private static func decodeShapes(_ node: JSONNode, lines: Int) {
        func attempt(_ body: () throws -> Void) {
            do { try body() } catch let failure as JSONNodeDecoder.Failure {
                precondition(failure.line >= 1 && failure.line <= lines, "a decode error outside the input")
            } catch {
                preconditionFailure("a decode error that is not a JSONNodeDecoder.Failure: \(error)")
            }
        }
        let decoder = JSONNodeDecoder()
        attempt { roundTrip(try decoder.decode(RoomShape.self, from: node)) }
        attempt { roundTrip(try decoder.decode([TrackShape].self, from: node)) }
        attempt { _ = try decoder.decode([String: Double].self, from: node) }
        attempt { _ = try decoder.decode(UInt16.self, from: node) }
    }

    /// `value` written as room.json is and read back as every command reads it: the same value.
    private static func roundTrip<T: Codable & Equatable>(_ value: T) {
        let encoded: JSONValue
        do { encoded = try JSONNodeEncoder().encode(value) } catch {
            precondition(error.message.contains("2^53"), "the encoder refused a decoded value: \(error)")
            return
        }
        guard let node = try? JSONNode.read(Array(encoded.prettyJSONText.utf8)),
            let back = try? JSONNodeDecoder().decode(T.self, from: node)
        else { preconditionFailure("the reader or decoder refused what the writer wrote") }
        precondition(back == value, "a room-file shape does not survive the writer and the reader")
    }

    private static func check(_ node: JSONNode, size: Int) {
        precondition(node.line >= 1 && node.offset < max(size, 1), "a node outside the input")
        switch node.kind {
        case .array(let elements): for element in elements { check(element, size: size) }
        case .object(let members): for member in members { check(member.value, size: size) }
        default: break
        }
    }

    private static func hasOnlyFiniteNumbers(_ node: JSONNode) -> Bool {
        switch node.kind {
        case .number(let text): Double(text)?.isFinite ?? false
        case .array(let elements): elements.allSatisfy(hasOnlyFiniteNumbers)
        case .object(let members): members.allSatisfy { hasOnlyFiniteNumbers($0.value) }
        default: true
        }
    }
}
