/// One `--file NAME=PATH[@SECONDS]` argument (PATH `-`: standard input).
struct FileSpec: Equatable {
    let name: String
    let path: String
    /// Where the file's first sample plays on the room timeline, in samples at 48 kHz.
    let offsetSamples: Int64

    /// `NAME=-`: an Ogg Opus stream on standard input, read as it arrives.
    var isStandardInput: Bool { path == "-" }

    /// Parses `NAME=PATH` or `NAME=PATH@SECONDS`, or `PATH[@SECONDS]` alone: the track is then
    /// named after the file (its name without directory and extension: `talks/bob.opus` is `bob`).
    /// The offset is the text after the last '@' when it is a number (so paths containing '@' still
    /// work: `a=x@y.opus` has no offset).
    static func parse(_ text: String) throws(UsageError) -> FileSpec {
        let usage =
            "--file '\(text)' must be NAME=PATH, NAME=PATH@SECONDS or PATH (named after the file; e.g. "
            + "alice=alice.opus@2.5, bob.opus)"
        let eq = text.firstIndex(of: "=")
        guard eq != text.startIndex, !text.isEmpty else { throw UsageError(description: usage, command: "record") }
        let given = eq.map { String(text[..<$0]) }
        var path = eq.map { String(text[text.index(after: $0)...]) } ?? text
        var offset: Int64 = 0
        if let at = path.lastIndex(of: "@") {
            let tail = String(path[path.index(after: at)...])
            if let seconds = Double(tail) {
                guard seconds.isFinite, seconds >= 0, seconds < 86_400 * 7 else {
                    throw UsageError(
                        description: "--file '\(text)': offset must be between 0 and 604800 seconds",
                        command: "record")
                }
                offset = Int64((seconds * 48_000).rounded())
                path = String(path[..<at])
            }
        }
        guard !path.isEmpty else {
            throw UsageError(description: "--file '\(text)' has no path after '='", command: "record")
        }
        if given == nil && path == "-" {
            throw UsageError(
                description: "--file - reads standard input, which has no file name; name the track: NAME=-",
                command: "record")
        }
        let name = given ?? Self.stem(of: path)
        guard !name.isEmpty else { throw UsageError(description: usage, command: "record") }
        return FileSpec(name: name, path: path, offsetSamples: offset)
    }

    /// The track name a file gives: its last component without its extension (`a/b.x.opus`: `b.x`;
    /// a name that is only an extension, `.opus`, keeps it).
    static func stem(of path: String) -> String {
        let last = path.split(separator: "/").last.map(String.init) ?? path
        guard let dot = last.lastIndex(of: "."), dot != last.startIndex else { return last }
        return String(last[..<dot])
    }
}
