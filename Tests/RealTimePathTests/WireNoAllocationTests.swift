import CAllocationCounter
import RoomTapAll
import RoomTapFuzzing
import RoomTapRTP
import RoomTapRTPTestSupport
import Testing

extension AllocationCounting {
    /// The wire parsers run on the receive thread for every datagram: none of them may allocate.
    @Suite(
        "Wire: parsers allocate nothing")
    struct WireNoAllocationTests {
        @Test func parsingEveryKindOfDatagramAllocatesNothing() {
            var rtp = RTPPacketBuilder(payloadType: 111, sequenceNumber: 1, timestamp: 960, payload: [0xFC, 1, 2, 3])
            rtp.csrcs = [1, 2]
            rtp.extension = .oneByte([(id: 1, data: [0x9E]), (id: 2, data: [1, 2, 3])])
            rtp.padding = 4
            var two = rtp
            two.extension = .twoByte([(id: 200, data: [1, 2, 3])])
            let rtcp =
                RTCPPacketBuilder.senderReport(ssrc: 1, ntp: 2, rtpTimestamp: 3, packetCount: 4, octetCount: 5)
                + RTCPPacketBuilder.cnames([(1, "alice@host")]) + RTCPPacketBuilder.bye(ssrcs: [1], reason: "done")
            let opus: [UInt8] = [(31 << 3) | 3, 0x80 | 3, 2, 1, 9, 9, 9, 9, 9, 9]
            let datagrams = [rtp.bytes(), two.bytes(), rtcp, opus, [0x80, 0x00], []]
            // The builders live until after the counted region (an optimised build may otherwise
            // release their arrays inside it: frees are counted too).
            defer { withExtendedLifetime((rtp, two, rtcp, opus, datagrams)) {} }
            roomtap_reset_counted_allocations()
            roomtap_count_allocations_on_this_thread(1)
            var sum = 0
            for _ in 0..<100 {
                for d in datagrams {
                    d.withUnsafeBytes { raw in
                        if case .packet(let p) = RTPPacket.parse(raw) {
                            sum &+=
                                Int(p.sequenceNumber)
                                &+ (p.extensionElements.audioLevel(id: 1).map { Int($0.level) } ?? 0)
                            sum &+= OpusPayload.duration(of: p.payload) ?? 0
                        }
                        for packet in RTCPCompoundPacket(raw) {
                            sum &+= Int(RTCPSenderReport.parse(packet)?.rtpTimestamp ?? 0)
                            sum &+= RTCPBye.parse(packet)?.ssrcCount ?? 0
                            if let sdes = RTCPSourceDescription.parse(packet) {
                                for chunk in sdes { sum &+= chunk.cnameRange?.count ?? 0 }
                            }
                        }
                        sum &+= OpusPayload.inspect(raw)?.samples ?? 0
                        WireFuzz.exercise(raw)
                    }
                }
            }
            roomtap_count_allocations_on_this_thread(0)
            #expect(sum != 0)
            #expect(
                !allocationCountsAsserted || roomtap_counted_allocations() == 0,
                "\(roomtap_counted_allocations()) allocations")
        }
    }
}

extension AllocationCounting {
    /// The receive thread's routing of a known stream (every packet after the first) allocates
    /// nothing either.
    @Suite("Live: routing a packet allocates nothing")
    struct RoutingNoAllocationTests {
        @Test func routingKnownStreamsAllocatesNothing() {
            let room = RoomDescription(participants: [
                ParticipantDescription(name: "alice", port: 25000, ssrc: 1, payloadTypes: [111]),
                ParticipantDescription(name: "bob", port: 25002),
            ])
            let directory = ParticipantDirectory(description: room, discoveryPorts: [25004])
            for (port, ssrc) in [(UInt16(25000), UInt32(1)), (25002, 2), (25004, 3)] {
                _ = directory.route(port: port, ssrc: ssrc, payloadType: 111, arrival: 0)
            }
            _ = directory.route(port: 25006, ssrc: 9, payloadType: 111, arrival: 0)  // first drop of its kind
            let before = roomtap_counted_allocations()
            roomtap_count_allocations_on_this_thread(1)
            var routed = 0
            for k in 1...1_000 {
                for (port, ssrc) in [(UInt16(25000), UInt32(1)), (25002, 2), (25004, 3), (25006, 9)] {
                    if case .existing = directory.route(port: port, ssrc: ssrc, payloadType: 111, arrival: UInt64(k)) {
                        routed += 1
                    }
                }
            }
            roomtap_count_allocations_on_this_thread(0)
            #expect(routed == 3_000)
            #expect(
                !allocationCountsAsserted || roomtap_counted_allocations() - before == 0,
                "\(roomtap_counted_allocations() - before) allocations")
        }
    }
}
