internal import COpus
import Foundation
public import RoomTapCore
import Synchronization

/// Sends a track as Opus over RTP (RFC 3550, payload per RFC 7587) through an ``RTPPacketTransport``:
/// plain UDP to one destination (an SFU's or PBX's RTP input, e.g. Janus `rtp_forward`'s
/// counterpart, mediasoup PlainTransport, Asterisk ExternalMedia), or a WebRTC connection that
/// protects it as SRTP (the agent published into a joined room): how the agent's voice goes back
/// into a call.
///
/// Every 20 ms of the track (two frames) becomes one packet: 12-byte RTP header (version 2, the
/// given payload type, a random SSRC, sequence number and timestamp starting at random values per
/// RFC 3550 §5.1, marker on the first packet) and one Opus frame encoded by libopus (VoIP
/// application, in-band FEC on). The timestamp advances 960 per packet at 48 kHz, including
/// through silence, so the receiver keeps the timeline.
///
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |V=2|P|X|  CC=0 |M|     PT      |       sequence number         |
/// |                           timestamp                           |
/// |                             SSRC                              |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
///
/// Thread: `onFrame` on the room clock's thread (copies into a bounded queue; never blocks or
/// allocates); encoding and `sendto` on the sender's own thread; the counters and `close` from any
/// other thread.
public final class RTPOpusSender: AudioTrackSink, @unchecked Sendable {
    /// A destination that cannot be used, or a socket/encoder that cannot be made.
    public struct SetupError: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    /// Where packets go (nil: a transport other than UDP).
    public let destination: ListenAddress?
    /// The RTP payload type (dynamic, 96...127; 111 is what browsers use for Opus).
    public let payloadType: UInt8
    /// The stream's SSRC.
    public let ssrc: UInt32
    private let queued: QueuedSink
    private let encoder: Encoder

    /// Opens a UDP socket toward `destination` and an Opus encoder for `channels` (the track's).
    /// `bitrate` in bits per second; `policy` `.wait` only for offline rooms on a virtual clock.
    public convenience init(
        destination: ListenAddress, channels: Int = 1, payloadType: UInt8 = 111, bitrate: Int = 32_000,
        policy: OverflowPolicy = .drop
    ) throws(SetupError) {
        guard (96...127).contains(payloadType) else {
            throw SetupError(description: "RTP payload type \(payloadType) is not dynamic (96-127)")
        }
        guard let address = SocketAddress(destination) else {
            throw SetupError(description: "cannot send RTP to \(destination): not a numeric IP address and port")
        }
        try self.init(
            transport: UDPPacketTransport(address: address), destination: destination, channels: channels,
            payloadType: payloadType, bitrate: bitrate, policy: policy)
    }

    /// A sender through `transport` (e.g. a WebRTC connection), with the SSRC the transport's SDP
    /// announced (nil: a random one), otherwise as above.
    public convenience init(
        transport: any RTPPacketTransport, ssrc: UInt32? = nil, channels: Int = 1, payloadType: UInt8 = 111,
        bitrate: Int = 32_000, policy: OverflowPolicy = .drop
    ) throws(SetupError) {
        guard (96...127).contains(payloadType) else {
            throw SetupError(description: "RTP payload type \(payloadType) is not dynamic (96-127)")
        }
        try self.init(
            transport: transport, destination: nil, ssrc: ssrc, channels: channels, payloadType: payloadType,
            bitrate: bitrate, policy: policy)
    }

    private init(
        transport: any RTPPacketTransport, destination: ListenAddress?, ssrc: UInt32? = nil, channels: Int,
        payloadType: UInt8, bitrate: Int, policy: OverflowPolicy
    ) throws(SetupError) {
        self.destination = destination
        self.payloadType = payloadType
        self.ssrc = ssrc ?? UInt32.random(in: 1...UInt32.max)
        encoder = try Encoder(
            transport: transport, channels: channels, payloadType: payloadType, ssrc: self.ssrc, bitrate: bitrate)
        queued = QueuedSink(
            consumer: encoder, channels: channels, capacity: 64, policy: policy, threadName: "roomtap.rtp-out")
    }

    public func onFrame(_ frame: AudioFrame) { queued.onFrame(frame) }

    /// Packets sent so far.
    public var packetsSent: Int { encoder.packets.load(ordering: .relaxed) }
    /// Frames dropped because the sender fell behind (queue full).
    public var droppedFrames: Int { queued.droppedFrames }
    /// Datagrams the kernel refused (e.g. no route); counted, never fatal.
    public var sendErrors: Int { encoder.errors.load(ordering: .relaxed) }

    /// Sends what is queued (a final partial packet is padded with silence) and closes the socket.
    /// Idempotent. Not from the room clock's thread.
    public func close() throws { try queued.close() }
}

/// The sender's thread: 10 ms frames in, one RTP packet per 20 ms out.
private final class Encoder: FrameConsumer, @unchecked Sendable {
    let packets = Atomic<Int>(0)
    let errors = Atomic<Int>(0)
    private let transport: any RTPPacketTransport
    private let channels: Int
    private let payloadType: UInt8
    private let ssrc: UInt32
    private let opus: OpaquePointer
    private var pcm: [Int16]
    private var filled = 0
    private var sequence = UInt16.random(in: 0...UInt16.max)
    private var timestamp = UInt32.random(in: 0...UInt32.max)
    private var first = true
    /// Header, the largest Opus packet, and room for SRTP's tag.
    private var packet = [UInt8](repeating: 0, count: 12 + 1_500 + SRTPSender.overhead)

    static let packetSamples = 960  // 20 ms at 48 kHz

    init(
        transport: any RTPPacketTransport, channels: Int, payloadType: UInt8, ssrc: UInt32, bitrate: Int
    ) throws(RTPOpusSender.SetupError) {
        self.transport = transport
        self.channels = channels
        self.payloadType = payloadType
        self.ssrc = ssrc
        var error: Int32 = 0
        guard let encoder = opus_encoder_create(48_000, Int32(channels), OPUS_APPLICATION_VOIP, &error) else {
            throw RTPOpusSender.SetupError(description: "cannot create an Opus encoder (libopus error \(error))")
        }
        opus = encoder
        _ = roomtap_opus_encoder_set_bitrate(encoder, Int32(bitrate))
        _ = roomtap_opus_encoder_set_inband_fec(encoder, 1)
        _ = roomtap_opus_encoder_set_packet_loss_perc(encoder, 5)
        pcm = [Int16](repeating: 0, count: Self.packetSamples * channels)
    }

    deinit { opus_encoder_destroy(opus) }

    func consume(_ frame: AudioFrame) throws {
        let count = AudioFrame.samplesPerChannel * channels
        pcm.withUnsafeMutableBufferPointer { buffer in
            frame.copy(into: buffer.baseAddress! + filled, channels: channels)
        }
        filled += count
        if filled == pcm.count { sendPacket() }
    }

    func drained() throws {}

    func finish() throws {
        guard filled > 0 else { return }
        for i in filled..<pcm.count { pcm[i] = 0 }
        sendPacket()
    }

    private func sendPacket() {
        filled = 0
        let encoded = pcm.withUnsafeBufferPointer { input in
            packet.withUnsafeMutableBufferPointer { out in
                opus_encode(opus, input.baseAddress!, Int32(Self.packetSamples), out.baseAddress! + 12, 1_500)
            }
        }
        defer {
            sequence &+= 1
            timestamp &+= UInt32(Self.packetSamples)
        }
        guard encoded > 0 else {
            errors.add(1, ordering: .relaxed)
            return
        }
        packet[0] = 0x80
        packet[1] = (first ? 0x80 : 0) | (payloadType & 0x7F)
        first = false
        packet[2] = UInt8(sequence >> 8)
        packet[3] = UInt8(sequence & 0xFF)
        for i in 0..<4 {
            packet[4 + i] = UInt8(truncatingIfNeeded: timestamp >> (24 - 8 * UInt32(i)))
            packet[8 + i] = UInt8(truncatingIfNeeded: ssrc >> (24 - 8 * UInt32(i)))
        }
        let length = 12 + Int(encoded)
        let sent = packet.withUnsafeMutableBytes { bytes in transport.send(bytes, length: length) }
        if sent { packets.add(1, ordering: .relaxed) } else { errors.add(1, ordering: .relaxed) }
    }
}

/// Where an ``RTPOpusSender``'s packets go.
///
/// Thread: `send` on the sender's one thread.
public protocol RTPPacketTransport: Sendable {
    /// Sends the RTP packet of `length` bytes at the start of `buffer`, which has
    /// ``SRTPSender/overhead`` bytes of room after it (a transport may protect it in place). True
    /// when it went out. Allocates nothing.
    func send(_ buffer: UnsafeMutableRawBufferPointer, length: Int) -> Bool
}

/// Plain RTP over UDP to one address, from a socket of its own (closed at deinit).
final class UDPPacketTransport: RTPPacketTransport, @unchecked Sendable {
    private let address: SocketAddress
    private let fd: Int32

    init(address: SocketAddress) throws(RTPOpusSender.SetupError) {
        self.address = address
        fd = socket(address.family, Int32(SOCK_DGRAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else {
            throw RTPOpusSender.SetupError(description: "cannot open a UDP socket: \(String(cString: strerror(errno)))")
        }
    }

    deinit { Glibc.close(fd) }

    func send(_ buffer: UnsafeMutableRawBufferPointer, length: Int) -> Bool {
        address.withSockaddr { sa, len in sendto(fd, buffer.baseAddress, length, Int32(MSG_NOSIGNAL), sa, len) }
            == length
    }
}
