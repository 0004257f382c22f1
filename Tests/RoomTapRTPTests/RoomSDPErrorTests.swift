import Foundation
import RoomTapRTP
import Testing

/// Every way an SDP is refused, with the exact one-line message the user sees.
@Suite("RoomSDP: errors")
struct RoomSDPErrorTests {
    let head = "v=0\no=- 0 0 IN IP4 127.0.0.1\ns=-\nc=IN IP4 127.0.0.1\nt=0 0\n"

    func expectError(
        _ text: String, _ description: String, _ reason: RoomDescriptionError.Reason,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        guard let error = sdpError(text) else { return }
        #expect(error.description == description, sourceLocation: sourceLocation)
        #expect(error.reason == reason, sourceLocation: sourceLocation)
        #expect(error.source == "room.sdp", sourceLocation: sourceLocation)
    }

    @Test func noAudioLine() {
        expectError(
            head + "m=video 25000 RTP/AVP 96\na=rtpmap:96 VP8/90000\n",
            "room.sdp: the SDP has no m=audio line; roomtap records audio", .noAudio)
        expectError("", "room.sdp: the SDP has no m=audio line; roomtap records audio", .noAudio)
    }

    @Test func everyAudioLineDisabled() {
        expectError(
            head + "m=audio 0 RTP/AVP 111\n",
            "room.sdp: every m=audio line has port 0 (disabled); "
                + "roomtap records audio from an m=audio line with a port",
            .noAudio)
    }

    @Test func audioWithoutOpus() {
        let records = "roomtap records Opus (a=rtpmap:<pt> opus/48000/2), PCMU, PCMA, G722 or L16"
        expectError(
            head + "m=audio 25000 RTP/AVP 3 18\n",
            "room.sdp:6: m=audio on port 25000 offers only GSM/8000, G729/8000; " + records,
            .unsupported)
        expectError(
            head + "m=audio 25000 RTP/AVP 0 96 97\na=rtpmap:96 opus/44100/2\na=rtpmap:0 PCMU/16000\n",
            "room.sdp:6: m=audio on port 25000 offers only PCMU/16000, opus/44100/2, "
                + "payload type 97 (no a=rtpmap); " + records,
            .unsupported)
        expectError(
            head + "m=audio 25000 RTP/AVP 96\na=rtpmap:96 opus/48000/6\n",
            "room.sdp:6: m=audio on port 25000 offers only opus/48000/6; " + records,
            .unsupported)
    }

    @Test func badPorts() {
        for port in ["70000", "-1", "99999999999999999999999", "x", "+5"] {
            let shown = "\"\(port)\""
            expectError(
                head + "m=audio \(port) RTP/AVP 111\na=rtpmap:111 opus/48000/2\n",
                "room.sdp:6: m=audio port \(shown) is not a port (0-65535); give the UDP port the RTP arrives on",
                .invalidValue)
        }
        expectError(
            head + "m=audio 25000/2 RTP/AVP 111\n",
            "room.sdp:6: m=audio port \"25000/2\" is a range of ports; give one m=audio line per port", .invalidValue)
    }

    @Test func srtpAndOtherTransports() {
        expectError(
            head + "m=audio 25000 RTP/SAVP 111\na=rtpmap:111 opus/48000/2\n",
            "room.sdp:6: m=audio on port 25000 uses RTP/SAVP (SRTP) without an a=crypto line; "
                + "give the sender's SDES key (a=crypto, RFC 4568) in the section", .unsupported)
        expectError(
            head + "m=audio 9 UDP/TLS/RTP/SAVPF 111\n",
            "room.sdp:6: m=audio on port 9 uses \"UDP/TLS/RTP/SAVPF\" (DTLS-SRTP); roomtap takes SRTP keys from "
                + "a=crypto (SDES, RFC 4568) or the room file: forward RTP/SAVP with a key", .unsupported)
        expectError(
            head + "m=audio 25000 udp MP2T/H2221/UDP\n",
            "room.sdp:6: m=audio on port 25000 uses transport \"udp\"; roomtap receives RTP (RTP/AVP or RTP/AVPF, "
                + "or RTP/SAVP with a=crypto)", .unsupported)
    }

    @Test func malformedMediaLines() {
        expectError(
            head + "m=audio 25000 RTP/AVP\n",
            "room.sdp:6: malformed m= line \"m=audio 25000 RTP/AVP\"; expected m=audio <port> RTP/AVP <payload types>",
            .malformed)
        expectError(
            head + "m=audio 25000 RTP/AVP 111 opus\n",
            "room.sdp:6: malformed m= line: payload type \"opus\" is not a number 0-127; "
                + "expected m=audio <port> RTP/AVP <payload types>", .malformed)
        expectError(
            head + "m=audio 25000 RTP/AVP 128\n",
            "room.sdp:6: malformed m= line: payload type \"128\" is not a number 0-127; "
                + "expected m=audio <port> RTP/AVP <payload types>", .malformed)
    }

    @Test func malformedConnectionRtpmapAndSSRC() {
        for line in [
            "c=IN IP4", "c=IN IP5 1.2.3.4", "c=XX IP4 1.2.3.4", "c=IN IP4 999.1.1.1", "c=IN IP4 1.2.3.4/x",
            "c=IN IP6 fe80::1/2/3", "c=IN IP4 a b",
        ] {
            expectError(
                "v=0\n\(line)\nm=audio 25000 RTP/AVP 111\n",
                "room.sdp:2: malformed c= line \"\(line)\"; expected c=IN IP4 <address> or c=IN IP6 <address>",
                .malformed)
        }
        expectError(
            head + "m=audio 25000 RTP/AVP 111\na=rtpmap:111 opus\n",
            "room.sdp:7: malformed a=rtpmap line \"a=rtpmap:111 opus\"; "
                + "expected a=rtpmap:<payload type> <encoding>/<clock rate>[/<channels>]", .malformed)
        expectError(
            head + "m=audio 25000 RTP/AVP 111\na=rtpmap:111 opus/48000/two\n",
            "room.sdp:7: malformed a=rtpmap line \"a=rtpmap:111 opus/48000/two\": channels \"two\" is not a number",
            .malformed)
        expectError(
            head + "m=audio 25000 RTP/AVP 111\na=ssrc:4294967296 cname:x\n",
            "room.sdp:7: a=ssrc id \"4294967296\" is not an SSRC (0-4294967295)", .invalidValue)
        expectError(
            head + "m=audio 25000 RTP/AVP 111\na=ssrc:-1 cname:x\n",
            "room.sdp:7: a=ssrc id \"-1\" is not an SSRC (0-4294967295)", .invalidValue)
    }

    @Test func linesThatAreNotSDP() {
        expectError(
            "{\"participants\": []}\n",
            "room.sdp:1: \"{\"participants\": []}\" is not an SDP line (<type>=<value>); "
                + "give an SDP file (RFC 8866)", .malformed)
        expectError(
            head + "m=audio 25000 RTP/AVP 111\nthis line has no equals sign\n",
            "room.sdp:7: \"this line has no equals sign\" is not an SDP line (<type>=<value>); "
                + "give an SDP file (RFC 8866)",
            .malformed)
        expectError(
            head + " m=audio 25000 RTP/AVP 111\n",
            "room.sdp:6: \" m=audio 25000 RTP/AVP 111\" is not an SDP line (<type>=<value>); "
                + "give an SDP file (RFC 8866)",
            .malformed)
        expectError(
            "v=0\nmm=audio\n",
            "room.sdp:2: \"mm=audio\" is not an SDP line (<type>=<value>); give an SDP file (RFC 8866)",
            .malformed)
    }

    @Test func duplicatePortAndSSRC() {
        let opus = "a=rtpmap:111 opus/48000/2\n"
        expectError(
            head + "m=audio 25000 RTP/AVP 111\n\(opus)m=audio 25000 RTP/AVP 111\n\(opus)",
            "room.sdp:8: m=audio on port 25000 repeats the port of the m=audio line 6 without a=ssrc lines to tell "
                + "the streams apart; give each m=audio line its own port or a=ssrc lines", .duplicate)
        expectError(
            head + "m=audio 25000 RTP/AVP 111\n\(opus)a=ssrc:9 cname:a\n"
                + "m=audio 25000 RTP/AVP 111\n\(opus)a=ssrc:9 cname:b\n",
            "room.sdp:9: a=ssrc 9 on port 25000 is already a participant of the m=audio line 6; "
                + "list each SSRC of a port once",
            .duplicate)
    }

    @Test func tooLarge() {
        let big = head + "m=audio 25000 RTP/AVP 111\na=rtpmap:111 opus/48000/2\n"
        let padded = big + String(repeating: "a", count: RoomDescription.maximumBytes + 1 - big.utf8.count)
        #expect(padded.utf8.count == 1_048_577)
        expectError(
            padded,
            "room.sdp: is 1048577 bytes, more than the 1048576 bytes (1 MiB) roomtap reads; give the SDP of one room",
            .tooLarge)
        let exactly = big + "a=x:" + String(repeating: "a", count: RoomDescription.maximumBytes - 4 - big.utf8.count)
        #expect(exactly.utf8.count == RoomDescription.maximumBytes)
        #expect(throws: Never.self) { try RoomDescription.parseSDP(exactly, source: "room.sdp") }
    }

    @Test func tenThousandMediaLines() throws {
        let sections = (0..<10_000).map { "m=audio \(20_000 + $0) RTP/AVP 111\na=rtpmap:111 opus/48000/2" }
        expectError(
            head + sections.joined(separator: "\n"),
            "room.sdp:518: more than 256 m= lines; roomtap reads at most 256 media sections", .tooLarge)
        let fits = head + sections.prefix(256).joined(separator: "\n")
        #expect(try RoomDescription.parseSDP(fits, source: "room.sdp").ports.count == 256)
    }

    @Test func tooManySSRCs() {
        let ssrcs = (0..<1025).map { "a=ssrc:\($0) cname:c\($0)" }.joined(separator: "\n")
        expectError(
            head + "m=audio 25000 RTP/AVP 111\na=rtpmap:111 opus/48000/2\n" + ssrcs,
            "room.sdp:1032: more than 1024 a=ssrc ids; roomtap describes at most 1024 participants", .tooLarge)
    }

    @Test func descriptionWithAndWithoutLine() {
        let withLine = RoomDescriptionError(.malformed, source: "a.sdp", line: 3, message: "x\ny")
        #expect(withLine.description == "a.sdp:3: x y")
        #expect(RoomDescriptionError(.noAudio, source: "a.sdp", message: "m").description == "a.sdp: m")
    }
}
