/// The header roomtap writes at the start of every WAV file, and the constants of its layout.
///
/// Specifications: Microsoft/IBM "Multimedia Programming Interface and Data Specifications 1.0"
/// (RIFF, the WAVE form, the `fmt ` chunk;
/// https://www.mmsp.ece.mcgill.ca/Documents/AudioFormats/WAVE/Docs/riffmci.pdf),
/// EBU Tech 3306 "MBWF / RF64" (https://tech.ebu.ch/docs/tech/tech3306v1_1.pdf) for files past 4 GiB,
/// EBU Tech 3285 (BWF `bext`, see ``BroadcastExtension``). All fields are little endian.
///
/// ```
///  offset  size  RIFF (below the threshold)        RF64 (past it)
///       0     4  "RIFF"                            "RF64"
///       4     4  file size - 8                     0xFFFFFFFF (see ds64)
///       8     4  "WAVE"                            "WAVE"
///      12     4  "JUNK"                            "ds64"
///      16     4  28                                28
///      20     8  zeros (space kept for ds64)       RIFF size (file size - 8), u64
///      28     8  zeros                             data size, u64
///      36     8  zeros                             sample count (frames per channel), u64
///      44     4  zeros                             table length = 0
///      48     4  "fmt "
///      52     4  16
///      56     2  format tag 1 (PCM)
///      58     2  channels (1 or 2)
///      60     4  sample rate 48000
///      64     4  byte rate = 48000 * block align
///      68     2  block align = 2 * channels
///      70     2  bits per sample 16
///      72     4  "bext"
///      76     4  n = 602 + coding history (even)
///      80     n  bext body (see BroadcastExtension)
///  80 + n     4  "data"
///  84 + n     4  data size                         0xFFFFFFFF (see ds64)
///  88 + n        interleaved 16-bit samples ...
/// ```
///
/// The whole header (under 1 KiB, inside the file's first page) is rewritten with one pwrite(2) on
/// every refresh, so a killed process leaves either the previous header or the new one, never a
/// mix; switching to RF64 is a single such write.
struct WAVHeader {
    /// Offset of the RIFF size field.
    static let riffSizeOffset = 4
    /// Offset of the JUNK/ds64 chunk.
    static let ds64ChunkOffset = 12
    /// Offset of the ds64 body (RIFF size u64, data size u64, sample count u64, table length u32).
    static let ds64BodyOffset = 20
    /// Size of the ds64 body without a table, and so of the JUNK chunk that reserves it.
    static let ds64BodySize = 28
    /// Offset of the `fmt ` chunk.
    static let fmtChunkOffset = 48
    /// Size of the PCM `fmt ` body.
    static let fmtBodySize = 16
    /// Offset of the `bext` chunk.
    static let bextChunkOffset = 72
    /// Bits per sample of every file roomtap writes.
    static let bitsPerSample = 16
    /// The largest value of a 32-bit size field; RF64 writes it where ds64 holds the size.
    static let sizeInDS64: UInt32 = 0xFFFF_FFFF

    /// The header bytes, sizes as last set.
    private(set) var bytes: [UInt8]
    /// Offset of the `data` chunk's size field.
    let dataSizeOffset: Int
    /// Offset of the first sample.
    let dataOffset: Int
    /// Bytes per sample frame (all channels).
    let blockAlign: Int
    /// True once ``setSizes(dataBytes:rf64:)`` was asked for RF64.
    private(set) var isRF64 = false

    /// Builds the header of an empty file (sizes zero, RIFF form). `extraChunks`: whole chunks
    /// (e.g. a `LIST`/`INFO` chunk) placed between `bext` and `data`.
    init(channels: Int, sampleRate: Int, bext: BroadcastExtension, extraChunks: [UInt8] = []) {
        blockAlign = 2 * channels
        let bextBody = bext.encoded()
        var b: [UInt8] = []
        b.reserveCapacity(88 + bextBody.count)
        b.append(.riff)
        b.appendLE32(0)
        b.append(.wave)
        b.append(.junk)
        b.appendLE32(UInt32(Self.ds64BodySize))
        b.append(contentsOf: repeatElement(0, count: Self.ds64BodySize))
        b.append(.fmt)
        b.appendLE32(UInt32(Self.fmtBodySize))
        b.appendLE16(1)
        b.appendLE16(UInt16(channels))
        b.appendLE32(UInt32(sampleRate))
        b.appendLE32(UInt32(sampleRate * blockAlign))
        b.appendLE16(UInt16(blockAlign))
        b.appendLE16(UInt16(Self.bitsPerSample))
        b.append(.bext)
        b.appendLE32(UInt32(bextBody.count))
        b.append(contentsOf: bextBody)
        b.append(contentsOf: extraChunks)
        b.append(.data)
        b.appendLE32(0)
        dataSizeOffset = b.count - 4
        dataOffset = b.count
        bytes = b
        setSizes(dataBytes: 0, rf64: false)
    }

    /// Sets the size fields for `dataBytes` bytes of samples. With `rf64` (which, once set, stays)
    /// the form becomes RF64, the 32-bit fields 0xFFFFFFFF and the JUNK chunk a ds64 chunk holding
    /// the real sizes. Does not allocate.
    mutating func setSizes(dataBytes: UInt64, rf64: Bool) {
        isRF64 = isRF64 || rf64
        let riffSize = UInt64(dataOffset) + dataBytes - 8
        if isRF64 {
            bytes.set(.rf64, at: 0)
            bytes.setLE32(Self.sizeInDS64, at: Self.riffSizeOffset)
            bytes.set(.ds64, at: Self.ds64ChunkOffset)
            bytes.setLE64(riffSize, at: Self.ds64BodyOffset)
            bytes.setLE64(dataBytes, at: Self.ds64BodyOffset + 8)
            bytes.setLE64(dataBytes / UInt64(blockAlign), at: Self.ds64BodyOffset + 16)
            bytes.setLE32(0, at: Self.ds64BodyOffset + 24)
            bytes.setLE32(Self.sizeInDS64, at: dataSizeOffset)
        } else {
            bytes.setLE32(UInt32(riffSize), at: Self.riffSizeOffset)
            bytes.setLE32(UInt32(dataBytes), at: dataSizeOffset)
        }
    }
}
