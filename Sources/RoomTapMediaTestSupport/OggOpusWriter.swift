import COpus
import Foundation

/// An Ogg Opus file made in memory by ``OggOpusWriter``, with what a test needs to check a decoder
/// against libopus: the encoded packets, pre-skip and length.
public struct OggOpusFile: Sendable {
    /// The whole file.
    public var bytes: [UInt8]
    /// The pages, in file order (their concatenation is `bytes`).
    public var pages: [[UInt8]]
    /// The audio packets, in order (no header packets).
    public var packets: [[UInt8]]
    /// Pre-skip written in OpusHead (the encoder's lookahead).
    public var preSkip: Int
    /// Playable samples per channel (the length of the encoded PCM).
    public var totalSamples: Int
    /// Channels of the stream.
    public var channels: Int
    /// Output gain written in OpusHead (dB in Q7.8).
    public var outputGainQ8: Int16

    /// Byte offset of the start of each page in `bytes`.
    public var pageOffsets: [Int] {
        var offsets: [Int] = []
        var at = 0
        for p in pages {
            offsets.append(at)
            at += p.count
        }
        return offsets
    }

    /// Writes `bytes` to `path`, replacing any file there.
    public func write(to path: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }
}

/// Encodes 48 kHz Int16 PCM with libopus and writes Ogg Opus with libogg, like `opusenc`: OpusHead
/// with the pre-skip from `OPUS_GET_LOOKAHEAD`, OpusTags, granule positions on every page, the end
/// trimmed by the final granule, the EOS flag on the last page (RFC 7845).
///
/// Thread: a value; `encode` is pure (deterministic for the same input and settings).
public struct OggOpusWriter: Sendable {
    /// 1 or 2.
    public var channels: Int
    /// Opus frame size in samples per channel (480 = 10 ms, 960 = 20 ms, 1920, 2880 = 60 ms).
    public var frameSamples: Int
    /// Target bitrate in bits per second.
    public var bitrate: Int
    /// Encoder complexity 0...10.
    public var complexity: Int
    /// Output gain written in OpusHead (dB in Q7.8).
    public var outputGainQ8: Int16
    /// Audio packets per page (a page is flushed after that many).
    public var packetsPerPage: Int
    /// Body bytes after which a page is closed early (65025: the largest pages Ogg allows).
    public var maxPageBytes: Int
    /// Ogg serial number.
    public var serial: Int32
    /// Granule position of the first sample (RFC 7845 §4: nonzero for streams cut from a live one).
    public var startGranule: Int64
    /// OpusTags vendor and comments.
    public var vendor: String
    public var comments: [String]

    /// Creates a writer. `frameMilliseconds` is 2.5, 5, 10, 20, 40 or 60.
    public init(
        channels: Int = 1, frameMilliseconds: Double = 20, bitrate: Int = 32_000, complexity: Int = 5,
        outputGainQ8: Int16 = 0, packetsPerPage: Int = 10, maxPageBytes: Int = 4096, serial: Int32 = 0x5254_4150,
        startGranule: Int64 = 0,
        vendor: String = "roomtap tests", comments: [String] = ["TITLE=test"]
    ) {
        self.channels = channels
        self.frameSamples = Int(frameMilliseconds * 48)
        self.bitrate = bitrate
        self.complexity = complexity
        self.outputGainQ8 = outputGainQ8
        self.packetsPerPage = packetsPerPage
        self.maxPageBytes = maxPageBytes
        self.serial = serial
        self.startGranule = startGranule
        self.vendor = vendor
        self.comments = comments
    }

    /// Encodes interleaved `pcm` (`channels` channels) into packets. Returns the packets and the
    /// encoder's lookahead (the pre-skip). The input is padded with zeros so that the decoded
    /// output covers pre-skip + every input sample.
    public func encodePackets(_ pcm: [Int16]) -> (packets: [[UInt8]], preSkip: Int) {
        precondition(pcm.count % channels == 0, "interleaved samples")
        var error: Int32 = 0
        let encoder = opus_encoder_create(48_000, Int32(channels), OPUS_APPLICATION_AUDIO, &error)!
        defer { opus_encoder_destroy(encoder) }
        _ = roomtap_opus_encoder_set_bitrate(encoder, Int32(bitrate))
        _ = roomtap_opus_encoder_set_complexity(encoder, Int32(complexity))
        var lookahead: Int32 = 0
        _ = roomtap_opus_encoder_get_lookahead(encoder, &lookahead)
        let total = pcm.count / channels
        let frames = (total + Int(lookahead) + frameSamples - 1) / frameSamples
        var input = pcm
        input += [Int16](repeating: 0, count: frames * frameSamples * channels - pcm.count)
        var packets: [[UInt8]] = []
        var out = [UInt8](repeating: 0, count: 4000)
        for f in 0..<frames {
            let n = input.withUnsafeBufferPointer { src in
                out.withUnsafeMutableBufferPointer { dst in
                    opus_encode(
                        encoder, src.baseAddress! + f * frameSamples * channels, Int32(frameSamples),
                        dst.baseAddress!, Int32(dst.count))
                }
            }
            precondition(n > 0, "opus_encode failed: \(n)")
            packets.append(Array(out[0..<Int(n)]))
        }
        return (packets, Int(lookahead))
    }

    /// Muxes `packets` (each `frameSamples` long unless `durations` says otherwise) into an Ogg Opus
    /// file whose playable length is `totalSamples`. `head` replaces the OpusHead packet.
    public func mux(
        packets: [[UInt8]], preSkip: Int, totalSamples: Int, durations: [Int]? = nil, head: [UInt8]? = nil
    ) -> OggOpusFile {
        let headPacket =
            head
            ?? OpusHeaderBytes.head(channels: channels, preSkip: preSkip, gainQ8: outputGainQ8)
        var list: [OggPageBuilder.Packet] = [
            .init(headPacket, granule: 0, flushAfter: true),
            .init(OpusHeaderBytes.tags(vendor: vendor, comments: comments), granule: 0, flushAfter: true),
        ]
        var granule = startGranule
        let finalGranule = startGranule + Int64(preSkip + totalSamples)
        for (i, p) in packets.enumerated() {
            granule += Int64(durations?[i] ?? frameSamples)
            let last = i == packets.count - 1
            list.append(
                .init(
                    p, granule: last ? finalGranule : granule,
                    flushAfter: (i + 1) % packetsPerPage == 0, endOfStream: last))
        }
        let pages = OggPageBuilder(serial: serial, pageFill: maxPageBytes).pages(list)
        return OggOpusFile(
            bytes: pages.flatMap { $0 }, pages: pages, packets: packets, preSkip: preSkip,
            totalSamples: totalSamples, channels: channels, outputGainQ8: outputGainQ8)
    }

    /// Encodes interleaved `pcm` and muxes it (``encodePackets(_:)`` then ``mux(packets:preSkip:totalSamples:durations:head:)``).
    public func encode(_ pcm: [Int16]) -> OggOpusFile {
        let (packets, preSkip) = encodePackets(pcm)
        return mux(packets: packets, preSkip: preSkip, totalSamples: pcm.count / channels)
    }
}
