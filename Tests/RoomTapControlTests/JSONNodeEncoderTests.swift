import Foundation
import RoomTapJSON
import Testing

/// The one writer as room.json uses it: a `Codable` report through ``JSONNodeEncoder`` and the
/// pretty layout, read back by the one reader and ``JSONNodeDecoder`` unchanged, and the bytes
/// the same as Foundation's `JSONEncoder` wrote before (what existing room.json files and the
/// docs hold).
@Suite("The one JSON writer: JSONNodeEncoder and the pretty layout")
struct JSONNodeEncoderTests {
    /// room.json's shapes: optionals (present, nil, absent), nested arrays and objects, every
    /// number type at its edges, and strings a user can put in a track name.
    struct Report: Codable, Equatable {
        struct Track: Codable, Equatable {
            var id: UInt32
            var name: String
            var samples: Int64
            var volume: Float?
            var loudness: Double?
            var setUpMs: [Double]
            var rtp: RTP?
        }

        struct RTP: Codable, Equatable {
            var port: UInt16
            var ssrc: UInt32?
            var jitterMs: Double
            var late: Int8
        }

        var roomtap: String
        var state: String?
        var durationSamples: Int64
        var durationSeconds: Double
        var stoppedEarly: Bool
        var tracks: [Track]
        var spans: [[Double]]
        var controls: [[String: String]]?
        var errors: [String]?
        var counts: [String: UInt64]
    }

    static let strings = [
        "", "alice", "https://example.com/a/b", "tab\there, \"quoted\", back\\slash",
        String((0..<0x20).map { Character(Unicode.Scalar(UInt8($0))) }) + "\u{7F}", "\u{2028}\u{2029}",
        "é e\u{301} 日本語 😀 𝄞 🇯🇵", "</script><!--",
    ]

    static let report = Report(
        roomtap: "0.9.0", state: nil, durationSamples: 9_007_199_254_740_992, durationSeconds: 187_649_984_473.77066,
        stoppedEarly: true,
        tracks: strings.enumerated().map { index, name in
            Report.Track(
                id: UInt32.max - UInt32(index), name: name,
                samples: index.isMultiple(of: 2) ? -9_007_199_254_740_992 : 0,
                volume: [Float(0.1), 0.5, 1e-05, 0.501_187_2, 3.4e38, -0.7, 16_777_216, nil][index],
                loudness: index == 3
                    ? nil : [-23.5, 1e-7, 1e21, 0.1 + 0.2, 5e-324, 1.5e300, 123_456.789, 2.0 / 3][index],
                setUpMs: Array([0, 12.3, 1e15, 1e16, -1.25, 9.5e15, 100, 0.001][..<index]),
                rtp: index == 1
                    ? nil : Report.RTP(port: UInt16.max, ssrc: index == 2 ? nil : 0, jitterMs: 0.05, late: Int8.min))
        },
        spans: [[], [0.1, 2.5], [3], []], controls: [[:], ["change": "mute", "track": "a/b"]], errors: [],
        counts: ["a10": 1, "a9": 2, "B": 3, "_x": 4, "aB": 5, "aa": 6, "é": 7, "e": 8, "10": 9, "2": 10])

    @Test func aReportSurvivesTheWriterTheReaderAndTheDecoder() throws {
        let value = try JSONNodeEncoder().encode(Self.report)
        for text in [value.prettyJSONText, value.jsonText] {
            let node = try JSONNode.read(Array(text.utf8))
            #expect(try JSONNodeDecoder().decode(Report.self, from: node) == Self.report)
            #expect(try JSONValue(parsing: text) == value)
        }
        #expect(value["state"] == nil, "a nil optional leaves its key out")
        #expect(value["tracks"]?.arrayValue?[3]["loudness"] == nil)
        #expect(value["tracks"]?.arrayValue?[0]["volume"] == .number(0.1), "a Float is its shortest text")
        #expect(!value.prettyJSONText.contains(#"\/"#), "slashes are not escaped")
    }

    /// What room.json held when `JSONEncoder` wrote it (`.prettyPrinted, .sortedKeys,
    /// .withoutEscapingSlashes`) is what the one writer writes, byte for byte; the compact layout
    /// is `JSONEncoder`'s `.sortedKeys, .withoutEscapingSlashes`.
    @Test func theBytesAreJSONEncoders() throws {
        let value = try JSONNodeEncoder().encode(Self.report)
        let pretty = JSONEncoder()
        pretty.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        #expect(value.prettyJSONText == String(decoding: try pretty.encode(Self.report), as: UTF8.self))
        let compact = JSONEncoder()
        compact.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        #expect(value.jsonText == String(decoding: try compact.encode(Self.report), as: UTF8.self))
    }

    @Test func thePrettyLayoutIsJSONEncoders() {
        let value: JSONValue = ["a": [], "b": [:], "c": [[], [1, "x"], ["k": nil]], "d": true]
        #expect(
            value.prettyJSONText == """
                {
                  "a" : [

                  ],
                  "b" : {

                  },
                  "c" : [
                    [

                    ],
                    [
                      1,
                      "x"
                    ],
                    {
                      "k" : null
                    }
                  ],
                  "d" : true
                }
                """)
        #expect(JSONValue.number(2.5).prettyJSONText == "2.5")
    }

    @Test func numbersAndEscapesAreJSONEncoders() {
        #expect(JSONValue.number(9_007_199_254_740_992).jsonText == "9007199254740992")
        #expect(JSONValue.number(9.5e15).jsonText == "9.5e+15")
        #expect(JSONValue.number(1e16).jsonText == "1e+16")
        #expect(JSONValue.number(-0.0).jsonText == "0", "the one difference: no negative zero")
        #expect(JSONValue.string("\u{8}\u{C}\u{1F}/").jsonText == #""\b\f\u001f/""#)
        #expect(JSONValue.object(["b": 1, "B": 2, "a10": 3, "a9": 4]).jsonText == #"{"B":2,"a10":3,"a9":4,"b":1}"#)
    }

    @Test func anOrderedLineKeepsItsOrder() {
        var bytes: [UInt8] = []
        JSONValue.writeOrderedObject([("start", 1.25), ("end", 2), ("text", "a\n\"b\"")], to: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == #"{"start": 1.25, "end": 2, "text": "a\n\"b\""}"#)
    }

    /// What a JSON number cannot hold exactly is refused with the field's path, never rounded or
    /// written as something else.
    @Test func numbersJSONCannotHoldAreRefusedWithTheirPath() throws {
        struct Big: Encodable { var tracks: [[String: Int64]] }
        let failure = #expect(throws: JSONNodeEncoder.Failure.self) {
            try JSONNodeEncoder().encode(Big(tracks: [["samples": 1], ["samples": 9_007_199_254_740_993]]))
        }
        #expect(failure?.path == "tracks[1].samples")
        #expect(throws: JSONNodeEncoder.Failure.self) {
            try JSONNodeEncoder().encode(Big(tracks: [["samples": .min]]))
        }
        struct Level: Encodable { var db: Double }
        #expect(throws: JSONNodeEncoder.Failure.self) { try JSONNodeEncoder().encode(Level(db: -.infinity)) }
        #expect(throws: JSONNodeEncoder.Failure.self) { try JSONNodeEncoder().encode([Float.nan]) }
        #expect(throws: JSONNodeEncoder.Failure.self) { try JSONNodeEncoder().encode(UInt64.max) }
        #expect(try JSONNodeEncoder().encode(-9_007_199_254_740_992 as Int64) == .number(-9_007_199_254_740_992))
    }

    /// Custom `encode(to:)` shapes: nested and super containers, a value encoded as itself
    /// (``JSONValue``), an enum by raw value, a dictionary with Int keys.
    @Test func customEncodingsAreWrittenAsJSONEncoderWritesThem() throws {
        struct Custom: Encodable {
            enum Keys: String, CodingKey { case a, b, c }
            func encode(to encoder: any Encoder) throws {
                var keyed = encoder.container(keyedBy: Keys.self)
                var nested = keyed.nestedUnkeyedContainer(forKey: .a)
                try nested.encode(1)
                var inner = nested.nestedContainer(keyedBy: Keys.self)
                try inner.encodeNil(forKey: .b)
                try keyed.encode(JSONValue.object(["x": [true]]), forKey: .b)
                try keyed.encode([3: "three"], forKey: .c)
            }
        }
        let value = try JSONNodeEncoder().encode(Custom())
        #expect(value == ["a": [1, ["b": nil]], "b": ["x": [true]], "c": ["3": "three"]])
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        #expect(value.jsonText == String(decoding: try encoder.encode(Custom()), as: UTF8.self))
    }
}
