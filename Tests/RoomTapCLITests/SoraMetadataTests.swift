import Foundation
import RoomTapAll
import RoomTapFuzzing
import Testing

/// The parsers of a Sora recording's JSONs and names against hostile input: one line saying what
/// is wrong, never a crash, never a path outside the folder; and the fuzz target's invariants over
/// random and mutated JSON.
@Suite("Sora recording JSONs: parsers and hostile input")
struct SoraMetadataTests {
    static func archive(_ text: String) -> Result<SoraArchiveMetadata, SoraMetadataError> {
        Array(text.utf8).withUnsafeBytes { raw in
            Result { () throws(SoraMetadataError) in try SoraArchiveMetadata.parse(raw) }
        }
    }

    @Test func anArchiveJSONAsSoraWritesIt() throws {
        let archive = try Self.archive(
            #"{"connection_id":"S2X9N1Q3","client_id":"alice","format":"mp4","audio":true,"video":{"codec_type":"VP9"},"#
                + #""start_time_offset":3,"stop_time_offset":60,"start_timestamp":"2026-12-01T10:00:03.456789Z","#
                + #""filename":"archive-S2X9N1Q3.mp4","metadata":{"display_name":"Alice"},"split_index":"0002"}"#
        ).get()
        #expect(archive.connectionID == "S2X9N1Q3" && archive.clientID == "alice" && archive.format == .mp4)
        #expect(archive.startTimeOffset == 3 && archive.stopTimeOffset == 60 && archive.splitIndex == 2)
        #expect(archive.startTimestamp?.microseconds == 1_796_119_203_456_789)
        #expect(archive.startTimestamp?.fractionDigits == 6)
        #expect(archive.filename == "archive-S2X9N1Q3.mp4")
        #expect(archive.metadataName("display_name") == "Alice" && archive.metadataName("other") == nil)
        // Before Sora 2024.2: no format (WebM); "audio" as an object means audio (hisui's rule).
        let old = try Self.archive(#"{"connection_id":"A","audio":{"codec_type":"OPUS"},"start_time_offset":0}"#).get()
        #expect(old.format == .webm && old.hasAudio)
        #expect(try Self.archive(#"{"connection_id":"A","audio":false}"#).get().hasAudio == false)
    }

    @Test(arguments: [
        ("", "not JSON"), ("[1]", "not a JSON object"), (#"{"client_id":"a"}"#, "no connection_id"),
        (#"{"connection_id":""}"#, "no connection_id"), (#"{"connection_id":"../x"}"#, "no connection_id"),
        (#"{"connection_id":42}"#, "no connection_id"),
        (#"{"connection_id":"A","format":"ogg"}"#, "neither webm nor mp4"),
        (#"{"connection_id":"A","start_time_offset":-1}"#, "not a number of seconds"),
        (#"{"connection_id":"A","start_time_offset":1e12}"#, "not a number of seconds"),
        (#"{"connection_id":"A","start_time_offset":"3"}"#, "not a number of seconds"),
        (#"{"connection_id":"A","stop_time_offset":1e999}"#, "not JSON"),
        (String(repeating: "[", count: 100_000), "not JSON"),
    ])
    func aBadArchiveJSONIsOneLine(text: String, expected: String) {
        guard case .failure(let error) = Self.archive(text) else {
            Issue.record("\(text.prefix(60)) parsed")
            return
        }
        #expect(error.message.contains(expected) && !error.message.contains("\n"), "\(error.message)")
    }

    @Test func namesFromTheJSONNeverLeaveTheFolder() throws {
        let archive = try Self.archive(
            #"{"connection_id":"A","filename":"../../etc/passwd","metadata":{"n":{"deep":1},"e":""}}"#
        ).get()
        #expect(archive.filename == nil)
        #expect(archive.metadataName("n") == nil && archive.metadataName("e") == nil)
        let report = try Array(
            #"{"archives":[{"connection_id":"A","metadata_filename":"/etc/x.json"},7,{"connection_id":"B/C"}],"split_only":1}"#
                .utf8
        ).withUnsafeBytes { raw in try SoraRecordingReport.parse(raw) }
        #expect(report.archives.count == 1 && report.archives[0].metadataFilename == nil)
        #expect(report.splitOnly == false)
        #expect(SoraFileName("split-archive-A_0003.webm")?.kind == .split(index: 3))
        #expect(SoraFileName("split-archive-end-A.json")?.kind == .splitEnd)
        #expect(SoraFileName("archive-A.mp4")?.connectionID == "A")
        for name in [
            "archive-.json", "archive-A.ogg", "split-archive-A_01.json", "split-archive-A_0000.json",
            "report-R.webm", "archive-A B.json", "notes.json",
        ] {
            #expect(SoraFileName(name) == nil, "\(name)")
        }
    }

    @Test func rfc3339TimesAreReadToTheMicrosecond() {
        #expect(RFC3339Timestamp("2026-12-01T10:00:00Z")?.microseconds == 1_796_119_200_000_000)
        #expect(RFC3339Timestamp("2026-12-01T19:00:00.5+09:00")?.microseconds == 1_796_119_200_500_000)
        #expect(RFC3339Timestamp("2026-12-01t10:00:00.123456789z")?.microseconds == 1_796_119_200_123_456)
        #expect(RFC3339Timestamp("2024-02-29T00:00:00.000Z")?.precisionSeconds == 0.001)
        #expect(RFC3339Timestamp("1970-01-01T00:00:00Z")?.microseconds == 0)
        for bad in [
            "2025-02-29T00:00:00Z", "2026-13-01T00:00:00Z", "2026-12-01T24:00:00Z", "2026-12-01T10:00:00",
            "2026-12-01T10:00:00.Z", "2026-12-01 10:00:00+9:00", "2026-12-01T10:00:00Zjunk", "",
        ] {
            #expect(RFC3339Timestamp(bad) == nil, "\(bad)")
        }
    }

    /// The fuzz target over random bytes and over mutations of JSON in Sora's shape: no crash,
    /// every invariant holds.
    @Test func theFuzzTargetsInvariantsHoldOnHostileInput() {
        var generator = SystemRandomNumberGenerator()
        let seeds = [
            #"{"connection_id":"A","format":"webm","start_time_offset":1,"start_timestamp":"2025-01-01T00:00:01.25Z","split_last_index":"0003"}"#,
            #"{"recording_id":"R1","archives":[{"connection_id":"A","split_last_index":"9999"}],"start_timestamp":"2025-01-01T00:00:00Z"}"#,
            #"{"connection_id":"A","start_time_offset":172800,"start_timestamp":"9999-12-31T23:59:59.999999Z"}"#,
        ]
        for iteration in 0..<600 {
            var bytes: [UInt8]
            if iteration % 3 == 0 {
                bytes = (0..<Int.random(in: 0..<200, using: &generator)).map { _ in
                    UInt8.random(in: 0...255, using: &generator)
                }
            } else {
                bytes = Array(seeds[iteration % seeds.count].utf8)
                for _ in 0..<Int.random(in: 0...4, using: &generator) where !bytes.isEmpty {
                    bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(
                        in: 0x20...0x7E, using: &generator)
                }
            }
            bytes.withUnsafeBytes { SoraFuzz.exercise($0, renderLimit: 48_000) }
        }
        for seed in seeds { Array(seed.utf8).withUnsafeBytes { SoraFuzz.exercise($0, renderLimit: 48_000) } }
    }
}
