import COpus
import Foundation
public import RoomTapRTP
import RoomTapSync
import RoomTapTestSupport

/// A test participant: encodes mono 48 kHz PCM into 20 ms Opus packets (libopus, VoIP, in-band
/// FEC on for 10 % expected loss) and sends them as RTP over UDP to a ``ListenAddress`` (IPv4 or
/// IPv6), paced at real time from absolute deadlines (`clock_nanosleep(TIMER_ABSTIME)`), or
/// `speed` times faster. Seeded ``Impairments`` (loss, reorder, duplicate, jitter, clock drift,
/// a restart with a new SSRC) are planned at init, deterministically, so a test knows exactly what
/// the network did before it runs: ``plan`` lists every datagram and when it leaves.
///
/// Timing: packet `i` is due at `t0 + i × 20 ms / (1 + driftPPM·10⁻⁶) / speed` (`t0` = when
/// ``run()`` starts, or the instant given to it), plus its jitter delay (uniform in
/// 0...`jitterMilliseconds`), plus ``Impairments/reorderDelayMilliseconds`` when it is reordered;
/// datagrams leave in the order of those times. RTCP (RFC 5761 mux, same port): a sender report
/// every second of sender time and, optionally, SR + BYE after the last packet.
///
/// ```swift
/// let sender = RTPTestSender(
///     pcm: TestSignal.speechLike(samples: 96_000), to: ListenAddress("127.0.0.1:27400")!,
///     impairments: .init(loss: 0.05, seed: 3))
/// sender.start()
/// let report = sender.wait()   // report.firstSendNanos: CLOCK_MONOTONIC of packet 0
/// ```
///
/// Thread: `run()` blocks the calling thread; `start()` runs it on a thread of its own and
/// `wait()` joins it. Everything else is immutable after init and safe from any thread.
public final class RTPTestSender: Sendable {
    /// Seeded network and sender impairments. All zero: a perfect network.
    public struct Impairments: Sendable {
        /// Probability a packet is dropped. Never packet 0, the first packet after a restart, the
        /// last three, nor more than two in a row (so every loss is recoverable by FEC or PLC).
        public var loss: Double
        /// Probability a packet is held back by ``reorderDelayMilliseconds`` (so it arrives after
        /// the packet(s) after it).
        public var reorder: Double
        /// Probability a (not dropped) packet is sent twice, the copy 0...10 ms after it.
        public var duplicate: Double
        /// Each packet leaves up to this much after its deadline (uniform).
        public var jitterMilliseconds: Double
        /// The sender's 48 kHz clock runs this fast (positive) or slow against real time.
        public var driftPPM: Double
        /// From this packet index on the sender restarts: new SSRC, random sequence and timestamp.
        public var restartAtPacket: Int?
        /// Seed of every random choice (same seed, same plan).
        public var seed: UInt64
        /// How long a reordered packet is held back.
        public var reorderDelayMilliseconds: Double
        /// From packet index `from` on, the jitter is `milliseconds` instead (the last step that
        /// applies wins).
        public var jitterSteps: [JitterStep] = []

        /// A change of ``jitterMilliseconds`` from one packet on.
        public struct JitterStep: Sendable {
            public var from: Int
            public var milliseconds: Double
            public init(from: Int, milliseconds: Double) {
                self.from = from
                self.milliseconds = milliseconds
            }
        }

        public init(
            loss: Double = 0, reorder: Double = 0, duplicate: Double = 0, jitterMilliseconds: Double = 0,
            driftPPM: Double = 0, restartAtPacket: Int? = nil, seed: UInt64 = 1, reorderDelayMilliseconds: Double = 25
        ) {
            self.loss = loss
            self.reorder = reorder
            self.duplicate = duplicate
            self.jitterMilliseconds = jitterMilliseconds
            self.driftPPM = driftPPM
            self.restartAtPacket = restartAtPacket
            self.seed = seed
            self.reorderDelayMilliseconds = reorderDelayMilliseconds
        }

        /// No impairment.
        public static let none = Impairments()
    }

    /// One encoded packet of the stream (whether or not it is sent).
    public struct Packet: Sendable, Equatable {
        /// Index in the stream, 0...
        public let index: Int
        public let ssrc: UInt32
        public let sequence: UInt16
        public let timestamp: UInt32
        /// The Opus packet.
        public let payload: [UInt8]
        /// True when sent from after the restart.
        public let afterRestart: Bool
    }

    /// One datagram the sender will send.
    public struct Datagram: Sendable, Equatable {
        public enum Kind: Sendable, Equatable {
            /// RTP packet `index` (`copy` 1 for a duplicate).
            case rtp(index: Int, copy: Int)
            /// An RTCP sender report for `ssrc`.
            case senderReport(ssrc: UInt32)
            /// The final SR + BYE for `ssrc`.
            case bye(ssrc: UInt32)
        }
        public let kind: Kind
        /// Due time, nanoseconds after `t0` (packet 0's nominal deadline).
        public let offsetNanos: UInt64
    }

    /// The sender's settings.
    public let destination: ListenAddress
    public let payloadType: UInt8
    public let ssrc: UInt32
    public let firstSequence: UInt16
    public let firstTimestamp: UInt32
    public let speed: Double
    public let impairments: Impairments
    /// The encoder's lookahead (samples at 48 kHz): the decode of the packets is the input
    /// delayed by this much.
    public let lookahead: Int
    /// Every packet of the stream, in order.
    public let packets: [Packet]
    /// Every datagram, in sending order.
    public let plan: [Datagram]
    /// Packets never sent.
    public let dropped: [Int]
    /// Packets sent twice.
    public let duplicated: [Int]
    /// Packets sent after a packet with a higher index (what a receiver counts as reordered).
    public let reordered: [Int]

    /// What a run did.
    public struct Report: Sendable {
        /// `CLOCK_MONOTONIC` ns at which packet 0 left (just before `sendto`).
        public var firstSendNanos: UInt64 = 0
        /// `CLOCK_REALTIME` ns (Unix epoch) at which packet 0 left, to compare with wall clocks.
        public var firstSendWallNanos: UInt64 = 0
        /// `CLOCK_MONOTONIC` ns of the nominal deadline of packet 0 (`t0`).
        public var startNanos: UInt64 = 0
        /// Send time of each packet's first copy (0 for dropped packets).
        public var sendNanos: [UInt64] = []
        /// Datagrams handed to the kernel, and `sendto` failures.
        public var datagramsSent = 0
        public var sendErrors = 0
        /// The largest delay of a datagram after its due time, ns (scheduling noise).
        public var maxLatenessNanos: UInt64 = 0
    }

    private let state = Locked<(thread: RoomThread?, report: Report?)>((nil, nil))
    private let done = DispatchSemaphore(value: 0)
    private let sendsRTCP: Bool
    private let sendsBye: Bool
    /// Protects every datagram as SRTP/SRTCP before it leaves (nil: plain RTP). Used by the sending
    /// thread only; not with duplicates (libsrtp refuses to protect a packet twice).
    private let srtp: SRTPProtector?

    /// Encodes `pcm` (mono, 48 kHz; padded with zeros to whole 20 ms packets, lookahead included)
    /// and plans the sending.
    ///
    /// - Parameters:
    ///   - payloadType: RTP payload type (default 111).
    ///   - ssrc, firstSequence, firstTimestamp: the stream's start values (wrap freely).
    ///   - speed: pacing factor (1 = real time, 2 = twice as fast); > 0.
    ///   - bitrate: Opus bitrate, bits per second.
    ///   - sendsRTCP: a sender report every second of sender time.
    ///   - sendsBye: SR + BYE after the last packet.
    ///   - srtp: protect every datagram with this SRTP sender (no duplicate impairments then).
    public init(
        pcm: [Int16], to destination: ListenAddress, payloadType: UInt8 = 111, ssrc: UInt32 = 0x5EED_0001,
        firstSequence: UInt16 = 1000, firstTimestamp: UInt32 = 160_000, speed: Double = 1,
        impairments: Impairments = .none, bitrate: Int = 32_000, sendsRTCP: Bool = true, sendsBye: Bool = false,
        srtp: SRTPProtector? = nil
    ) {
        precondition(speed > 0, "speed is a positive factor")
        precondition(srtp == nil || impairments.duplicate == 0, "SRTP cannot protect a packet twice")
        self.srtp = srtp
        self.destination = destination
        self.payloadType = payloadType
        self.ssrc = ssrc
        self.firstSequence = firstSequence
        self.firstTimestamp = firstTimestamp
        self.speed = speed
        self.impairments = impairments
        self.sendsRTCP = sendsRTCP
        self.sendsBye = sendsBye
        let (payloads, lookahead) = Self.encode(pcm, bitrate: bitrate)
        self.lookahead = lookahead

        var rng = SplitMix64(seed: impairments.seed)
        var packets: [Packet] = []
        var currentSSRC = ssrc
        var sequence = firstSequence
        var timestamp = firstTimestamp
        var restarted = false
        for (i, payload) in payloads.enumerated() {
            if i == impairments.restartAtPacket {
                var newSSRC = UInt32(truncatingIfNeeded: rng.next())
                while newSSRC == ssrc { newSSRC &+= 1 }
                currentSSRC = newSSRC
                sequence = UInt16(truncatingIfNeeded: rng.next())
                timestamp = UInt32(truncatingIfNeeded: rng.next())
                restarted = true
            }
            packets.append(
                Packet(
                    index: i, ssrc: currentSSRC, sequence: sequence, timestamp: timestamp, payload: payload,
                    afterRestart: restarted))
            sequence &+= 1
            timestamp &+= 960
        }
        self.packets = packets

        // The plan: one fixed set of draws per packet, so a change of one probability does not
        // reshuffle the others.
        let period = 20_000_000.0 / (1 + impairments.driftPPM * 1e-6) / speed
        var events: [(time: Double, order: Int, kind: Datagram.Kind)] = []
        var dropped: [Int] = []
        var duplicated: [Int] = []
        var run = 0
        for packet in packets {
            let i = packet.index
            let lossRoll = rng.nextUnit()
            let jitterMs =
                impairments.jitterSteps.last { $0.from <= packet.index }?.milliseconds
                ?? impairments.jitterMilliseconds
            let jitter = rng.nextUnit() * jitterMs * 1e6 / speed
            let reorderRoll = rng.nextUnit()
            let duplicateRoll = rng.nextUnit()
            let duplicateDelay = rng.nextUnit() * 10e6 / speed
            let protected = i == 0 || i == impairments.restartAtPacket || i >= packets.count - 3
            if !protected && run < 2 && lossRoll < impairments.loss {
                dropped.append(i)
                run += 1
                continue
            }
            run = 0
            var time = Double(i) * period + jitter
            if i > 0 && reorderRoll < impairments.reorder { time += impairments.reorderDelayMilliseconds * 1e6 / speed }
            events.append((time, events.count, .rtp(index: i, copy: 0)))
            if duplicateRoll < impairments.duplicate {
                duplicated.append(i)
                events.append((time + duplicateDelay, events.count, .rtp(index: i, copy: 1)))
            }
        }
        let end = Double(packets.count) * period
        if sendsRTCP {
            var t = 1e9 / speed
            while t < end {
                let index = min(packets.count - 1, Int(t / period))
                events.append((t, events.count, .senderReport(ssrc: packets[index].ssrc)))
                t += 1e9 / speed
            }
        }
        if sendsBye, let last = packets.last {
            let latest = events.map(\.time).max() ?? 0
            events.append((max(end, latest) + 1e6, events.count, .bye(ssrc: last.ssrc)))
        }
        events.sort { $0.time != $1.time ? $0.time < $1.time : $0.order < $1.order }
        plan = events.map { Datagram(kind: $0.kind, offsetNanos: UInt64(max(0, $0.time))) }
        self.dropped = dropped
        self.duplicated = duplicated
        var reordered: [Int] = []
        var highest = -1
        for datagram in plan {
            guard case .rtp(let index, 0) = datagram.kind else { continue }
            if index < highest { reordered.append(index) }
            highest = max(highest, index)
        }
        self.reordered = reordered.sorted()
    }

    /// Encodes 20 ms packets: libopus VoIP at `bitrate`, complexity 5, in-band FEC for 10 % loss.
    /// The input is padded so that the packets' decode covers lookahead + every input sample.
    public static func encode(_ pcm: [Int16], bitrate: Int = 32_000) -> (packets: [[UInt8]], lookahead: Int) {
        var error: Int32 = 0
        let encoder = opus_encoder_create(48_000, 1, OPUS_APPLICATION_VOIP, &error)!
        defer { opus_encoder_destroy(encoder) }
        _ = roomtap_opus_encoder_set_bitrate(encoder, Int32(bitrate))
        _ = roomtap_opus_encoder_set_complexity(encoder, 5)
        _ = roomtap_opus_encoder_set_inband_fec(encoder, 1)
        _ = roomtap_opus_encoder_set_packet_loss_perc(encoder, 10)
        var lookahead: Int32 = 0
        _ = roomtap_opus_encoder_get_lookahead(encoder, &lookahead)
        let frames = (pcm.count + Int(lookahead) + 959) / 960
        var input = pcm
        input += [Int16](repeating: 0, count: frames * 960 - pcm.count)
        var packets: [[UInt8]] = []
        var out = [UInt8](repeating: 0, count: 1500)
        for f in 0..<frames {
            let n = input.withUnsafeBufferPointer { src in
                out.withUnsafeMutableBufferPointer { dst in
                    opus_encode(encoder, src.baseAddress! + f * 960, 960, dst.baseAddress!, Int32(dst.count))
                }
            }
            precondition(n > 0, "opus_encode failed: \(n)")
            packets.append(Array(out[0..<Int(n)]))
        }
        return (packets, Int(lookahead))
    }

    /// The clean decode: every packet decoded in order by one fresh libopus decoder (48 kHz,
    /// mono), `packets.count × 960` samples (what a jitter buffer plays when nothing is lost).
    /// With a restart, the decoder is reset at the restart (as a receiver does on a new stream).
    public func cleanDecode() -> [Int16] {
        var error: Int32 = 0
        let decoder = opus_decoder_create(48_000, 1, &error)!
        defer { opus_decoder_destroy(decoder) }
        var out: [Int16] = []
        out.reserveCapacity(packets.count * 960)
        var pcm = [Int16](repeating: 0, count: 5760)
        for packet in packets {
            if packet.index == impairments.restartAtPacket { _ = roomtap_opus_decoder_reset(decoder) }
            let n = packet.payload.withUnsafeBufferPointer { src in
                pcm.withUnsafeMutableBufferPointer {
                    opus_decode(decoder, src.baseAddress!, Int32(src.count), $0.baseAddress!, 5760, 0)
                }
            }
            out += n > 0 ? pcm[0..<Int(n)] : ArraySlice(repeating: 0, count: 960)
        }
        return out
    }

    /// True when the Opus `packet` carries in-band FEC (SILK LBRR) for the packet before it: the
    /// LBRR flag after the VAD flags of the first SILK frame (RFC 6716 §4.2.3-4.2.4; libopus 1.5's
    /// `opus_packet_has_lbrr`, which libopus 1.3 lacks). Written here independently of the receiver.
    public static func hasFEC(_ packet: [UInt8]) -> Bool {
        guard packet.count > 1, packet[0] & 0x80 == 0 else { return false }  // CELT-only: never
        return packet.withUnsafeBufferPointer { p in
            let frameSize = Int(opus_packet_get_samples_per_frame(p.baseAddress!, 48_000))
            let silkFrames = frameSize > 960 ? frameSize / 960 : 1
            let stereo = packet[0] & 0x04 != 0
            var frames = [UnsafePointer<UInt8>?](repeating: nil, count: 48)
            var sizes = [Int16](repeating: 0, count: 48)
            var offset: Int32 = 0
            let count = opus_packet_parse(p.baseAddress!, Int32(p.count), nil, &frames, &sizes, &offset)
            guard count > 0, sizes[0] > 0, let first = frames[0] else { return false }
            var lbrr = (first[0] >> (7 - silkFrames)) & 1 != 0
            if stereo { lbrr = lbrr || (first[0] >> (6 - 2 * silkFrames)) & 1 != 0 }
            return lbrr
        }
    }

    /// The RTP datagram of packet `index`.
    public func datagram(_ index: Int) -> [UInt8] {
        let p = packets[index]
        return RTPPacketBuilder(
            payloadType: payloadType, sequenceNumber: p.sequence, timestamp: p.timestamp, ssrc: p.ssrc,
            payload: p.payload
        ).bytes()
    }

    // MARK: - Running

    /// Sends the whole plan and returns what happened. Blocks for the stream's duration.
    /// `startNanos` (`CLOCK_MONOTONIC`) is packet 0's deadline; default: now.
    @discardableResult
    public func run(startNanos: UInt64? = nil) -> Report {
        let report = send(startNanos: startNanos ?? Self.monotonicNow())
        state.withLock { $0.report = report }
        return report
    }

    /// Starts ``run(startNanos:)`` on a thread of its own. Call once, then ``wait()``.
    public func start(startNanos: UInt64? = nil) {
        let thread = RoomThread.start("roomtap.test-sender") { [self] in
            RealtimeTestPriority.applyToCurrentThread()  // paced like a real sender on a loaded machine
            run(startNanos: startNanos)
            done.signal()
        }
        state.withLock { $0.thread = thread }
    }

    /// Waits for a ``start(startNanos:)``ed run to end and returns its report.
    @discardableResult
    public func wait() -> Report {
        done.wait()
        done.signal()
        return state.withLock { $0.report ?? Report() }
    }

    /// Makes a sender whose ``start(startNanos:)``ed run was ``wait()``ed for ready to send its
    /// plan again (a test that repeats a run the host disturbed).
    public func rearm() {
        done.wait()
        state.withLock { $0 = (nil, nil) }
    }

    /// Seconds the stream lasts at this speed (packets × 20 ms / speed).
    public var duration: Double { Double(packets.count) * 0.02 / speed }

    private func send(startNanos: UInt64) -> Report {
        var report = Report()
        report.startNanos = startNanos
        report.sendNanos = [UInt64](repeating: 0, count: packets.count)
        let socket = DatagramSocket(destination)
        defer { socket.close() }
        let datagrams = packets.indices.map { datagram($0) }
        var packetCount: UInt32 = 0
        var octetCount: UInt32 = 0
        for item in plan {
            let due = startNanos + item.offsetNanos
            Self.sleep(until: due)
            let now = Self.monotonicNow()
            if now > due { report.maxLatenessNanos = max(report.maxLatenessNanos, now - due) }
            let bytes: [UInt8]
            switch item.kind {
            case .rtp(let index, let copy):
                bytes = datagrams[index]
                if copy == 0 {
                    report.sendNanos[index] = now
                    if index == 0 {
                        report.firstSendNanos = now
                        var wall = timespec()
                        clock_gettime(CLOCK_REALTIME, &wall)
                        report.firstSendWallNanos = UInt64(wall.tv_sec) * 1_000_000_000 + UInt64(wall.tv_nsec)
                    }
                }
                packetCount &+= 1
                octetCount &+= UInt32(packets[index].payload.count)
            case .senderReport(let ssrc):
                bytes = senderReport(
                    ssrc: ssrc, at: now, startNanos: startNanos, packets: packetCount, octets: octetCount)
            case .bye(let ssrc):
                bytes =
                    senderReport(ssrc: ssrc, at: now, startNanos: startNanos, packets: packetCount, octets: octetCount)
                    + RTCPPacketBuilder.bye(ssrcs: [ssrc], reason: "test sender done")
            }
            var wire = bytes
            if let srtp {
                if case .rtp = item.kind { wire = srtp.protectRTP(bytes) } else { wire = srtp.protectRTCP(bytes) }
            }
            if socket.send(wire) { report.datagramsSent += 1 } else { report.sendErrors += 1 }
        }
        return report
    }

    /// An SR mapping the wall clock now to the RTP time the sender's clock is at now.
    private func senderReport(
        ssrc: UInt32, at now: UInt64, startNanos: UInt64, packets count: UInt32, octets: UInt32
    ) -> [UInt8] {
        let elapsed = Double(now &- startNanos) * speed * (1 + impairments.driftPPM * 1e-6)
        let samples = Int64(elapsed * 48_000 / 1e9)
        let base = packets.first { $0.ssrc == ssrc } ?? packets[0]
        let rtp = base.timestamp &+ UInt32(truncatingIfNeeded: samples - Int64(base.index) * 960)
        var wall = timespec()
        clock_gettime(CLOCK_REALTIME, &wall)
        let seconds = UInt64(wall.tv_sec) + 2_208_988_800
        let fraction = (UInt64(wall.tv_nsec) << 32) / 1_000_000_000
        return RTCPPacketBuilder.senderReport(
            ssrc: ssrc, ntp: seconds << 32 | fraction, rtpTimestamp: rtp, packetCount: count, octetCount: octets)
    }

    static func monotonicNow() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    static func sleep(until deadline: UInt64) {
        var ts = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil) == EINTR {}
    }
}

/// A plain UDP socket that sends datagrams to one address (IPv4 or IPv6) with `sendto`.
/// Thread: one thread at a time.
public final class DatagramSocket {
    public let destination: ListenAddress
    private let fd: Int32
    private let address: SocketAddress

    /// Opens an unbound socket of the destination's family (the kernel picks the source port).
    public init(_ destination: ListenAddress) {
        self.destination = destination
        guard let address = SocketAddress(destination) else { preconditionFailure("not a numeric address") }
        self.address = address
        fd = socket(address.family, Int32(SOCK_DGRAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        precondition(fd >= 0, "socket() failed: \(errno)")
        var size: Int32 = 4 << 20  // bursts of hundreds of streams (the live capacity bench)
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
    }

    deinit { close() }

    /// Sends one datagram; false when the kernel refused it.
    @discardableResult
    public func send(_ bytes: [UInt8]) -> Bool {
        guard fd >= 0 else { return false }
        let n = address.withSockaddr { sa, length in
            bytes.withUnsafeBytes { sendto(fd, $0.baseAddress, $0.count, 0, sa, length) }
        }
        return n == bytes.count
    }

    private var closed = false

    /// Closes the socket. Idempotent.
    public func close() {
        guard !closed else { return }
        closed = true
        _ = Glibc.close(fd)
    }
}
