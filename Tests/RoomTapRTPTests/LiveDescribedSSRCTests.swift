import RoomTapRTP
import Testing

/// A room described with SSRCs records those SSRCs only, unless discovery is asked for.
@Suite("Live: described SSRCs only, unless --discover")
struct LiveDescribedSSRCTests {
    static let room = RoomDescription(participants: [
        ParticipantDescription(name: "alice", port: 25000, ssrc: 0xA11CE),
        ParticipantDescription(name: "bob", port: 25000, ssrc: 0xB0B),
        ParticipantDescription(name: "carol", port: 25002),
    ])

    @Test func strangersOnAPortDescribedWithSSRCsAreDroppedAndCounted() {
        let directory = ParticipantDirectory(description: Self.room, discover: false)
        #expect(
            directory.route(port: 25000, ssrc: 0xA11CE, payloadType: 111, arrival: 0) == .new(slot: 0, name: "alice"))
        #expect(directory.route(port: 25000, ssrc: 0x57EA, payloadType: 111, arrival: 1) == .drop(.undescribedSSRC))
        #expect(directory.route(port: 25000, ssrc: 0x57EB, payloadType: 111, arrival: 2) == .drop(.undescribedSSRC))
        #expect(directory.dropped(.undescribedSSRC) == 2)
        // A port described without an SSRC still takes what arrives there.
        #expect(directory.route(port: 25002, ssrc: 0xC, payloadType: 111, arrival: 3) == .new(slot: 1, name: "carol"))
        #expect(directory.allSlots.map(\.name) == ["alice", "carol"])
    }

    @Test func discoveryMakesThemTracks() {
        let directory = ParticipantDirectory(description: Self.room, discover: true)
        #expect(
            directory.route(port: 25000, ssrc: 0x57EA, payloadType: 111, arrival: 1) == .new(slot: 0, name: "ssrc-57ea")
        )
        #expect(directory.dropped(.undescribedSSRC) == 0)
    }

    @Test func anExtraListenPortWelcomesAnyone() {
        let directory = ParticipantDirectory(description: Self.room, discoveryPorts: [25000], discover: false)
        #expect(
            directory.route(port: 25000, ssrc: 0x57EA, payloadType: 111, arrival: 1) == .new(slot: 0, name: "ssrc-57ea")
        )
    }
}
