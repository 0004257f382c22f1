import RoomTapRTP
import Testing

@Suite("Live: routing streams to tracks")
struct LiveParticipantDirectoryTests {
    let second: UInt64 = 1_000_000_000

    @Test func discoveryNamesUnknownSSRCsAndKeepsThem() {
        let directory = ParticipantDirectory(description: nil)
        #expect(
            directory.route(port: 25000, ssrc: 0xA1, payloadType: 111, arrival: 0) == .new(slot: 0, name: "ssrc-a1"))
        #expect(directory.route(port: 25000, ssrc: 0xB2, payloadType: 96, arrival: 1) == .new(slot: 1, name: "ssrc-b2"))
        #expect(directory.route(port: 25000, ssrc: 0xA1, payloadType: 111, arrival: 2) == .existing(slot: 0))
        #expect(
            directory.route(port: 25002, ssrc: 0xA1, payloadType: 111, arrival: 3) == .new(slot: 2, name: "ssrc-a1"))
    }

    @Test func staticPayloadTypesAreNotOpus() {
        let directory = ParticipantDirectory(description: nil)
        #expect(directory.route(port: 25000, ssrc: 1, payloadType: 0, arrival: 0) == .drop(.unknownPayloadType))
        #expect(directory.dropped(.unknownPayloadType) == 1)
        #expect(directory.allSlots.isEmpty)
    }

    @Test func aFloodOfSSRCsIsBounded() {
        let directory = ParticipantDirectory(description: nil, maxTracks: 8)
        var new = 0
        for ssrc in UInt32(0)..<10_000 {
            if case .new = directory.route(port: 25000, ssrc: ssrc, payloadType: 111, arrival: UInt64(ssrc)) {
                new += 1
            }
        }
        #expect(new == 8)
        #expect(directory.allSlots.count == 8)
        #expect(directory.dropped(.tooManyTracks) == 9_992)
    }

    @Test func describedParticipantsClaimTheirStreams() {
        let room = RoomDescription(participants: [
            ParticipantDescription(name: "alice", port: 25000, ssrc: 0xA11CE, payloadTypes: [111]),
            ParticipantDescription(name: "bob", port: 25000, ssrc: 0xB0B, payloadTypes: [111]),
            ParticipantDescription(name: "carol", port: 25002, payloadTypes: [97]),
        ])
        let directory = ParticipantDirectory(description: room)
        #expect(directory.route(port: 25000, ssrc: 0xB0B, payloadType: 111, arrival: 0) == .new(slot: 0, name: "bob"))
        #expect(
            directory.route(port: 25000, ssrc: 0xA11CE, payloadType: 111, arrival: 0) == .new(slot: 1, name: "alice"))
        #expect(directory.route(port: 25002, ssrc: 0xC, payloadType: 97, arrival: 0) == .new(slot: 2, name: "carol"))
        #expect(directory.route(port: 25002, ssrc: 0xC, payloadType: 111, arrival: 0) == .drop(.unknownPayloadType))
        #expect(directory.route(port: 25004, ssrc: 0xD, payloadType: 111, arrival: 0) == .drop(.unlistedPort))
        // A second SSRC on carol's port while carol is live: a discovered track of its own.
        #expect(directory.route(port: 25002, ssrc: 0xE, payloadType: 97, arrival: 1) == .new(slot: 3, name: "ssrc-e"))
    }

    @Test func aRestartedSenderContinuesItsTrack() {
        let room = RoomDescription(participants: [ParticipantDescription(name: "carol", port: 25002)])
        let directory = ParticipantDirectory(description: room, takeoverAfter: 2 * second)
        #expect(directory.route(port: 25002, ssrc: 1, payloadType: 111, arrival: 0) == .new(slot: 0, name: "carol"))
        #expect(directory.route(port: 25002, ssrc: 1, payloadType: 111, arrival: 1 * second) == .existing(slot: 0))
        // Silent for 3 s, then a new SSRC on the same port: the same track, taken over.
        #expect(directory.route(port: 25002, ssrc: 2, payloadType: 111, arrival: 4 * second) == .takeover(slot: 0))
        #expect(directory.route(port: 25002, ssrc: 2, payloadType: 111, arrival: 4 * second + 1) == .existing(slot: 0))
        #expect(directory.allSlots.map(\.ssrc) == [2])
        // The old SSRC coming back now is someone else.
        #expect(
            directory.route(port: 25002, ssrc: 1, payloadType: 111, arrival: 4 * second + 2)
                == .new(slot: 1, name: "ssrc-1"))
    }

    @Test func extraListenPortsWelcomeAnyStreamBesideADescription() {
        let room = RoomDescription(participants: [ParticipantDescription(name: "alice", port: 25000)])
        let directory = ParticipantDirectory(description: room, discoveryPorts: [25010])
        #expect(directory.route(port: 25010, ssrc: 0xF, payloadType: 96, arrival: 0) == .new(slot: 0, name: "ssrc-f"))
        #expect(directory.route(port: 25020, ssrc: 0xF, payloadType: 96, arrival: 0) == .drop(.unlistedPort))
    }
}
