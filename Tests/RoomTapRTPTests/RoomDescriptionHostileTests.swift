import Foundation
import RoomTapFuzzing
import RoomTapRTP
import RoomTapTestSupport
import Testing

/// Hostile and random input: always an error or a room that keeps the invariants, never a crash or hang.
@Suite("RoomDescription: hostile input")
struct RoomDescriptionHostileTests {
    @Test func tenThousandRandomBuffersAreRefusedByBothParsers() {
        var rng = SplitMix64(seed: 0x5EED_0003)
        var sdpRefused = 0
        var jsonRefused = 0
        for iteration in 0..<10_000 {
            let count = Int(rng.next() % 513)
            var bytes = [UInt8](repeating: 0, count: count)
            for start in stride(from: 0, to: count, by: 8) {
                withUnsafeBytes(of: rng.next()) { word in
                    for offset in 0..<min(8, count - start) { bytes[start + offset] = word[offset] }
                }
            }
            if (try? RoomDescription.parseSDP(String(decoding: bytes, as: UTF8.self), source: "r.sdp")) == nil {
                sdpRefused += 1
            }
            if (try? RoomDescription.parseJSON(Data(bytes), source: "r.json")) == nil { jsonRefused += 1 }
            // The fuzz entry decodes the text again (the slow part of this test); a tenth is enough here.
            if iteration % 10 == 0 { bytes.withUnsafeBytes { RoomDescriptionFuzz.exercise($0) } }
        }
        #expect(sdpRefused == 10_000)
        #expect(jsonRefused == 10_000)
    }

    /// Random lines drawn from SDP fragments, valid and broken: whatever parses keeps the invariants.
    @Test func tenThousandRandomSDPsFromFragmentsKeepTheInvariants() {
        let fragments = [
            "v=0", "c=IN IP4 127.0.0.1", "c=IN IP6 ::1/2", "c=IN IP4 239.0.0.1/16/2", "c=IN IP9 x",
            "m=audio 25000 RTP/AVP 111", "m=audio 25002 RTP/AVPF 96 111", "m=audio 0 RTP/AVP 111",
            "m=audio 65535 RTP/AVP 0", "m=audio 65536 RTP/AVP 1",
            "m=audio -1 RTP/AVP 111", "m=video 25004 RTP/AVP 96", "m=audio 25006 RTP/SAVP 111", "m=audio", "m=",
            "a=rtpmap:111 opus/48000/2", "a=rtpmap:96 OPUS/48000", "a=rtpmap:0 PCMU/8000", "a=rtpmap:111",
            "a=fmtp:111 sprop-stereo=1", "a=fmtp:96 stereo=1;;=;x", "a=fmtp:", "a=ssrc:1 cname:a", "a=ssrc:2 label:b",
            "a=ssrc:1 msid:- -", "a=ssrc:99999999999", "a=ssrc:", "a=label:alice", "a=label:", "a=mid:0", "a=msid:",
            "no equals", "=", "\r", "", "a=ssrc:3", "m=audio 25000/1 RTP/AVP 111", "m=audio 25000/0 RTP/AVP 111",
            "a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:zRCoQsnTDbsRqanw1ZL3PFeLJF+Nt+ALhQJRgnWA",
            "a=crypto:2 AEAD_AES_128_GCM inline:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==", "a=crypto:1 F8_128 inline:x",
            "a=crypto:", "a=crypto:1 AES_CM_128_HMAC_SHA1_32 inline:zRCoQsnTDbsRqanw1ZL3PFeLJF+Nt+ALhQJRgnWA|2^31|1:4",
        ]
        var rng = SplitMix64(seed: 42)
        var accepted = 0
        for _ in 0..<10_000 {
            let lines = (0..<Int.random(in: 1...12, using: &rng)).map { _ in fragments.randomElement(using: &rng)! }
            let text = lines.joined(separator: Bool.random(using: &rng) ? "\n" : "\r\n")
            do {
                let room = try RoomDescription.parseSDP(text, source: "f.sdp")
                expectRoomInvariants(room)
                accepted += 1
            } catch {
                #expect(!error.description.contains("\n"))
                #expect(error.description.hasPrefix("f.sdp"))
                #expect(!error.description.contains("zRCoQsnT"), "a key is never in a message")
            }
        }
        #expect(accepted > 0, "the fragments make some valid rooms too")
    }

    /// Near 1 MiB of well-formed lines that grow state (fmtp parameters, ssrc attributes, formats): linear
    /// time, bounded state.
    @Test func pathologicalButWellFormedSDPsStayFast() throws {
        let head =
            "v=0\nm=audio 25000 RTP/AVP " + (0...127).map(String.init).joined(separator: " ")
            + "\na=rtpmap:111 opus/48000/2\n"
        var lines: [String] = []
        var size = head.utf8.count
        var index = 0
        while size < RoomDescription.maximumBytes - 100 {
            let line = index % 2 == 0 ? "a=fmtp:111 k\(index)=v;j\(index)=w" : "a=ssrc:7 cname:c\(index)"
            lines.append(line)
            size += line.utf8.count + 1
            index += 1
        }
        let clock = ContinuousClock()
        let start = clock.now
        let room = try RoomDescription.parseSDP(head + lines.joined(separator: "\n"), source: "p.sdp")
        #expect(clock.now - start < .seconds(10))
        #expect(room.participants.count == 1)
        #expect(room.participants[0].formatParameters.count == 32)
        #expect(room.participants[0].cname == "c1", "the first cname of an SSRC wins")
        #expect(room.participants[0].payloadTypes == [111])
    }

    @Test func oneMiBPlusOneOfJSONIsRefusedBeforeParsing() throws {
        let data = Data(repeating: UInt8(ascii: " "), count: RoomDescription.maximumBytes + 1)
        let error = try #require(roomFileError(data))
        #expect(
            error.description
                == "room.json: is 1048577 bytes, more than the 1048576 bytes (1 MiB) roomtap reads as a room file; "
                + "give the room file of one room")
        #expect(error.reason == .tooLarge)
    }

    @Test func deepNestingIsRefused() throws {
        let json = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        let error = try #require(roomFileError(json))
        #expect(
            error.description
                == "room.json:1: not valid JSON: arrays and objects nested deeper than 32 levels; "
                + "give a JSON room file (docs/ROOM-FILE.md)")
    }

    @Test func longLinesAndHugeNumbersAreRefusedWithShortMessages() throws {
        let line = "a=" + String(repeating: "x", count: 500_000)
        let error = try #require(sdpError("v=0\n" + String(repeating: "y", count: 400_000) + "\n" + line))
        #expect(error.description.count < 200)
        let zeros = String(repeating: "0", count: 1000)
        let huge = try #require(roomFileError("{\"participants\":[{\"name\":\"a\",\"port\":1\(zeros)}]}"))
        #expect(huge.description.count < 200)
        #expect(huge.message.hasPrefix("participants[0].port: 1000000000000000000000000000000000000000..."))
    }

    @Test func invalidUTF8IsRefusedFromJSONAndReadLossilyAsSDP() throws {
        let error = try #require(roomFileError(Data([0x7B, 0xFF, 0x7D])))
        #expect(error.description == "room.json: is not UTF-8 text; give a JSON room file (docs/ROOM-FILE.md)")
        var sdp = Array("v=0\nm=audio 25000 RTP/AVP 111\na=rtpmap:111 opus/48000/2\na=label:".utf8)
        sdp += [0xC3, 0x28, 0x0A]
        let room = try sdp.withUnsafeBytes {
            try RoomDescription.parseSDP(String(decoding: $0, as: UTF8.self), source: "u.sdp")
        }
        #expect(room.participants[0].name == "\u{FFFD}(")
    }
}
