import RoomTapWebRTC
import Testing

/// The SDP roomtap reads from Janus and WHEP servers, and what it answers, with hostile inputs.
@Suite struct SessionDescriptionTests {
    /// The shape of a Janus 1.1 VideoRoom subscriber offer: audio and video, BUNDLE, candidates inline.
    static let janusOffer = """
        v=0\r
        o=- 1701 1 IN IP4 127.0.0.1\r
        s=VideoRoom 1234\r
        t=0 0\r
        a=group:BUNDLE 0 1\r
        a=ice-options:trickle\r
        a=fingerprint:sha-256 D2:B9:31:8F:DF:24:D8:0E:ED:D2:EF:25:9E:AF:6F:B8:34:AE:53:9C:E6:F3:8F:F2:64:15:FA:E8:7F:53:2D:38\r
        a=extmap-allow-mixed\r
        a=msid-semantic: WMS *\r
        m=audio 9 UDP/TLS/RTP/SAVPF 111\r
        c=IN IP4 127.0.0.1\r
        a=sendonly\r
        a=mid:0\r
        a=rtcp-mux\r
        a=ice-ufrag:OHRD\r
        a=ice-pwd:ZoTbl4nmMpzxgGUfh06c1b\r
        a=ice-options:trickle\r
        a=setup:actpass\r
        a=rtpmap:111 opus/48000/2\r
        a=fmtp:111 useinbandfec=1\r
        a=ssrc:3422401370 cname:janus\r
        a=candidate:1 1 udp 2015363327 127.0.0.1 44165 typ host\r
        a=end-of-candidates\r
        m=video 9 UDP/TLS/RTP/SAVPF 96 97\r
        c=IN IP4 127.0.0.1\r
        a=sendonly\r
        a=mid:1\r
        a=rtpmap:96 VP8/90000\r
        a=rtpmap:97 rtx/90000\r

        """

    @Test func theOpusAudioSectionIsTakenWithSessionLevelFingerprint() throws {
        let offer = try WebRTCSessionDescription.parse(Self.janusOffer)
        #expect(offer.bundle == ["0", "1"])
        #expect(offer.media.count == 2)
        let (index, audio) = try offer.audioSection()
        #expect(index == 0)
        #expect(audio.opusPayloadType == 111)
        #expect(audio.opusParameters == "useinbandfec=1")
        #expect(audio.iceUfrag == "OHRD")
        #expect(audio.fingerprint?.hasPrefix("sha-256 D2:B9") == true)
        #expect(audio.setup == "actpass")
        #expect(audio.candidates == ["candidate:1 1 udp 2015363327 127.0.0.1 44165 typ host"])
        #expect(audio.ssrcs == [3_422_401_370])
        #expect(audio.peerSends)
    }

    @Test func theAnswerReceivesAudioAndRejectsVideoOutOfTheBundle() throws {
        let offer = try WebRTCSessionDescription.parse(Self.janusOffer)
        let local = SDPWriter.Local(
            ufrag: "abcd", password: "0123456789012345678901", fingerprint: "sha-256 AA:BB",
            candidates: [
                "candidate:1 1 UDP 2015363327 127.0.0.1 5000 typ host"
            ], setup: "active", direction: "recvonly")
        let text = SDPWriter.answer(to: offer, audioIndex: 0, local: local, sessionID: 7)
        let answer = try WebRTCSessionDescription.parse(text)
        #expect(answer.bundle == ["0"])
        #expect(answer.media.map(\.kind) == ["audio", "video"])
        #expect(answer.media[1].port == 0)
        #expect(answer.media[1].mid == "1")
        #expect(answer.media[0].direction == "recvonly")
        #expect(answer.media[0].setup == "active")
        #expect(answer.media[0].opusPayloadType == 111)
        #expect(text.contains("a=end-of-candidates\r\n"))
        #expect(text.contains("a=candidate:1 1 UDP 2015363327 127.0.0.1 5000 typ host\r\n"))
    }

    @Test(arguments: [
        ("", "the peer's answer is not SDP (it does not start with v=0)"),
        ("<html>502 Bad Gateway</html>", "the peer's answer is not SDP (it does not start with v=0)"),
        ("v=0\r\ns=-\r\n", "the peer's SDP has no media section"),
        ("v=0\r\nm=audio x RTP\r\n", "the peer's SDP has a malformed m= line: audio x RTP"),
        (
            "v=0\r\nm=audio 99999 UDP/TLS/RTP/SAVPF 111\r\n",
            "the peer's SDP has a malformed m= line: audio 99999 UDP/TLS/RTP/SAVPF 111"
        ),
    ])
    func textThatIsNotUsableSDPIsOneLine(text: String, message: String) {
        #expect(throws: WebRTCError.sdp(message)) { try WebRTCSessionDescription.parse(text) }
    }

    @Test func anAnswerWithoutWhatDTLSAndICENeedIsRefusedByName() throws {
        let noOpus = "v=0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 0\r\na=rtpmap:0 PCMU/8000\r\n"
        #expect(throws: WebRTCError.sdp("the peer offers no Opus audio (roomtap takes opus/48000/2)")) {
            try WebRTCSessionDescription.parse(noOpus).audioSection()
        }
        let noICE = "v=0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\na=rtpmap:111 opus/48000/2\r\n"
        #expect(throws: WebRTCError.sdp("the peer's SDP has no ICE credentials (a=ice-ufrag, a=ice-pwd)")) {
            try WebRTCSessionDescription.parse(noICE).audioSection()
        }
        let noFingerprint = noICE + "a=ice-ufrag:a\r\na=ice-pwd:b\r\n"
        #expect(throws: WebRTCError.sdp("the peer's SDP has no DTLS fingerprint (a=fingerprint)")) {
            try WebRTCSessionDescription.parse(noFingerprint).audioSection()
        }
        let plain =
            "v=0\r\nm=audio 9 RTP/AVP 111\r\na=rtpmap:111 opus/48000/2\r\na=ice-ufrag:a\r\na=ice-pwd:b\r\n"
            + "a=fingerprint:sha-256 AA\r\n"
        #expect(throws: WebRTCError.sdp("the peer's audio is not DTLS-SRTP (m=audio 9 RTP/AVP)")) {
            try WebRTCSessionDescription.parse(plain).audioSection()
        }
        #expect(throws: WebRTCError.sdp("the peer's SDP has no audio section")) {
            try WebRTCSessionDescription.parse("v=0\r\nm=video 9 UDP/TLS/RTP/SAVPF 96\r\n").audioSection()
        }
    }

    @Test func hugeOrFloodedSDPIsBounded() throws {
        let long = "v=0\r\n" + String(repeating: "a=x\r\n", count: 20_000)
        #expect(throws: WebRTCError.sdp("the peer's SDP is longer than 64 KiB")) {
            try WebRTCSessionDescription.parse(long)
        }
        var many = "v=0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\n"
        for i in 0..<500 {
            many += "a=candidate:\(i) 1 udp 1 127.0.0.1 \(1000 + i) typ host\r\na=ssrc:\(i) cname:x\r\n"
        }
        let parsed = try WebRTCSessionDescription.parse(many)
        #expect(parsed.media[0].candidates.count == WebRTCSessionDescription.maxCandidates)
        #expect(parsed.media[0].ssrcs.count == 16)
    }

    @Test func bareLFAndTrailingBlanksAreRead() throws {
        let text = Self.janusOffer.replacingOccurrences(of: "\r\n", with: "  \n")
        let (_, audio) = try WebRTCSessionDescription.parse(text).audioSection()
        #expect(audio.iceUfrag == "OHRD")
    }
}
