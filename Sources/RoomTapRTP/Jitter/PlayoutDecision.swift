/// What a ``PlayoutDecoder`` does next to fill its buffer toward its target: the decision half of
/// ``PlayoutDecoder/fill(upTo:underrunIsSilence:)``, a pure function of plain numbers (NetEq's
/// `DecisionLogic` beside its `Expand`/`Normal` actions). The decoder gathers the ``Inputs``
/// (the buffer's end, the wanted packet or the first later one, the concealment state), takes
/// the decision and performs it (libopus, the buffer, the counters), until the buffer reaches
/// the target.
///
/// The rules, in order (positions are on this playout's timeline, samples per channel at 48 kHz):
/// 1. The wanted packet is held:
///    - its time was all played before it came (an underrun concealed it): ``dropLate``;
///    - it starts after the buffer's end (a timestamp gap without a sequence gap: DTX, a paused
///      sender): ``silenceBeforePacket(frames:)`` up to it, or to the target;
///    - else ``decode(skip:)``, trimming what is already buffered.
/// 2. It is missing and a later packet is held (the wanted one is lost); `gap` is from the
///    buffer's end to the later packet, shared evenly among the `missing` packets:
///    - `gap <= 0`: their time is covered already: ``skipCovered(upTo:)``;
///    - one missing packet, the later one carries FEC, and the gap is at most 120 ms, a whole
///      number of concealment steps and at least the later packet's duration:
///      ``recoverFromFEC(frames:)`` of the whole gap;
///    - else ``concealLost(frames:)`` of the first missing packet's share (the whole gap when it
///      is the only one).
/// 3. Nothing later is held (an underrun): ``silenceUnderrun(frames:)`` to the target for the
///    record (`underrunIsSilence`), after DTX or once ``Concealment/limit`` samples were concealed
///    in a row; else ``concealUnderrun(frames:wanted:)``: one PLC call of the way to the target
///    rounded up to whole 2.5 ms steps, but at most 120 ms and at most the rest of the limit
///    (rounded up); the loop comes back for the rest.
///
/// Thread: any (pure; the room clock's thread calls it). Allocates nothing; the same inputs
/// always give the same decision.
package enum PlayoutDecision: Equatable, Sendable {
    /// Decode the wanted packet whole and append all but its first `skip` samples (buffered
    /// already, after an underrun), then want the next one. Should the decoder refuse it, its
    /// remaining `duration − skip` samples are concealed as a lost packet's
    /// (``lostPiece(left:_:)``).
    case decode(skip: Int)
    /// The wanted packet's time was all played before it came: count it late and want the next.
    case dropLate
    /// The wanted packet starts later: append `frames` samples of silence (up to it, or to the
    /// target if that comes first); the packet stays wanted.
    case silenceBeforePacket(frames: Int)
    /// The missing packets before `upTo` (an extended sequence number) fall in time already
    /// played: count them missed and want `upTo` next.
    case skipCovered(upTo: Int64)
    /// Recover the one missing packet from the later packet's in-band FEC (RFC 6716 §2.1.7):
    /// `frames` samples, the whole gap (PLC for all but the later packet's duration); count it
    /// missed. Should the decoder refuse, the gap is concealed as with ``concealLost(frames:)``.
    case recoverFromFEC(frames: Int)
    /// Conceal the first missing packet: its `frames` samples (its share of the gap), in pieces
    /// decided by ``lostPiece(left:_:)``; count it missed.
    case concealLost(frames: Int)
    /// An underrun: one PLC call of `frames` samples (whole concealment steps; it may pass the
    /// target by less than a step); should the decoder refuse, `wanted` samples of silence (to
    /// the target).
    case concealUnderrun(frames: Int, wanted: Int)
    /// An underrun that plays silence: `frames` samples, to the target.
    case silenceUnderrun(frames: Int)

    /// One packet as the decision sees it.
    package struct Packet: Equatable, Sendable {
        /// Where its first sample goes on this playout's timeline (samples; the playout's offset
        /// and the decoder's lead applied).
        package var position: Int64
        /// Samples per channel it covers (48 kHz).
        package var duration: Int
        /// It carries in-band FEC for the packet before it.
        package var hasFEC: Bool

        package init(position: Int64, duration: Int, hasFEC: Bool = false) {
            self.position = position
            self.duration = duration
            self.hasFEC = hasFEC
        }
    }

    /// The first packet held after the wanted one.
    package struct Later: Equatable, Sendable {
        /// Its extended sequence number.
        package var sequence: Int64
        package var packet: Packet

        package init(sequence: Int64, packet: Packet) {
            self.sequence = sequence
            self.packet = packet
        }
    }

    /// How much concealment the playout may still do, and in what steps.
    package struct Concealment: Equatable, Sendable {
        /// The last packet decoded was DTX (≤ 2 bytes for Opus), or the sender left: silence
        /// rather than PLC.
        package var afterDTX: Bool
        /// Samples concealed since the last packet was decoded or recovered.
        package var run: Int
        /// The most samples concealed in a row (the playout's `maxConcealment`); silence after.
        package var limit: Int
        /// PLC comes in whole multiples of this many samples (Opus: 120, 2.5 ms; PCM codecs: 1).
        package var step: Int

        package init(afterDTX: Bool = false, run: Int = 0, limit: Int, step: Int) {
            self.afterDTX = afterDTX
            self.run = run
            self.limit = limit
            self.step = step
        }

        /// True when nothing more may be concealed: silence instead.
        package var isSpent: Bool { afterDTX || run >= limit }

        /// `frames` rounded up to a whole number of steps, at least one step.
        package func roundUp(_ frames: Int) -> Int {
            max(step, (frames + step - 1) / step * step)
        }
    }

    /// Everything the decision depends on, gathered by the ``PlayoutDecoder``.
    package struct Inputs: Equatable, Sendable {
        /// The timeline position just after the last buffered sample.
        package var end: Int64
        /// The timeline position to fill to (more than ``end``).
        package var target: Int64
        /// The extended sequence number of the wanted packet.
        package var sequence: Int64
        /// The wanted packet, if held.
        package var wanted: Packet?
        /// When the wanted packet is missing, the first later one held, if any (ignored when
        /// ``wanted`` is held).
        package var later: Later?
        /// With nothing held after the wanted packet, play silence rather than concealment (the
        /// record: it waited its whole delay for a packet that did not come).
        package var underrunIsSilence: Bool
        package var concealment: Concealment

        package init(
            end: Int64, target: Int64, sequence: Int64, wanted: Packet? = nil, later: Later? = nil,
            underrunIsSilence: Bool = false, concealment: Concealment
        ) {
            self.end = end
            self.target = target
            self.sequence = sequence
            self.wanted = wanted
            self.later = later
            self.underrunIsSilence = underrunIsSilence
            self.concealment = concealment
        }
    }

    /// One piece of a lost packet's concealment.
    package enum Piece: Equatable, Sendable {
        /// One PLC call of `frames` samples (whole steps, at most 120 ms); should the decoder
        /// refuse, silence for the rest of the packet.
        case plc(frames: Int)
        /// `frames` samples of silence, the rest of the packet.
        case silence(frames: Int)
    }

    /// The longest PLC call or FEC recovery, in samples per channel (120 ms).
    package static let maxFrames = LiveOpusDecoder.maxFrameSamples

    /// The decision for `inputs` (see the type's rules). `inputs.end < inputs.target`.
    package init(_ inputs: Inputs) {
        let end = inputs.end
        if let packet = inputs.wanted {
            if packet.position + Int64(packet.duration) <= end {
                self = .dropLate
            } else if packet.position > end {
                self = .silenceBeforePacket(frames: Int(min(packet.position, inputs.target) - end))
            } else {
                self = .decode(skip: Int(end - packet.position))
            }
            return
        }
        let concealment = inputs.concealment
        guard let later = inputs.later else {
            let wanted = Int(inputs.target - end)
            if inputs.underrunIsSilence || concealment.isSpent {
                self = .silenceUnderrun(frames: wanted)
            } else {
                let frames = min(
                    concealment.roundUp(wanted), Self.maxFrames,
                    concealment.roundUp(concealment.limit - concealment.run))
                self = .concealUnderrun(frames: frames, wanted: wanted)
            }
            return
        }
        let packet = later.packet
        let gap = packet.position - end
        let missing = later.sequence - inputs.sequence
        if gap <= 0 {
            self = .skipCovered(upTo: later.sequence)
        } else if missing == 1, packet.hasFEC, gap <= Int64(Self.maxFrames), gap % Int64(concealment.step) == 0,
            gap >= packet.duration
        {
            self = .recoverFromFEC(frames: Int(gap))
        } else {
            self = .concealLost(frames: Int(missing == 1 ? gap : gap / missing))
        }
    }

    /// The next piece of a lost packet with `left` (> 0) samples still to conceal: silence for
    /// all of them after DTX or once ``Concealment/limit`` samples were concealed in a row; else
    /// one PLC call of `left` rounded up to whole steps, at most 120 ms (the last piece may pass
    /// the packet's end by less than a step). Any thread; pure.
    package static func lostPiece(left: Int, _ concealment: Concealment) -> Piece {
        if concealment.isSpent { return .silence(frames: left) }
        return .plc(frames: concealment.roundUp(min(left, maxFrames)))
    }
}
