import Foundation
import RoomTapRTP
import Testing

/// Loads a fixture of Tests/RoomTapRTPTests/Fixtures as text.
func roomFixture(_ name: String) throws -> String {
    let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures").appendingPathComponent(name)
    return try String(contentsOf: url, encoding: .utf8)
}

/// The error `parseSDP` throws for `text`, recording an issue when it succeeds.
func sdpError(_ text: String, source: String = "room.sdp") -> RoomDescriptionError? {
    do {
        let room = try RoomDescription.parseSDP(text, source: source)
        Issue.record("accepted: \(room)")
        return nil
    } catch {
        #expect(!error.description.contains("\n"))
        return error
    }
}

/// The error `parseJSON` throws for `json`, recording an issue when it succeeds.
func roomFileError(_ json: String, source: String = "room.json") -> RoomDescriptionError? {
    roomFileError(Data(json.utf8), source: source)
}

func roomFileError(_ data: Data, source: String = "room.json") -> RoomDescriptionError? {
    do {
        let room = try RoomDescription.parseJSON(data, source: source)
        Issue.record("accepted: \(room)")
        return nil
    } catch {
        #expect(!error.description.contains("\n"))
        return error
    }
}

/// Invariants every parsed room keeps, whatever it was parsed from.
func expectRoomInvariants(_ room: RoomDescription) {
    #expect(!room.participants.isEmpty)
    #expect(room.participants.count <= RoomDescription.maximumParticipants)
    let names = room.participants.compactMap(\.name)
    #expect(Set(names).count == names.count, "names are unique")
    for participant in room.participants {
        #expect(participant.port != 0)
        #expect(participant.channels == 1 || participant.channels == 2)
        #expect(participant.payloadTypes.allSatisfy { $0 <= 127 })
        #expect(room.ports.contains(participant.port))
    }
    #expect(Set(room.ports).count == room.ports.count, "ports are distinct")
}
