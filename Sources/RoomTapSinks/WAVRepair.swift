/// Makes a WAV or RF64 file whose header lags its data (a recorder killed mid-write, a copy cut
/// short) readable to its last complete sample frame.
///
/// What it does, in order:
/// 1. Walks the chunks (see ``WAVChunkScan``), tolerating a `data` chunk whose stated size is 0,
///    0xFFFFFFFF or larger than the file.
/// 2. Decides where the data ends. If the bytes after the stated size form well-formed chunks that
///    end exactly at the end of the file (a LIST or cue chunk after the data), the stated size is
///    right and is kept. Otherwise the data runs to the end of the file, rounded down to whole
///    sample frames; the partial frame at the end is cut off (ftruncate).
/// 3. Rewrites the RIFF size and data size, turning the file into RF64 (EBU Tech 3306) when the
///    size needs it and a `JUNK` chunk reserves room for `ds64`; an RF64 file gets its ds64 sizes
///    updated. Only fields that differ are written.
///
/// A file cut inside its header after the `fmt ` chunk gets the partial chunk removed and an empty
/// `data` chunk, so it opens (with no audio, as none was written). Never touches the audio bytes.
/// Idempotent: a second run changes nothing and reports `changed == false`.
///
/// Thread: any thread; do not repair a file that is still being written.
public enum WAVRepair {
    /// What a repair did.
    public struct Report: Sendable, CustomStringConvertible {
        /// The file repaired.
        public let path: String
        /// Sample frames a reader got before the repair (the stated size, clamped to the file).
        public let samplesBefore: Int64
        /// Sample frames the header's data size stated before the repair (not clamped to the file:
        /// more than ``samplesBefore`` when the header overstated the length).
        public let samplesStated: Int64
        /// Sample frames readable after the repair.
        public let samplesAfter: Int64
        /// Bytes cut from the end of the file (a partial sample frame, a partial chunk).
        public let bytesTrimmed: Int
        /// False when the file was already consistent and nothing was written.
        public let changed: Bool

        /// One line, e.g. `a.wav: repaired, 480000 sample frames readable (was 432000), 1 byte trimmed`.
        public var description: String {
            guard changed else { return "\(WAVError.oneLine(path)): already consistent, \(samplesAfter) sample frames" }
            return "\(WAVError.oneLine(path)): repaired, \(samplesAfter) sample frames readable (was \(samplesBefore))"
                + (bytesTrimmed > 0 ? ", \(bytesTrimmed) bytes trimmed" : "")
        }
    }

    /// Repairs the file at `path` in place. Throws ``WAVError``: `.notAWAV` for a file that is not
    /// RIFF/RF64 WAVE, `.damaged` when there is no complete `fmt ` chunk (nothing is changed then),
    /// and I/O errors.
    public static func repair(path: String) throws(WAVError) -> Report {
        let file = try PosixFile.open(path: path, forUpdate: true)
        defer { file.close() }
        let scan = try WAVChunkScan.scan(file)
        guard let format = scan.format, format.blockAlign > 0 else {
            throw WAVError(
                path: path,
                message: "cannot repair: no complete fmt chunk (the file was cut inside its header), so the "
                    + "audio format is unknown; nothing was changed",
                kind: .damaged)
        }
        if scan.isRF64 && scan.ds64 == nil {
            throw WAVError(
                path: path, message: "cannot repair: an RF64 file without a ds64 chunk; nothing was changed",
                kind: .damaged)
        }
        guard let dataChunk = scan.dataChunkOffset, let stated = scan.statedDataSize else {
            return try addEmptyDataChunk(file, scan: scan)
        }
        let dataStart = dataChunk + 8
        let present = scan.fileSize - dataStart
        let block = Int64(format.blockAlign)
        let samplesBefore = min(stated, present) / block
        let dataSize: Int64
        let newFileSize: Int64
        if stated <= present, try chunksFollow(file, from: dataStart + stated + (stated & 1), to: scan.fileSize) {
            dataSize = stated
            newFileSize = scan.fileSize
        } else {
            dataSize = present / block * block
            newFileSize = dataStart + dataSize
        }
        let changed = try writeSizes(
            file, scan: scan, dataSizeFieldOffset: dataChunk + 4, dataSize: dataSize, fileSize: newFileSize,
            blockAlign: block)
        return Report(
            path: path, samplesBefore: samplesBefore, samplesStated: stated / block, samplesAfter: dataSize / block,
            bytesTrimmed: Int(scan.fileSize - newFileSize), changed: changed || newFileSize != scan.fileSize)
    }

    /// True when the bytes in `start..<end` are a chain of well-formed chunks ending exactly at
    /// `end` (an empty range counts), i.e. chunks that follow the data rather than unclaimed audio.
    private static func chunksFollow(_ file: PosixFile, from start: Int64, to end: Int64) throws(WAVError) -> Bool {
        var offset = start
        var count = 0
        while offset < end {
            guard offset + 8 <= end, count < 64 else { return false }
            let head = try file.read(at: offset, count: 8)
            guard head.count == 8, head.fourCC(at: 0).isPrintable else { return false }
            let size = Int64(head.le32(at: 4))
            offset += 8 + size + (size & 1)
            count += 1
        }
        return offset == end || offset == end + 1  // the last pad byte may be missing
    }

    /// Writes the RIFF/RF64 sizes for `dataSize` data bytes and a file of `fileSize` bytes,
    /// truncating first. Returns true if anything was written.
    private static func writeSizes(
        _ file: PosixFile, scan: WAVChunkScan, dataSizeFieldOffset: Int64, dataSize: Int64, fileSize: Int64,
        blockAlign: Int64
    ) throws(WAVError) -> Bool {
        if fileSize < scan.fileSize { try file.truncate(to: fileSize) }
        let riffSize = UInt64(fileSize - 8)
        let needsRF64 = scan.isRF64 || riffSize > UInt64(UInt32.max) || UInt64(dataSize) > UInt64(UInt32.max)
        var changed = false
        /// Writes `bytes` at `offset` unless they are there already.
        func put(_ bytes: [UInt8], at offset: Int64) throws(WAVError) {
            guard try file.read(at: offset, count: bytes.count) != bytes else { return }
            try file.write(bytes, at: offset)
            changed = true
        }
        if needsRF64 {
            let ds64Offset: Int64
            if let ds64 = scan.ds64 {
                ds64Offset = ds64.chunkOffset
            } else if let junk = scan.reservedJunkOffset {
                ds64Offset = junk
            } else {
                throw WAVError(
                    path: file.path,
                    message: "cannot repair: the data needs RF64 (over 4 GiB) but the file has no JUNK chunk to hold "
                        + "ds64; nothing was changed",
                    kind: .damaged)
            }
            var body: [UInt8] = []
            body.appendLE64(riffSize)
            body.appendLE64(UInt64(dataSize))
            body.appendLE64(UInt64(dataSize / blockAlign))
            try put(body, at: ds64Offset + 8)  // table length and size are left as they are
            var id: [UInt8] = []
            id.append(.ds64)
            try put(id, at: ds64Offset)
            var field: [UInt8] = []
            field.appendLE32(WAVHeader.sizeInDS64)
            try put(field, at: dataSizeFieldOffset)
            var form: [UInt8] = []
            form.append(.rf64)
            form.appendLE32(WAVHeader.sizeInDS64)
            try put(form, at: 0)
        } else {
            var field: [UInt8] = []
            field.appendLE32(UInt32(dataSize))
            try put(field, at: dataSizeFieldOffset)
            var form: [UInt8] = []
            form.append(.riff)
            form.appendLE32(UInt32(riffSize))
            try put(form, at: 0)
        }
        return changed
    }

    /// The file was cut inside its header after `fmt `: drop the partial chunk, append an empty
    /// `data` chunk, fix the sizes.
    private static func addEmptyDataChunk(_ file: PosixFile, scan: WAVChunkScan) throws(WAVError) -> Report {
        let end = scan.lastCompleteChunkEnd
        try file.truncate(to: end)
        var chunk: [UInt8] = []
        chunk.append(.data)
        chunk.appendLE32(0)
        try file.write(chunk, at: end)
        _ = try writeSizes(
            file, scan: scan, dataSizeFieldOffset: end + 4, dataSize: 0, fileSize: end + 8,
            blockAlign: Int64(scan.format?.blockAlign ?? 1))
        return Report(
            path: file.path, samplesBefore: 0, samplesStated: 0, samplesAfter: 0,
            bytesTrimmed: Int(max(0, scan.fileSize - end)), changed: true)
    }
}
