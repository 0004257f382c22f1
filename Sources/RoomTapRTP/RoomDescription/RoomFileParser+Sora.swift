import RoomTapCore
import RoomTapJSON

/// The room file's `sora` object: track names by Sora connection id, for
/// `--sora-audio-streaming` (docs/ROOM-FILE.md):
///
/// ```json
/// { "sora": { "2Y8H3V1ACN6R7FX1JG7ZT8Z1SC": "alice", "8K2M0QZ4RB1T6XW3HD5NJ7VY9C": "bob" } }
/// ```
///
/// A room file may have `sora` and no `participants` (a room of Sora connections only). Each key is
/// a connection id (1-255 printable ASCII characters), each value a track name, names unique.
extension RoomFileParser {
    func soraConnections(_ value: JSONNode, path: String) throws(RoomDescriptionError) -> [String: String] {
        guard case .object(let members) = value.kind else {
            throw invalid(
                value, path, "\(value.quoted) is not an object; give {\"CONNECTION_ID\": \"track name\", ...}")
        }
        guard members.count <= RoomDescription.maximumParticipants else {
            throw RoomDescriptionError(
                .tooLarge, source: source, line: value.line,
                message: "\(path): \(members.count) connections, more than the "
                    + "\(RoomDescription.maximumParticipants) roomtap describes")
        }
        var names: [String: String] = [:]
        var taken: [String: String] = [:]
        for (id, nameValue) in members {
            let entry = "\(path).\(id.count > 40 ? String(id.prefix(40)) + "..." : id)"
            guard !id.isEmpty, id.utf8.count <= 255,
                id.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F })
            else {
                throw invalid(nameValue, path, "\(id.quotedForMessage) is not a Sora connection id")
            }
            guard names[id] == nil else {
                throw RoomDescriptionError(
                    .duplicate, source: source, line: nameValue.line, message: "\(entry): the connection is named twice"
                )
            }
            let name = try trackName(nameValue, path: entry)
            if let other = taken[TrackName.key(name)] {
                throw RoomDescriptionError(
                    .duplicate, source: source, line: nameValue.line,
                    message: "\(entry): \(name.quotedForMessage) is already the name of connection \(other); "
                        + "give each connection its own name")
            }
            names[id] = name
            taken[TrackName.key(name)] = id
        }
        return names
    }
}
