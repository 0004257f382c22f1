import Foundation
import RoomTapRTP
import RoomTapRTPTestSupport
import RoomTapSync
import RoomTapTestSupport
import RoomTapWebRTC
import Testing

/// Two roomtap peer connections on loopback: libnice ICE, OpenSSL DTLS-SRTP and libsrtp2 for real,
/// each side checking the other's certificate against its SDP.
@Suite struct PeerConnectionTests {
    /// An offerer and an answerer on one ICE thread, host candidates on 127.0.0.1 only.
    private func pair(tamper: (String) -> String = { $0 }) throws -> (PeerConnection, PeerConnection, ICEContext) {
        let context = ICEContext()
        let offerer = PeerConnection(context: context, certificate: try DTLSCertificate(), hosts: ["127.0.0.1"])
        let answerer = PeerConnection(context: context, certificate: try DTLSCertificate(), hosts: ["127.0.0.1"])
        let offer = try offerer.makeOffer()
        let answer = try answerer.answer(offer: offer)
        try offerer.accept(answer: tamper(answer))
        return (offerer, answerer, context)
    }

    @Test func dtlsSRTPComesUpAndRTPArrivesDecryptedInOrder() throws {
        let (receiver, sender, context) = try pair()
        let received = Locked<[UInt16]>([])
        let payloads = Locked<[UInt8]>([])
        receiver.onRTP = { packet, _ in
            received.withLock { $0.append(packet.sequenceNumber) }
            payloads.withLock { $0.append(packet.payload.first ?? 0) }
        }
        try sender.waitUntilConnected(timeout: 20)
        try receiver.waitUntilConnected(timeout: 20)
        #expect(receiver.setUpSeconds != nil)
        var buffer = [UInt8](repeating: 0, count: 200)
        for sequence in UInt16(0)..<50 {
            let packet = RTPPacketBuilder(
                payloadType: 111, sequenceNumber: 1000 + sequence, timestamp: UInt32(sequence) * 960,
                payload: [UInt8(sequence), 1, 2, 3]
            ).bytes()
            buffer.replaceSubrange(0..<packet.count, with: packet)
            let sent = buffer.withUnsafeMutableBytes { sender.sendRTP($0, length: packet.count) }
            #expect(sent)
        }
        #expect(waitUntil { received.withLock { $0.count } == 50 })
        #expect(received.withLock { $0 } == Array(1000..<1050))
        #expect(payloads.withLock { $0 } == Array(0..<50))
        // Receiver reports go back every second (SRTCP, the sender decrypts them).
        #expect(waitUntil { receiver.counts.reportsSent >= 1 && sender.counts.rtcpPackets >= 1 })
        #expect(sender.counts.dropped == 0)
        receiver.close()
        sender.close()
        context.stop()
    }

    @Test func aCertificateThatDoesNotMatchTheFingerprintIsRefused() throws {
        // The answer carries another certificate's fingerprint: the offerer must refuse the media.
        let stranger = try DTLSCertificate().fingerprint
        let (offerer, answerer, context) = try pair { answer in
            answer.split(separator: "\r\n").map {
                $0.hasPrefix("a=fingerprint:") ? "a=fingerprint:\(stranger)" : String($0)
            }.joined(separator: "\r\n") + "\r\n"
        }
        #expect(
            throws: WebRTCError.dtls(
                "the peer's DTLS certificate does not match the fingerprint in its SDP: refusing the media")
        ) {
            try offerer.waitUntilConnected(timeout: 20)
        }
        offerer.close()
        answerer.close()
        context.stop()
    }

    @Test func unreachableCandidatesFailAsICENamingTheCause() throws {
        let context = ICEContext()
        let offerer = PeerConnection(context: context, certificate: try DTLSCertificate(), hosts: ["127.0.0.1"])
        let answerer = PeerConnection(context: context, certificate: try DTLSCertificate(), hosts: ["127.0.0.1"])
        let offer = try offerer.makeOffer()
        // The answerer's candidates replaced by a port nobody listens on (192.0.2.0/24: TEST-NET-1).
        let answer =
            try answerer.answer(offer: offer).split(separator: "\r\n").map { line -> String in
                line.hasPrefix("a=candidate:") ? "a=candidate:1 1 UDP 2015363327 192.0.2.254 9 typ host" : String(line)
            }.joined(separator: "\r\n") + "\r\n"
        answerer.close()
        try offerer.accept(answer: answer)
        do {
            try offerer.waitUntilConnected(timeout: 3)
            Issue.record("connected to nobody")
        } catch {
            guard case .ice(let message) = error else {
                Issue.record("not an ICE failure: \(error)")
                return
            }
            #expect(message.contains("ICE"))
        }
        offerer.close()
        context.stop()
    }
}
