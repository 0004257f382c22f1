import Foundation
import RoomTapRTP
import Testing

/// SRTP keys in room descriptions: SDP `a=crypto` (SDES, RFC 4568) and the room file's `srtp`,
/// every refusal as one line that never shows the key.
@Suite("SRTP: keys from SDP a=crypto and the room file")
struct SRTPKeysTests {
    static let key30 = "zRCoQsnTDbsRqanw1ZL3PFeLJF+Nt+ALhQJRgnWA"  // 30 bytes: AES_CM_128
    static let key28 = Data((0..<28).map { UInt8($0 &* 7) }).base64EncodedString()  // AEAD_AES_128_GCM
    static let key44 = Data((0..<44).map { UInt8($0 &* 5) }).base64EncodedString()  // AEAD_AES_256_GCM
    static let head = "v=0\no=- 0 0 IN IP4 127.0.0.1\ns=x\nc=IN IP4 127.0.0.1\nt=0 0\n"

    func sdp(_ proto: String = "RTP/AVP", crypto: [String]) -> String {
        Self.head + "m=audio 25000 \(proto) 97\na=rtpmap:97 opus/48000/2\n"
            + crypto.map { "a=crypto:\($0)\n" }.joined()
    }

    @Test func whatFFmpegWritesForAnSRTPOutputIsReadWithItsKey() throws {
        let room = try RoomDescription.parseSDP(try roomFixture("RoomFFmpegSRTP.sdp"), source: "f.sdp")
        let keying = try #require(room.participants.first?.srtp)
        #expect(keying.suite == .aesCM128HMACSHA1Tag80)
        #expect(keying == SRTPKeying(suite: .aesCM128HMACSHA1Tag80, base64: Self.key30))
    }

    @Test(arguments: [
        ("AES_CM_128_HMAC_SHA1_80", key30, SRTPSuite.aesCM128HMACSHA1Tag80),
        ("AES_CM_128_HMAC_SHA1_32", key30, .aesCM128HMACSHA1Tag32),
        ("AEAD_AES_128_GCM", key28, .aeadAES128GCM),
        ("AEAD_AES_256_GCM", key44, .aeadAES256GCM),
    ])
    func theFourSuites(name: String, key: String, suite: SRTPSuite) throws {
        for proto in ["RTP/AVP", "RTP/SAVP", "RTP/SAVPF"] {
            let room = try RoomDescription.parseSDP(sdp(proto, crypto: ["1 \(name) inline:\(key)"]), source: "r.sdp")
            #expect(room.participants.first?.srtp?.suite == suite)
            #expect(room.participants.first?.srtp?.keyAndSalt.count == suite.keyAndSaltLength)
        }
        // A lifetime is the sender's limit: taken.
        let lifetime = try RoomDescription.parseSDP(sdp(crypto: ["1 \(name) inline:\(key)|2^31"]), source: "r.sdp")
        #expect(lifetime.participants.first?.srtp?.suite == suite)
    }

    @Test func whatACryptoLineCannotSayIsRefusedInOneLine() throws {
        let key = Self.key30
        let cases: [([String], String, RoomDescriptionError.Reason)] = [
            (
                ["1 F8_128_HMAC_SHA1_80 inline:\(key)"],
                "r.sdp:8: a=crypto suite \"F8_128_HMAC_SHA1_80\" is not one roomtap receives; have the sender use "
                    + "AES_CM_128_HMAC_SHA1_80, AES_CM_128_HMAC_SHA1_32, AEAD_AES_128_GCM, AEAD_AES_256_GCM",
                .unsupported
            ),
            (
                ["1 AES_CM_128_HMAC_SHA1_80 inline:\(key)|2^20|1:4"],
                "r.sdp:8: a=crypto key has an MKI (|<MKI>:<length>); roomtap takes keys without an MKI", .unsupported
            ),
            (
                ["1 AES_CM_128_HMAC_SHA1_80 inline:\(key);inline:\(key)"],
                "r.sdp:8: a=crypto gives 2 keys; roomtap takes one key (inline:...) per line", .unsupported
            ),
            (
                ["1 AES_CM_128_HMAC_SHA1_80 inline:\(key) UNENCRYPTED_SRTP"],
                "r.sdp:8: a=crypto session parameter \"UNENCRYPTED_SRTP\" is not supported; roomtap takes a=crypto "
                    + "lines without session parameters", .unsupported
            ),
            (
                ["1 AES_CM_128_HMAC_SHA1_80 inline:\(key)", "2 AES_CM_128_HMAC_SHA1_32 inline:\(key)"],
                "r.sdp:9: m=audio on port 25000 has a second a=crypto line (the first is on line 8); roomtap takes "
                    + "the one key the sender uses: keep one a=crypto line per section", .unsupported
            ),
            (
                ["1 AEAD_AES_256_GCM inline:\(key)"],
                "r.sdp:8: a=crypto key and salt is 30 bytes; AEAD_AES_256_GCM takes 44 bytes (32 of key, 12 of salt) "
                    + "in base64", .malformed
            ),
            (
                ["1 AES_CM_128_HMAC_SHA1_80 inline:\(key.dropLast(2))!!"],
                "r.sdp:8: a=crypto key and salt is not base64; AES_CM_128_HMAC_SHA1_80 takes 30 bytes (16 of key, "
                    + "14 of salt) in base64", .malformed
            ),
            (
                ["1 AES_CM_128_HMAC_SHA1_80"],
                "r.sdp:8: malformed a=crypto line; expected a=crypto:<tag> <suite> inline:<base64 key and salt> "
                    + "(RFC 4568)", .malformed
            ),
            (
                ["x AES_CM_128_HMAC_SHA1_80 inline:\(key)"],
                "r.sdp:8: malformed a=crypto line; expected a=crypto:<tag> <suite> inline:<base64 key and salt> "
                    + "(RFC 4568)", .malformed
            ),
        ]
        for (lines, message, reason) in cases {
            let error = try #require(sdpError(sdp(crypto: lines), source: "r.sdp"))
            #expect(error.description == message)
            #expect(error.reason == reason)
            #expect(!error.description.contains(String(key.prefix(12))), "the key is never shown")
        }
        let sessionLevel = try #require(
            sdpError(
                Self.head + "a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:\(key)\n" + sdp(crypto: []), source: "r.sdp"))
        #expect(sessionLevel.description.hasPrefix("r.sdp:6: a=crypto at session level"))
    }

    @Test func janusRTPForwardSRTPIsWhatTheRoomFileSays() throws {
        let json = """
            {"listen": "127.0.0.1", "allow": ["10.0.0.0/8", "::1"], "participants": [
              {"name": "alice", "port": 25000, "srtp": {"suite": 80, "key": "\(Self.key30)"}},
              {"name": "bob", "port": 25002, "srtp": {"suite": 32, "key": "\(Self.key30)"}},
              {"name": "carol", "port": 25004, "srtp": {"suite": "AEAD_AES_256_GCM", "key": "\(Self.key44)"}},
              {"name": "dave", "port": 25006}
            ]}
            """
        let room = try RoomDescription.parseJSON(Data(json.utf8), source: "people.json")
        #expect(
            room.participants.map(\.srtp?.suite) == [
                .aesCM128HMACSHA1Tag80, .aesCM128HMACSHA1Tag32, .aeadAES256GCM, nil,
            ])
        #expect(room.allow.map(\.description) == ["10.0.0.0/8", "::1/128"])
        for text in [String(describing: room), String(reflecting: room), "\(room.participants[0])"] {
            #expect(!text.contains(String(Self.key30.prefix(10))) && !text.contains("205, 16"), "no key in \(text)")
        }
    }

    @Test func roomFileSRTPErrorsNameThePathAndNeverTheKey() throws {
        func expect(_ srtp: String, _ message: String, sourceLocation: SourceLocation = #_sourceLocation) {
            let json = "{\"participants\": [\n{\"name\": \"a\", \"port\": 25000, \"srtp\": \(srtp)}]}"
            guard let error = roomFileError(json, source: "p.json") else { return }
            #expect(error.description == message, sourceLocation: sourceLocation)
            #expect(!error.description.contains(String(Self.key30.prefix(12))), sourceLocation: sourceLocation)
        }
        expect(
            "{\"suite\": 64, \"key\": \"\(Self.key30)\"}",
            "p.json:2: participants[0].srtp.suite: 64 is not an SRTP suite roomtap receives; give one of "
                + "AES_CM_128_HMAC_SHA1_80, AES_CM_128_HMAC_SHA1_32, AEAD_AES_128_GCM, AEAD_AES_256_GCM, or Janus's "
                + "srtp_suite 80 or 32")
        expect(
            "{\"suite\": 80, \"key\": \"\(Self.key30.dropLast(4))\"}",
            "p.json:2: participants[0].srtp.key: is 27 bytes (the key is not shown); AES_CM_128_HMAC_SHA1_80 takes "
                + "30 bytes (16 of key, 14 of salt) in base64")
        expect(
            "{\"suite\": 80}",
            "p.json:2: participants[0].srtp: missing \"key\"; give the master key and salt in base64 (Janus: srtp_crypto)"
        )
        expect(
            "{\"suite\": 80, \"key\": \"\(Self.key30)\", \"mki\": 1}",
            "p.json:2: participants[0].srtp.mki: unknown key; the keys are suite, key")
        expect(
            "\"\(Self.key30)\"",
            "p.json:2: participants[0].srtp: is not an object; give {\"suite\": \"AES_CM_128_HMAC_SHA1_80\", \"key\": "
                + "\"<base64>\"}")
        let allow = try #require(
            roomFileError("{\"allow\": [\"10.0.0.0/33\"], \"participants\": [{\"name\": \"a\", \"port\": 25000}]}"))
        #expect(
            allow.description
                == "room.json:1: allow[0]: \"10.0.0.0/33\" is not an address or network (e.g. \"192.0.2.7\", "
                + "\"10.0.0.0/8\", \"2001:db8::/32\")")
    }

    @Test func aPortIsSRTPOrPlainNeverBoth() throws {
        let json = """
            {"participants": [
              {"name": "alice", "port": 25000, "ssrc": 1, "srtp": {"suite": 80, "key": "\(Self.key30)"}},
              {"name": "bob", "port": 25000, "ssrc": 2}
            ]}
            """
        let error = try #require(roomFileError(json, source: "p.json"))
        #expect(
            error.description
                == "p.json: port 25000: \"alice\" sends SRTP and \"bob\" plain RTP; give every participant of a port "
                + "an SRTP key, or none")
    }

    @Test func sourcePrefixes() throws {
        #expect(SourcePrefix("10.1.2.3/8")?.description == "10.0.0.0/8")
        #expect(SourcePrefix("192.0.2.7")?.description == "192.0.2.7/32")
        #expect(SourcePrefix("2001:db8::1/32")?.description == "2001:db8::/32")
        #expect(SourcePrefix("::/0")?.description == "::/0")
        for bad in ["", "10.0.0.0/", "10.0.0.0/33", "::1/129", "host.example", "10.0.0.0/8/8", "1.2.3", "10.0.0.0/-1"] {
            #expect(SourcePrefix(bad) == nil, "\(bad)")
        }
    }
}
