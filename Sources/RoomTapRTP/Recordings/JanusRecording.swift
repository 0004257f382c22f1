import RoomTapJSON

/// A Janus recording (`.mjr`, Janus 0.10 and later: `MJR00002`), as Janus's `record.c` writes it
/// and `janus-pp-rec` reads it (https://github.com/meetecho/janus-gateway, src/record.c):
///
/// ```
/// "MJR00002"                      8 bytes, the format
/// length                          2 bytes, big-endian: bytes of the JSON header that follows
/// {"t":"a","c":"opus","s":S,"u":U,...}   the info header (JSON)
/// then for every packet:
///   "MEET"                        4 bytes
///   written                       4 bytes, big-endian: ms since the recorder started
///   length                        2 bytes, big-endian: bytes of the packet
///   RTP packet                    length bytes (RFC 3550), as Janus received it, sequence
///                                 numbers and timestamps rewritten to run on from the first
/// ```
///
/// The header says the media type (`t`: `a` audio, `v` video, `d` data), the codec (`c`), when
/// the recorder was created (`s`) and when the first packet was written (`u`, microseconds since
/// the Unix epoch), and whether the media is end-to-end encrypted (`e`) or carries Opus in RED
/// (`or`, RFC 2198: the primary encoding is taken). Only Opus audio is accepted: anything else is
/// refused with one line. Damage is not an error: a frame that does not start with `MEET` or
/// runs past the end stops the reading there (``isTruncated``), as `janus-pp-rec` stops; frames
/// that are not RTP (shorter than a header, RTCP, version ≠ 2) are skipped and counted.
///
/// Thread: a value type; parsing is pure (any thread).
public struct JanusRecording: Sendable {
    /// The first bytes of every `.mjr` (`MJR0000`, then the version digit).
    public static let magic: [UInt8] = Array("MJR0000".utf8)
    /// Largest JSON header accepted (Janus writes about 100 bytes).
    static let maxHeaderBytes = 16 * 1024

    /// The codec as the header names it (`opus`).
    public let codec: String
    /// When the recorder was created (`s`), µs since the Unix epoch; nil if absent.
    public let createdMicroseconds: Int64?
    /// When the first packet was written (`u`), µs since the Unix epoch.
    public let firstPacketMicroseconds: Int64
    /// The audio.
    public let stream: RecordedRTPStream
    /// Frames skipped: not RTP (too short, RTCP, version ≠ 2), or without an Opus payload.
    public let skippedFrames: Int
    /// True when the frames stop before the end of the file (a cut file or damage).
    public let isTruncated: Bool

    /// True when `bytes` start like a Janus recording (format detection by content).
    public static func looksLikeJanus(_ bytes: some Collection<UInt8>) -> Bool {
        bytes.starts(with: magic)
    }

    /// Parses a whole `.mjr`. `path` only names the file in errors.
    public static func parse(_ bytes: [UInt8], path: String) throws(RecordingError) -> JanusRecording {
        func refuse(_ message: String) -> RecordingError { RecordingError(path: path, message: message) }
        guard bytes.count >= 8, looksLikeJanus(bytes) else {
            throw refuse("not a Janus recording (no MJR0000 at the start); give a .mjr file Janus wrote")
        }
        guard bytes[7] == UInt8(ascii: "2") else {
            let version = (0x30...0x39).contains(bytes[7]) ? String(Character(Unicode.Scalar(bytes[7]))) : "?"
            throw refuse(
                "a Janus recording of an old format (MJR0000\(version)) without packet "
                    + "times; convert it with janus-pp-rec, or record with Janus 0.10 or later")
        }
        guard bytes.count >= 10 else { throw refuse("the file ends before the Janus header; the file is cut") }
        let headerLength = Int(bytes[8]) << 8 | Int(bytes[9])
        guard headerLength > 0, headerLength <= maxHeaderBytes, 10 + headerLength <= bytes.count else {
            throw refuse("the Janus header (\(headerLength) bytes) does not fit in the file; the file is damaged")
        }
        let header = try Header.parse(Array(bytes[10..<10 + headerLength]), refuse: refuse)

        var packets: [RecordedRTPStream.Packet] = []
        var skipped = 0
        var truncated = false
        var offset = 10 + headerLength
        let frameMagic: [UInt8] = Array("MEET".utf8)
        bytes.withUnsafeBytes { raw in
            while offset < bytes.count {
                guard offset + 10 <= bytes.count, raw[offset..<offset + 4].elementsEqual(frameMagic) else {
                    truncated = true
                    return
                }
                let length = Int(raw[offset + 8]) << 8 | Int(raw[offset + 9])
                let start = offset + 10
                guard start + length <= bytes.count else {
                    truncated = true
                    return
                }
                offset = start + length
                let packetBytes = UnsafeRawBufferPointer(rebasing: raw[start..<start + length])
                guard !RTPDemux.isRTCP(packetBytes), case .packet(let rtp) = RTPPacket.parse(packetBytes) else {
                    skipped += 1
                    continue
                }
                var payload = rtp.payloadRange
                if let red = header.redPayloadType, Int(rtp.payloadType) == red {
                    guard let primary = Self.primaryOfRED(packetBytes, payload) else {
                        skipped += 1
                        continue
                    }
                    payload = primary
                }
                guard !payload.isEmpty else {
                    skipped += 1
                    continue
                }
                packets.append(
                    .init(
                        sequence: rtp.sequenceNumber, timestamp: rtp.timestamp,
                        payload: start + payload.lowerBound..<start + payload.upperBound))
            }
        }
        let stream = RecordedRTPStream(
            bytes: bytes, packets: packets, firstPacketMicroseconds: header.firstPacketMicroseconds)
        return JanusRecording(
            codec: header.codec, createdMicroseconds: header.createdMicroseconds,
            firstPacketMicroseconds: header.firstPacketMicroseconds, stream: stream,
            skippedFrames: skipped + packets.count - stream.packets.count, isTruncated: truncated)
    }

    /// The primary encoding of an RFC 2198 RED payload (https://www.rfc-editor.org/rfc/rfc2198#section-3):
    /// 4-byte headers (F=1) for the redundant blocks, a 1-byte header (F=0) for the primary, then
    /// the redundant blocks' data, then the primary's. Nil when the headers do not fit.
    static func primaryOfRED(_ bytes: UnsafeRawBufferPointer, _ payload: Range<Int>) -> Range<Int>? {
        var position = payload.lowerBound
        var redundant = 0
        while position < payload.upperBound, bytes[position] & 0x80 != 0 {
            guard position + 4 <= payload.upperBound else { return nil }
            redundant += Int(bytes[position + 2] & 0x03) << 8 | Int(bytes[position + 3])
            position += 4
        }
        guard position < payload.upperBound else { return nil }
        let start = position + 1 + redundant
        guard start <= payload.upperBound else { return nil }
        return start..<payload.upperBound
    }

    /// The JSON info header.
    struct Header {
        var codec: String
        var createdMicroseconds: Int64?
        var firstPacketMicroseconds: Int64
        var redPayloadType: Int?

        static func parse(
            _ bytes: [UInt8], refuse: (String) -> RecordingError
        ) throws(RecordingError) -> Header {
            let value: JSONNode
            do { value = try JSONNode.read(bytes) } catch {
                throw refuse("the Janus header is not JSON (\(error.message)); the file is damaged")
            }
            guard case .object(let members) = value.kind else {
                throw refuse("the Janus header is not a JSON object; the file is damaged")
            }
            func member(_ key: String) -> JSONNode.Kind? { members.first { $0.key == key }?.value.kind }
            func integer(_ key: String) -> Int64? {
                guard case .number(let text) = member(key) else { return nil }
                return Int64(text)
            }
            guard case .string(let type) = member("t") else {
                throw refuse("the Janus header has no media type (\"t\"); the file is damaged")
            }
            switch type {
            case "a": break
            case "v":
                throw refuse(
                    "a Janus video recording; roomtap records audio: give the participant's audio .mjr "
                        + "(…-audio-….mjr)")
            case "d":
                throw refuse("a Janus data-channel recording; roomtap records audio: give an audio .mjr")
            default:
                throw refuse("a Janus recording of media type '\(type.prefix(20))'; give an audio .mjr")
            }
            guard case .string(let codec) = member("c") else {
                throw refuse("the Janus header names no codec (\"c\"); the file is damaged")
            }
            guard codec == "opus" else {
                throw refuse(
                    "a Janus recording of \(codec.prefix(20)) audio; roomtap records Opus: convert it with "
                        + "janus-pp-rec and ffmpeg to Ogg Opus")
            }
            if case .bool(true) = member("e") {
                throw refuse(
                    "an end-to-end encrypted Janus recording; its audio cannot be decoded without the keys")
            }
            guard let first = integer("u"), first >= 0 else {
                throw refuse(
                    "the Janus header has no first-packet time (\"u\"); without it the recording cannot be "
                        + "placed: the file is damaged")
            }
            let red = integer("or").flatMap { (0...127).contains($0) ? Int($0) : nil }
            return Header(
                codec: codec, createdMicroseconds: integer("s"), firstPacketMicroseconds: first,
                redPayloadType: red)
        }
    }

    /// Reads and parses the `.mjr` at `path` (at most `maxBytes`; 1 GiB, a day of Opus).
    public static func read(path: String, maxBytes: Int = 1 << 30) throws(RecordingError) -> JanusRecording {
        try parse(try RecordingFile.read(path: path, maxBytes: maxBytes), path: path)
    }
}
