import RoomTapControl
import Testing

@Suite struct LineSplitterTests {
    /// Feeds `text` in chunks of `chunk` bytes; lines as strings, overflows as nil.
    private func split(_ text: String, limit: Int, chunk: Int) -> [String?] {
        var splitter = LineSplitter(maxLineBytes: limit)
        var result: [String?] = []
        let bytes = Array(text.utf8)
        var start = 0
        let collect: (LineSplitter.Piece) -> Void = { piece in
            switch piece {
            case .line(let line): result.append(String(decoding: line, as: UTF8.self))
            case .tooLong: result.append(nil)
            }
        }
        while start < bytes.count {
            let end = min(start + chunk, bytes.count)
            bytes[start..<end].withUnsafeBytes { splitter.feed($0, collect) }
            start = end
        }
        splitter.finish(collect)
        return result
    }

    @Test(arguments: [1, 2, 3, 7, 100])
    func splitsTheSameWhateverTheChunks(_ chunk: Int) {
        let text = "one\ntwo\n\nexactly-ten\nthis line is too long\nlast"
        #expect(split(text, limit: 11, chunk: chunk) == ["one", "two", "", "exactly-ten", nil, "last"])
    }

    @Test func reportsAnOverlongLineOnceBeforeItsNewlineArrives() {
        var splitter = LineSplitter(maxLineBytes: 4)
        var pieces = 0
        for _ in 0..<10 {
            Array("abcdef".utf8).withUnsafeBytes { splitter.feed($0) { _ in pieces += 1 } }
        }
        #expect(pieces == 1)
        var next: String?
        Array("gh\nok\n".utf8).withUnsafeBytes {
            splitter.feed($0) { piece in
                if case .line(let line) = piece { next = String(decoding: line, as: UTF8.self) }
            }
        }
        #expect(next == "ok")
    }

    @Test func anOverlongUnterminatedTailIsNotALine() {
        #expect(split("ok\nabcdefgh", limit: 4, chunk: 3) == ["ok", nil])
    }
}
