import Foundation
import RoomTapCore
import RoomTapRTP
import RoomTapTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A live room over loopback UDP: two participants behind one SFU (one wall clock in their RTCP
/// sender reports), one of whose packets reach us 80 ms later. The reports put their audio at
/// the same room time.
@Suite("Live: RTCP sender reports align participants", .serialized)
struct LiveRoomSenderReportTests {
    @Test func aLongerPathIsAlignedBySenderReports() throws {
        let address = try #require(ListenAddress("127.0.0.1:29001"))
        var options = LiveRoom.Options()
        options.description = RoomDescription(participants: [
            ParticipantDescription(name: "near", port: 29001, address: "127.0.0.1", ssrc: 0xA1),
            ParticipantDescription(name: "far", port: 29001, address: "127.0.0.1", ssrc: 0xB2),
        ])
        let clock = RealTimeClock()
        let room = Room(clock: clock, endsWhenSourcesFinish: false)
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

        // 20 ms packets: quiet, with a loud marker every second. "far" sends packet j at step
        // j + 4 (80 ms later) but both senders' clocks are at step k's timestamp at step k.
        let quiet = JitterDriftTests.packets
        let socket = DatagramSocket(address)
        let steps = 304
        let lag = 4
        let start = RealTimeClock.monotonicNow() + 20_000_000
        for k in 0..<steps {
            let deadline = start + UInt64(k) * 20_000_000
            while RealTimeClock.monotonicNow() < deadline { usleep(1000) }
            for (ssrc, j, base) in [(UInt32(0xA1), k, UInt32(1000)), (UInt32(0xB2), k - lag, UInt32(3_000_000_000))]
            where j >= 0 && j < steps - lag {
                let packet = RTPPacketBuilder(
                    payloadType: 111, sequenceNumber: UInt16(truncatingIfNeeded: j),
                    timestamp: base &+ UInt32(j * 960), ssrc: ssrc, payload: j % 50 == 49 ? quiet[49] : quiet[j % 49])
                socket.send(packet.bytes())
            }
            if k % 25 == 10 {
                var wall = timespec()
                clock_gettime(CLOCK_REALTIME, &wall)
                let ntp = (UInt64(wall.tv_sec) + 2_208_988_800) << 32 | (UInt64(wall.tv_nsec) << 32) / 1_000_000_000
                for (ssrc, base) in [(UInt32(0xA1), UInt32(1000)), (UInt32(0xB2), UInt32(3_000_000_000))] {
                    socket.send(
                        RTCPPacketBuilder.senderReport(
                            ssrc: ssrc, ntp: ntp, rtpTimestamp: base &+ UInt32(k * 960), packetCount: UInt32(k),
                            octetCount: 0))
                }
            }
        }
        usleep(400_000)

        let near = participants[0].buffer.statistics
        let far = participants[1].buffer.statistics
        #expect(near.senderReportTimingUsed && far.senderReportTimingUsed)
        #expect(near.senderReportCorrectionMilliseconds == 0)
        #expect(
            abs(far.senderReportCorrectionMilliseconds + 80) <= 10, "far: \(far.senderReportCorrectionMilliseconds) ms")
        #expect(near.delayMilliseconds == far.delayMilliseconds, "one delay for both")
        // The last markers (after the shift was applied in quiet frames) play at the same room time.
        let onsets = sinks.map { sink in
            let samples = sink.samples
            let first = Int(sink.roomSamples.first ?? 0)
            return JitterSenderReportTests.onsets(samples).map { $0 + first }
        }
        #expect(onsets[0].count >= 5 && onsets[1].count >= 5, "markers: \(onsets[0].count), \(onsets[1].count)")
        for (x, y) in zip(onsets[0].suffix(2), onsets[1].suffix(2)) {
            #expect(abs(x - y) <= 480, "near at \(x), far at \(y): \(Double(y - x) / 48) ms apart")
        }
    }

    /// The record playout, streams on two ports, one path 80 ms longer: the reports arrive before
    /// the record starts, so each stream is placed exactly at its NTP time from its first sample
    /// on, never shifted later. Every marker lands within 1 ms.
    @Test func theRecordPlacesStreamsOnDifferentPortsByTheirSenderReports() throws {
        let ports = (try freeUDPPort(), try freeUDPPort())
        var options = LiveRoom.Options()
        options.description = RoomDescription(participants: [
            ParticipantDescription(name: "near", port: ports.0, address: "127.0.0.1", ssrc: 0xA1),
            ParticipantDescription(name: "far", port: ports.1, address: "127.0.0.1", ssrc: 0xB2),
        ])
        options.recordDelayMilliseconds = 1000
        options.livePlayout = false
        let clock = RealTimeClock()
        let room = Room(clock: clock, endsWhenSourcesFinish: false, timing: RoomTiming(recordDelayFrames: 94))
        let live = try LiveRoom(room: room, clock: clock, options: options)
        let sinks = [CollectingSink(), CollectingSink()]
        let participants = live.participants
        for (participant, sink) in zip(participants, sinks) { participant.track.addSink(sink) }
        room.start()
        live.start()
        defer {
            live.stop()
            room.stop()
            room.waitUntilFinished()
        }
        let quiet = JitterDriftTests.packets
        let sockets = [
            DatagramSocket(try #require(ListenAddress("127.0.0.1:\(ports.0)"))),
            DatagramSocket(try #require(ListenAddress("127.0.0.1:\(ports.1)"))),
        ]
        let steps = 254
        let lag = 4
        let start = RealTimeClock.monotonicNow() + 20_000_000
        for k in 0..<steps {
            let deadline = start + UInt64(k) * 20_000_000
            while RealTimeClock.monotonicNow() < deadline { usleep(1000) }
            for (n, ssrc, j, base) in [
                (0, UInt32(0xA1), k, UInt32(1000)), (1, UInt32(0xB2), k - lag, UInt32(3_000_000_000)),
            ] where j >= 0 && j < steps - lag {
                let packet = RTPPacketBuilder(
                    payloadType: 111, sequenceNumber: UInt16(truncatingIfNeeded: j),
                    timestamp: base &+ UInt32(j * 960), ssrc: ssrc, payload: j % 50 == 49 ? quiet[49] : quiet[j % 49])
                sockets[n].send(packet.bytes())
            }
            if k == 10 {
                var wall = timespec()
                clock_gettime(CLOCK_REALTIME, &wall)
                let ntp = (UInt64(wall.tv_sec) + 2_208_988_800) << 32 | (UInt64(wall.tv_nsec) << 32) / 1_000_000_000
                for (n, ssrc, base) in [(0, UInt32(0xA1), UInt32(1000)), (1, UInt32(0xB2), UInt32(3_000_000_000))] {
                    sockets[n].send(
                        RTCPPacketBuilder.senderReport(
                            ssrc: ssrc, ntp: ntp, rtpTimestamp: base &+ UInt32(k * 960), packetCount: UInt32(k),
                            octetCount: 0))
                }
            }
        }
        // The record is 1 s behind: wait for it to play the last marker.
        usleep(1_400_000)
        let onsets = sinks.map { sink in
            let first = Int(sink.roomSamples.first ?? 0)
            return JitterSenderReportTests.onsets(sink.samples).map { $0 + first }
        }
        #expect(onsets[0].count >= 4 && onsets[0].count == onsets[1].count, "markers: \(onsets)")
        for (x, y) in zip(onsets[0], onsets[1]) {
            #expect(abs(x - y) <= 48, "near at \(x), far at \(y): \(Double(y - x) / 48) ms apart")
        }
        for participant in participants {
            #expect(participant.buffer.statistics.record?.late == 0)
        }
    }
}
