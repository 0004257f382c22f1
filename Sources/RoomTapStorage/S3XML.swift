/// The few elements roomtap reads from S3's XML answers (errors, ListObjectsV2, multipart), by
/// plain scanning: S3 answers are flat, and a value is the text between `<Tag>` and `</Tag>` with
/// the five XML entities and numeric character references decoded. Outside input: never traps,
/// whatever the bytes (fuzzed by the tests' hostile inputs).
enum S3XML {
    /// The text of every `<tag>...</tag>` in `text`, in order.
    static func values(of tag: String, in text: String) -> [String] {
        let open = "<\(tag)>"
        let close = "</\(tag)>"
        var out: [String] = []
        var rest = text[...]
        while let start = rest.range(of: open) {
            let after = rest[start.upperBound...]
            guard let end = after.range(of: close) else { break }
            out.append(decodeEntities(String(after[..<end.lowerBound])))
            rest = after[end.upperBound...]
        }
        return out
    }

    static func firstValue(of tag: String, in text: String) -> String? {
        let open = "<\(tag)>"
        guard let start = text.range(of: open) else { return nil }
        let after = text[start.upperBound...]
        guard let end = after.range(of: "</\(tag)>") else { return nil }
        return decodeEntities(String(after[..<end.lowerBound]))
    }

    /// The inner text of every `<tag>...</tag>` block (undecoded, for reading its children).
    static func blocks(_ tag: String, in text: String) -> [String] {
        let open = "<\(tag)>"
        let close = "</\(tag)>"
        var out: [String] = []
        var rest = text[...]
        while let start = rest.range(of: open) {
            let after = rest[start.upperBound...]
            guard let end = after.range(of: close) else { break }
            out.append(String(after[..<end.lowerBound]))
            rest = after[end.upperBound...]
        }
        return out
    }

    static func decodeEntities(_ text: String) -> String {
        guard text.contains("&") else { return text }
        var out = ""
        var rest = text[...]
        while let amp = rest.firstIndex(of: "&") {
            out += rest[..<amp]
            let tail = rest[amp...]
            guard let semi = tail.firstIndex(of: ";"), tail.distance(from: amp, to: semi) <= 10 else {
                out += "&"
                rest = rest[rest.index(after: amp)...]
                continue
            }
            let name = tail[tail.index(after: amp)..<semi]
            var replacement: String?
            switch name {
            case "amp": replacement = "&"
            case "lt": replacement = "<"
            case "gt": replacement = ">"
            case "quot": replacement = "\""
            case "apos": replacement = "'"
            default:
                if name.hasPrefix("#x") || name.hasPrefix("#X") {
                    replacement = UInt32(name.dropFirst(2), radix: 16).flatMap(Unicode.Scalar.init).map { String($0) }
                } else if name.hasPrefix("#") {
                    replacement = UInt32(name.dropFirst(1)).flatMap(Unicode.Scalar.init).map { String($0) }
                }
            }
            if let replacement {
                out += replacement
                rest = rest[rest.index(after: semi)...]
            } else {
                out += "&"
                rest = rest[rest.index(after: amp)...]
            }
        }
        return out + rest
    }

    /// `text` with `& < > " '` escaped, for a body roomtap writes.
    static func escape(_ text: String) -> String {
        var out = ""
        for c in text {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            default: out.append(c)
            }
        }
        return out
    }
}
