/// Cuts streamed reply text into sentences for speech, so the first sentence is spoken while the
/// chat model is still writing the rest: a sentence ends at `.`, `!`, `?`, `…` (and their
/// full-width forms) followed by white space, or at a line break. A piece shorter than
/// ``minimumCharacters`` waits for the next (no "Hi." spoken alone while "Hi. I'm here." streams).
///
/// Thread: a value.
package struct SentenceSplitter {
    public var minimumCharacters: Int
    private var pending = ""

    public init(minimumCharacters: Int = 12) {
        self.minimumCharacters = minimumCharacters
    }

    /// Adds streamed `text`; returns the sentences it completed, trimmed, in order.
    public mutating func append(_ text: String) -> [String] {
        pending += text
        var sentences: [String] = []
        var start = pending.startIndex
        var index = pending.startIndex
        var previous: Character?
        while index < pending.endIndex {
            let c = pending[index]
            let ends =
                c == "\n" || ((c.isWhitespace) && previous.map { ".!?…".contains($0) } == true)
                || "。！？".contains(c)
            let next = pending.index(after: index)
            if ends {
                let sentence = pending[start..<next].trimmingWhitespace
                if sentence.count >= minimumCharacters {
                    sentences.append(sentence)
                    start = next
                }
            }
            previous = c
            index = next
        }
        pending = String(pending[start...])
        return sentences
    }

    /// The end of the reply: what is left, or nil.
    public mutating func finish() -> String? {
        defer { pending = "" }
        let rest = pending.trimmingWhitespace
        return rest.isEmpty ? nil : rest
    }
}

extension StringProtocol {
    var trimmingWhitespace: String {
        var s = Substring(self)
        while s.first?.isWhitespace == true { s.removeFirst() }
        while s.last?.isWhitespace == true { s.removeLast() }
        return String(s)
    }
}
