import RoomTapRTP
import Testing

/// ``PlayoutDecision`` on its own: what the playout does next for plain inputs, row by row, with
/// no ring, no decoder and no libopus. Positions are samples on the playout's timeline; the
/// buffer ends at 10 000 and the frame wants it filled to 10 480 unless a row says otherwise.
@Suite("Playout decision")
struct PlayoutDecisionTests {
    typealias Packet = PlayoutDecision.Packet
    typealias Concealment = PlayoutDecision.Concealment

    /// Opus: 2.5 ms steps, 200 ms of concealment in a row at most.
    static let opus = Concealment(limit: 9_600, step: 120)
    /// A PCM codec (G.711): concealment to the sample.
    static let pcm = Concealment(limit: 9_600, step: 1)

    struct Row: Sendable, CustomTestStringConvertible {
        var name: String
        var inputs: PlayoutDecision.Inputs
        var expected: PlayoutDecision
        var testDescription: String { name }
    }

    /// A row's inputs: the wanted packet is sequence 100.
    static func inputs(
        end: Int64 = 10_000, target: Int64 = 10_480, wanted: Packet? = nil, later: (Int64, Packet)? = nil,
        underrunIsSilence: Bool = false, concealment: Concealment = opus
    ) -> PlayoutDecision.Inputs {
        PlayoutDecision.Inputs(
            end: end, target: target, sequence: 100, wanted: wanted,
            later: later.map { PlayoutDecision.Later(sequence: $0.0, packet: $0.1) },
            underrunIsSilence: underrunIsSilence, concealment: concealment)
    }

    static func row(_ name: String, _ inputs: PlayoutDecision.Inputs, _ expected: PlayoutDecision) -> Row {
        Row(name: name, inputs: inputs, expected: expected)
    }

    static func packet(at position: Int64, duration: Int = 960, fec: Bool = false) -> Packet {
        Packet(position: position, duration: duration, hasFEC: fec)
    }

    static func concealment(run: Int = 0, afterDTX: Bool = false, limit: Int = 9_600, step: Int = 120) -> Concealment {
        Concealment(afterDTX: afterDTX, run: run, limit: limit, step: step)
    }

    static let presentPackets: [Row] = [
        row("on time: decoded whole", inputs(wanted: packet(at: 10_000)), .decode(skip: 0)),
        row(
            "after an underrun: its buffered start is trimmed", inputs(wanted: packet(at: 9_700)),
            .decode(skip: 300)),
        row("only its last sample is still ahead", inputs(wanted: packet(at: 9_041)), .decode(skip: 959)),
        row("its last sample was played: late", inputs(wanted: packet(at: 9_040)), .dropLate),
        row("long played: late", inputs(wanted: packet(at: 5_000)), .dropLate),
        row(
            "a 60 ms packet half played is still decoded", inputs(wanted: packet(at: 8_560, duration: 2_880)),
            .decode(skip: 1_440)),
        row(
            "starts after the end (DTX gap): silence up to it", inputs(wanted: packet(at: 10_200)),
            .silenceBeforePacket(frames: 200)),
        row(
            "starts past the target: silence to the target", inputs(wanted: packet(at: 20_000)),
            .silenceBeforePacket(frames: 480)),
        row(
            "starts exactly at the target: silence to it", inputs(wanted: packet(at: 10_480)),
            .silenceBeforePacket(frames: 480)),
        row(
            "the wanted packet wins over a later one",
            inputs(wanted: packet(at: 10_000), later: (101, packet(at: 10_960))),
            .decode(skip: 0)),
        row(
            "decoded after DTX and past the concealment limit",
            inputs(wanted: packet(at: 10_000), concealment: concealment(run: 20_000, afterDTX: true)), .decode(skip: 0)),
        row(
            "the record decodes what it holds", inputs(wanted: packet(at: 10_000), underrunIsSilence: true),
            .decode(skip: 0)),
    ]

    static let lostWithFEC: [Row] = [
        row(
            "one lost 20 ms packet, FEC in the next: recovered",
            inputs(later: (101, packet(at: 10_960, fec: true))), .recoverFromFEC(frames: 960)),
        row(
            "one lost 40 ms packet before a 20 ms one: the whole gap from FEC (PLC first)",
            inputs(later: (101, packet(at: 11_920, fec: true))), .recoverFromFEC(frames: 1_920)),
        row(
            "FEC up to exactly 120 ms", inputs(later: (101, packet(at: 15_760, fec: true))),
            .recoverFromFEC(frames: 5_760)),
        row(
            "FEC fails: the next packet has none", inputs(later: (101, packet(at: 10_960))),
            .concealLost(frames: 960)),
        row(
            "FEC fails: two packets missing (the first is concealed)",
            inputs(later: (102, packet(at: 11_920, fec: true))), .concealLost(frames: 960)),
        row(
            "FEC fails: the gap is over 120 ms", inputs(later: (101, packet(at: 15_880, fec: true))),
            .concealLost(frames: 5_880)),
        row(
            "FEC fails: the gap is not whole 2.5 ms steps", inputs(later: (101, packet(at: 11_000, fec: true))),
            .concealLost(frames: 1_000)),
        row(
            "FEC fails: the gap is shorter than the FEC packet", inputs(later: (101, packet(at: 10_480, fec: true))),
            .concealLost(frames: 480)),
        row(
            "FEC as long as a 10 ms packet", inputs(later: (101, packet(at: 10_480, duration: 480, fec: true))),
            .recoverFromFEC(frames: 480)),
        row(
            "FEC after DTX (the decision ignores concealment state)",
            inputs(later: (101, packet(at: 10_960, fec: true)), concealment: concealment(afterDTX: true)),
            .recoverFromFEC(frames: 960)),
        row(
            "FEC with a one-sample step", inputs(later: (101, packet(at: 10_961, fec: true)), concealment: pcm),
            .recoverFromFEC(frames: 961)),
    ]

    static let lostWithoutFEC: [Row] = [
        row("one lost packet: its gap", inputs(later: (101, packet(at: 10_960))), .concealLost(frames: 960)),
        row(
            "three lost share the gap evenly: the first's share", inputs(later: (103, packet(at: 12_880))),
            .concealLost(frames: 960)),
        row(
            "three lost share an uneven gap (rounded down)", inputs(later: (103, packet(at: 13_001))),
            .concealLost(frames: 1_000)),
        row(
            "three lost in a two-sample gap: nothing each", inputs(later: (103, packet(at: 10_002))),
            .concealLost(frames: 0)),
        row(
            "one lost packet before a 1 s timestamp jump: all of it", inputs(later: (101, packet(at: 58_960))),
            .concealLost(frames: 48_960)),
        row(
            "three lost across a 1 s timestamp jump", inputs(later: (103, packet(at: 60_880))),
            .concealLost(frames: 16_960)),
        row(
            "lost after DTX: still one lost packet (its pieces are silence)",
            inputs(later: (101, packet(at: 10_960)), concealment: concealment(afterDTX: true)),
            .concealLost(frames: 960)),
        row(
            "the record conceals a packet a later one shows lost",
            inputs(later: (101, packet(at: 10_960)), underrunIsSilence: true), .concealLost(frames: 960)),
        row(
            "lost after a partly buffered stretch: the rest of its time",
            inputs(end: 10_700, target: 11_180, later: (101, packet(at: 10_960))), .concealLost(frames: 260)),
    ]

    static let covered: [Row] = [
        row("gap 0: already played", inputs(later: (101, packet(at: 10_000))), .skipCovered(upTo: 101)),
        row("three missing in played time", inputs(later: (103, packet(at: 9_000))), .skipCovered(upTo: 103)),
        row(
            "covered even with FEC", inputs(later: (101, packet(at: 9_880, fec: true))), .skipCovered(upTo: 101)),
    ]

    static let underruns: [Row] = [
        row("one 10 ms frame of PLC", inputs(), .concealUnderrun(frames: 480, wanted: 480)),
        row(
            "rounded up to 2.5 ms steps", inputs(target: 10_500),
            .concealUnderrun(frames: 600, wanted: 500)),
        row("one sample wanted: one step", inputs(target: 10_001), .concealUnderrun(frames: 120, wanted: 1)),
        row(
            "at most 120 ms in one call", inputs(target: 20_000),
            .concealUnderrun(frames: 5_760, wanted: 10_000)),
        row(
            "the rest of the limit when it is shorter", inputs(concealment: concealment(run: 9_250)),
            .concealUnderrun(frames: 360, wanted: 480)),
        row(
            "the rest of the limit rounded up", inputs(concealment: concealment(run: 9_500)),
            .concealUnderrun(frames: 120, wanted: 480)),
        row(
            "a frame fits in what is left", inputs(concealment: concealment(run: 9_000)),
            .concealUnderrun(frames: 480, wanted: 480)),
        row("the limit reached: silence", inputs(concealment: concealment(run: 9_600)), .silenceUnderrun(frames: 480)),
        row("past the limit: silence", inputs(concealment: concealment(run: 9_720)), .silenceUnderrun(frames: 480)),
        row(
            "no concealment at all (limit 0): silence", inputs(concealment: concealment(limit: 0)),
            .silenceUnderrun(frames: 480)),
        row(
            "after DTX: silence at once", inputs(concealment: concealment(afterDTX: true)),
            .silenceUnderrun(frames: 480)),
        row("the record: silence", inputs(underrunIsSilence: true), .silenceUnderrun(frames: 480)),
        row(
            "the record, a long stretch: silence to the target", inputs(target: 20_000, underrunIsSilence: true),
            .silenceUnderrun(frames: 10_000)),
        row(
            "a one-sample step: exactly what is wanted", inputs(target: 10_500, concealment: pcm),
            .concealUnderrun(frames: 500, wanted: 500)),
        row(
            "a one-sample step: the last sample of the limit",
            inputs(concealment: concealment(run: 9_599, step: 1)), .concealUnderrun(frames: 1, wanted: 480)),
    ]

    static let rows = presentPackets + lostWithFEC + lostWithoutFEC + covered + underruns

    @Test(arguments: rows)
    func decides(_ row: Row) {
        #expect(PlayoutDecision(row.inputs) == row.expected)
    }

    @Test func theTableCoversEveryDecision() {
        var seen = Set<String>()
        for row in Self.rows {
            switch row.expected {
            case .decode: seen.insert("decode")
            case .dropLate: seen.insert("dropLate")
            case .silenceBeforePacket: seen.insert("silenceBeforePacket")
            case .skipCovered: seen.insert("skipCovered")
            case .recoverFromFEC: seen.insert("recoverFromFEC")
            case .concealLost: seen.insert("concealLost")
            case .concealUnderrun: seen.insert("concealUnderrun")
            case .silenceUnderrun: seen.insert("silenceUnderrun")
            }
        }
        #expect(seen.count == 8)
    }

    struct PieceRow: Sendable, CustomTestStringConvertible {
        var name: String
        var left: Int
        var concealment: Concealment
        var expected: PlayoutDecision.Piece
        var testDescription: String { name }
    }

    static let pieces: [PieceRow] = [
        PieceRow(name: "a 20 ms packet: one PLC call", left: 960, concealment: opus, expected: .plc(frames: 960)),
        PieceRow(name: "rounded up to a step", left: 1_000, concealment: opus, expected: .plc(frames: 1_080)),
        PieceRow(name: "less than a step: one step", left: 7, concealment: opus, expected: .plc(frames: 120)),
        PieceRow(name: "120 ms: one call", left: 5_760, concealment: opus, expected: .plc(frames: 5_760)),
        PieceRow(name: "longer: 120 ms first", left: 16_960, concealment: opus, expected: .plc(frames: 5_760)),
        PieceRow(
            name: "after DTX: silence for the rest", left: 960, concealment: concealment(afterDTX: true),
            expected: .silence(frames: 960)),
        PieceRow(
            name: "the limit reached: silence for the rest", left: 11_200, concealment: concealment(run: 9_600),
            expected: .silence(frames: 11_200)),
        PieceRow(
            name: "one sample before the limit: a whole packet still", left: 960, concealment: concealment(run: 9_599),
            expected: .plc(frames: 960)),
        PieceRow(name: "a one-sample step", left: 961, concealment: pcm, expected: .plc(frames: 961)),
        PieceRow(name: "a one-sample step, longer", left: 7_000, concealment: pcm, expected: .plc(frames: 5_760)),
    ]

    @Test(arguments: pieces)
    func concealsALostPacketPiece(_ row: PieceRow) {
        #expect(PlayoutDecision.lostPiece(left: row.left, row.concealment) == row.expected)
    }

    /// A lost packet's pieces, walked as the decoder does with a decoder that conceals exactly
    /// what it is asked: 120 ms, 120 ms (the run passes the 200 ms limit), then silence.
    @Test func aLongLostPacketIsConcealedUpToTheLimitThenSilent() {
        var concealment = Self.opus
        var left = 16_960
        var pieces: [PlayoutDecision.Piece] = []
        while left > 0 {
            let piece = PlayoutDecision.lostPiece(left: left, concealment)
            pieces.append(piece)
            switch piece {
            case .plc(let frames):
                concealment.run += frames
                left -= frames
            case .silence:
                left = 0
            }
        }
        #expect(pieces == [.plc(frames: 5_760), .plc(frames: 5_760), .silence(frames: 5_440)])
    }

    /// An underrun walked frame by frame (10 ms each) with a decoder that conceals what it is
    /// asked: 20 frames of PLC (200 ms), then silence; a frame ending mid-step passes its target.
    @Test func anUnderrunConcealsTwoHundredMillisecondsThenPlaysSilence() {
        var concealment = Self.opus
        var end: Int64 = 10_000
        var decisions: [PlayoutDecision] = []
        for frame in 1...30 {
            let target = 10_000 + Int64(frame * 480)
            while end < target {
                let decision = PlayoutDecision(
                    PlayoutDecision.Inputs(end: end, target: target, sequence: 100, concealment: concealment))
                decisions.append(decision)
                switch decision {
                case .concealUnderrun(let frames, _):
                    concealment.run += frames
                    end += Int64(frames)
                case .silenceUnderrun(let frames):
                    end += Int64(frames)
                default:
                    Issue.record("an underrun decided \(decision)")
                    return
                }
            }
        }
        #expect(decisions.count == 30)
        #expect(decisions.prefix(20).allSatisfy { $0 == .concealUnderrun(frames: 480, wanted: 480) })
        #expect(decisions.suffix(10).allSatisfy { $0 == .silenceUnderrun(frames: 480) })
        #expect(concealment.run == 9_600)
    }
}
