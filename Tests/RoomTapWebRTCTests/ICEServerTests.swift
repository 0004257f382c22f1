import Foundation
import RoomTapFuzzing
import RoomTapWebRTC
import Testing

/// `offer.config.iceServers` (and WHEP's ice-server links) as libnice's STUN/TURN servers: every
/// URL form of RFC 7064 / RFC 7065 libnice can use, and hostile entries refused without a crash.
@Suite struct ICEServerTests {
    @Test func everyURLFormIsAServerWithItsTransportAndDefaultPort() {
        #expect(ICEServer(url: "stun:stun.example") == ICEServer(kind: .stun, host: "stun.example", port: 3478))
        #expect(ICEServer(url: "STUN:10.0.0.1:19302") == ICEServer(kind: .stun, host: "10.0.0.1", port: 19302))
        #expect(ICEServer(url: "stun:[2001:db8::1]:3479") == ICEServer(kind: .stun, host: "2001:db8::1", port: 3479))
        #expect(
            ICEServer(url: "turn:t.example?transport=udp", username: "u", credential: "p")
                == ICEServer(kind: .turnUDP, host: "t.example", port: 3478, username: "u", credential: "p"))
        #expect(
            ICEServer(url: "turn:t.example:443?transport=tcp", username: "u", credential: "p")
                == ICEServer(kind: .turnTCP, host: "t.example", port: 443, username: "u", credential: "p"))
        #expect(
            ICEServer(url: "turns:t.example", username: "u", credential: "p")
                == ICEServer(kind: .turnTLS, host: "t.example", port: 5349, username: "u", credential: "p"))
        let turn = ICEServer(url: "turn:[::1]:3478", username: "u", credential: "secret-pw")!
        #expect(turn.description == "turn:[::1]:3478?transport=udp", "never the credential")
    }

    @Test func everyEntryAndEveryURLIsTakenInOrderWithoutRepeats() throws {
        let offer = try SoraMessage.parse(
            #"{"type":"offer","sdp":"v=0","config":{"iceTransportPolicy":"relay","iceServers":[{"urls":"stun:a.example"},{"urls":["turn:127.0.0.1:3478?transport=udp","turn:127.0.0.1:3478?transport=tcp","turns:b.example:443?transport=tcp"],"username":"u1","credential":"c1"},{"urls":["turn:127.0.0.2"],"username":"u2","credential":"c2"},{"urls":"stun:a.example:3478"}]}}"#
        )
        guard case .offer(let o) = offer else {
            Issue.record("not an offer")
            return
        }
        #expect(o.relayOnly)
        let (servers, skipped) = SoraJoin.iceServers(o)
        #expect(skipped.isEmpty)
        #expect(
            servers.map(\.description) == [
                "stun:a.example:3478", "turn:127.0.0.1:3478?transport=udp", "turn:127.0.0.1:3478?transport=tcp",
                "turns:b.example:443?transport=tcp", "turn:127.0.0.2:3478?transport=udp",
            ])
        #expect(servers.map(\.username) == ["", "u1", "u1", "u1", "u2"])
        #expect(servers.map(\.credential) == ["", "c1", "c1", "c1", "c2"])
    }

    @Test func hostileOrUnusableEntriesAreSkippedByURLNeverACrash() {
        let bad: [String] = [
            "", ":", "stun:", "stun::3478", "stun:host:0", "stun:host:65536", "stun:host:-1", "stun:host:+80",
            "stun:host:３４７８", "stun:ho st", "stun:høst", "stun:host?transport=udp", "stuns:host",
            "turns:host?transport=udp", "turn:host?transport=sctp", "turn:host?foo=bar", "turn:[::1", "turn:[::1]x",
            "turn:[zz::1]", "turn:user@host", "http://host", "turn:" + String(repeating: "a", count: 600),
            "turn:" + String(repeating: "a", count: 254), "turn:host\u{0}", "turn:host\n",
        ]
        for url in bad {
            #expect(ICEServer(url: url, username: "u", credential: "p") == nil, "\(url.debugDescription)")
        }
        // TURN needs its credentials; control characters and oversize credentials are refused.
        #expect(ICEServer(url: "turn:host") == nil)
        #expect(ICEServer(url: "turn:host", username: "", credential: "p") == nil)
        #expect(ICEServer(url: "turn:host", username: "u\r\nX: y", credential: "p") == nil)
        #expect(ICEServer(url: "turn:host", username: "u", credential: String(repeating: "p", count: 513)) == nil)
        let (servers, skipped) = ICEServer.servers([
            (["stun:ok.example", "stuns:tls.example", "turn:no-credentials.example\nX"], nil, nil)
        ])
        #expect(servers.map(\.description) == ["stun:ok.example:3478"])
        #expect(skipped == ["stuns:tls.example", "turn:no-credentials.exampleX"], "one line each")
    }

    @Test func aNameIsResolvedToAnAddressForLibnice() throws {
        let local = try #require(ICEServer(url: "stun:localhost:3478")?.resolved())
        #expect(local.host == "127.0.0.1" || local.host == "::1")
        #expect(ICEServer(kind: .stun, host: "127.0.0.1", port: 1).resolved()?.host == "127.0.0.1")
        #expect(ICEServer(kind: .stun, host: "no-such-host.invalid", port: 1).resolved() == nil)
    }

    @Test func mutatedServerListsKeepTheFuzzInvariants() {
        var random = SystemRandomNumberGenerator()
        let seed = Array(
            #"{"type":"offer","sdp":"v=0","config":{"iceServers":[{"urls":["turn:[::1]:3478?transport=tcp","stun:a.b:1"],"username":"u","credential":"c"}]}}"#
                .utf8)
        for _ in 0..<3000 {
            var bytes = seed
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
            }
            bytes.withUnsafeBytes { WebRTCFuzz.exercise($0) }
        }
    }
}
