/// The Ogg Opus identification header, the first packet of an Ogg Opus stream.
///
/// RFC 7845 §5.1, https://www.rfc-editor.org/rfc/rfc7845#section-5.1. All fields little-endian.
///
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |      'O'      |      'p'      |      'u'      |      's'      |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |      'H'      |      'e'      |      'a'      |      'd'      |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |  Version = 1  | Channel Count |           Pre-skip            |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                     Input Sample Rate (Hz)                    |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |   Output Gain (Q7.8 in dB)    | Mapping Family|               |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+               :
/// |                                                               |
/// :               Optional Channel Mapping Table...               :
/// |                                                               |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///
/// Channel mapping table (mapping family != 0), RFC 7845 §5.1.1:
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// | Stream Count  | Coupled Count |  Channel Mapping (1 byte per channel)...
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
///
/// Parsed by hand (19+ bytes; no library parses it on its own). Thread: a value type, use anywhere.
public struct OpusHead: Sendable, Equatable {
    /// The 8-byte magic that starts the packet.
    public static let magic: [UInt8] = Array("OpusHead".utf8)
    /// Size of the fixed part (mapping family 0 has nothing more).
    public static let fixedSize = 19

    /// Version byte: upper four bits are the major version (must be 0), lower four the minor one.
    public var version: UInt8
    /// Output channels encoded in the stream (1...255; family 0 allows 1 or 2).
    public var channelCount: Int
    /// Samples at 48 kHz (per channel) to discard from the start of the decoded output.
    public var preSkip: Int
    /// The sample rate of the original input, in Hz (informational; 0 = unspecified). Decoding is
    /// always at 48 kHz here.
    public var inputSampleRate: Int
    /// Gain the decoder applies to the output, in dB in Q7.8 (256 = +1 dB).
    public var outputGainQ8: Int16
    /// Channel mapping family: 0 = mono/stereo in one Opus stream, 1 = Vorbis order, 255 = undefined.
    public var mappingFamily: UInt8
    /// Opus streams in each packet (1 for family 0).
    public var streamCount: Int
    /// How many of those streams are coupled (stereo) (channelCount - 1 for family 0).
    public var coupledStreamCount: Int
    /// For each output channel, the decoded channel it comes from (identity for family 0).
    public var channelMapping: [UInt8]

    /// Creates a header. For family 0 the stream counts and mapping default to the implicit ones.
    public init(
        version: UInt8 = 1, channelCount: Int, preSkip: Int, inputSampleRate: Int = 48_000,
        outputGainQ8: Int16 = 0, mappingFamily: UInt8 = 0, streamCount: Int? = nil,
        coupledStreamCount: Int? = nil, channelMapping: [UInt8]? = nil
    ) {
        self.version = version
        self.channelCount = channelCount
        self.preSkip = preSkip
        self.inputSampleRate = inputSampleRate
        self.outputGainQ8 = outputGainQ8
        self.mappingFamily = mappingFamily
        self.streamCount = streamCount ?? 1
        self.coupledStreamCount = coupledStreamCount ?? max(0, channelCount - 1)
        self.channelMapping = channelMapping ?? (0..<max(0, channelCount)).map { UInt8(truncatingIfNeeded: $0) }
    }

    /// Parses an `OpusHead` packet. Returns nil when the bytes are not an `OpusHead` or the header
    /// is invalid per RFC 7845 (major version != 0, no channels, a channel count or mapping table
    /// that does not fit the mapping family). Trailing bytes after the header are ignored (§5.1:
    /// later minor versions may add fields). Allocates only the small mapping table array.
    public static func parse(_ bytes: UnsafeRawBufferPointer) -> OpusHead? {
        guard case .success(let head) = validate(bytes) else { return nil }
        return head
    }

    /// Whether `bytes` start with the `OpusHead` magic (an Opus stream, valid header or not).
    public static func hasMagic(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.count >= magic.count && zip(bytes.prefix(magic.count), magic).allSatisfy { $0 == $1 }
    }

    /// Why a packet that starts with the magic is not a valid header.
    package enum Problem: Error, Equatable {
        case notOpusHead
        case tooShort(Int)
        case unsupportedVersion(UInt8)
        case noChannels
        case channelCount(family: UInt8, channels: Int)
        case mappingTable(String)

        /// One line for the user (without the path).
        package var message: String {
            switch self {
            case .notOpusHead:
                "the first packet is not an OpusHead"
            case .tooShort(let n):
                "OpusHead is \(n) bytes, shorter than the 19 RFC 7845 requires; the file is damaged, re-encode it"
            case .unsupportedVersion(let v):
                "OpusHead version \(v) (major version \(v >> 4)) is not supported, roomtap reads major version 0 "
                    + "(RFC 7845); re-encode with opusenc or ffmpeg -c:a libopus"
            case .noChannels:
                "OpusHead says 0 channels; the file is damaged, re-encode it"
            case .channelCount(let family, let channels):
                "OpusHead has \(channels) channels, invalid for channel mapping family \(family); "
                    + "the file is damaged, re-encode it"
            case .mappingTable(let what):
                "OpusHead channel mapping table is invalid (\(what)); the file is damaged, re-encode it"
            }
        }
    }

    /// Parses and says why when the header is invalid.
    package static func validate(_ bytes: UnsafeRawBufferPointer) -> Result<OpusHead, Problem> {
        guard hasMagic(bytes) else { return .failure(.notOpusHead) }
        guard bytes.count >= fixedSize else { return .failure(.tooShort(bytes.count)) }
        let version = bytes[8]
        guard version >> 4 == 0 else { return .failure(.unsupportedVersion(version)) }
        let channels = Int(bytes[9])
        guard channels > 0 else { return .failure(.noChannels) }
        let preSkip = Int(bytes[10]) | Int(bytes[11]) << 8
        let rate = Int(bytes[12]) | Int(bytes[13]) << 8 | Int(bytes[14]) << 16 | Int(bytes[15]) << 24
        let gain = Int16(bitPattern: UInt16(bytes[16]) | UInt16(bytes[17]) << 8)
        let family = bytes[18]
        if family == 0 {
            guard channels <= 2 else { return .failure(.channelCount(family: 0, channels: channels)) }
            return .success(
                OpusHead(
                    version: version, channelCount: channels, preSkip: preSkip, inputSampleRate: rate,
                    outputGainQ8: gain, mappingFamily: 0))
        }
        if family == 1 && channels > 8 { return .failure(.channelCount(family: 1, channels: channels)) }
        guard bytes.count >= fixedSize + 2 + channels else {
            return .failure(.mappingTable("\(bytes.count) bytes, \(fixedSize + 2 + channels) needed"))
        }
        let streams = Int(bytes[19])
        let coupled = Int(bytes[20])
        guard streams > 0 else { return .failure(.mappingTable("stream count 0")) }
        guard coupled <= streams, streams + coupled <= 255 else {
            return .failure(.mappingTable("\(coupled) coupled of \(streams) streams"))
        }
        var mapping = [UInt8](repeating: 0, count: channels)
        for c in 0..<channels {
            let m = bytes[21 + c]
            guard m == 255 || Int(m) < streams + coupled else {
                return .failure(.mappingTable("channel \(c) maps to \(m) of \(streams + coupled) decoded channels"))
            }
            mapping[c] = m
        }
        return .success(
            OpusHead(
                version: version, channelCount: channels, preSkip: preSkip, inputSampleRate: rate,
                outputGainQ8: gain, mappingFamily: family, streamCount: streams, coupledStreamCount: coupled,
                channelMapping: mapping))
    }

    /// Whether one plain libopus decoder (`opus_decoder_create`) decodes this stream: family 0, or
    /// family 1 with one stream of one or two channels in the identity order.
    public var isDecodableWithSingleStreamDecoder: Bool {
        switch mappingFamily {
        case 0:
            return channelCount == 1 || channelCount == 2
        case 1:
            return channelCount <= 2 && streamCount == 1 && coupledStreamCount == channelCount - 1
                && channelMapping == (0..<channelCount).map { UInt8($0) }
        default:
            return false
        }
    }
}
