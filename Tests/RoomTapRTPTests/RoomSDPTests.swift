import RoomTapRTP
import Testing

/// How the SDP parser reads sections, addresses, payload types and names (RFC 8866, RFC 5576, RFC 7587).
@Suite("RoomSDP: parsing rules")
struct RoomSDPTests {
    /// A one-section SDP around `media` lines.
    func sdp(_ media: String, connection: String = "c=IN IP4 127.0.0.1") -> String {
        "v=0\no=- 0 0 IN IP4 127.0.0.1\ns=-\n\(connection)\nt=0 0\n\(media)\n"
    }

    func names(_ attributes: String) throws -> [String?] {
        let text = sdp("m=audio 25000 RTP/AVP 111\na=rtpmap:111 opus/48000/2\n" + attributes)
        return try RoomDescription.parseSDP(text, source: "n.sdp").participants.map(\.name)
    }

    @Test func namingPrecedenceIsLabelThenSSRCLabelThenMsidThenCnameThenMid() throws {
        let all = "a=mid:m\na=ssrc:1 cname:c\na=ssrc:1 msid:s t\na=ssrc:1 label:sl\na=label:l"
        #expect(try names(all) == ["l"])
        #expect(try names("a=mid:m\na=ssrc:1 cname:c\na=ssrc:1 msid:s t\na=ssrc:1 label:sl") == ["sl"])
        #expect(try names("a=mid:m\na=ssrc:1 cname:c\na=ssrc:1 msid:s t") == ["s"])
        #expect(try names("a=mid:m\na=ssrc:1 cname:c\na=msid:ms mt") == ["ms"], "section-level msid")
        #expect(try names("a=mid:m\na=ssrc:1 cname:c\na=ssrc:1 msid:- t") == ["t"], "stream id '-' gives the track id")
        #expect(try names("a=mid:m\na=ssrc:1 cname:c") == ["c"])
        #expect(try names("a=mid:m\na=ssrc:1") == ["m"])
        #expect(try names("a=ssrc:1") == [nil])
        #expect(try names("") == [nil])
    }

    @Test func severalSSRCsInOneSectionAreOneParticipantEachOnTheSamePort() throws {
        let room = try RoomDescription.parseSDP(
            sdp(
                "m=audio 25000 RTP/AVP 111\na=rtpmap:111 opus/48000/2\n"
                    + "a=ssrc:7 cname:x\na=ssrc:8 cname:y\na=ssrc:7 label:z"),
            source: "s.sdp")
        #expect(room.participants.map(\.ssrc) == [7, 8])
        #expect(room.participants.map(\.name) == ["z", "y"])
        #expect(room.ports == [25000])
    }

    @Test func repeatedNamesGetASuffix() throws {
        #expect(try names("a=label:alice\na=ssrc:1\na=ssrc:2\na=ssrc:3") == ["alice", "alice-2", "alice-3"])
    }

    @Test func crlfAndLFGiveTheSameRoom() throws {
        let lf = sdp("m=audio 25000 RTP/AVP 111\na=rtpmap:111 opus/48000/2\na=fmtp:111 stereo=1\na=label:a")
        let crlf = lf.replacingOccurrences(of: "\n", with: "\r\n")
        #expect(crlf.contains("\r\n"))
        let first = try RoomDescription.parseSDP(lf, source: "lf.sdp")
        #expect(try RoomDescription.parseSDP(crlf, source: "crlf.sdp") == first)
        #expect(first.participants[0].name == "a")
        #expect(first.participants[0].channels == 2, "stereo=1 without sprop-stereo")
    }

    @Test func noFinalLineBreakTrailingBlanksAndBlankLinesAreFine() throws {
        let text = "v=0\n\nc=IN IP4 127.0.0.1  \nm=audio 25000 RTP/AVP 111 \t\na=rtpmap:111 opus/48000/2"
        let room = try RoomDescription.parseSDP(text, source: "x.sdp")
        #expect(room.participants.map(\.payloadTypes) == [[111]])
    }

    @Test func portZeroSectionsAreSkipped() throws {
        let text = sdp(
            "m=audio 0 RTP/SAVP 0\na=label:gone\nm=audio 25002 RTP/AVP 111\na=rtpmap:111 opus/48000/2\n"
                + "m=audio 0 RTP/AVP 111\na=rtpmap:111 opus/48000/2")
        let room = try RoomDescription.parseSDP(text, source: "x.sdp")
        #expect(room.ports == [25002])
        #expect(room.participants.map(\.name) == [nil], "the disabled section's label is not taken")
    }

    @Test func multicastAndIPv6ConnectionLines() throws {
        let cases: [(String, String)] = [
            ("c=IN IP4 224.2.36.42/127", "224.2.36.42"), ("c=IN IP4 224.2.1.1/127/3", "224.2.1.1"),
            ("c=IN IP6 FF15::101/3", "FF15::101"), ("c=IN IP6 2001:db8::1", "2001:db8::1"),
            ("c=IN IP4 media.example.com", "media.example.com"), ("c=IN IP6 ::ffff:10.0.0.1", "::ffff:10.0.0.1"),
        ]
        for (line, address) in cases {
            let room = try RoomDescription.parseSDP(
                sdp("m=audio 25000 RTP/AVP 111\na=rtpmap:111 opus/48000/2", connection: line), source: "c.sdp")
            #expect(room.participants.map(\.address) == [address], "\(line)")
        }
    }

    @Test func mediaLevelConnectionWinsAndNoConnectionMeansNoAddress() throws {
        let text = sdp(
            "m=audio 25000 RTP/AVP 111\nc=IN IP6 ::1\na=rtpmap:111 opus/48000/2\n"
                + "m=audio 25002 RTP/AVP 111\na=rtpmap:111 opus/48000/2")
        #expect(
            try RoomDescription.parseSDP(text, source: "x.sdp").participants.map(\.address) == ["::1", "127.0.0.1"])
        let bare = "v=0\nm=audio 25000 RTP/AVP 111\na=rtpmap:111 opus/48000/2\n"
        #expect(try RoomDescription.parseSDP(bare, source: "x.sdp").participants.map(\.address) == [nil])
    }

    @Test func opusIsFoundCaseInsensitivelyAmongOtherFormatsInPreferenceOrder() throws {
        let text = sdp(
            "m=audio 25000 RTP/AVPF 0 109 8 111\na=rtpmap:111 opus/48000/2\na=rtpmap:109 OPUS/48000/2\n"
                + "a=rtpmap:0 PCMU/8000\na=rtpmap:110 opus/48000/2\na=fmtp:109 sprop-stereo=1; useinbandfec=1")
        let participant = try #require(try RoomDescription.parseSDP(text, source: "x.sdp").participants.first)
        #expect(participant.payloadTypes == [109, 111], "110 is mapped but not offered on the m= line")
        #expect(participant.payloadType == 109)
        #expect(participant.channels == 2)
        #expect(participant.formatParameters == ["sprop-stereo": "1", "useinbandfec": "1"])
    }

    @Test func channelsFollowSpropStereoThenStereoElseMono() throws {
        func channels(_ fmtp: String, rtpmap: String = "opus/48000/2") throws -> Int {
            let text = sdp("m=audio 25000 RTP/AVP 111\na=rtpmap:111 \(rtpmap)\n\(fmtp)")
            return try RoomDescription.parseSDP(text, source: "x.sdp").participants[0].channels
        }
        #expect(try channels("") == 1)
        #expect(try channels("a=fmtp:111 sprop-stereo=1") == 2)
        #expect(try channels("a=fmtp:111 sprop-stereo=0;stereo=1") == 1)
        #expect(try channels("a=fmtp:111 stereo=1") == 2)
        #expect(try channels("a=fmtp:111 SPROP-STEREO=1") == 2, "parameter names are case-insensitive")
        #expect(try channels("a=fmtp:111 sprop-stereo=1", rtpmap: "opus/48000/1") == 1)
        #expect(try channels("a=fmtp:111 sprop-stereo=1", rtpmap: "opus/48000") == 2)
    }

    @Test func unknownLinesAttributesAndOtherMediaAreIgnored() throws {
        let text = sdp(
            "m=video 25004 RTP/SAVPF 96\na=rtpmap:96 VP8/90000\nc=garbage\n"
                + "m=audio 25000 RTP/AVP 111\nx=unknown type\na=rtpmap:111 opus/48000/2\na=weird\n"
                + "a=ssrc-group:FID 1 2\nb=AS:64\nk=clear:x\nm=application 9 UDP/DTLS/SCTP webrtc-datachannel")
        #expect(try RoomDescription.parseSDP(text, source: "x.sdp").ports == [25000])
    }

    @Test func aPortWithCountOneIsOnePort() throws {
        let text = sdp("m=audio 25000/1 RTP/AVP 111\na=rtpmap:111 opus/48000/2")
        #expect(try RoomDescription.parseSDP(text, source: "x.sdp").ports == [25000])
    }

    @Test func aSectionWithoutSSRCAndOneWithSSRCMayShareAPort() throws {
        let text = sdp(
            "m=audio 25000 RTP/AVP 111\na=rtpmap:111 opus/48000/2\n"
                + "m=audio 25000 RTP/AVP 111\na=rtpmap:111 opus/48000/2\na=ssrc:5 cname:x")
        let room = try RoomDescription.parseSDP(text, source: "x.sdp")
        #expect(room.participants.map(\.ssrc) == [nil, 5])
        #expect(room.ports == [25000])
    }
}
