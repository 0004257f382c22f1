import Foundation
import RoomTapJSON

/// Reading a recording's room.json: one reader (RoomTapJSON's ``JSONNode``, decoded by
/// ``JSONNodeDecoder``) for every command that reads it (export, repair, status, timeline, view,
/// info, upload), so a damaged or foreign file is one line naming the file, the line and field
/// that were wrong, and what to do.
///
/// Thread: any; reads only.
enum RoomJSONFile {
    /// `type` decoded from `DIR/room.json` of a recording directory the user named: no such
    /// directory, a file given instead of the directory, and a directory without room.json are
    /// one-line errors saying what to give.
    static func readRecording<T: Decodable>(_ type: T.Type, directory: String) throws -> T {
        var status = stat()
        guard stat(directory, &status) == 0 else {
            throw RuntimeError(description: "\(directory): no such directory (give a directory roomtap record wrote)")
        }
        guard status.st_mode & S_IFMT == S_IFDIR else {
            throw RuntimeError(
                description: "\(directory) is a file, not a directory; give the directory roomtap record --out "
                    + "wrote (the one holding room.json)")
        }
        let path = (directory as NSString).appendingPathComponent("room.json")
        guard let room = try read(type, from: path) else {
            throw RuntimeError(
                description: "\(path) not found: \(directory) is not a roomtap recording "
                    + "(roomtap record --out DIR writes room.json as it starts)")
        }
        return room
    }

    /// `type` decoded from the room.json at `path`; nil when there is nothing at `path`.
    static func read<T: Decodable>(_ type: T.Type, from path: String) throws -> T? {
        guard let bytes = try FileContents.readIfPresent(path, what: "a room.json") else { return nil }
        let directory = (path as NSString).deletingLastPathComponent
        let advice =
            "restore it, or move it aside (roomtap repair \(directory.isEmpty ? "." : directory) then repairs "
            + "the audio files alone)"
        let node: JSONNode
        do { node = try JSONNode.read(bytes) } catch {
            throw RuntimeError(
                description: "\(path) is damaged: not valid JSON (line \(error.line): \(error.message)); \(advice)")
        }
        do { return try JSONNodeDecoder().decode(type, from: node) } catch {
            throw RuntimeError(description: "\(path) is not a roomtap room.json (\(error)); \(advice)")
        }
    }
}
