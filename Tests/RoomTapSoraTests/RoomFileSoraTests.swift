import Foundation
import RoomTapRTP
import Testing

/// The room file's `sora` object (track names by Sora connection id): read, with or without
/// participants; bad ids, names and clashes refused with the line and path.
@Suite("Room file: sora connection names")
struct RoomFileSoraTests {
    static func parse(_ text: String) throws(RoomDescriptionError) -> RoomDescription {
        try RoomDescription.parseJSON(Data(text.utf8), source: "room.json")
    }

    @Test func aRoomOfSoraConnectionsOnly() throws {
        let room = try Self.parse(#"{"sora": {"2Y8H3V1ACN6R7FX1JG7ZT8Z1SC": "alice", "CONN2": "bob"}}"#)
        #expect(room.participants.isEmpty)
        #expect(room.soraNames == ["2Y8H3V1ACN6R7FX1JG7ZT8Z1SC": "alice", "CONN2": "bob"])
    }

    @Test func besideParticipants() throws {
        let room = try Self.parse(
            #"{"participants": [{"name": "pbx", "port": 25000}], "sora": {"CONN1": "carol"}}"#)
        #expect(room.participants.count == 1 && room.soraNames == ["CONN1": "carol"])
    }

    @Test func badEntriesAreOneLineWithTheirPlace() {
        let cases: [(String, String)] = [
            (#"{"sora": ["alice"]}"#, "room.json:1: sora: an array is not an object"),
            (#"{"sora": {"CONN 1": "alice"}}"#, "is not a Sora connection id"),
            (#"{"sora": {"CONN1": "a/b"}}"#, "sora.CONN1: \"a/b\" is not a track name"),
            (#"{"sora": {"CONN1": "alice", "CONN2": "alice"}}"#, "is already the name of connection CONN1"),
            (
                "{\"sora\": {\"CONN1\": \"alice\",\n \"CONN1\": \"bob\"}}",
                "room.json:2: sora.CONN1: the connection is named twice"
            ),
            (
                #"{"participants": [{"name": "alice", "port": 25000}], "sora": {"CONN1": "alice"}}"#,
                "is also the name of participants[0]"
            ),
            (#"{"listen": "127.0.0.1"}"#, "missing \"participants\""),
        ]
        for (text, expected) in cases {
            do {
                _ = try Self.parse(text)
                Issue.record("\(text) was accepted")
            } catch {
                #expect(error.description.contains(expected), "\(text): \(error.description)")
            }
        }
    }
}
