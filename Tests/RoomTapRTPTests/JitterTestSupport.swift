import COpus
import RoomTapCore
import RoomTapRTP
import RoomTapTestSupport

/// Opus packets for the jitter buffer tests, encoded once.
enum JitterFixtures {
    /// 20 ms packets (960 samples) of `pcm` (mono), VoIP application.
    static func encode(_ pcm: [Int16], bitrate: Int = 24_000, fec: Bool = false, lossPercent: Int = 0) -> [[UInt8]] {
        var error: Int32 = 0
        let encoder = opus_encoder_create(48_000, 1, OPUS_APPLICATION_VOIP, &error)!
        defer { opus_encoder_destroy(encoder) }
        _ = roomtap_opus_encoder_set_bitrate(encoder, Int32(bitrate))
        _ = roomtap_opus_encoder_set_complexity(encoder, 5)
        if fec {
            _ = roomtap_opus_encoder_set_inband_fec(encoder, 1)
            _ = roomtap_opus_encoder_set_packet_loss_perc(encoder, Int32(lossPercent))
        }
        var packets: [[UInt8]] = []
        var out = [UInt8](repeating: 0, count: 1500)
        for f in 0..<(pcm.count / 960) {
            let n = pcm.withUnsafeBufferPointer { src in
                out.withUnsafeMutableBufferPointer { dst in
                    opus_encode(encoder, src.baseAddress! + f * 960, 960, dst.baseAddress!, Int32(dst.count))
                }
            }
            precondition(n > 0, "opus_encode failed: \(n)")
            packets.append(Array(out[0..<Int(n)]))
        }
        return packets
    }

    /// 4 s of speech-like audio: 200 packets of 20 ms.
    static let speech: [[UInt8]] = encode(TestSignal.speechLike(samples: 200 * 960))
    /// The same with in-band FEC (20 % expected loss).
    static let speechFEC: [[UInt8]] = encode(TestSignal.speechLike(samples: 200 * 960), fec: true, lossPercent: 20)
}

/// One packet as the sender sent it.
struct SentPacket {
    var sequence: UInt16
    var timestamp: UInt32
    var payload: [UInt8]
    /// Send time, nanoseconds on the (fake) monotonic clock, which is room time: 0 ns = room sample 0.
    var sendNanos: UInt64
    /// Index in the stream as sent (0, 1, 2, ...).
    var index: Int
}

/// One packet arriving at the receiver.
struct Delivery {
    var packet: SentPacket
    var arrivalNanos: UInt64
}

/// The fake clock: monotonic nanoseconds are room time from 0.
let fakeMapping: RoomTimeMapping = { Int64($0 * 48 / 1_000_000) }

/// Seeded network impairments between a sender and the jitter buffer.
struct Impairment {
    var loss = 0.0
    var reorder = 0.0
    var duplicate = 0.0
    var jitterMilliseconds = 0.0
    /// From packet index `from` on, the jitter is `milliseconds` instead (the last step that applies).
    var jitterSteps: [(from: Int, milliseconds: Double)] = []
    var driftPPM = 0.0
    var baseDelayMilliseconds = 5.0
    var seed: UInt64 = 1
}

/// A sender of `payloads` as 20 ms packets from sequence `firstSequence` and timestamp
/// `firstTimestamp` (both wrap freely), first packet sent at `startNanos`, whose 48 kHz clock runs
/// `impairment.driftPPM` fast. Returns what the sender sent and what arrived, in arrival order.
/// Loss never takes the first or the last three packets, nor more than two in a row.
func simulateSender(
    payloads: [[UInt8]], firstSequence: UInt16 = 1000, firstTimestamp: UInt32 = 123_456,
    startNanos: UInt64 = 13_370_000,
    impairment: Impairment = Impairment()
) -> (sent: [SentPacket], arrived: [Delivery], dropped: [Int]) {
    var rng = SplitMix64(seed: impairment.seed)
    let period = 20_000_000.0 / (1 + impairment.driftPPM * 1e-6)
    var sent: [SentPacket] = []
    var arrived: [Delivery] = []
    var dropped: [Int] = []
    var run = 0
    for (i, payload) in payloads.enumerated() {
        let packet = SentPacket(
            sequence: firstSequence &+ UInt16(truncatingIfNeeded: i),
            timestamp: firstTimestamp &+ UInt32(truncatingIfNeeded: i * 960), payload: payload,
            sendNanos: startNanos + UInt64(Double(i) * period), index: i)
        sent.append(packet)
        let roll = rng.nextUnit()
        if i > 0 && i < payloads.count - 3 && run < 2 && roll < impairment.loss {
            dropped.append(i)
            run += 1
            continue
        }
        run = 0
        let jitter = impairment.jitterSteps.last { $0.from <= i }?.milliseconds ?? impairment.jitterMilliseconds
        var delay = impairment.baseDelayMilliseconds + rng.nextUnit() * jitter
        if rng.nextUnit() < impairment.reorder { delay += 25 }
        let arrival = packet.sendNanos + UInt64(delay * 1_000_000)
        arrived.append(Delivery(packet: packet, arrivalNanos: arrival))
        if rng.nextUnit() < impairment.duplicate {
            arrived.append(Delivery(packet: packet, arrivalNanos: arrival + UInt64(rng.nextUnit() * 10_000_000)))
        }
    }
    arrived = arrived.enumerated().sorted { a, b in
        a.element.arrivalNanos != b.element.arrivalNanos
            ? a.element.arrivalNanos < b.element.arrivalNanos : a.offset < b.offset
    }.map(\.element)
    return (sent, arrived, dropped)
}

/// Drives a jitter buffer as a room would: before rendering frame `k` (room sample `480 k`), every
/// delivery that arrived by then (`arrival <= k × 10 ms`) is inserted.
final class JitterHarness {
    let buffer: JitterBuffer
    private(set) var output: [Int16] = []
    /// The live playout's frames, when the buffer has one beside its record.
    private(set) var liveOutput: [Int16] = []
    private(set) var statuses: [FrameStatus] = []
    private(set) var results: [JitterBuffer.InsertResult] = []
    /// The playout delay (samples) after each frame.
    private(set) var delays: [Int] = []
    /// ``JitterStatistics/late`` after each frame.
    private(set) var lates: [Int] = []
    private var pending: [Delivery] = []
    private var next = 0
    private var frame: Int64 = 0
    private var scratch: [Int16]

    init(
        channels: Int = 1, targetDelayMilliseconds: Int = 60, maxDelayMilliseconds: Int = 200, adaptive: Bool = true,
        recordDelayMilliseconds: Int? = nil, livePlayout: Bool = true, recordLookahead: Bool = false,
        senderClock: SenderClockSync? = nil
    ) {
        buffer = JitterBuffer(
            channels: channels, targetDelayMilliseconds: targetDelayMilliseconds,
            maxDelayMilliseconds: maxDelayMilliseconds, adaptive: adaptive,
            recordDelayMilliseconds: recordDelayMilliseconds, livePlayout: livePlayout,
            recordLookahead: recordLookahead, senderClock: senderClock,
            arrivalToRoom: fakeMapping)!
        scratch = [Int16](repeating: 0, count: 480 * channels)
    }

    /// Queues an RTCP sender report (`ntp` is RTP timestamp `rtp`) arriving at `arrivalNanos`;
    /// handed to the buffer before the first frame at or after its arrival.
    func deliverReport(arrivalNanos: UInt64, ntp: NTPTimestamp, rtp: UInt32) {
        reports.append((arrivalNanos, ntp, rtp))
    }
    private var reports: [(arrivalNanos: UInt64, ntp: NTPTimestamp, rtp: UInt32)] = []

    /// Queues deliveries (in arrival order, after any queued before).
    func deliver(_ deliveries: [Delivery]) { pending += deliveries }

    /// Renders every whole frame that ends at or before room sample `end` (so a stream whose last
    /// packet ends at `end` is rendered without the concealment that follows its end).
    func render(until end: Int) {
        render(frames: end / 480 - Int(frame))
    }

    /// Renders `frames` more frames, inserting deliveries as they arrive.
    func render(frames: Int) {
        for _ in 0..<frames {
            let now = UInt64(frame) * 10_000_000
            while let r = reports.first, r.arrivalNanos <= now, next > 0 || pending.isEmpty {
                buffer.noteSenderReport(ntp: r.ntp, rtpTimestamp: r.rtp)
                reports.removeFirst()
            }
            while next < pending.count && pending[next].arrivalNanos <= now {
                let d = pending[next]
                let r = d.packet.payload.withUnsafeBytes {
                    buffer.insert(
                        sequence: d.packet.sequence, timestamp: d.packet.timestamp, payload: $0,
                        arrival: d.arrivalNanos)
                }
                results.append(r)
                next += 1
            }
            let status = scratch.withUnsafeMutableBufferPointer { buffer.render(into: $0, at: frame * 480) }
            output += scratch
            if buffer.hasLivePlayout {
                _ = scratch.withUnsafeMutableBufferPointer { buffer.renderLive(into: $0, at: frame * 480) }
                liveOutput += scratch
            }
            statuses.append(status)
            delays.append(Int((buffer.statistics.delayMilliseconds * 48).rounded()))
            lates.append(buffer.statistics.late)
            frame += 1
        }
    }
}

/// The expected track: each packet decoded in order by one plain libopus decoder and placed at
/// `start + (timestamp − first timestamp)` (32-bit wrap aware), zeros elsewhere; `length` samples.
func expectedTimeline(packets: [SentPacket], start: Int, length: Int) -> [Int16] {
    var out = [Int16](repeating: 0, count: length)
    var error: Int32 = 0
    let decoder = opus_decoder_create(48_000, 1, &error)!
    defer { opus_decoder_destroy(decoder) }
    var pcm = [Int16](repeating: 0, count: 5760)
    guard let first = packets.first else { return out }
    for p in packets {
        let n = p.payload.withUnsafeBufferPointer { src in
            pcm.withUnsafeMutableBufferPointer {
                opus_decode(decoder, src.baseAddress!, Int32(src.count), $0.baseAddress!, 5760, 0)
            }
        }
        let at = start + Int(p.timestamp &- first.timestamp)
        for i in 0..<max(0, Int(n)) where at + i < length { out[at + i] = pcm[i] }
    }
    return out
}

/// Room sample of an arrival on the fake clock.
func roomSample(_ nanos: UInt64) -> Int { Int(fakeMapping(nanos)) }

/// Pearson correlation of two signals (``TestSignal/correlation(_:_:)``).
func correlation(_ a: ArraySlice<Int16>, _ b: ArraySlice<Int16>) -> Double { TestSignal.correlation(a, b) }

/// The index of the first sample where `a` and `b` differ, or nil.
func firstDifference(_ a: [Int16], _ b: [Int16]) -> Int? {
    for i in 0..<min(a.count, b.count) where a[i] != b[i] { return i }
    return a.count == b.count ? nil : min(a.count, b.count)
}
