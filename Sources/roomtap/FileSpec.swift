/// One `--file NAME=PATH[@SECONDS]` argument (PATH `-`: standard input).
struct FileSpec: Equatable {
    let name: String
    let path: String
    /// Where the file's first sample plays on the room timeline, in samples at 48 kHz.
    let offsetSamples: Int64

    /// `NAME=-`: an Ogg Opus stream on standard input, read as it arrives.
    var isStandardInput: Bool { path == "-" }

    /// Parses `NAME=PATH` or `NAME=PATH@SECONDS`. The offset is the text after the last '@' when
    /// it is a number (so paths containing '@' still work: `a=x@y.opus` has no offset).
    static func parse(_ text: String) throws(UsageError) -> FileSpec {
        guard let eq = text.firstIndex(of: "="), eq != text.startIndex else {
            throw UsageError(
                description: "--file '\(text)' must be NAME=PATH or NAME=PATH@SECONDS (e.g. alice=alice.opus@2.5)",
                command: "record")
        }
        let name = String(text[..<eq])
        var path = String(text[text.index(after: eq)...])
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
        return FileSpec(name: name, path: path, offsetSamples: offset)
    }
}
