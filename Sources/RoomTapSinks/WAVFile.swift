/// A WAV (RIFF) or RF64 file of 16-bit PCM, read back: the header fields, and the samples.
///
/// Readers must cope with files cut short (a recorder killed mid-write, a copy in progress): a
/// stated data size larger than the file is clamped to the complete sample frames that are there,
/// and ``isTruncated`` and ``warnings`` say so. A stated size smaller than what follows is
/// believed (``WAVRepair`` is what recovers such a tail).
///
/// Thread: a value; the static functions may run on any thread, one file at a time.
public struct WAVFile: Sendable {
    /// The file read.
    public let path: String
    /// Channels (1 or 2 for roomtap's files).
    public let channels: Int
    /// Sample rate in Hz.
    public let sampleRate: Int
    /// Always 16.
    public let bitsPerSample: Int
    /// Bytes per sample frame (all channels).
    public let blockAlign: Int
    /// True for an RF64 file (EBU Tech 3306).
    public let isRF64: Bool
    /// Size of the file in bytes.
    public let fileSize: Int64
    /// The RIFF size the header states (through ds64 for RF64).
    public let riffSize: Int64
    /// Offset of the first sample, in bytes.
    public let dataOffset: Int64
    /// The data size the header states, in bytes (resolved through ds64 for RF64).
    public let dataSize: Int64
    /// The bytes of complete sample frames actually readable: `dataSize` clamped to the file and
    /// rounded down to ``blockAlign``.
    public let readableDataSize: Int64
    /// The ds64 sample count, for RF64 files.
    public let ds64SampleCount: UInt64?
    /// bext `Description`, nil without a bext chunk.
    public let bextDescription: String?
    /// bext `Originator`.
    public let bextOriginator: String?
    /// bext `OriginationDate` ("yyyy-mm-dd"; empty when unknown).
    public let bextOriginationDate: String?
    /// bext `OriginationTime` ("hh:mm:ss").
    public let bextOriginationTime: String?
    /// bext `TimeReference`: samples since midnight of the origination date of the first sample.
    public let bextTimeReference: UInt64?
    /// bext `Version`.
    public let bextVersion: UInt16?
    /// bext `CodingHistory`.
    public let bextCodingHistory: String?
    /// What did not add up (e.g. a data size larger than the file), one line each.
    public let warnings: [String]

    /// True when the header states more data than the file holds (the file was cut short).
    public var isTruncated: Bool { dataSize > fileSize - dataOffset }
    /// Readable sample frames (samples per channel).
    public var frameCount: Int64 { readableDataSize / Int64(blockAlign) }
    /// Readable duration in seconds.
    public var duration: Double { Double(frameCount) / Double(sampleRate) }

    /// Reads and validates the header only: RIFF/RF64 + WAVE, a `fmt ` chunk of 16-bit PCM, a
    /// `data` chunk. Throws a ``WAVError`` saying what is wrong otherwise.
    public static func inspect(path: String) throws(WAVError) -> WAVFile {
        let file = try PosixFile.open(path: path, forUpdate: false)
        defer { file.close() }
        return try inspect(file)
    }

    /// Reads the header and every readable sample, interleaved (L R L R ... for stereo).
    public static func readSamples(path: String) throws(WAVError) -> (file: WAVFile, samples: [Int16]) {
        let file = try PosixFile.open(path: path, forUpdate: false)
        defer { file.close() }
        let wav = try inspect(file)
        let bytes = try file.read(at: wav.dataOffset, count: Int(wav.readableDataSize))
        let count = bytes.count / 2
        var samples = [Int16](repeating: 0, count: count)
        samples.withUnsafeMutableBufferPointer { out in
            for i in 0..<count { out[i] = Int16(bitPattern: UInt16(bytes[2 * i]) | UInt16(bytes[2 * i + 1]) << 8) }
        }
        return (wav, samples)
    }

    static func inspect(_ file: PosixFile) throws(WAVError) -> WAVFile {
        let scan = try WAVChunkScan.scan(file)
        let path = file.path
        guard let format = scan.format else {
            throw WAVError(
                path: path, message: "no fmt chunk: the header is damaged or cut short; there is no audio to read",
                kind: .damaged)
        }
        guard format.formatTag == 1, format.bitsPerSample == 16 else {
            throw WAVError(
                path: path,
                message: "unsupported format (tag \(format.formatTag), \(format.bitsPerSample) bits): "
                    + "only 16-bit PCM is read; convert it first, e.g. with sox -b 16 -e signed",
                kind: .unsupportedFormat)
        }
        guard format.channels > 0, format.blockAlign == 2 * format.channels, format.sampleRate > 0 else {
            throw WAVError(
                path: path,
                message: "inconsistent fmt chunk (\(format.channels) channels, block align \(format.blockAlign))",
                kind: .damaged)
        }
        guard let dataOffset = scan.dataOffset, let stated = scan.statedDataSize else {
            throw WAVError(
                path: path, message: "no data chunk: the file was cut inside its header; run roomtap repair",
                kind: .damaged)
        }
        var warnings: [String] = []
        if scan.isRF64 && scan.ds64 == nil { warnings.append("RF64 file without a ds64 chunk") }
        let present = max(0, scan.fileSize - dataOffset)
        if stated > present {
            warnings.append("the data chunk states \(stated) bytes but the file holds \(present); reading those")
        }
        let block = Int64(format.blockAlign)
        let readable = min(stated, present) / block * block
        let bext = scan.bextBody.flatMap { BroadcastExtension(decoding: $0) }
        return WAVFile(
            path: path, channels: format.channels, sampleRate: format.sampleRate,
            bitsPerSample: format.bitsPerSample, blockAlign: format.blockAlign, isRF64: scan.isRF64,
            fileSize: scan.fileSize, riffSize: scan.statedRIFFSize, dataOffset: dataOffset, dataSize: stated,
            readableDataSize: readable, ds64SampleCount: scan.ds64?.sampleCount, bextDescription: bext?.description,
            bextOriginator: bext?.originator, bextOriginationDate: bext?.originationDate,
            bextOriginationTime: bext?.originationTime, bextTimeReference: bext?.timeReference,
            bextVersion: bext?.version, bextCodingHistory: bext?.codingHistory, warnings: warnings)
    }
}
