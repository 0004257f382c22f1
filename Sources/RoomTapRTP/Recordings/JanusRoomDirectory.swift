import Foundation

/// The audio recordings of one Janus room in a directory (Janus's `rec_dir`), found by the names
/// Janus gives them: `<plugin>-<room>-user-<id>-<time>-audio[-<n>].mjr` (VideoRoom:
/// `videoroom-1234-user-5678-1796070494380244-audio-0.mjr`). Video and data recordings, and files
/// named otherwise, are not taken.
///
/// Thread: pure apart from reading the directory; any thread.
public enum JanusRoomDirectory {
    /// One audio recording: the track name (`user-<id>`, `user-<id>-<n>` for a second audio
    /// stream `n` of the publisher, then `-2`, `-3`, ... for later files of the same one) and path.
    public struct Recording: Sendable, Equatable {
        public var name: String
        public var path: String
    }

    /// What a file name says.
    struct Name: Equatable {
        var room: String
        var user: String
        var time: UInt64
        var stream: Int
    }

    /// Parses a Janus recording's file name; nil when it is not an audio recording's name.
    static func parse(_ file: String) -> Name? {
        guard file.hasSuffix(".mjr") else { return nil }
        let base = String(file.dropLast(4))
        guard let user = base.range(of: "-user-", options: .backwards),
            let audio = base.range(of: "-audio", options: .backwards), audio.lowerBound > user.upperBound
        else { return nil }
        let room = String(base[..<user.lowerBound])
        let tail = base[audio.upperBound...]
        var stream = 0
        if !tail.isEmpty {
            guard tail.hasPrefix("-"), let n = Int(tail.dropFirst()), n >= 0, n < 1000 else { return nil }
            stream = n
        }
        let middle = base[user.upperBound..<audio.lowerBound]
        guard let dash = middle.lastIndex(of: "-"), let time = UInt64(middle[middle.index(after: dash)...]) else {
            return nil
        }
        let id = String(middle[..<dash])
        guard !room.isEmpty, !id.isEmpty else { return nil }
        return Name(room: room, user: id, time: time, stream: stream)
    }

    /// The audio recordings of the one room in `directory`, ordered by participant and time.
    /// Throws one line when the directory cannot be read, holds none, or holds several rooms
    /// (naming them).
    public static func recordings(in directory: String) throws(RecordingError) -> [Recording] {
        let files: [String]
        do { files = try FileManager.default.contentsOfDirectory(atPath: directory) } catch {
            throw RecordingError(
                path: directory,
                message: "cannot read the Janus recording directory; give the directory "
                    + "Janus records into (rec_dir)")
        }
        let named = files.compactMap { file in parse(file).map { (file: file, name: $0) } }
        let rooms = Set(named.map(\.name.room)).sorted()
        guard !rooms.isEmpty else {
            throw RecordingError(
                path: directory,
                message: "no Janus audio recordings (<plugin>-<room>-user-<id>-<time>-audio.mjr) "
                    + "here; give the directory Janus records into, or the files with --file NAME=FILE.mjr")
        }
        guard rooms.count == 1 else {
            throw RecordingError(
                path: directory,
                message: "recordings of \(rooms.count) rooms (\(rooms.joined(separator: ", "))); "
                    + "give one room's recordings with --file NAME=FILE.mjr, or move each room into its own directory")
        }
        let ordered = named.sorted {
            ($0.name.user, $0.name.stream, $0.name.time) < ($1.name.user, $1.name.stream, $1.name.time)
        }
        var seen: [String: Int] = [:]
        return ordered.map { entry in
            var name = "user-\(entry.name.user)"
            if entry.name.stream > 0 { name += "-\(entry.name.stream)" }
            let count = (seen[name] ?? 0) + 1
            seen[name] = count
            if count > 1 { name += "-\(count)" }
            let path = directory.hasSuffix("/") ? directory + entry.file : directory + "/" + entry.file
            return Recording(name: name, path: path)
        }
    }
}
