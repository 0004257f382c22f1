public import RoomTapCore

/// One track made of several recordings, each at its own place on the room timeline: a recorder
/// that splits a participant's recording into pieces (Sora's split recording), or that starts a new
/// file when the participant comes back. Each piece is a ``RecordedStreamSource`` of its own (its
/// own jitter buffer and decoder, its pre-skip and trimmed end), so a piece plays exactly as it
/// would alone at that place; between pieces the track is silent, and after the last until
/// ``endRoomSample``.
///
/// Pieces must not overlap: piece `i` plays until the room sample ``cuts``[i] (at most its own end),
/// which the caller sets where the next one begins when they would.
///
/// Thread: as ``FrameSource``: after ``Room/addTrack(name:source:)`` only the room clock's thread
/// calls `render`; the lets anywhere. `render` never blocks, locks or allocates (its scratch frame
/// is allocated here).
public final class SegmentedRecordingSource: SizedSource, @unchecked Sendable {
    public let channels: Int
    /// The pieces, by room offset.
    public let pieces: [RecordedStreamSource]
    /// Room sample where each piece stops playing (its end, or where the next begins).
    public let cuts: [Int64]
    /// Room sample just after the track's last sample: its last piece's end, or later when the
    /// caller says the recording went on (silence to there).
    public let endRoomSample: Int64

    private let scratch: UnsafeMutableBufferPointer<Int16>
    /// The first piece that has not stopped yet.
    @exclusivity(unchecked) private var current = 0
    /// Room sample just after the last frame rendered; nil before the first.
    @exclusivity(unchecked) private var rendered: Int64?

    /// Plays each `(stream, offset, until)`, its first sample after the pre-skip at room sample
    /// `offset`, stopping at `until` (nil: its own end); silence to `end` after the last. Pieces are
    /// sorted here by offset; overlaps are cut where the next begins. Nil if libopus cannot create
    /// a decoder.
    public init?(
        segments: [(stream: RecordedRTPStream, offset: Int64, until: Int64?)], end: Int64 = 0, channels: Int = 1
    ) {
        let sorted = segments.sorted { $0.offset < $1.offset }
        var pieces: [RecordedStreamSource] = []
        var cuts: [Int64] = []
        for (i, segment) in sorted.enumerated() {
            guard let source = RecordedStreamSource(stream: segment.stream, offset: segment.offset, channels: channels)
            else { return nil }
            var cut = min(source.endRoomSample, segment.until ?? .max)
            if i + 1 < sorted.count { cut = min(cut, sorted[i + 1].offset) }
            pieces.append(source)
            cuts.append(max(cut, segment.offset))
        }
        self.channels = channels
        self.pieces = pieces
        self.cuts = cuts
        endRoomSample = max(end, cuts.max() ?? 0)
        scratch = .allocate(capacity: AudioFrame.samplesPerChannel * channels)
        scratch.initialize(repeating: 0)
    }

    deinit { scratch.deallocate() }

    /// True once the clock has passed ``endRoomSample``.
    public var isFinished: Bool { (rendered ?? .min) >= endRoomSample }

    /// The samples its pieces decode.
    public var renderWork: Int64? { pieces.reduce(0) { $0 + $1.stream.durationSamples } }

    public func render(into samples: UnsafeMutableBufferPointer<Int16>, at roomSample: Int64) -> FrameStatus {
        let frame = Int64(AudioFrame.samplesPerChannel)
        rendered = roomSample + frame
        samples.update(repeating: 0)
        var status = FrameStatus.silence
        var i = current
        while i < pieces.count {
            let piece = pieces[i]
            let cut = cuts[i]
            if cut <= roomSample {
                if i == current { current += 1 }
                i += 1
                continue
            }
            if piece.offset >= roomSample + frame { break }
            let played = piece.render(into: scratch, at: roomSample)
            let from = Int(max(piece.offset, roomSample) - roomSample) * channels
            let to = Int(min(cut, roomSample + frame) - roomSample) * channels
            if to > from {
                samples.baseAddress!.advanced(by: from).update(
                    from: scratch.baseAddress!.advanced(by: from), count: to - from)
                if played == .normal {
                    status = .normal
                } else if played == .concealed && status != .normal {
                    status = .concealed
                }
            }
            i += 1
        }
        return status
    }
}
