import CFLAC
import Glibc

/// Repairs a FLAC file a killed recorder left (``FLACFileEncoder``): decodes it with libFLAC up to
/// the last whole frame, cuts a partial frame off the end, and writes the total number of samples
/// into STREAMINFO (https://xiph.org/flac/format.html#metadata_block_streaminfo: 36 bits at
/// byte 13 of the block's body, the first block after `fLaC`). The MD5 signature (a killed
/// encoder never wrote one) is computed again from the frames kept (`roomtap_flac_md5`: libFLAC
/// decodes, libcrypto hashes), so `flac -t` checks the audio; should that decode fail, it stays all
/// zeros, which FLAC defines as "not computed".
public enum FLACRepair {
    /// What the repair did (samples per channel at the file's rate) and the file's rate.
    public static func repair(path: String) throws(WAVError) -> (report: WAVRepair.Report, sampleRate: Int) {
        let stated = try readStreamInfo(path: path)
        guard let decoder = FLAC__stream_decoder_new() else {
            throw WAVError(path: path, message: "libFLAC: out of memory", kind: .readFailed)
        }
        defer { FLAC__stream_decoder_delete(decoder) }
        var count = roomtap_flac_count(samples: 0, sample_rate: 0, errors: 0)
        guard roomtap_flac_init_count(decoder, path, &count) == FLAC__STREAM_DECODER_INIT_STATUS_OK else {
            throw WAVError(path: path, message: "libFLAC cannot open it", kind: .cannotOpen)
        }
        guard FLAC__stream_decoder_process_until_end_of_metadata(decoder) != 0 else {
            throw WAVError(path: path, message: "is not a FLAC file (no STREAMINFO)", kind: .notAWAV)
        }
        var goodEnd: UInt64 = 0
        _ = FLAC__stream_decoder_get_decode_position(decoder, &goodEnd)
        var goodSamples: UInt64 = 0
        while true {
            let samples = count.samples
            let errors = count.errors
            let ok = FLAC__stream_decoder_process_single(decoder) != 0
            let state = FLAC__stream_decoder_get_state(decoder)
            if !ok || count.errors != errors || state == FLAC__STREAM_DECODER_END_OF_STREAM
                || state == FLAC__STREAM_DECODER_ABORTED
            {
                if ok && count.errors == errors && count.samples > samples { goodSamples = count.samples }
                break
            }
            if count.samples > samples {
                var position: UInt64 = 0
                if FLAC__stream_decoder_get_decode_position(decoder, &position) != 0 { goodEnd = position }
                goodSamples = count.samples
            }
        }
        _ = FLAC__stream_decoder_finish(decoder)
        let file = try PosixFile.open(path: path, forUpdate: true)
        defer { file.close() }
        let size = try file.size()
        // Only a file whose STREAMINFO disagrees with its frames (a killed encoder's says 0) is cut,
        // and only after its last whole frame.
        let needsRepair = stated.totalSamples != goodSamples
        let end = needsRepair && goodEnd > 0 && Int64(goodEnd) < size ? Int64(goodEnd) : size
        var changed = false
        if end < size {
            try file.truncate(to: end)
            changed = true
        }
        if needsRepair {
            var body = try file.read(at: 8, count: 34)
            body[13] = (body[13] & 0xF0) | UInt8((goodSamples >> 32) & 0x0F)
            body[14] = UInt8((goodSamples >> 24) & 0xFF)
            body[15] = UInt8((goodSamples >> 16) & 0xFF)
            body[16] = UInt8((goodSamples >> 8) & 0xFF)
            body[17] = UInt8(goodSamples & 0xFF)
            for i in 18..<34 { body[i] = 0 }  // until the MD5 of what is left is known (below)
            try file.write(body, at: 8)
            changed = true
            // The MD5 of the audio the file now holds, so `flac -t` checks it again.
            var digest = [UInt8](repeating: 0, count: 16)
            if roomtap_flac_md5(path, &digest) == 0 { try file.write(digest, at: 8 + 18) }
        }
        let report = WAVRepair.Report(
            path: path, samplesBefore: Int64(stated.totalSamples == 0 ? goodSamples : stated.totalSamples),
            samplesStated: Int64(stated.totalSamples), samplesAfter: Int64(goodSamples),
            bytesTrimmed: Int(size - end), changed: changed)
        return (report, stated.sampleRate)
    }

    /// STREAMINFO's sample rate and total samples (0: unknown).
    private static func readStreamInfo(path: String) throws(WAVError) -> (sampleRate: Int, totalSamples: UInt64) {
        let file = try PosixFile.open(path: path, forUpdate: false)
        defer { file.close() }
        let head = try file.read(at: 0, count: 42)
        guard head.count == 42, head[0..<4].elementsEqual("fLaC".utf8), head[4] & 0x7F == 0 else {
            throw WAVError(path: path, message: "is not a FLAC file (no fLaC and STREAMINFO)", kind: .notAWAV)
        }
        let b = Array(head[8...])
        let rate = Int(b[10]) << 12 | Int(b[11]) << 4 | Int(b[12]) >> 4
        let total =
            UInt64(b[13] & 0x0F) << 32 | UInt64(b[14]) << 24 | UInt64(b[15]) << 16 | UInt64(b[16]) << 8 | UInt64(b[17])
        return (rate, total)
    }
}
