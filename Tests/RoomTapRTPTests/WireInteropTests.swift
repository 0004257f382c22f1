import RoomTapRTP
import RoomTapTestSupport
import Testing

/// Datagrams laid out by hand, byte for byte, the way real senders put them on the wire, so the
/// parsers are checked against the RFC layout rather than against our own builder.
@Suite("Wire: packets as ffmpeg, GStreamer and an SFU send them")
struct WireInteropTests {
    /// `ffmpeg -re -i in.wav -c:a libopus -f rtp rtp://127.0.0.1:25000` (PT 97 here, as with
    /// `-payload_type 97`): libavformat's rtpenc sends one Opus packet per datagram with the
    /// marker set on every packet (`rtp_send_raw` marks the first fragment), no extension, no
    /// CSRC, 20 ms frames (TOC 0xFC: CELT fullband 20 ms stereo), random initial seq/timestamp.
    static func ffmpegPacket(seq: UInt16, ts: UInt32) -> [UInt8] {
        [0x80, 0x80 | 97] + wireBE16(seq) + wireBE32(ts) + wireBE32(0x5F3A_91C2) + [0xFC]
            + [UInt8](repeating: 0xA5, count: 159)
    }

    /// ffmpeg's RTCP (when `rtcp_port` equals the RTP port, the mux case): an SR with no report
    /// blocks followed by an SDES whose CNAME is the libavformat ident.
    static func ffmpegRTCP(ts: UInt32) -> [UInt8] {
        let sr: [UInt8] =
            [0x80, 200] + wireBE16(6) + wireBE32(0x5F3A_91C2) + wireBE32(0xEB0B_4F00) + wireBE32(0x4000_0000)
            + wireBE32(ts)
            + wireBE32(250) + wireBE32(40_000)
        let cname = Array("Lavf60.16.100".utf8)
        var sdes: [UInt8] = wireBE32(0x5F3A_91C2) + [1, UInt8(cname.count)] + cname + [0]
        while sdes.count % 4 != 0 { sdes.append(0) }
        return sr + [0x81, 202] + wireBE16(UInt16(sdes.count / 4)) + sdes
    }

    /// `gst-launch-1.0 audiotestsrc ! opusenc ! rtpopuspay pt=96 ! udpsink`: marker only on the
    /// first packet of a talkspurt, PT 96, 20 ms mono frames (TOC 0x78: config 15, hybrid
    /// fullband 20 ms).
    static func gstreamerPacket(seq: UInt16, ts: UInt32, first: Bool) -> [UInt8] {
        [0x80, (first ? 0x80 : 0) | 96] + wireBE16(seq) + wireBE32(ts) + wireBE32(0x0BAD_F00D) + [15 << 3]
            + [UInt8](repeating: 0x3C, count: 80)
    }

    @Test func anFFmpegStreamAcrossSequenceAndTimestampWrap() throws {
        var seq: UInt16 = 0xFFF0
        var ts: UInt32 = 0xFFFF_F000
        for n in 0..<50 {
            let datagram = n % 10 == 9 ? Self.ffmpegRTCP(ts: ts) : Self.ffmpegPacket(seq: seq, ts: ts)
            let isRTCP = datagram.withUnsafeBytes { RTPDemux.isRTCP($0) }
            #expect(isRTCP == (n % 10 == 9))
            if isRTCP {
                let walk = walkRTCP(datagram)
                #expect(walk.error == nil && walk.packets.map(\.packetType) == [200, 202])
                let sr = try #require(
                    datagram.withUnsafeBytes { raw in
                        var it = RTCPCompoundPacket(raw).makeIterator()
                        return it.next().flatMap(RTCPSenderReport.parse)
                    })
                #expect(sr.ssrc == 0x5F3A_91C2 && sr.rtpTimestamp == ts && sr.packetCount == 250)
                #expect(sr.ntpTimestamp.fraction == 0x4000_0000)
                let cnames = try #require(parseCNAMEs(Array(datagram.dropFirst(28))))
                #expect(cnames.chunks.map(\.1) == ["Lavf60.16.100"])
                continue
            }
            let p = try parseRTP(datagram).get()
            #expect(p.payloadType == 97 && p.marker && p.sequenceNumber == seq && p.timestamp == ts)
            #expect(p.ssrc == 0x5F3A_91C2 && p.csrcs.isEmpty && !p.hasExtension && !p.hasPadding)
            #expect(p.payloadRange == 12..<172)
            let info = try #require(p.payload.withUnsafeBytes { OpusPayload.inspect($0) })
            #expect(info.samples == 960 && info.isStereo && info.frameCount == 1 && !info.isDTX)
            seq &+= 1
            ts &+= 960
        }
        #expect(seq == 0x001D && ts == 0x0000_98C0)  // 45 packets: both wrapped
    }

    @Test func aGStreamerStreamWithRTCPAndBye() throws {
        var ts: UInt32 = 0x1234_5678
        for n in 0..<20 {
            let p = try parseRTP(Self.gstreamerPacket(seq: UInt16(100 + n), ts: ts, first: n == 0)).get()
            #expect(p.payloadType == 96 && p.marker == (n == 0) && p.sequenceNumber == UInt16(100 + n))
            let info = try #require(p.payload.withUnsafeBytes { OpusPayload.inspect($0) })
            #expect(info.configuration == 15 && info.samples == 960 && !info.isStereo)
            ts &+= 960
        }
        // rtpbin on EOS: RR (it also receives nothing) + SDES + BYE in one compound.
        let rr: [UInt8] = [0x80, 201] + wireBE16(1) + wireBE32(0x0BAD_F00D)
        let cname = Array("user1000@host-7f3a".utf8)
        var chunk: [UInt8] = wireBE32(0x0BAD_F00D) + [1, UInt8(cname.count)] + cname + [0]
        while chunk.count % 4 != 0 { chunk.append(0) }
        let sdes: [UInt8] = [0x81, 202] + wireBE16(UInt16(chunk.count / 4)) + chunk
        let bye: [UInt8] = [0x81, 203] + wireBE16(1) + wireBE32(0x0BAD_F00D)
        let compound = rr + sdes + bye
        #expect(compound.withUnsafeBytes { RTPDemux.isRTCP($0) })
        let walk = walkRTCP(compound)
        #expect(walk.error == nil && walk.packets.map(\.packetType) == [201, 202, 203])
        #expect(withFirstRTCPPacket(compound) { RTCPSenderReport.parse($0) } == nil)  // an RR is skipped
        #expect(parseBye(bye) == ByeSnapshot(ssrcs: [0x0BAD_F00D], reason: nil))
    }

    /// A browser's packet forwarded by an SFU (mediasoup, Janus): PT 111, one-byte extensions
    /// ssrc-audio-level (id 1), abs-send-time (id 2), transport-wide-cc (id 3), mid (id 4), padded.
    @Test func aBrowserPacketThroughAnSFU() throws {
        let ext: [UInt8] = [0x10, 0x80 | 27, 0x22, 0x01, 0x02, 0x03, 0x31, 0x00, 0x2A, 0x40, 0x30, 0x00]
        let datagram: [UInt8] =
            [0x90, 111] + wireBE16(7) + wireBE32(48_000) + wireBE32(0xA1B2_C3D4) + wireBE16(0xBEDE) + wireBE16(3) + ext
            + [0x78, 0x0B, 0xE4, 0xC1]
        #expect(!datagram.withUnsafeBytes { RTPDemux.isRTCP($0) })
        let p = try parseRTP(datagram).get()
        #expect(p.payloadType == 111 && p.extensionProfile == 0xBEDE)
        #expect(p.elements.map(\.id) == [1, 2, 3, 4])
        #expect(p.elements[1].data == [0x01, 0x02, 0x03] && p.elements[2].data == [0x00, 0x2A])
        #expect(p.elements[3].data == Array("0".utf8))
        let level = datagram.withUnsafeBytes { RTPPacket.parse($0).packet?.extensionElements.audioLevel(id: 1) }
        #expect(level?.voiceActivity == true && level?.level == 27)
        #expect(p.payload == [0x78, 0x0B, 0xE4, 0xC1])
        // A DTX packet of the same stream: TOC only.
        let dtx = Array(datagram.prefix(28)) + [0x78]
        let d = try parseRTP(dtx).get()
        #expect(d.payload.withUnsafeBytes { OpusPayload.inspect($0)?.isDTX } == true)
    }

    @Test func anAsteriskStylePacketWithRTPPaddingAndACSRC() throws {
        // A mixer's packet: one CSRC (the talker), padded to a multiple of 4 with 3 bytes.
        let datagram: [UInt8] =
            [0xA1, 96] + wireBE16(1) + wireBE32(960) + wireBE32(0x1111_1111) + wireBE32(0x2222_2222) + [
                0xF8, 9, 9, 9, 9,
            ]
            + [0, 0, 3]
        let p = try parseRTP(datagram).get()
        #expect(p.csrcs == [0x2222_2222] && p.paddingCount == 3 && p.payload == [0xF8, 9, 9, 9, 9])
    }
}
