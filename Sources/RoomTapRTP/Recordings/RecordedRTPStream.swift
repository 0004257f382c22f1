/// One Opus RTP stream as a recording holds it (a Janus `.mjr`, a WebM/Matroska/MP4 track): its
/// packets in the order they were stored, each placed on the stream's own timeline by its RTP
/// timestamp (48 kHz units, RFC 7587 §4.1, https://www.rfc-editor.org/rfc/rfc7587#section-4.1).
///
/// ``RecordedStreamSource`` plays it on a room timeline through the live path's jitter buffer.
/// The payload bytes stay in one array; packets are ranges into it, so a recording costs its
/// file's size in memory and nothing per packet beyond 32 bytes.
///
/// Thread: a value type, use anywhere.
public struct RecordedRTPStream: Sendable {
    /// One stored packet.
    public struct Packet: Sendable, Equatable {
        /// The RTP sequence number (as stored; restarts and wraps are the jitter buffer's job).
        public var sequence: UInt16
        /// The RTP timestamp as stored.
        public var timestamp: UInt32
        /// Where its first sample lies on the stream's timeline: samples after the first
        /// packet's, from the timestamps (32-bit wraps unwrapped against the packet stored before).
        public var place: Int64
        /// Samples per channel (48 kHz) the Opus packet holds (RFC 6716 §3.1 TOC).
        public var duration: Int
        /// Where the Opus packet lies in ``RecordedRTPStream/bytes``.
        public var payload: Range<Int>

        /// A packet as stored (``place`` and ``duration`` are filled in by the stream).
        public init(sequence: UInt16, timestamp: UInt32, payload: Range<Int>) {
            self.sequence = sequence
            self.timestamp = timestamp
            self.payload = payload
            place = 0
            duration = 0
        }
    }

    /// Samples per channel (48 kHz) in the Opus packet `payload` (RFC 6716 §3.1 TOC); nil when it
    /// is not a valid Opus packet.
    public static func samples(inOpusPacket payload: UnsafeRawBufferPointer) -> Int? {
        LiveOpusDecoder.duration(of: payload)
    }

    /// The bytes the payloads point into.
    public let bytes: [UInt8]
    /// The packets in the order they were stored.
    public let packets: [Packet]
    /// Wall-clock time of the first packet, microseconds since the Unix epoch, when the recording
    /// says (Janus's `u`); nil otherwise.
    public let firstPacketMicroseconds: Int64?
    /// Samples before the timeline's first sample that are not to be played (an Opus pre-skip,
    /// RFC 7845 §4.2; 0 for RTP recordings, whose first packet is the first audio).
    public let preSkip: Int

    /// Samples (48 kHz) played: from the first packet's place plus ``preSkip`` to the end of the
    /// packet ending last, or the length the container declares when it is shorter (an end
    /// trimmed by Matroska's `DiscardPadding`); 0 without packets.
    public let durationSamples: Int64

    /// Makes a stream of `packets` (as stored: `place` is filled in here, from the timestamps).
    /// Packets whose payload is not a valid Opus packet (no TOC, RFC 6716 §3.1) are dropped.
    /// `length`: the samples the container says it holds after the pre-skip, if it says.
    public init(
        bytes: [UInt8], packets stored: [Packet], firstPacketMicroseconds: Int64?, preSkip: Int = 0,
        length: Int64? = nil
    ) {
        var unwrapper = TimestampUnwrapper()
        var first: Int64?
        var packets: [Packet] = []
        packets.reserveCapacity(stored.count)
        var end: Int64 = 0
        for var packet in stored {
            guard packet.payload.lowerBound >= 0, packet.payload.upperBound <= bytes.count,
                let duration = bytes.withUnsafeBytes({ raw in
                    LiveOpusDecoder.duration(of: UnsafeRawBufferPointer(rebasing: raw[packet.payload]))
                })
            else { continue }
            let extended = unwrapper.extend(packet.timestamp)
            unwrapper.setReference(extended)
            let origin = first ?? extended
            first = origin
            packet.place = extended - origin
            packet.duration = duration
            end = max(end, packet.place + Int64(duration))
            packets.append(packet)
        }
        self.bytes = bytes
        self.packets = packets
        self.firstPacketMicroseconds = firstPacketMicroseconds
        self.preSkip = preSkip
        let played = max(0, end - Int64(preSkip))
        durationSamples = length.map { min(max(0, $0), played) } ?? played
    }
}
