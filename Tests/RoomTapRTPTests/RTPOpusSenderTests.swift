import COpus
import Foundation
import RoomTapCore
import RoomTapRTP
import RoomTapTestSupport
import Testing

/// A track sent as Opus RTP arrives as a well-formed stream that decodes back to the track's audio.
@Suite struct RTPOpusSenderTests {
    @Test func aTrackSentAsRTPDecodesBackToItsAudio() throws {
        let port: UInt16 = 27_811
        let receiver = try UDPSocket(address: ListenAddress(host: "127.0.0.1", port: port))
        defer { receiver.close() }
        let room = Room(clock: VirtualClock())
        let sine = SineSource(frequency: 440, amplitude: 12_000, length: 48_000)
        let track = room.addTrack(name: "agent", source: sine)
        let sender = try RTPOpusSender(destination: ListenAddress(host: "127.0.0.1", port: port), policy: .wait)
        track.addSink(sender)
        var datagrams: [[UInt8]] = []
        room.start()
        var buffer = [UInt8](repeating: 0, count: 2_048)
        while datagrams.count < 50 {
            let n = buffer.withUnsafeMutableBytes { receiver.receive(into: $0, timeoutMilliseconds: 2_000) }
            guard let n, n > 0 else { break }
            datagrams.append(Array(buffer[0..<n]))
        }
        room.waitUntilFinished()
        try sender.close()
        #expect(datagrams.count == 50, "1 s of audio is 50 packets of 20 ms")
        #expect(sender.packetsSent == 50 && sender.sendErrors == 0 && sender.droppedFrames == 0)

        var decoded: [Int16] = []
        var error: Int32 = 0
        let decoder = try #require(opus_decoder_create(48_000, 1, &error))
        defer { opus_decoder_destroy(decoder) }
        var previous: (UInt16, UInt32)?
        for (i, datagram) in datagrams.enumerated() {
            try datagram.withUnsafeBytes { bytes in
                guard case .packet(let packet) = RTPPacket.parse(bytes) else {
                    Issue.record("datagram \(i) is not RTP")
                    return
                }
                #expect(packet.payloadType == 111 && packet.ssrc == sender.ssrc)
                #expect(packet.marker == (i == 0), "marker on the first packet only")
                if let (sequence, timestamp) = previous {
                    #expect(packet.sequenceNumber == sequence &+ 1)
                    #expect(packet.timestamp == timestamp &+ 960)
                }
                previous = (packet.sequenceNumber, packet.timestamp)
                var pcm = [Int16](repeating: 0, count: 960)
                let payload = packet.payload
                let n = opus_decode(
                    decoder, payload.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(payload.count), &pcm, 960,
                    0)
                try #require(n == 960)
                decoded += pcm
            }
        }
        // The encoder's look-ahead delays the audio by a few ms; find it, then correlate.
        let reference = (0..<Int64(48_000)).map { sine.expected(at: $0) }
        var best = (lag: 0, correlation: -1.0)
        for lag in 0..<600 {
            let c = correlation(Array(reference[0..<40_000]), Array(decoded[lag..<(lag + 40_000)]))
            if c > best.correlation { best = (lag, c) }
        }
        #expect(best.correlation > 0.98, "decoded audio correlates \(best.correlation) at lag \(best.lag)")
    }

    @Test func badDestinationsAreRefused() {
        #expect(throws: RTPOpusSender.SetupError.self) {
            try RTPOpusSender(destination: ListenAddress(host: "example.org", port: 5004))
        }
        #expect(throws: RTPOpusSender.SetupError.self) {
            try RTPOpusSender(destination: ListenAddress(host: "127.0.0.1", port: 5004), payloadType: 8)
        }
    }

    private func correlation(_ a: [Int16], _ b: [Int16]) -> Double {
        var ab = 0.0
        var aa = 0.0
        var bb = 0.0
        for i in a.indices {
            let x = Double(a[i])
            let y = Double(b[i])
            ab += x * y
            aa += x * x
            bb += y * y
        }
        return ab / max(1e-9, (aa * bb).squareRoot())
    }
}
