import Foundation
import RoomTapFuzzing
import RoomTapJSON
import Testing

/// The one JSON reader (`JSONNode`) as its three kinds of users need it: the room file (lines in
/// messages, members in order, repeated keys kept, numbers as written, a byte order mark
/// skipped), control requests and Realtime events (`JSONValue`: last key wins, numbers as
/// Doubles, no byte order mark), and hostile input (depth, invalid UTF-8, surrogates).
@Suite("The one JSON reader")
struct JSONReaderTests {
    private func read(_ text: String, maximumDepth: Int = JSONNode.maximumDepth) throws(JSONNode.SyntaxError)
        -> JSONNode
    {
        try JSONNode.read(Array(text.utf8), maximumDepth: maximumDepth)
    }

    @Test func nodesSayWhereTheyStartAndKeepWhatWasWritten() throws {
        let node = try read("{\n  \"a\": 1e3,\n  \"b\": [true,\n    \"x\"],\n  \"a\": 25000.0\n}")
        guard case .object(let members) = node.kind else {
            Issue.record("not an object")
            return
        }
        #expect(members.map(\.key) == ["a", "b", "a"], "in order, the repeated key kept")
        #expect(node.line == 1 && node.offset == 0)
        guard case .number(let first) = members[0].value.kind, case .number(let last) = members[2].value.kind else {
            Issue.record("numbers")
            return
        }
        #expect(first == "1e3" && last == "25000.0", "numbers as written")
        #expect(members[0].value.line == 2 && members[2].value.line == 5)
        guard case .array(let elements) = members[1].value.kind else {
            Issue.record("array")
            return
        }
        #expect(elements.map(\.line) == [3, 4])
        #expect(members[1].value.offset == 21, "the byte the array starts at")
        #expect(try JSONValue(parsing: "{\"a\": 1, \"a\": 2}")["a"] == .number(2), "JSONValue: the last key wins")
    }

    @Test func errorsSayTheLineAndTheByte() {
        do {
            _ = try read("{\n  \"a\": 1,\n  \"b\": tru\n}")
            Issue.record("read")
        } catch {
            #expect(error.line == 3)
            #expect(error.offset == 19)
            #expect(error.message == "unexpected 't'; expected a JSON value")
        }
        #expect(throws: JSONParseError(message: "unexpected 't'; expected a JSON value", offset: 19)) {
            try JSONValue(parsing: "{\n  \"a\": 1,\n  \"b\": tru\n}")
        }
    }

    @Test func aByteOrderMarkIsForFilesOnly() throws {
        let text: [UInt8] = [0xEF, 0xBB, 0xBF] + Array("{\"a\": 1}".utf8)
        #expect(throws: Never.self) { try JSONNode.read(text) }
        let value = text.withUnsafeBytes { raw in try? JSONValue(parsing: raw) }
        #expect(value == nil, "a control request or event with a byte order mark is not JSON")
    }

    @Test func eachUserChoosesItsDepth() throws {
        let deep = String(repeating: "[", count: 40) + String(repeating: "]", count: 40)
        #expect(throws: JSONNode.SyntaxError.self) { try read(deep) }  // a room file: 32
        #expect(throws: Never.self) { try JSONValue(parsing: deep) }  // control, events: 64
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: String(repeating: "[", count: 200_000)) }
    }

    @Test(arguments: [
        [0xC3, 0x28] as [UInt8], [0x22, 0xED, 0xA0, 0x80, 0x22], [0x22, 0xF8, 0x88, 0x80, 0x80, 0x80, 0x22],
        Array(#""\ud800 ""#.utf8), Array(#""\udc00""#.utf8), Array(#""\ud800\u0041""#.utf8), Array("1e999".utf8),
    ])
    func hostileTextIsRefusedWithAPlace(_ bytes: [UInt8]) {
        let value = bytes.withUnsafeBytes { raw in try? JSONValue(parsing: raw) }
        #expect(value == nil)
        bytes.withUnsafeBytes { JSONFuzz.exercise($0) }  // the fuzz invariants hold
    }

    @Test func aLargeStringIsReadWhole() throws {
        let payload = String(repeating: "QUJD", count: 100_000)  // a 400 kB base64 audio delta
        let value = try JSONValue(parsing: "{\"delta\":\"\(payload)\",\"t\":\"\\u00e9\\ud83d\\ude00\"}")
        #expect(value["delta"]?.stringValue == payload)
        #expect(value["t"]?.stringValue == "é😀")
    }
}
