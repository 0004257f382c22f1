import RoomTapRTP

/// One entry point that runs every wire parser of this folder over arbitrary bytes, for a
/// libFuzzer target (`LLVMFuzzerTestOneInput`) or a random-bytes test.
///
/// The bytes are read as RTP (with its header extension elements and RFC 6464 audio level for
/// every ID), as a compound RTCP packet (SR, BYE, SDES), as an Opus payload (the whole input and
/// the RTP payload when it parses) and as NTP timestamps. Every range a parser returns is read
/// byte by byte, so an out-of-bounds range traps under a sanitizer or a debug build, and the
/// invariants below trap in any build:
/// - every range lies inside the input;
/// - an RTP packet's header, extension, payload and padding are in order and add up to the input;
/// - RTCP packets are consecutive, 32-bit multiples, bodies inside their packets.
///
/// Thread: pure, any thread. Allocates nothing in an optimized build, like the parsers it calls.
package enum WireFuzz {
    /// Runs every parser over `bytes`; traps only when a parser breaks an invariant.
    package static func exercise(_ bytes: UnsafeRawBufferPointer) {
        var sink: UInt64 = 0
        sink &+= UInt64(RTPDemux.isRTCP(bytes) ? 1 : 0)
        exerciseRTP(bytes, &sink)
        exerciseRTCP(bytes, &sink)
        exerciseOpus(bytes, &sink)
        if bytes.count >= 8 {
            let ntp = NTPTimestamp(seconds: bytes.bigEndianUInt32(at: 0), fraction: bytes.bigEndianUInt32(at: 4))
            let back = NTPTimestamp(secondsSince1900: ntp.secondsSince1900)
            sink &+= back.rawValue &+ UInt64(truncatingIfNeeded: Int64(ntp.seconds(to: back)))
        }
        blackHole(sink)
    }

    private static func exerciseRTP(_ bytes: UnsafeRawBufferPointer, _ sink: inout UInt64) {
        guard case .packet(let rtp) = RTPPacket.parse(bytes) else { return }
        let header = RTPPacket.fixedHeaderSize + 4 * rtp.csrcCount
        check(rtp.csrcCount <= 15 && header <= bytes.count, "CSRC list inside the packet")
        for i in 0..<rtp.csrcCount { sink &+= UInt64(rtp.csrc(at: i) ?? 0) }
        check(rtp.csrc(at: rtp.csrcCount) == nil && rtp.csrc(at: -1) == nil, "CSRC index bounds")
        var payloadStart = header
        if let ext = rtp.extensionRange {
            check(ext.lowerBound == header + 4 && ext.upperBound <= bytes.count, "extension inside the packet")
            payloadStart = ext.upperBound
            touch(bytes, ext, &sink)
            let elements = rtp.extensionElements
            var it = elements.makeIterator()
            var previousEnd = ext.lowerBound
            while let element = it.next() {
                check(element.dataRange.lowerBound > previousEnd, "elements in order, after their header")
                check(element.dataRange.upperBound <= ext.upperBound, "element inside the extension")
                touch(bytes, element.dataRange, &sink)
                previousEnd = element.dataRange.upperBound
            }
            sink &+= UInt64(elements.isWellFormed ? 1 : 0)
            for id in UInt8(0)...UInt8(15) {
                if let level = elements.audioLevel(id: id) { sink &+= UInt64(level.level) }
            }
            if let level = elements.audioLevel(id: 255) { sink &+= UInt64(level.level) }
        }
        let payload = rtp.payloadRange
        check(payload.lowerBound == payloadStart, "payload after the header")
        check(payload.upperBound + rtp.paddingCount == bytes.count, "payload and padding fill the packet")
        check(rtp.hasPadding ? rtp.paddingCount >= 1 : rtp.paddingCount == 0, "padding count")
        touch(bytes, payload, &sink)
        if let info = OpusPayload.inspect(rtp.payload) { sink &+= UInt64(info.samples) }
    }

    private static func exerciseRTCP(_ bytes: UnsafeRawBufferPointer, _ sink: inout UInt64) {
        var it = RTCPCompoundPacket(bytes).makeIterator()
        var expectedStart = 0
        while let packet = it.next() {
            check(packet.range.lowerBound == expectedStart, "RTCP packets are consecutive")
            check(packet.range.count % 4 == 0 && packet.range.upperBound <= bytes.count, "RTCP packet size")
            check(packet.bodyRange.lowerBound == packet.range.lowerBound + 4, "body after the header")
            check(packet.bodyRange.upperBound <= packet.range.upperBound, "body inside the packet")
            expectedStart = packet.range.upperBound
            touch(bytes, packet.bodyRange, &sink)
            if let sr = RTCPSenderReport.parse(packet) {
                sink &+= UInt64(sr.ssrc) &+ sr.ntpTimestamp.rawValue &+ UInt64(sr.rtpTimestamp)
            }
            if let bye = RTCPBye.parse(packet) {
                check(packet.bodyRange.lowerBound + 4 * bye.ssrcCount <= packet.bodyRange.upperBound, "BYE SSRCs")
                for i in 0..<bye.ssrcCount { sink &+= UInt64(bye.ssrc(at: i) ?? 0) }
                if let reason = bye.reasonRange {
                    check(reason.upperBound <= packet.bodyRange.upperBound, "BYE reason inside the body")
                    touch(bytes, reason, &sink)
                }
            }
            if let sdes = RTCPSourceDescription.parse(packet) {
                var chunks = 0
                for chunk in sdes {
                    chunks += 1
                    sink &+= UInt64(chunk.ssrc)
                    if let cname = chunk.cnameRange {
                        check(cname.upperBound <= packet.bodyRange.upperBound, "CNAME inside the body")
                        check(cname.count <= 255, "CNAME length")
                        touch(bytes, cname, &sink)
                    }
                }
                check(chunks <= sdes.chunkCount, "SDES chunk count")
            }
        }
        check(it.error != nil || expectedStart == bytes.count, "a clean walk covers the datagram")
    }

    private static func exerciseOpus(_ bytes: UnsafeRawBufferPointer, _ sink: inout UInt64) {
        guard let info = OpusPayload.inspect(bytes) else { return }
        check(info.frameCount >= 1 && info.frameCount <= 48, "Opus frame count")
        check(info.samples >= 120 && info.samples <= 5760, "Opus duration")
        check(
            info.samples == info.frameCount * OpusPacketInfo.samplesPerFrame(configuration: info.configuration),
            "Opus duration = frames × frame size")
        sink &+= UInt64(info.samples)
    }

    private static func touch(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>, _ sink: inout UInt64) {
        check(range.lowerBound >= 0 && range.upperBound <= bytes.count, "range inside the input")
        for i in range { sink &+= UInt64(bytes[i]) }
    }

    private static func check(_ condition: Bool, _ what: StaticString) {
        if !condition { fatalError("wire parser invariant failed: \(what)") }
    }

    @inline(never)
    private static func blackHole(_ value: UInt64) {
        _ = value
    }
}
