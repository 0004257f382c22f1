import Foundation
import Glibc

/// The Broadcast Wave Format `bext` chunk body (EBU Tech 3285, "BWF – a format for audio data
/// files in broadcasting", https://tech.ebu.ch/docs/tech/tech3285.pdf).
///
/// The fields that matter to roomtap are the origination date and time (when the room started, in
/// UTC) and `TimeReference`, the position of the file's first sample in samples since midnight of
/// that date; editors use it to line up the tracks of one room.
///
/// ```
/// offset size  field                   roomtap writes
///      0  256  Description             e.g. "roomtap track alice" (UTF-8, NUL padded)
///    256   32  Originator              "roomtap"
///    288   32  OriginatorReference     ""
///    320   10  OriginationDate         "yyyy-mm-dd" (UTC)
///    330    8  OriginationTime         "hh:mm:ss" (UTC)
///    338    4  TimeReferenceLow        samples since midnight, low 32 bits
///    342    4  TimeReferenceHigh       high 32 bits
///    346    2  Version                 1
///    348   64  UMID                    zeros
///    412   10  loudness (version 2)    zeros (reserved in version 1)
///    422  180  Reserved                zeros
///    602    n  CodingHistory           "A=PCM,F=48000,W=16,M=mono,T=roomtap\r\n", NUL padded to even
/// ```
///
/// Version 1 is written on purpose: version 2 would claim loudness values roomtap does not measure.
struct BroadcastExtension: Equatable {
    /// Size of the fixed part, before the coding history.
    static let fixedSize = 602

    var description = ""
    var originator = "roomtap"
    var originatorReference = ""
    /// "yyyy-mm-dd", or empty when unknown.
    var originationDate = ""
    /// "hh:mm:ss", or empty when unknown.
    var originationTime = ""
    /// Samples (at the file's rate) since midnight of `originationDate` of the file's first sample.
    var timeReference: UInt64 = 0
    var version: UInt16 = 1
    var codingHistory = ""

    init() {}

    /// The extension roomtap writes for a track: the room started at `roomStartTime` (UTC; nil
    /// when unknown, then only `timelineOrigin` is counted) and the file starts `timelineOrigin`
    /// samples into the room.
    init(description: String, channels: Int, roomStartTime: Date?, timelineOrigin: Int64, sampleRate: Int) {
        self.description = description
        codingHistory =
            "A=PCM,F=\(sampleRate),W=16,M=\(channels == 1 ? "mono" : channels == 2 ? "stereo" : "multitrack"),T=roomtap\r\n"
        var reference = max(0, timelineOrigin)
        if let start = roomStartTime {
            let t = start.timeIntervalSince1970
            let seconds = t.rounded(.down)
            var time = time_t(seconds)
            var parts = tm()
            gmtime_r(&time, &parts)
            originationDate =
                Self.digits(Int(parts.tm_year) + 1900, 4) + "-" + Self.digits(Int(parts.tm_mon) + 1, 2)
                + "-" + Self.digits(Int(parts.tm_mday), 2)
            originationTime =
                Self.digits(Int(parts.tm_hour), 2) + ":" + Self.digits(Int(parts.tm_min), 2) + ":"
                + Self.digits(Int(parts.tm_sec), 2)
            let sinceMidnight = Int64(parts.tm_hour) * 3600 + Int64(parts.tm_min) * 60 + Int64(parts.tm_sec)
            let fraction = Int64(((t - seconds) * Double(sampleRate)).rounded(.down))
            reference += sinceMidnight * Int64(sampleRate) + fraction
        }
        timeReference = UInt64(reference)
    }

    /// The chunk body, padded with a NUL to an even size.
    func encoded() -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Self.fixedSize + codingHistory.utf8.count + 1)
        bytes.appendFixedText(description, length: 256)
        bytes.appendFixedText(originator, length: 32)
        bytes.appendFixedText(originatorReference, length: 32)
        bytes.appendFixedText(originationDate, length: 10)
        bytes.appendFixedText(originationTime, length: 8)
        bytes.appendLE32(UInt32(truncatingIfNeeded: timeReference))
        bytes.appendLE32(UInt32(truncatingIfNeeded: timeReference >> 32))
        bytes.appendLE16(version)
        bytes.append(contentsOf: repeatElement(0, count: 64 + 10 + 180))
        bytes.append(contentsOf: codingHistory.utf8)
        if bytes.count % 2 == 1 { bytes.append(0) }
        return bytes
    }

    /// Parses a chunk body; nil when it is shorter than the fixed part.
    init?(decoding body: [UInt8]) {
        guard body.count >= Self.fixedSize else { return nil }
        description = body.fixedText(at: 0, length: 256)
        originator = body.fixedText(at: 256, length: 32)
        originatorReference = body.fixedText(at: 288, length: 32)
        originationDate = body.fixedText(at: 320, length: 10)
        originationTime = body.fixedText(at: 330, length: 8)
        timeReference = UInt64(body.le32(at: 338)) | UInt64(body.le32(at: 342)) << 32
        version = body.le16(at: 346)
        let historyLength = body.count - Self.fixedSize
        codingHistory = historyLength > 0 ? body.fixedText(at: Self.fixedSize, length: historyLength) : ""
    }

    private static func digits(_ value: Int, _ width: Int) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, width - text.count)) + text
    }
}
