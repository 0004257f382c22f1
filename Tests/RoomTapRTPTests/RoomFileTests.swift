import Foundation
import RoomTapRTP
import Testing

/// The JSON room file (docs/ROOM-FILE.md): the happy path and every validation message.
@Suite("RoomFile: JSON room files")
struct RoomFileTests {
    /// The full example of docs/ROOM-FILE.md.
    static let example = """
        {
          "listen": "127.0.0.1",
          "participants": [
            { "name": "alice", "port": 25000, "ssrc": 1234, "payloadType": 111 },
            { "name": "bob", "port": 25000, "ssrc": "0x5EED0002", "channels": 2 },
            { "name": "carol", "port": 25002 },
            { "name": "agent", "port": 25004, "address": "::1", "ssrc": "4294967295", "payloadType": 96 }
          ]
        }
        """

    func parse(_ json: String) throws -> RoomDescription {
        try RoomDescription.parseJSON(Data(json.utf8), source: "room.json")
    }

    func expectError(
        _ json: String, _ description: String, _ reason: RoomDescriptionError.Reason = .invalidValue,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        guard let error = roomFileError(json) else { return }
        #expect(error.description == description, sourceLocation: sourceLocation)
        #expect(error.reason == reason, sourceLocation: sourceLocation)
    }

    /// A room file with one participant whose members are `members`.
    func one(_ members: String) -> String {
        "{\"participants\": [\n{\"name\": \"alice\", \"port\": 25000\(members.isEmpty ? "" : ", ")\(members)}\n]}"
    }

    @Test func theDocumentedExample() throws {
        let room = try parse(Self.example)
        #expect(
            room.participants == [
                ParticipantDescription(
                    name: "alice", port: 25000, address: "127.0.0.1", ssrc: 1234, payloadTypes: [111], channels: 1),
                ParticipantDescription(
                    name: "bob", port: 25000, address: "127.0.0.1", ssrc: 0x5EED_0002, payloadTypes: [], channels: 2),
                ParticipantDescription(name: "carol", port: 25002, address: "127.0.0.1", channels: 1),
                ParticipantDescription(
                    name: "agent", port: 25004, address: "::1", ssrc: UInt32.max, payloadTypes: [96], channels: 1),
            ])
        #expect(room.ports == [25000, 25002, 25004])
        expectRoomInvariants(room)
    }

    @Test func theDocumentationShowsTheTestedExample() throws {
        let doc = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/ROOM-FILE.md")
        let text = try String(contentsOf: doc, encoding: .utf8)
        #expect(text.contains(Self.example))
    }

    @Test func withoutPayloadTypeAnyDynamicTypeIsAccepted() throws {
        let participant = try #require(try parse(one("")).participants.first)
        #expect(participant.payloadType == nil)
        #expect(participant.address == nil)
        #expect(participant.acceptsPayloadType(96) && participant.acceptsPayloadType(127))
        #expect(!participant.acceptsPayloadType(95) && !participant.acceptsPayloadType(0))
        #expect(try parse(one("\"payloadType\": 0")).participants[0].acceptsPayloadType(0))
    }

    @Test func ssrcForms() throws {
        #expect(try parse(one("\"ssrc\": 0")).participants[0].ssrc == 0)
        #expect(try parse(one("\"ssrc\": 4294967295")).participants[0].ssrc == UInt32.max)
        #expect(try parse(one("\"ssrc\": \"0xdeadBEEF\"")).participants[0].ssrc == 0xDEAD_BEEF)
        #expect(try parse(one("\"ssrc\": \"0X1\"")).participants[0].ssrc == 1)
        #expect(try parse(one("\"ssrc\": \"42\"")).participants[0].ssrc == 42)
    }

    @Test func unicodeNamesEscapesAndCRLF() throws {
        let json = "{\r\n\"participants\": [{\"name\": \"Zo\\u00eb \\ud83c\\udfa4\", \"port\": 1}]\r\n}"
        #expect(try parse(json).participants[0].name == "Zoë 🎤")
    }

    // MARK: - Errors

    @Test func notJSON() {
        expectError(
            "{\"participants\": [\n  {\"name\": \"alice\" \"port\": 1}]}",
            "room.json:2: not valid JSON: unexpected '\"' in an object; expected ',' or '}'; "
                + "give a JSON room file (docs/ROOM-FILE.md)", .malformed)
        expectError(
            "",
            "room.json:1: not valid JSON: unexpected end of file; expected a JSON value; "
                + "give a JSON room file (docs/ROOM-FILE.md)", .malformed)
        expectError(
            "{\"participants\": []} x",
            "room.json:1: not valid JSON: unexpected 'x' after the JSON value; "
                + "give a JSON room file (docs/ROOM-FILE.md)", .malformed)
        expectError(
            "{\"participants\": [{\"name\": \"a\", \"port\": 0123}]}",
            "room.json:1: not valid JSON: malformed number; give a JSON room file (docs/ROOM-FILE.md)", .malformed)
        expectError(
            "{\"participants\": [{\"name\": \"a\u{1}\", \"port\": 1}]}",
            "room.json:1: not valid JSON: control character byte 0x01 in a string; escape it; "
                + "give a JSON room file (docs/ROOM-FILE.md)", .malformed)
        expectError(
            "{'participants': []}",
            "room.json:1: not valid JSON: unexpected '''; expected a key in double quotes; "
                + "give a JSON room file (docs/ROOM-FILE.md)", .malformed)
    }

    @Test func topLevelShape() {
        expectError(
            "[]",
            "room.json:1: the room file is an array, not a JSON object; "
                + "expected {\"participants\": [{\"name\": ..., \"port\": ...}, ...]}", .malformed)
        expectError("{}", "room.json:1: missing \"participants\"; list the participants: \"participants\": [...]")
        expectError(
            "{\"participants\": {}}",
            "room.json:1: participants: an object is not an array; give a list of participants")
        expectError("{\"participants\": []}", "room.json:1: participants: is empty; list at least one participant")
        expectError(
            "{\"participants\": [7]}",
            "room.json:1: participants[0]: 7 is not an object; give {\"name\": ..., \"port\": ...}")
    }

    @Test func unknownAndRepeatedKeys() {
        expectError(
            "{\"participants\": [{\"name\": \"a\", \"port\": 1}],\n \"listn\": \"::1\"}",
            "room.json:2: listn: unknown key; the keys are participants, listen, allow, sora")
        expectError(
            one("\"prot\": 1"),
            "room.json:2: participants[0].prot: unknown key; "
                + "the keys are name, port, ssrc, payloadType, address, channels, codec, srtp")
        expectError(one("\"port\": 25002"), "room.json:2: participants[0].port: repeated key; give it once", .duplicate)
    }

    @Test func missingRequiredKeys() {
        expectError(
            "{\"participants\": [{\"port\": 1}]}",
            "room.json:1: participants[0]: missing \"name\"; give the participant's track name")
        expectError(
            "{\"participants\": [{\"name\": \"a\"}]}",
            "room.json:1: participants[0]: missing \"port\"; give the UDP port the participant's RTP arrives on")
    }

    @Test(arguments: ["0", "70000", "-1", "25000.0", "2.5e4", "\"25000\"", "true", "null", "[]"])
    func badPorts(_ port: String) {
        let shown = port == "[]" ? "an array" : port
        expectError(
            "{\"participants\": [\n\n{\"name\": \"a\", \"port\": \(port)}]}",
            "room.json:3: participants[0].port: \(shown) is not a port (1-65535)")
    }

    @Test func theIssueExampleMessage() {
        expectError(
            "{\"participants\": [{\"name\": \"a\", \"port\": 1},\n {\"name\": \"b\", \"port\": 70000}]}",
            "room.json:2: participants[1].port: 70000 is not a port (1-65535)")
    }

    @Test(arguments: ["-1", "4294967296", "1.5", "\"0x\"", "\"0x123456789\"", "\"0xZZ\"", "\"-5\"", "\"\"", "false"])
    func badSSRCs(_ ssrc: String) {
        expectError(
            one("\"ssrc\": \(ssrc)"),
            "room.json:2: participants[0].ssrc: \(ssrc) is not an SSRC "
                + "(0-4294967295, or a string \"0x...\" of 1-8 hex digits)")
    }

    @Test func badPayloadTypesChannelsAndAddresses() {
        expectError(
            one("\"payloadType\": 128"),
            "room.json:2: participants[0].payloadType: 128 is not an RTP payload type (0-127)")
        expectError(
            one("\"payloadType\": \"111\""),
            "room.json:2: participants[0].payloadType: \"111\" is not an RTP payload type (0-127)")
        expectError(one("\"channels\": 3"), "room.json:2: participants[0].channels: 3 is not a channel count (1 or 2)")
        expectError(
            one("\"address\": \"1.2.3.4.5\""),
            "room.json:2: participants[0].address: \"1.2.3.4.5\" is not an IP address or host name "
                + "(e.g. \"127.0.0.1\", \"::1\")")
        expectError(
            "{\"listen\": 5, \"participants\": [{\"name\": \"a\", \"port\": 1}]}",
            "room.json:1: listen: 5 is not an IP address or host name (e.g. \"127.0.0.1\", \"::1\")")
    }

    @Test(arguments: [
        "\"\"", "\"a/b\"", "\".\"", "\"..\"", "\"tab\\there\"", "7", "\"\(String(repeating: "x", count: 65))\"",
    ])
    func badNames(_ name: String) {
        let shown = name == "\"tab\\there\"" ? "\"tab?here\"" : name
        expectError(
            "{\"participants\": [{\"name\": \(name), \"port\": 1}]}",
            "room.json:1: participants[0].name: "
                + "\(shown.count > 62 ? "\"" + String(repeating: "x", count: 60) + "...\"" : shown) "
                + "is not a track name (1-64 characters, no '/' or control characters, not . or ..)")
    }

    @Test func duplicates() {
        expectError(
            "{\"participants\": [{\"name\": \"alice\", \"port\": 1},\n{\"name\": \"alice\", \"port\": 2}]}",
            "room.json:2: participants[1].name: \"alice\" is already the name of participants[0]; "
                + "give each participant its own name", .duplicate)
        expectError(
            "{\"participants\": [{\"name\": \"a\", \"port\": 1, \"ssrc\": 5},\n"
                + "{\"name\": \"b\", \"port\": 1, \"ssrc\": \"0x5\"}]}",
            "room.json:2: participants[1]: port 1 and ssrc 5 are already participants[0]'s; "
                + "give each participant its own port, or an ssrc to tell them apart", .duplicate)
        expectError(
            "{\"participants\": [{\"name\": \"a\", \"port\": 1},\n{\"name\": \"b\", \"port\": 1}]}",
            "room.json:2: participants[1]: port 1 without an ssrc is already participants[0]'s; "
                + "give each participant its own port, or an ssrc to tell them apart", .duplicate)
        #expect(throws: Never.self) {
            try self.parse(
                "{\"participants\": [{\"name\": \"a\", \"port\": 1},{\"name\": \"b\", \"port\": 1, \"ssrc\": 1}]}")
        }
    }

    @Test func tooManyParticipants() {
        let entries = (0..<1025).map { "{\"name\": \"p\($0)\", \"port\": \($0 + 1)}" }.joined(separator: ",")
        expectError(
            "{\"participants\": [\(entries)]}",
            "room.json:1: participants: 1025 participants, more than the 1024 roomtap describes", .tooLarge)
    }
}
