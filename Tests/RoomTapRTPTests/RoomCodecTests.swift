import Foundation
import RoomTapRTP
import Testing

/// Which codec an SDP or a room file gives each participant; what is not described is not guessed.
@Suite struct RoomCodecTests {
    static let head = "v=0\no=- 0 0 IN IP4 127.0.0.1\ns=x\nc=IN IP4 127.0.0.1\nt=0 0\n"

    static func participant(_ sdp: String) throws -> ParticipantDescription {
        let room = try RoomDescription.parseSDP(head + sdp, source: "room.sdp")
        return try #require(room.participants.first)
    }

    /// What ffmpeg's `-f rtp -sdp_file` writes for each PBX codec (static types have no rtpmap).
    @Test(arguments: [
        ("m=audio 25000 RTP/AVP 0\nb=AS:64\n", AudioCodec.pcmu, [UInt8(0)]),
        ("m=audio 25000 RTP/AVP 8\nb=AS:64\n", .pcma, [8]),
        ("m=audio 25000 RTP/AVP 9\nb=AS:128\n", .g722, [9]),
        ("m=audio 25000 RTP/AVP 97\nb=AS:256\na=rtpmap:97 L16/16000/1\n", .l16(rate: 16_000), [97]),
        ("m=audio 25000 RTP/AVP 96\na=rtpmap:96 l16/48000/2\n", .l16(rate: 48_000, channels: 2), [96]),
        ("m=audio 25000 RTP/AVP 11\n", .l16(rate: 44_100), [11]),
        ("m=audio 25000 RTP/AVP 101 0 8\na=rtpmap:101 telephone-event/8000\n", .pcmu, [0]),
        ("m=audio 25000 RTP/AVP 0 111\na=rtpmap:111 opus/48000/2\n", .opus, [111]),
        ("m=audio 25000 RTP/AVP 18 9\na=rtpmap:9 G722/8000\n", .g722, [9]),
    ])
    func theSDPChoosesTheCodec(sdp: String, codec: AudioCodec, payloadTypes: [UInt8]) throws {
        let p = try Self.participant(sdp)
        #expect(p.codec == codec)
        #expect(p.payloadTypes == payloadTypes)
        #expect(p.channels == (codec.isOpus ? 1 : codec.channels))
    }

    @Test func aWrongRateOrChannelCountIsNotTheCodec() {
        let error = sdpError(
            Self.head + "m=audio 25000 RTP/AVP 96 97\na=rtpmap:96 PCMA/16000\na=rtpmap:97 L16/16000/3\n")
        #expect(error?.reason == .unsupported)
        #expect(error?.description.contains("offers only PCMA/16000, L16/16000/3") == true)
    }

    @Test func theRoomFileNamesTheCodec() throws {
        let json = """
            {"participants": [
              {"name": "a", "port": 25000, "codec": "PCMU"},
              {"name": "b", "port": 25002, "codec": "L16/16000", "payloadType": 118},
              {"name": "c", "port": 25004, "payloadType": 9},
              {"name": "d", "port": 25006, "codec": "l16/48000/2"},
              {"name": "e", "port": 25008},
              {"name": "f", "port": 25010, "codec": "G722/8000", "payloadType": 100}
            ]}
            """
        let room = try RoomDescription.parseJSON(Data(json.utf8), source: "room.json")
        let p = room.participants
        #expect(p.map(\.codec) == [.pcmu, .l16(rate: 16_000), .g722, .l16(rate: 48_000, channels: 2), .opus, .g722])
        #expect(p.map(\.payloadTypes) == [[0], [118], [9], [], [], [100]])
        #expect(p.map(\.channels) == [1, 1, 1, 2, 1, 1])
        #expect(p[3].acceptsPayloadType(96) && !p[3].acceptsPayloadType(0))
        #expect(!p[0].acceptsPayloadType(8), "PCMA is not what was described")
    }

    @Test(arguments: [
        (
            "\"codec\": \"GSM\"",
            "room.json:2: participants[0].codec: \"GSM\" is not a codec roomtap records; give \"opus\", \"PCMU\", "
                + "\"PCMA\", \"G722\" or \"L16/<rate>[/<channels>]\""
        ),
        (
            "\"codec\": \"L16\"",
            "room.json:2: participants[0].codec: \"L16\" is not a codec roomtap records; give \"opus\", \"PCMU\", "
                + "\"PCMA\", \"G722\" or \"L16/<rate>[/<channels>]\""
        ),
        (
            "\"codec\": \"PCMU\", \"payloadType\": 8",
            "room.json:2: participants[0].payloadType: 8 is not a payload type of PCMU/8000 (RFC 3551); "
                + "give 0 or a dynamic type (96-127)"
        ),
        (
            "\"payloadType\": 3",
            "room.json:2: participants[0].payloadType: 3 is a static payload type roomtap does not decode; "
                + "give a \"codec\" and a dynamic type (96-127), or 0 (PCMU), 8 (PCMA), 9 (G722)"
        ),
        (
            "\"codec\": 7",
            "room.json:2: participants[0].codec: 7 is not a codec roomtap records; give \"opus\", \"PCMU\", "
                + "\"PCMA\", \"G722\" or \"L16/<rate>[/<channels>]\""
        ),
    ])
    func aBadCodecIsOneLine(members: String, message: String) {
        let json = "{\"participants\": [\n{\"name\": \"alice\", \"port\": 25000, \(members)}\n]}"
        #expect(roomFileError(json)?.description == message)
    }

    @Test func codecTextsRoundTrip() {
        for codec in [AudioCodec.opus, .pcmu, .pcma, .g722, .l16(rate: 16_000), .l16(rate: 44_100, channels: 2)] {
            #expect(AudioCodec.named(codec.description) == codec, "\(codec)")
        }
        #expect(AudioCodec.g722.sampleRate == 16_000 && AudioCodec.g722.clockRate == 8_000)
    }
}
