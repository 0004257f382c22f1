import Foundation
import RoomTapControl
import Testing

@Suite struct JSONValueTests {
    @Test func writesCompactSortedSingleLineText() throws {
        let value = try JSONValue(parsing: #" { "b" : 1 , "a" : [ true , null , "x\n\"y\\" ] , "c": {"z": -2.5} } "#)
        #expect(value.jsonText == #"{"a":[true,null,"x\n\"y\\"],"b":1,"c":{"z":-2.5}}"#)
        #expect(value["a"]?.arrayValue?.count == 3)
        #expect(value["c"]?["z"]?.doubleValue == -2.5)
        #expect(value["b"]?.intValue == 1)
        #expect(value["missing"] == nil)
    }

    @Test func writesNumbersAsJSONCanReadThem() throws {
        #expect(JSONValue.number(3).jsonText == "3")
        #expect(JSONValue.number(-0.0).jsonText == "0")
        #expect(JSONValue.number(0.5).jsonText == "0.5")
        #expect(JSONValue.number(1e300).jsonText == "1e+300")
        #expect(JSONValue.number(9_007_199_254_740_991).jsonText == "9007199254740991")
        #expect(JSONValue.number(.nan).jsonText == "null")
        #expect(JSONValue.number(.infinity).jsonText == "null")
        for number in [0.1, 1e-7, 123_456.789, -1e21, .leastNonzeroMagnitude] {
            #expect(try JSONValue(parsing: JSONValue.number(number).jsonText) == .number(number))
        }
    }

    @Test func floatsAreWrittenAsTheirShortestText() {
        #expect(JSONValue(Float(0.1)).jsonText == "0.1")
        #expect(JSONValue(Float(0.501_187_2)).jsonText == "0.5011872")
        #expect(JSONValue(Float(10)).jsonText == "10")
        #expect(JSONValue(Float.nan).jsonText == "null")
    }

    @Test func escapesControlCharactersAndKeepsUnicode() throws {
        let text = JSONValue.string("a\u{1}\tb\u{7F}é😀").jsonText
        #expect(text == "\"a\\u0001\\tb\u{7F}é😀\"")
        #expect(try JSONValue(parsing: text) == .string("a\u{1}\tb\u{7F}é😀"))
    }

    @Test func decodesEscapes() throws {
        #expect(try JSONValue(parsing: #""\u00e9\ud83d\ude00\/\b\f\r""#) == .string("é😀/\u{8}\u{C}\r"))
    }

    @Test(arguments: [
        "", " ", "{", "}", "[1,]", "{\"a\"}", "{\"a\":1,}", "tru", "nul", "01", "1.", "-", ".5", "1e", "+1",
        "{} x", "[1] [2]", "\"abc", "\"a\u{1}b\"", #""\x""#, #""\ud83d""#, #""\ude00""#, #""\u12""#, "NaN",
        "Infinity", "1e999", "{1:2}", "'a'",
    ])
    func rejectsWhatIsNotJSON(_ text: String) {
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: text) }
    }

    @Test func rejectsInvalidUTF8() {
        let bytes: [UInt8] = [0x22, 0x61, 0xFF, 0x22]
        #expect(throws: JSONParseError(message: "invalid UTF-8", offset: 0)) { try parse(bytes) }
        let overlong: [UInt8] = [0x22, 0xC0, 0xAF, 0x22]
        #expect(throws: JSONParseError.self) { try parse(overlong) }
        let surrogate: [UInt8] = [0x22, 0xED, 0xA0, 0x80, 0x22]
        #expect(throws: JSONParseError.self) { try parse(surrogate) }
    }

    private func parse(_ bytes: [UInt8]) throws(JSONParseError) -> JSONValue {
        let result = bytes.withUnsafeBytes { raw in Result { () throws(JSONParseError) in try JSONValue(parsing: raw) }
        }
        return try result.get()
    }

    @Test func limitsNesting() throws {
        let deepest =
            String(repeating: "[", count: JSONValue.maxDepth) + String(repeating: "]", count: JSONValue.maxDepth)
        _ = try JSONValue(parsing: deepest)
        let tooDeep = "[" + deepest + "]"
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: tooDeep) }
        // Far deeper than the stack could take recursively: still a clean error.
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: String(repeating: "{\"a\":", count: 100_000)) }
    }

    @Test func lastDuplicateKeyWins() throws {
        #expect(try JSONValue(parsing: #"{"a":1,"a":2}"#) == ["a": 2])
    }

    @Test func codableRoundTrip() throws {
        let value: JSONValue = ["name": "alice", "level": -12.5, "talking": false, "tags": ["x", nil], "n": 3]
        let data = try JSONEncoder().encode(value)
        #expect(try JSONDecoder().decode(JSONValue.self, from: data) == value)
        #expect(try JSONValue(parsing: String(decoding: data, as: UTF8.self)) == value)
    }
}
