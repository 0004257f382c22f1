import Foundation
import RoomTapCore
import RoomTapRTP
import RoomTapRTPTestSupport
import RoomTapTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A live room over loopback UDP: two participants behind one SFU (one wall clock in their RTCP
/// sender reports), one of whose packets reach us 80 ms later. The reports put their audio at
/// the same room time, in the live playout and in the record.
@Suite("Live: RTCP sender reports align participants", .serialized)
struct LiveRoomSenderReportTests {
    /// The two participants' SSRCs and RTP timestamp bases.
    static let streams: [(ssrc: UInt32, base: UInt32)] = [(0xA1, 1000), (0xB2, 3_000_000_000)]

    /// Sends 20 ms packets at real time: quiet, with a loud marker every second (packet 49, 99, …).
    /// "far" (stream 1) sends packet j at step j + 4 (80 ms later), but both senders' clocks are at
    /// step k's timestamp at step k; at the steps `reportAt` says, both send a sender report with
    /// the wall clock of that step. Stream i goes to `sockets[i % sockets.count]`.
    static func sendThroughOneSFU(to sockets: [DatagramSocket], steps: Int, reportAt: (Int) -> Bool) {
        let quiet = JitterDriftTests.packets
        let lag = 4
        let start = RealTimeClock.monotonicNow() + 20_000_000
        for k in 0..<steps {
            // Real-time pacing (the sender's clock), not a wait for a condition.
            var deadline = timespec(
                tv_sec: Int((start + UInt64(k) * 20_000_000) / 1_000_000_000),
                tv_nsec: Int((start + UInt64(k) * 20_000_000) % 1_000_000_000))
            clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, nil)
            for (n, stream) in streams.enumerated() {
                let j = n == 0 ? k : k - lag
                guard j >= 0 && j < steps - lag else { continue }
                let packet = RTPPacketBuilder(
                    payloadType: 111, sequenceNumber: UInt16(truncatingIfNeeded: j),
                    timestamp: stream.base &+ UInt32(j * 960), ssrc: stream.ssrc,
                    payload: j % 50 == 49 ? quiet[49] : quiet[j % 49])
                sockets[n % sockets.count].send(packet.bytes())
            }
            if reportAt(k) {
                var wall = timespec()
                clock_gettime(CLOCK_REALTIME, &wall)
                let ntp = (UInt64(wall.tv_sec) + 2_208_988_800) << 32 | (UInt64(wall.tv_nsec) << 32) / 1_000_000_000
                for (n, stream) in streams.enumerated() {
                    sockets[n % sockets.count].send(
                        RTCPPacketBuilder.senderReport(
                            ssrc: stream.ssrc, ntp: ntp, rtpTimestamp: stream.base &+ UInt32(k * 960),
                            packetCount: UInt32(k), octetCount: 0))
                }
            }
        }
    }

    /// A live room of `near` and `far` on `ports` (one, or one each), a collecting sink on each
    /// track; runs `body` while the room runs.
    static func withRoom(
        ports: [UInt16], recordDelayMilliseconds: Int? = nil,
        _ body: ([LiveParticipant], [CollectingSink]) throws -> Void
    ) throws {
        var options = LiveRoom.Options()
        options.description = RoomDescription(participants: [
            ParticipantDescription(name: "near", port: ports[0], address: "127.0.0.1", ssrc: streams[0].ssrc),
            ParticipantDescription(
                name: "far", port: ports[ports.count - 1], address: "127.0.0.1", ssrc: streams[1].ssrc),
        ])
        options.recordDelayMilliseconds = recordDelayMilliseconds
        options.livePlayout = recordDelayMilliseconds == nil
        let clock = RealTimeClock()
        let room = Room(
            clock: clock, endsWhenSourcesFinish: false, timing: LiveRoom.roomTiming(for: options),
            realtimePriority: RealtimeTestPriority.priority)
        let live = try LiveRoom(room: room, clock: clock, options: options)
        let sinks = [CollectingSink(), CollectingSink()]
        let participants = live.participants
        #expect(participants.map(\.track.name) == ["near", "far"])
        for (participant, sink) in zip(participants, sinks) { participant.track.addSink(sink) }
        room.start()
        live.start()
        defer {
            live.stop()
            room.stop()
            room.waitUntilFinished()
        }
        try body(participants, sinks)
    }

    /// Marker onsets (room samples) heard by each sink so far.
    static func markerOnsets(_ sinks: [CollectingSink]) -> [[Int]] {
        sinks.map { sink in
            let first = Int(sink.roomSamples.first ?? 0)
            return JitterSenderReportTests.onsets(sink.samples).map { $0 + first }
        }
    }

    @Test func aLongerPathIsAlignedBySenderReports() throws {
        let port = try freeUDPPort()
        try Self.withRoom(ports: [port]) { participants, sinks in
            let socket = DatagramSocket(try #require(ListenAddress("127.0.0.1:\(port)")))
            Self.sendThroughOneSFU(to: [socket], steps: 304, reportAt: { $0 % 25 == 10 })
            // Six markers each (the last one 80 ms later on "far") once both have played.
            #expect(waitUntil { Self.markerOnsets(sinks).allSatisfy { $0.count >= 6 } })
            let near = participants[0].buffer.statistics
            let far = participants[1].buffer.statistics
            #expect(near.senderReportTimingUsed && far.senderReportTimingUsed)
            #expect(near.senderReportCorrectionMilliseconds == 0)
            #expect(
                abs(far.senderReportCorrectionMilliseconds + 80) <= 10,
                "far: \(far.senderReportCorrectionMilliseconds) ms")
            #expect(near.delayMilliseconds == far.delayMilliseconds, "one delay for both")
            // The last markers (after the shift was applied in quiet frames) play at the same time.
            let onsets = Self.markerOnsets(sinks)
            for (x, y) in zip(onsets[0].suffix(2), onsets[1].suffix(2)) {
                #expect(abs(x - y) <= 480, "near at \(x), far at \(y): \(Double(y - x) / 48) ms apart")
            }
        }
    }

    /// The record playout, streams on two ports, one path 80 ms longer: the reports arrive before
    /// the record starts, so each stream is placed exactly at its NTP time from its first sample
    /// on, never shifted later. Every marker lands within 1 ms.
    @Test func theRecordPlacesStreamsOnDifferentPortsByTheirSenderReports() throws {
        let ports = [try freeUDPPort(), try freeUDPPort()]
        try Self.withRoom(ports: ports, recordDelayMilliseconds: 1000) { participants, sinks in
            let sockets = try ports.map { DatagramSocket(try #require(ListenAddress("127.0.0.1:\($0)"))) }
            Self.sendThroughOneSFU(to: sockets, steps: 254, reportAt: { $0 == 10 })
            // The record is 1 s behind: five markers each once it has played the last.
            #expect(waitUntil { Self.markerOnsets(sinks).allSatisfy { $0.count >= 5 } })
            let onsets = Self.markerOnsets(sinks)
            #expect(onsets[0].count == onsets[1].count, "markers: \(onsets)")
            for (x, y) in zip(onsets[0], onsets[1]) {
                #expect(abs(x - y) <= 48, "near at \(x), far at \(y): \(Double(y - x) / 48) ms apart")
            }
            for participant in participants { #expect(participant.buffer.statistics.record?.late == 0) }
        }
    }
}
