import Foundation
import RoomTapFuzzing
import RoomTapJSON
import RoomTapTestSupport
import RoomTapWebRTC
import Testing

/// Sora's signaling messages (hostile input in, the client's messages out), `sora+wss://` URLs and
/// the multi-stream answer to Sora's offers (an `m=audio` per publisher, port 0 for a leaver).
@Suite struct SoraSignalingTests {
    @Test func soraJoinURLs() throws {
        let target = try #require(SoraTarget(url: "sora+wss://sora.example.net/signaling?channel_id=room-1"))
        #expect(target.signalingURL == "wss://sora.example.net/signaling")
        #expect(target.channelID == "room-1")
        #expect(target.nameKey == "name")
        #expect(SoraTarget(url: "sora+ws://127.0.0.1:5000/signaling?channel_id=a%40b")?.channelID == "a@b")
        #expect(
            SoraTarget(url: "sora+ws://127.0.0.1:5000?channel_id=x")?.signalingURL == "ws://127.0.0.1:5000/signaling")
        #expect(SoraTarget(url: "sora+wss://h/signaling") == nil, "no channel_id")
        #expect(SoraTarget(url: "sora+wss://h/signaling?channel_id=") == nil)
        #expect(SoraTarget(url: "sora+https://h/signaling?channel_id=x") == nil)
        #expect(SoraTarget(url: "wss://h/signaling?channel_id=x") == nil)
        var secret = target
        secret.metadata = ["access_token": "tok-SECRET"]
        #expect(!secret.description.contains("SECRET"))
    }

    @Test func theConnectMessageIsExactlyWhatTheIssueAsks() throws {
        var target = try #require(SoraTarget(url: "sora+wss://h/signaling?channel_id=ch"))
        target.metadata = ["access_token": "T"]
        target.client = "roomtap 0.1.0"
        let text = SoraMessage.connect(target: target, role: "recvonly", sdp: "v=0\r\n", redirect: false)
        let message = try JSONValue(parsing: text)
        let keys = Set(message.objectValue?.keys.map { $0 } ?? [])
        #expect(
            keys == [
                "type", "role", "channel_id", "audio", "video", "sora_client", "environment", "sdp", "metadata",
                "data_channel_signaling",
            ])
        #expect(message["type"] == "connect")
        #expect(message["role"] == "recvonly")
        #expect(message["channel_id"] == "ch")
        #expect(message["audio"] == true)
        #expect(message["video"] == false)
        #expect(message["data_channel_signaling"] == false)
        #expect(message["sora_client"] == "roomtap 0.1.0")
        #expect(message["metadata"] == ["access_token": "T"])
        #expect(message["multistream"] == nil)
        let environment = message["environment"]?.stringValue ?? ""
        #expect(environment.hasPrefix("Linux"), "environment: \(environment)")
        let again = try JSONValue(
            parsing: SoraMessage.connect(target: target, role: "recvonly", sdp: "v=0", redirect: true))
        #expect(again["redirect"] == true)
        #expect(try JSONValue(parsing: SoraMessage.disconnect) == ["type": "disconnect", "reason": "NO-ERROR"])
        #expect(try JSONValue(parsing: SoraMessage.answer("v=0", re: true)) == ["type": "re-answer", "sdp": "v=0"])
        #expect(
            try JSONValue(parsing: SoraMessage.candidate("candidate:1 1 UDP 2 127.0.0.1 5 typ host"))
                == ["type": "candidate", "candidate": "candidate:1 1 UDP 2 127.0.0.1 5 typ host"])
        #expect(try JSONValue(parsing: SoraMessage.pong(stats: nil)) == ["type": "pong"])
        #expect(try JSONValue(parsing: SoraMessage.pong(stats: [])) == ["type": "pong", "stats": []])
    }

    @Test func serverMessagesAreRead() throws {
        let offer = try SoraMessage.parse(
            #"{"type":"offer","sdp":"v=0","client_id":"c","connection_id":"K","session_id":"S","config":{"iceServers":[{"urls":["stun:stun.example:3478","turn:t.example"],"username":"u","credential":"p"},{"urls":"stun:other"}],"iceTransportPolicy":"all"}}"#
        )
        guard case .offer(let o) = offer else {
            Issue.record("not an offer: \(offer)")
            return
        }
        #expect(o.connectionID == "K" && o.clientID == "c" && o.sessionID == "S")
        #expect(o.iceServers.map(\.urls) == [["stun:stun.example:3478", "turn:t.example"], ["stun:other"]])
        #expect(
            SoraJoin.iceServers(o).servers == [
                ICEServer(kind: .stun, host: "stun.example", port: 3478),
                ICEServer(kind: .turnUDP, host: "t.example", port: 3478, username: "u", credential: "p"),
                ICEServer(kind: .stun, host: "other", port: 3478),
            ])
        #expect(!o.relayOnly)
        #expect(try SoraMessage.parse(#"{"type":"re-offer","sdp":"v=0"}"#) == .reOffer(sdp: "v=0"))
        #expect(try SoraMessage.parse(#"{"type":"ping","stats":true}"#) == .ping(stats: true))
        #expect(try SoraMessage.parse(#"{"type":"ping"}"#) == .ping(stats: false))
        #expect(try SoraMessage.parse(#"{"type":"push","data":{"a":1}}"#) == .push(["a": 1]))
        #expect(
            try SoraMessage.parse(#"{"type":"redirect","location":"wss://n2/signaling"}"#)
                == .redirect(location: "wss://n2/signaling"))
        #expect(try SoraMessage.parse(#"{"type":"switched"}"#) == .other(type: "switched"))
        let notify = try SoraMessage.parse(
            #"{"type":"notify","event_type":"connection.created","connection_id":"ME","client_id":"me","role":"recvonly","data":[{"connection_id":"A","client_id":"alice","metadata":{"name":"Alice"}},{"client_id":"no id"}]}"#
        )
        guard case .notify(let n) = notify else {
            Issue.record("not a notify")
            return
        }
        #expect(n.eventType == "connection.created")
        #expect(n.connection?.connectionID == "ME")
        #expect(n.data.map(\.connectionID) == ["A"], "an entry without connection_id is skipped")
        #expect(SoraJoin.name(of: n.data.first, key: "name") == "Alice")
        #expect(SoraJoin.name(of: n.data.first, key: "display") == nil)
    }

    @Test func hostileMessagesAreOneLineErrorsNeverACrash() {
        let cases: [(String, String)] = [
            ("not json", "is not JSON"),
            ("[1,2]", "is not a JSON object"),
            (#"{"sdp":"v=0"}"#, #"has no "type""#),
            (#"{"type":7}"#, #"has no "type""#),
            (#"{"type":"offer"}"#, #"offer has no "sdp""#),
            (#"{"type":"re-offer","sdp":""}"#, #"re-offer has no "sdp""#),
            (#"{"type":"redirect","location":"http://x"}"#, "redirect has no ws:// or wss://"),
            (#"{"type":"notify"}"#, #"notify has no "event_type""#),
            (String(repeating: " ", count: SoraMessage.maxBytes + 1), "longer than"),
            (String(repeating: "[", count: 10_000), "is not JSON"),
        ]
        for (text, message) in cases {
            do {
                _ = try SoraMessage.parse(text)
                Issue.record("accepted: \(text.prefix(40))")
            } catch {
                #expect(error.description.contains(message), "\(text.prefix(40)): \(error.description)")
                #expect(!error.description.contains("\n"))
            }
        }
        // Bounded lists.
        let many = (0..<5000).map { #"{"connection_id":"c\#($0)"}"# }.joined(separator: ",")
        if case .notify(let n)? = try? SoraMessage.parse(#"{"type":"notify","event_type":"x","data":[\#(many)]}"#) {
            #expect(n.data.count == SoraMessage.maxEntries)
        } else {
            Issue.record("a long data list was refused")
        }
        #expect(SoraJoin.describe(code: 4000, reason: "") == "WebSocket close code 4000")
        #expect(SoraJoin.describe(code: 4000, reason: "INVALID-ROLE") == "INVALID-ROLE (WebSocket close code 4000)")
    }

    /// A Sora-shaped offer: a first inactive section (the transport), two publishers (msid = their
    /// connection ids), one who left (port 0), and video rejected.
    static let multiStreamOffer = """
        v=0\r
        o=- 1 2 IN IP4 0.0.0.0\r
        s=-\r
        t=0 0\r
        a=group:BUNDLE 0 1 2 4\r
        a=msid-semantic:WMS *\r
        m=audio 9 UDP/TLS/RTP/SAVPF 111\r
        c=IN IP4 0.0.0.0\r
        a=mid:0\r
        a=inactive\r
        a=rtcp-mux\r
        a=rtpmap:111 opus/48000/2\r
        a=ice-ufrag:abcd\r
        a=ice-pwd:0123456789012345678901\r
        a=fingerprint:sha-256 AA:BB:CC\r
        a=setup:actpass\r
        a=candidate:1 1 UDP 2130706431 127.0.0.1 40000 typ host\r
        m=audio 9 UDP/TLS/RTP/SAVPF 111\r
        c=IN IP4 0.0.0.0\r
        a=mid:1\r
        a=sendonly\r
        a=msid:CONN-ALICE track-a\r
        a=rtcp-mux\r
        a=rtpmap:111 opus/48000/2\r
        a=fmtp:111 minptime=10;useinbandfec=1\r
        a=ssrc:1111 cname:x\r
        a=ice-ufrag:abcd\r
        a=ice-pwd:0123456789012345678901\r
        a=fingerprint:sha-256 AA:BB:CC\r
        a=setup:actpass\r
        m=audio 9 UDP/TLS/RTP/SAVPF 111\r
        c=IN IP4 0.0.0.0\r
        a=mid:2\r
        a=sendonly\r
        a=rtcp-mux\r
        a=rtpmap:111 opus/48000/2\r
        a=ssrc:2222 cname:y\r
        a=ssrc:2222 msid:CONN-BOB track-b\r
        a=ice-ufrag:abcd\r
        a=ice-pwd:0123456789012345678901\r
        a=fingerprint:sha-256 AA:BB:CC\r
        a=setup:actpass\r
        m=audio 0 UDP/TLS/RTP/SAVPF 111\r
        c=IN IP4 0.0.0.0\r
        a=mid:3\r
        a=inactive\r
        m=video 9 UDP/TLS/RTP/SAVPF 96\r
        c=IN IP4 0.0.0.0\r
        a=mid:4\r
        a=rtpmap:96 VP8/90000\r

        """

    @Test func aMultiStreamOfferIsAnsweredSectionBySection() throws {
        let offer = try WebRTCSessionDescription.parse(Self.multiStreamOffer)
        #expect(offer.media.map(\.streamID) == [nil, "CONN-ALICE", "CONN-BOB", nil, nil])
        #expect(offer.media[1].ssrcs == [1111])
        #expect(offer.media[2].ssrcs == [2222])
        let taken = try offer.receivableAudioSections()
        #expect(taken.map(\.index) == [0, 1, 2], "audio with a port and Opus; the leaver's port 0 and video not")
        var local = SDPWriter.Local(
            ufrag: "me", password: "mypassword0123456789ab", fingerprint: "sha-256 11:22", candidates: ["candidate:x"],
            setup: "active", direction: "recvonly")
        local.trickle = true
        let answer = SDPWriter.multiStreamAnswer(
            to: offer, taking: Set(taken.map(\.index)), local: local, sessionID: 7, version: 3)
        #expect(answer.contains("o=roomtap 7 3 IN IP4"))
        #expect(answer.contains("a=group:BUNDLE 0 1 2\r\n"))
        #expect(!answer.contains("a=candidate"), "trickled: no candidates in the SDP")
        #expect(!answer.contains("end-of-candidates"))
        let back = try WebRTCSessionDescription.parse(answer)
        #expect(back.media.count == offer.media.count, "one answer section per offered section, in order")
        #expect(back.media.map(\.mid) == ["0", "1", "2", "3", "4"])
        #expect(back.media.map(\.port) == [9, 9, 9, 0, 0])
        #expect(back.media.map(\.direction) == ["inactive", "recvonly", "recvonly", "inactive", "inactive"])
        #expect(back.media[1].opusParameters == "minptime=10;useinbandfec=1")
        #expect(back.media[1].setup == "active")
    }

    @Test func anOfferWithoutAReceivableSectionIsRefusedByName() throws {
        let noTransport = try WebRTCSessionDescription.parse(
            "v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\nm=audio 0 UDP/TLS/RTP/SAVPF 111\r\na=mid:0\r\n")
        #expect(try noTransport.receivableAudioSections().isEmpty)
        let noFingerprint = Self.multiStreamOffer.replacingOccurrences(
            of: "a=fingerprint:sha-256 AA:BB:CC\r\n", with: "")
        #expect(throws: WebRTCError.self) {
            try WebRTCSessionDescription.parse(noFingerprint).receivableAudioSections()
        }
    }
}

/// The fuzz entry over Sora's messages: the seeds and thousands of seeded mutations of them (byte
/// flips, cuts, insertions) keep every invariant of ``WebRTCFuzz`` (no crash, our own answers read
/// back).
@Suite struct SoraFuzzSmokeTests {
    @Test func mutatedSoraMessagesKeepTheFuzzInvariants() throws {
        let seeds = try ["sora-offer.json", "sora-notify.json"].map { name in
            try Array(Data(contentsOf: WebRTCPeers.packageRoot.appendingPathComponent("Fuzz/seeds/\(name)")))
        }
        var generator = SplitMix(seed: 31)
        for seed in seeds {
            seed.withUnsafeBytes { WebRTCFuzz.exercise($0) }
            for _ in 0..<1500 {
                var bytes = seed
                for _ in 0..<Int(generator.next() % 4 + 1) {
                    let at = Int(generator.next() % UInt64(max(1, bytes.count)))
                    switch generator.next() % 3 {
                    case 0: if !bytes.isEmpty { bytes[at] = UInt8(truncatingIfNeeded: generator.next()) }
                    case 1: bytes = Array(bytes.prefix(at))
                    default: bytes.insert(UInt8(truncatingIfNeeded: generator.next()), at: min(at, bytes.count))
                    }
                }
                bytes.withUnsafeBytes { WebRTCFuzz.exercise($0) }
            }
        }
    }
}

private struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
