import Foundation
import RoomTapCore
import RoomTapJSON

/// Reads a JSON room file into a ``RoomDescription``; the schema is documented in `docs/ROOM-FILE.md`.
///
/// ```json
/// {
///   "listen": "127.0.0.1",
///   "participants": [
///     { "name": "alice", "port": 25000, "ssrc": 1234, "payloadType": 111 },
///     { "name": "bob",   "port": 25002, "ssrc": "0x5eed", "channels": 2, "address": "::1" },
///     { "name": "pbx",   "port": 25004, "codec": "L16/16000", "payloadType": 118 }
///   ]
/// }
/// ```
///
/// Strict, so a typo never silently records the wrong thing: unknown and repeated keys, wrong types,
/// out-of-range numbers (a number must be an integer as written: `25000.0` and `2.5e4` are not ports),
/// bad names, repeated names and repeated (port, SSRC) pairs are errors of the form
/// `room.json:9: participants[1].port: 70000 is not a port (1-65535)` — the line of the value, its JSON
/// path, what is wrong and what is expected.
///
/// Thread: pure, thread-safe (a value with no shared state).
package struct RoomFileParser {
    /// Where the data came from, for error messages.
    let source: String

    /// A parser whose errors name `source`.
    package init(source: String) { self.source = source }

    /// The keys of the top-level object.
    static let roomKeys = ["participants", "listen", "allow", "sora"]
    /// The keys of a participant object.
    static let participantKeys = ["name", "port", "ssrc", "payloadType", "address", "channels", "codec", "srtp"]

    /// Parses a room file. See ``RoomDescription/parseJSON(_:source:)``.
    func parse(_ data: Data) throws(RoomDescriptionError) -> RoomDescription {
        try checkSize(data.count)
        return try parse(bytes: [UInt8](data))
    }

    /// Parses a room file from raw bytes (the fuzz entry point).
    package func parse(_ bytes: UnsafeRawBufferPointer) throws(RoomDescriptionError) -> RoomDescription {
        try checkSize(bytes.count)
        return try parse(bytes: [UInt8](bytes))
    }

    private func checkSize(_ size: Int) throws(RoomDescriptionError) {
        guard size <= RoomDescription.maximumBytes else {
            throw RoomDescriptionError(
                .tooLarge, source: source,
                message: "is \(size) bytes, more than the \(RoomDescription.maximumBytes) bytes (1 MiB) roomtap reads "
                    + "as a room file; give the room file of one room")
        }
    }

    private func parse(bytes: [UInt8]) throws(RoomDescriptionError) -> RoomDescription {
        guard String(validating: bytes, as: UTF8.self) != nil else {
            throw RoomDescriptionError(
                .malformed, source: source, message: "is not UTF-8 text; give a JSON room file (docs/ROOM-FILE.md)")
        }
        let root: JSONNode
        do {
            root = try JSONNode.read(bytes)
        } catch {
            throw RoomDescriptionError(
                .malformed, source: source, line: error.line,
                message: "not valid JSON: \(error.message); give a JSON room file (docs/ROOM-FILE.md)")
        }
        guard case .object(let members) = root.kind else {
            throw RoomDescriptionError(
                .malformed, source: source, line: root.line,
                message: "the room file is \(root.quoted), not a JSON object; "
                    + "expected {\"participants\": [{\"name\": ..., \"port\": ...}, ...]}")
        }
        let room = try fields(members, at: root, path: "", allowed: Self.roomKeys)
        let listen = try room["listen"].map { (value) throws(RoomDescriptionError) in
            try address(value, path: "listen")
        }
        let allow = try room["allow"].map { (value) throws(RoomDescriptionError) in
            try allowList(value, path: "allow")
        }
        let sora = try room["sora"].map { (value) throws(RoomDescriptionError) in
            try soraConnections(value, path: "sora")
        }
        guard let list = room["participants"] else {
            // A room of Sora connections only (RoomFileParser+Sora.swift).
            if let sora { return RoomDescription(participants: [], allow: allow ?? [], soraNames: sora) }
            throw invalid(root, "", "missing \"participants\"; list the participants: \"participants\": [...]")
        }
        guard case .array(let entries) = list.kind else {
            throw invalid(list, "participants", "\(list.quoted) is not an array; give a list of participants")
        }
        guard !entries.isEmpty else {
            throw invalid(list, "participants", "is empty; list at least one participant")
        }
        guard entries.count <= RoomDescription.maximumParticipants else {
            throw RoomDescriptionError(
                .tooLarge, source: source, line: list.line,
                message: "participants: \(entries.count) participants, more than the "
                    + "\(RoomDescription.maximumParticipants) roomtap describes")
        }

        var participants: [ParticipantDescription] = []
        var names: [String: Int] = [:]
        var streams: [StreamKey: Int] = [:]
        for (index, entry) in entries.enumerated() {
            let path = "participants[\(index)]"
            guard case .object(let members) = entry.kind else {
                throw invalid(entry, path, "\(entry.quoted) is not an object; give {\"name\": ..., \"port\": ...}")
            }
            let field = try fields(members, at: entry, path: path, allowed: Self.participantKeys)
            guard let nameValue = field["name"] else {
                throw invalid(entry, path, "missing \"name\"; give the participant's track name")
            }
            guard let portValue = field["port"] else {
                throw invalid(entry, path, "missing \"port\"; give the UDP port the participant's RTP arrives on")
            }
            let name = try trackName(nameValue, path: path + ".name")
            let port = try integer(portValue, path: path + ".port", in: 1...65_535, "is not a port (1-65535)")
            let ssrc = try field["ssrc"].map { (value) throws(RoomDescriptionError) in
                try self.ssrc(value, path: path + ".ssrc")
            }
            let payloadType = try field["payloadType"].map { (value) throws(RoomDescriptionError) in
                try integer(value, path: path + ".payloadType", in: 0...127, "is not an RTP payload type (0-127)")
            }
            let channels = try field["channels"].map { (value) throws(RoomDescriptionError) in
                try integer(value, path: path + ".channels", in: 1...2, "is not a channel count (1 or 2)")
            }
            let codecValue = try field["codec"].map { (value) throws(RoomDescriptionError) in
                try self.codec(value, path: path + ".codec")
            }
            let (codec, payloadTypes) = try codecAndPayloadTypes(
                codecValue, payloadType: payloadType.map { UInt8($0) }, at: field["payloadType"] ?? entry,
                path: path)
            let participantAddress = try field["address"].map { (value) throws(RoomDescriptionError) in
                try address(value, path: path + ".address")
            }
            let srtp = try field["srtp"].map { (value) throws(RoomDescriptionError) in
                try srtpKeying(value, path: path + ".srtp")
            }

            // One name ignoring case (TrackName): their files would be one on a case-insensitive disk.
            if let first = names[TrackName.key(name)] {
                let earlier = participants[first].trackName
                let same =
                    earlier == name ? "" : " (as \(earlier.quotedForMessage); names that differ only in case are one)"
                throw RoomDescriptionError(
                    .duplicate, source: source, line: nameValue.line,
                    message: "\(path).name: \(name.quotedForMessage) is already the name of "
                        + "participants[\(first)]\(same); give each participant its own name")
            }
            names[TrackName.key(name)] = index
            let key = StreamKey(port: UInt16(port), ssrc: ssrc)
            if let first = streams[key] {
                let what = ssrc.map { "port \(port) and ssrc \($0) are" } ?? "port \(port) without an ssrc is"
                throw RoomDescriptionError(
                    .duplicate, source: source, line: entry.line,
                    message: "\(path): \(what) already participants[\(first)]'s; "
                        + "give each participant its own port, or an ssrc to tell them apart")
            }
            streams[key] = index
            participants.append(
                ParticipantDescription(
                    name: name, port: UInt16(port), address: participantAddress ?? listen, ssrc: ssrc,
                    payloadTypes: payloadTypes,
                    channels: channels.map { Int($0) } ?? min(2, codec.isOpus ? 1 : codec.channels),
                    codec: codec, srtp: srtp))
        }
        if let sora, let clash = sora.values.first(where: { names[TrackName.key($0)] != nil }),
            let value = room["sora"]
        {
            throw RoomDescriptionError(
                .duplicate, source: source, line: value.line,
                message: "sora: \(clash.quotedForMessage) is also the name of "
                    + "participants[\(names[TrackName.key(clash)]!)]; "
                    + "give each track its own name")
        }
        return RoomDescription(participants: participants, allow: allow ?? [], soraNames: sora ?? [:])
    }

    private struct StreamKey: Hashable {
        var port: UInt16
        var ssrc: UInt32?
    }

    // MARK: - Values

    /// The members of an object by key, after refusing unknown and repeated keys.
    func fields(
        _ members: [(key: String, value: JSONNode)], at object: JSONNode, path: String, allowed: [String]
    ) throws(RoomDescriptionError) -> [String: JSONNode] {
        var result: [String: JSONNode] = [:]
        for (key, value) in members {
            let keyPath = path.isEmpty ? key : "\(path).\(key)"
            guard allowed.contains(key) else {
                throw RoomDescriptionError(
                    .invalidValue, source: source, line: value.line,
                    message: "\(keyPath.quotedForMessage.dropFirst().dropLast()): unknown key; "
                        + "the keys are \(allowed.joined(separator: ", "))")
            }
            guard result[key] == nil else {
                throw RoomDescriptionError(
                    .duplicate, source: source, line: value.line, message: "\(keyPath): repeated key; give it once")
            }
            result[key] = value
        }
        return result
    }

    /// An integer written without fraction or exponent, within `range`.
    func integer(
        _ value: JSONNode, path: String, in range: ClosedRange<UInt64>, _ problem: String
    ) throws(RoomDescriptionError) -> UInt64 {
        guard case .number(let text) = value.kind, let number = Substring(text).sdpDecimal(maximum: range.upperBound),
            number >= range.lowerBound
        else { throw invalid(value, path, "\(value.quoted) \(problem)") }
        return number
    }

    /// An SSRC: an integer 0...2^32-1, or a string of decimal digits or `0x` and 1-8 hex digits.
    private func ssrc(_ value: JSONNode, path: String) throws(RoomDescriptionError) -> UInt32 {
        let problem = "is not an SSRC (0-4294967295, or a string \"0x...\" of 1-8 hex digits)"
        switch value.kind {
        case .number:
            return UInt32(try integer(value, path: path, in: 0...UInt64(UInt32.max), problem))
        case .string(let text):
            let lower = text.lowercased()
            if lower.hasPrefix("0x") {
                let digits = lower.dropFirst(2)
                if (1...8).contains(digits.count), digits.allSatisfy(\.isHexDigit),
                    let ssrc = UInt32(digits, radix: 16)
                {
                    return ssrc
                }
            } else if let ssrc = Substring(text).sdpDecimal(maximum: UInt64(UInt32.max)) {
                return UInt32(ssrc)
            }
        default:
            break
        }
        throw invalid(value, path, "\(value.quoted) \(problem)")
    }

    /// A `codec` text: `<encoding>[/<clock rate>[/<channels>]]` (``AudioCodec/named(_:)``).
    private func codec(_ value: JSONNode, path: String) throws(RoomDescriptionError) -> AudioCodec {
        guard case .string(let text) = value.kind, let codec = AudioCodec.named(text) else {
            throw invalid(
                value, path,
                "\(value.quoted) is not a codec roomtap records; give \"opus\", \"PCMU\", \"PCMA\", \"G722\" "
                    + "or \"L16/<rate>[/<channels>]\"")
        }
        return codec
    }

    /// The codec and payload types of a participant: a static payload type (0 PCMU, 8 PCMA, 9 G722,
    /// 10/11 L16/44100) names its codec; a codec with a static type takes it when no payload type
    /// is given; otherwise any dynamic type (96-127) is accepted. A static type of another codec is
    /// an error.
    private func codecAndPayloadTypes(
        _ codec: AudioCodec?, payloadType: UInt8?, at value: JSONNode, path: String
    ) throws(RoomDescriptionError) -> (AudioCodec, [UInt8]) {
        let named = payloadType.flatMap(AudioCodec.staticPayloadType)
        if let payloadType, payloadType < 96, let codec, named != codec {
            throw invalid(
                value, path + ".payloadType",
                "\(payloadType) is not a payload type of \(codec) (RFC 3551); give "
                    + (codec.staticPayloadType.map { "\($0) or " } ?? "") + "a dynamic type (96-127)")
        }
        if let payloadType, payloadType < 96, codec == nil, named == nil {
            throw invalid(
                value, path + ".payloadType",
                "\(payloadType) is a static payload type roomtap does not decode; give a \"codec\" and a "
                    + "dynamic type (96-127), or 0 (PCMU), 8 (PCMA), 9 (G722)")
        }
        let chosen = codec ?? named ?? .opus
        if let payloadType { return (chosen, [payloadType]) }
        return (chosen, chosen.staticPayloadType.map { [$0] } ?? [])
    }

    /// A track name, by the one rule (``TrackName``: 1-64 characters, no `/`, no control
    /// characters, not `.` or `..`; it names files).
    func trackName(_ value: JSONNode, path: String) throws(RoomDescriptionError) -> String {
        guard case .string(let name) = value.kind, TrackName.problem(name) == nil else {
            throw invalid(value, path, "\(value.quoted) is not a track name (\(TrackName.rule))")
        }
        return name
    }

    /// A listen address: an IPv4 or IPv6 literal, or a host name.
    private func address(_ value: JSONNode, path: String) throws(RoomDescriptionError) -> String {
        guard case .string(let text) = value.kind,
            SDPParser.isIPv4Literal(Substring(text)) || SDPParser.isIPv6Literal(Substring(text))
                || SDPParser.isHostName(Substring(text))
        else {
            throw invalid(
                value, path, "\(value.quoted) is not an IP address or host name (e.g. \"127.0.0.1\", \"::1\")")
        }
        return text
    }

    func invalid(_ value: JSONNode, _ path: String, _ message: String) -> RoomDescriptionError {
        RoomDescriptionError(
            .invalidValue, source: source, line: value.line, message: path.isEmpty ? message : "\(path): \(message)")
    }
}
