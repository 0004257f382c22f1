public import RoomTapCore

/// A recorded RTP stream (``RecordedRTPStream``) played on the room timeline by the live path's
/// own jitter buffer, on a virtual clock: the offline form of a network participant.
///
/// Each packet "arrives" a whole record delay (``recordDelayMilliseconds``) before its place into
/// an ``JitterBuffer`` with a record playout and no live one, and the record plays it at
/// exactly its place: the stream's first sample after the pre-skip at room sample ``offset``,
/// every packet `place` samples after the first. So what a live call does to a stream's packets
/// is done here to the recording's: every packet is decoded whole, in sequence order (packets
/// stored out of order are put back in order), duplicates are dropped, a missing sequence number
/// with later packets present is concealed with one Opus PLC call of its duration (or recovered
/// from the next packet's in-band FEC), a timestamp gap without missing packets (DTX, a paused
/// sender) and everything after the last packet are silence, a timestamp jump of more than 10 s
/// is a sender restart. Nothing adapts, and packets are handed over as the clock reaches them, so
/// memory stays at the jitter buffer's ring whatever the length. The stream spans
/// ``offset``..<``endRoomSample``: before it (packets sent before the first stored one) and after
/// it (a container's trimmed end, packets a restart placed later) it renders silence.
///
/// Thread: as ``FrameSource``: after ``Room/addTrack(name:source:)`` only the room clock's thread
/// calls `render`; ``statistics`` and the lets anywhere. `render` never blocks, locks or
/// allocates (``JitterBuffer/insert(sequence:timestamp:payload:arrival:)`` copies into its
/// preallocated ring).
public final class RecordedStreamSource: SizedSource, @unchecked Sendable {
    /// How long before its place a packet is handed to the jitter buffer (ms): the record delay
    /// of its record playout. Packets stored up to that much out of order still find their place.
    public static let recordDelayMilliseconds = 500

    public let channels: Int
    /// The recording.
    public let stream: RecordedRTPStream
    /// Room sample of the stream's first played sample (its first packet's place plus the
    /// pre-skip).
    public let offset: Int64
    /// Room sample just after the stream's last sample.
    public let endRoomSample: Int64
    /// The jitter buffer's counters (packets, lost and concealed, duplicates, reordered,
    /// restarts, invalid, overflow). Any thread.
    public var statistics: JitterStatistics { buffer.statistics }

    private let buffer: JitterBuffer
    private let lag: Int64
    /// Where room sample `r` lies on the buffer's timeline: `r + shift` (the pre-skip).
    private let shift: Int64
    /// The next packet to hand to the jitter buffer.
    @exclusivity(unchecked) private var next = 0
    /// Room sample just after the last frame rendered; nil before the first.
    @exclusivity(unchecked) private var rendered: Int64?

    /// Plays `stream` with its first sample after the pre-skip at room sample `offset`, rendering
    /// `channels` (1 or 2; libopus down- or up-mixes). Nil if libopus cannot create a decoder.
    public init?(stream: RecordedRTPStream, offset: Int64, channels: Int = 1) {
        guard
            let buffer = JitterBuffer(
                channels: channels, targetDelayMilliseconds: 0, adaptive: false,
                recordDelayMilliseconds: Self.recordDelayMilliseconds, livePlayout: false,
                arrivalToRoom: { Int64(bitPattern: $0) })
        else { return nil }
        self.channels = channels
        self.stream = stream
        self.offset = offset
        self.buffer = buffer
        lag = Int64(Self.recordDelayMilliseconds) * 48
        shift = Int64(stream.preSkip)
        endRoomSample = offset + stream.durationSamples
    }

    /// True once the clock has passed the stream's last sample.
    public var isFinished: Bool { (rendered ?? .min) >= endRoomSample }

    /// The samples it decodes: its length.
    public var renderWork: Int64? { stream.durationSamples }

    public func render(into samples: UnsafeMutableBufferPointer<Int16>, at roomSample: Int64) -> FrameStatus {
        let frame = Int64(AudioFrame.samplesPerChannel)
        if rendered == nil {
            // The first packet starts before this frame (a pre-skip, or a stream placed before
            // the room's start): play the buffer from the frame holding it, so its head is
            // trimmed as the decoder trims it, not moved.
            let first = roomSample + shift
            var position = first - (max(0, first - offset) + frame - 1) / frame * frame
            while position < first {
                _ = play(into: samples, at: position)
                position += frame
            }
        }
        rendered = roomSample + frame
        var status = play(into: samples, at: roomSample + shift)
        let start = offset - roomSample
        if start > 0 {
            // Before the first packet's place: packets sent earlier that the jitter buffer still
            // took (stored after it) would play here; the stream starts at its first packet.
            let upTo = Int(min(start, frame)) * channels
            samples.baseAddress!.update(repeating: 0, count: upTo)
            if start >= frame { status = .silence }
        }
        let end = endRoomSample - roomSample
        if end < frame {
            // Past the stream's last sample (a container's trimmed end): silence.
            let from = Int(max(0, end)) * channels
            samples.baseAddress!.advanced(by: from).update(repeating: 0, count: samples.count - from)
            if end <= 0 { status = .silence }
        }
        return status
    }

    /// Hands over the packets due by the end of the frame at buffer position `position`, then
    /// renders that frame.
    private func play(into samples: UnsafeMutableBufferPointer<Int16>, at position: Int64) -> FrameStatus {
        let horizon = position + Int64(AudioFrame.samplesPerChannel)
        let packets = stream.packets
        // A packet arrives `lag` before its place (arrival = place − lag; the record plays it
        // `lag` after that), handed over when the clock reaches that arrival.
        stream.bytes.withUnsafeBytes { bytes in
            while next < packets.count {
                let packet = packets[next]
                let arrival = offset + packet.place - lag
                guard arrival < horizon else { break }
                buffer.insert(
                    sequence: packet.sequence, timestamp: packet.timestamp,
                    payload: UnsafeRawBufferPointer(rebasing: bytes[packet.payload]),
                    arrival: UInt64(bitPattern: arrival))
                next += 1
            }
        }
        return buffer.render(into: samples, at: position)
    }
}
