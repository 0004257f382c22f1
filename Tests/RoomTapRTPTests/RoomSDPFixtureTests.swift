import Foundation
import RoomTapRTP
import RoomTapTestSupport
import Testing

/// SDPs written by `ffmpeg -f rtp -sdp_file` (ffmpeg 5.1.9, Debian 12), committed as they came, and
/// hand-written SDPs in the style of Janus `rtp_forward` and mediasoup PlainTransport consumers.
@Suite("RoomSDP: real and SFU-style SDP files")
struct RoomSDPFixtureTests {
    @Test func ffmpegMonoOpusIsOneUnnamedMonoParticipant() throws {
        let text = try roomFixture("RoomFFmpegMono.sdp")
        #expect(text.contains("\r\n"), "ffmpeg writes CRLF")
        let room = try RoomDescription.parseSDP(text, source: "mono.sdp")
        #expect(
            room.participants == [
                ParticipantDescription(name: nil, port: 25000, address: "127.0.0.1", payloadTypes: [97], channels: 1)
            ])
        #expect(room.ports == [25000])
        #expect(room.participants[0].payloadType == 97)
    }

    @Test func ffmpegStereoOpusDecodesToTwoChannels() throws {
        let room = try RoomDescription.parseSDP(try roomFixture("RoomFFmpegStereo.sdp"), source: "stereo.sdp")
        #expect(room.participants.count == 1)
        #expect(room.participants[0].port == 25002)
        #expect(room.participants[0].channels == 2)
        #expect(room.participants[0].formatParameters == ["sprop-stereo": "1"])
    }

    @Test func ffmpegTwoOutputsGiveTwoParticipantsWithMediaLevelAddresses() throws {
        let room = try RoomDescription.parseSDP(try roomFixture("RoomFFmpegTwoOutputs.sdp"), source: "two.sdp")
        #expect(room.ports == [25000, 25002])
        #expect(room.participants.map(\.address) == ["127.0.0.1", "127.0.0.1"])
        #expect(room.participants.map(\.payloadTypes) == [[97], [97]])
        #expect(room.participants.map(\.name) == [nil, nil])
        expectRoomInvariants(room)
    }

    @Test func ffmpegMulticastDropsTheTTL() throws {
        let text = try roomFixture("RoomFFmpegMulticast.sdp")
        #expect(text.contains("c=IN IP4 239.1.2.3/16"))
        let room = try RoomDescription.parseSDP(text, source: "mcast.sdp")
        #expect(room.participants.map(\.address) == ["239.1.2.3"])
        #expect(room.ports == [25008])
    }

    @Test func ffmpegIPv6() throws {
        let room = try RoomDescription.parseSDP(try roomFixture("RoomFFmpegIPv6.sdp"), source: "v6.sdp")
        #expect(room.participants.map(\.address) == ["::1"])
        #expect(room.ports == [25010])
    }

    @Test func ffmpegChosenPayloadType() throws {
        let room = try RoomDescription.parseSDP(try roomFixture("RoomFFmpegPayloadType111.sdp"), source: "pt.sdp")
        #expect(room.participants.map(\.payloadTypes) == [[111]])
        #expect(room.participants[0].acceptsPayloadType(111))
        #expect(!room.participants[0].acceptsPayloadType(97))
    }

    /// The example of the issue, with LF endings and an explicit `sprop-stereo=0`.
    @Test func theIssueExampleWithLF() throws {
        let text = """
            v=0
            o=- 0 0 IN IP4 127.0.0.1
            s=No Name
            c=IN IP4 127.0.0.1
            t=0 0
            a=tool:libavformat 59.27.100
            m=audio 25000 RTP/AVP 97
            b=AS:64
            a=rtpmap:97 opus/48000/2
            a=fmtp:97 sprop-stereo=0

            """
        #expect(!text.contains("\r"))
        let room = try RoomDescription.parseSDP(text, source: "x.sdp")
        #expect(
            room.participants == [
                ParticipantDescription(
                    port: 25000, address: "127.0.0.1", payloadTypes: [97], channels: 1,
                    formatParameters: ["sprop-stereo": "0"])
            ])
    }

    @Test func janusRTPForwardStyle() throws {
        let room = try RoomDescription.parseSDP(try roomFixture("RoomJanusRTPForward.sdp"), source: "janus.sdp")
        #expect(
            room.participants == [
                ParticipantDescription(
                    name: "alice", port: 5002, address: "127.0.0.1", ssrc: 2_882_400_001, payloadTypes: [111],
                    channels: 1, mid: "a0", label: "alice", cname: "janus-alice",
                    formatParameters: ["useinbandfec": "1", "sprop-stereo": "0"]),
                ParticipantDescription(
                    name: "bob-stream", port: 5004, address: "::1", ssrc: 2_882_400_002, payloadTypes: [111],
                    channels: 2, msid: "bob-stream bob-track", cname: "janus-bob",
                    formatParameters: ["sprop-stereo": "1", "useinbandfec": "1"]),
            ])
        #expect(room.ports == [5002, 5004])
    }

    @Test func mediasoupPlainTransportStyleIsOneParticipantPerSSRCOnOnePort() throws {
        let room = try RoomDescription.parseSDP(
            try roomFixture("RoomMediasoupPlainTransport.sdp"), source: "mediasoup.sdp")
        #expect(room.ports == [40000])
        #expect(room.participants.map(\.ssrc) == [11_111_111, 22_222_222, 33_333_333, 44_444_444])
        #expect(room.participants.map(\.name) == ["carol-stream", "dave", "erin", "0"])
        #expect(room.participants.map(\.cname) == ["carol-cname", "dave-cname", "erin", nil])
        #expect(room.participants.map(\.label) == [nil, "dave", nil, nil])
        #expect(room.participants.map(\.msid) == ["carol-stream carol-audio", "dave-stream dave-audio", nil, nil])
        for participant in room.participants {
            #expect(participant.address == "fd00::1")
            #expect(participant.payloadTypes == [100, 101], "both Opus types, PCMU left out")
            #expect(participant.channels == 2, "the stereo one of the two Opus formats wins")
            #expect(participant.mid == "0")
            #expect(participant.formatParameters == ["minptime": "10", "useinbandfec": "1"])
        }
        expectRoomInvariants(room)
    }

    /// Runs the installed ffmpeg (when there is one) and reads the SDP it writes now.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/ffmpeg")))
    func theInstalledFFmpegsSDPIsAccepted() throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("roomtap-sdp-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let sdp = directory.appendingPathComponent("live.sdp").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
        process.arguments = [
            "-hide_banner", "-loglevel", "error", "-nostdin", "-y", "-f", "lavfi", "-i", "sine=f=440:d=0.2",
            "-f", "lavfi", "-i", "sine=f=660:d=0.2", "-ac", "2",
            "-map", "0:a", "-c:a", "libopus", "-f", "rtp", "rtp://127.0.0.1:27300",
            "-map", "1:a", "-c:a", "libopus", "-ac", "2", "-f", "rtp", "rtp://127.0.0.1:27302", "-sdp_file", sdp,
        ]
        try ChildProcesses.run(process)
        process.waitUntilExit()
        try #require(process.terminationStatus == 0)
        let room = try RoomDescription.parseSDP(try String(contentsOfFile: sdp, encoding: .utf8), source: sdp)
        #expect(room.ports == [27300, 27302])
        #expect(room.participants.allSatisfy { $0.address == "127.0.0.1" && $0.channels == 2 })
    }
}
