/// One line of an SDP text, `<type>=<value>` (RFC 8866 §5, https://www.rfc-editor.org/rfc/rfc8866#section-5).
///
/// ```
/// m=audio 25000 RTP/AVP 97          type "m", value "audio 25000 RTP/AVP 97"
/// a=rtpmap:97 opus/48000/2          type "a", attribute "rtpmap", attributeValue "97 opus/48000/2"
/// a=recvonly                        type "a", attribute "recvonly", attributeValue nil  (§6)
/// ```
///
/// Thread: a value type, use anywhere.
struct SDPLine {
    /// The 1-based line number in the text.
    var number: Int
    /// The type letter (one ASCII character before the `=`).
    var type: Character
    /// Everything after the `=`, line ending and trailing blanks removed.
    var value: Substring

    /// For an `a=` line: the attribute name, before the first `:` (RFC 8866 §5.13).
    var attribute: Substring {
        value.firstIndex(of: ":").map { value[..<$0] } ?? value
    }

    /// For an `a=` line: the attribute value after the first `:`, nil for a property attribute.
    var attributeValue: Substring? {
        value.firstIndex(of: ":").map { value[value.index(after: $0)...] }
    }

    /// Splits `text` into lines at LF, dropping a CR before it and trailing spaces and tabs; blank lines
    /// are skipped. Calls `body` with each line as `.success`, or as `.failure(number, text)` for a
    /// non-blank line that is not `<letter>=<value>`. Stops at the first error `body` throws.
    static func forEach(
        in text: String, _ body: (_ line: Result<SDPLine, MalformedLine>) throws(RoomDescriptionError) -> Void
    ) throws(RoomDescriptionError) {
        var number = 0
        var start = text.startIndex
        let utf8 = text.utf8
        while start < text.endIndex {
            number += 1
            let end = utf8[start...].firstIndex(of: UInt8(ascii: "\n")) ?? text.endIndex
            var line = text[start..<end]
            start = end < text.endIndex ? utf8.index(after: end) : end
            while let last = line.utf8.last,
                last == UInt8(ascii: "\r") || last == UInt8(ascii: " ") || last == UInt8(ascii: "\t")
            {
                line = line[..<line.utf8.index(before: line.utf8.endIndex)]
            }
            if line.isEmpty { continue }
            let bytes = line.utf8
            let second = bytes.index(after: bytes.startIndex)
            guard second < bytes.endIndex, bytes[second] == UInt8(ascii: "="),
                let letter = bytes.first, (0x61...0x7A).contains(letter) || (0x41...0x5A).contains(letter)
            else {
                try body(.failure(MalformedLine(number: number, text: line)))
                continue
            }
            let value = line[bytes.index(after: second)...]
            try body(.success(SDPLine(number: number, type: Character(Unicode.Scalar(letter)), value: value)))
        }
    }

    /// A non-blank line that is not `<letter>=<value>`.
    struct MalformedLine: Error {
        var number: Int
        var text: Substring
    }
}

extension Substring {
    /// The value as a decimal number no larger than `maximum`: ASCII digits only (no sign, no blanks),
    /// at most 19 of them; nil otherwise.
    func sdpDecimal(maximum: UInt64) -> UInt64? {
        guard !isEmpty, utf8.count <= 19 else { return nil }
        var value: UInt64 = 0
        for byte in utf8 {
            guard (0x30...0x39).contains(byte) else { return nil }
            value = value * 10 + UInt64(byte - 0x30)
        }
        return value <= maximum ? value : nil
    }

    /// Splits at runs of spaces (and tabs, which RFC 8866 does not allow but people type).
    var sdpFields: [Substring] {
        split(whereSeparator: { $0 == " " || $0 == "\t" })
    }
}
