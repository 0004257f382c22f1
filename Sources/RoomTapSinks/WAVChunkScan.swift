/// What a walk over the chunks of a RIFF/RF64 WAVE file found: the shared first step of
/// ``WAVFile`` (reading) and ``WAVRepair`` (fixing sizes).
///
/// The walk starts after the 12-byte form header (`RIFF`/`RF64`, size, `WAVE`), reads each chunk
/// header (id u32, size u32; bodies are padded to even sizes) and stops at the `data` chunk or at
/// the first chunk that does not fit in the file. It never trusts a size to be inside the file.
struct WAVChunkScan {
    /// The `fmt ` chunk's fields.
    struct Format {
        var formatTag: UInt16  // 1 = PCM; WAVE_FORMAT_EXTENSIBLE resolved to its sub-format
        var channels: Int
        var sampleRate: Int
        var blockAlign: Int
        var bitsPerSample: Int
    }

    /// The ds64 chunk's fields (EBU Tech 3306).
    struct DS64 {
        var chunkOffset: Int64
        var riffSize: UInt64
        var dataSize: UInt64
        var sampleCount: UInt64
    }

    /// Largest chunk body read into memory (fmt, bext, ds64); bigger ones are skipped unread.
    static let maxBodyRead = 1 << 20

    let fileSize: Int64
    /// True for `RF64`, false for `RIFF`.
    var isRF64 = false
    /// The 32-bit size field after `RIFF`/`RF64`.
    var riffSizeField: UInt32 = 0
    var ds64: DS64?
    /// Offset and size of a `JUNK` chunk right after the form header, big enough to become ds64.
    var reservedJunkOffset: Int64?
    var format: Format?
    var bextBody: [UInt8]?
    /// Offset of the `data` chunk's id, and its 32-bit size field.
    var dataChunkOffset: Int64?
    var dataSizeField: UInt32 = 0
    /// End of the last chunk that lies wholly in the file (before `data`, or where the walk stopped).
    var lastCompleteChunkEnd: Int64 = 12

    /// Offset of the first sample, when there is a data chunk.
    var dataOffset: Int64? { dataChunkOffset.map { $0 + 8 } }

    /// The data size the header states: the ds64 value when an RF64 file's field says so.
    var statedDataSize: Int64? {
        guard dataChunkOffset != nil else { return nil }
        if isRF64, dataSizeField == WAVHeader.sizeInDS64, let ds64 { return Int64(clamping: ds64.dataSize) }
        return Int64(dataSizeField)
    }

    /// The RIFF size the header states (through ds64 for RF64).
    var statedRIFFSize: Int64 {
        if isRF64, riffSizeField == WAVHeader.sizeInDS64, let ds64 { return Int64(clamping: ds64.riffSize) }
        return Int64(riffSizeField)
    }

    private init(fileSize: Int64) { self.fileSize = fileSize }

    /// Walks `file`. Throws `.notAWAV` when the form header is not RIFF/RF64 WAVE.
    static func scan(_ file: PosixFile) throws(WAVError) -> WAVChunkScan {
        var scan = WAVChunkScan(fileSize: try file.size())
        let head = try file.read(at: 0, count: 12)
        guard head.count == 12 else {
            throw WAVError(
                path: file.path, message: "not a WAV file: only \(head.count) bytes, less than a RIFF header",
                kind: .notAWAV)
        }
        let form = head.fourCC(at: 0)
        guard form == .riff || form == .rf64, head.fourCC(at: 8) == .wave else {
            throw WAVError(
                path: file.path, message: "not a WAV file (it does not start with RIFF/RF64 ... WAVE)", kind: .notAWAV)
        }
        scan.isRF64 = form == .rf64
        scan.riffSizeField = head.le32(at: 4)
        var offset: Int64 = 12
        while offset + 8 <= scan.fileSize {
            let chunkHeader = try file.read(at: offset, count: 8)
            guard chunkHeader.count == 8 else { break }
            let id = chunkHeader.fourCC(at: 0)
            let size = Int64(chunkHeader.le32(at: 4))
            if id == .data {
                scan.dataChunkOffset = offset
                scan.dataSizeField = UInt32(size)
                break
            }
            let bodyEnd = offset + 8 + size
            guard bodyEnd <= scan.fileSize else { break }  // cut inside this chunk
            if size <= maxBodyRead, id == .fmt || id == .bext || id == .ds64 {
                let body = try file.read(at: offset + 8, count: Int(size))
                switch id {
                case .fmt: scan.format = parseFormat(body)
                case .bext: scan.bextBody = body
                default:
                    if body.count >= WAVHeader.ds64BodySize {
                        scan.ds64 = DS64(
                            chunkOffset: offset, riffSize: body.le64(at: 0), dataSize: body.le64(at: 8),
                            sampleCount: body.le64(at: 16))
                    }
                }
            } else if id == .junk, offset == 12, size >= Int64(WAVHeader.ds64BodySize) {
                scan.reservedJunkOffset = offset
            }
            offset = min(bodyEnd + (size & 1), scan.fileSize)
            scan.lastCompleteChunkEnd = offset
        }
        return scan
    }

    private static func parseFormat(_ body: [UInt8]) -> Format? {
        guard body.count >= 16 else { return nil }
        var tag = body.le16(at: 0)
        if tag == 0xFFFE, body.count >= 40 { tag = body.le16(at: 24) }  // WAVE_FORMAT_EXTENSIBLE sub-format
        return Format(
            formatTag: tag, channels: Int(body.le16(at: 2)), sampleRate: Int(body.le32(at: 4)),
            blockAlign: Int(body.le16(at: 12)), bitsPerSample: Int(body.le16(at: 14)))
    }
}
