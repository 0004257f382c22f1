import Foundation
import RoomTapMediaTestSupport
import RoomTapTestSupport
import Testing

/// The first `seconds` of the sample room's `speaker` (real speech), mono 48 kHz, in a fresh file.
/// Real speech, not TestSignal.speechLike: aiortc encodes Opus with application "voip", whose
/// high-pass filter removes speechLike's strong content below 100 Hz (correlation about 0.85
/// after any lossless path; real speech keeps about 0.975).
func speechWAV(_ label: String, speaker: String, seconds: Int = 3) throws -> (path: String, samples: [Int16]) {
    let path = try TestScratch.directory(label).appendingPathComponent("\(speaker).wav").path
    let opus = WebRTCPeers.packageRoot.appendingPathComponent("Samples/room/\(speaker).opus").path
    let ffmpeg = try #require(WAVFixtures.tool("ffmpeg"), "ffmpeg is not installed: run make deps")
    let decoded = try WAVFixtures.run(
        ffmpeg,
        [
            "-loglevel", "error", "-y", "-i", opus, "-t", String(seconds), "-ar", "48000", "-ac", "1", "-c:a",
            "pcm_s16le", path,
        ])
    #expect(decoded.status == 0, "\(decoded.output)")
    let source = try #require(pcmWAVFirstChannel(path))
    return (path, source.samples)
}

/// The first channel of a 16-bit PCM WAV as written by Python's `wave` (the peers' recordings):
/// nil when the file is not one. A data chunk whose size was never patched (a recording still
/// open) is read to the end of the file.
func pcmWAVFirstChannel(_ path: String) -> (samples: [Int16], rate: Int)? {
    guard let data = FileManager.default.contents(atPath: path), data.count >= 12,
        data.prefix(4) == Data("RIFF".utf8), data[8..<12] == Data("WAVE".utf8)
    else { return nil }
    let bytes = [UInt8](data)
    func le16(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 }
    func le32(_ at: Int) -> Int { le16(at) | le16(at + 2) << 16 }
    var at = 12
    var channels = 0
    var rate = 0
    while at + 8 <= bytes.count {
        let id = String(decoding: bytes[at..<at + 4], as: UTF8.self)
        let size = le32(at + 4)
        let body = at + 8
        if id == "fmt " {
            guard le16(body) == 1, le16(body + 14) == 16 else { return nil }
            channels = le16(body + 2)
            rate = le32(body + 4)
        } else if id == "data", channels > 0 {
            let end = size == 0 || body + size > bytes.count ? bytes.count : body + size
            let frames = (end - body) / (2 * channels)
            let samples = (0..<frames).map { i -> Int16 in
                let p = body + i * 2 * channels
                return Int16(bitPattern: UInt16(bytes[p]) | UInt16(bytes[p + 1]) << 8)
            }
            return (samples, rate)
        }
        at = body + size + (size & 1)
    }
    return nil
}

/// How well a participant's recording of the agent (`received`) holds what the agent said
/// (`spoken`, its own track): 40 000 samples from the voice's onset against the received sound
/// from where it begins (a steady tone has a flat envelope: align on the onsets). nil when either
/// has no sound (above 500), or the voice is shorter than that.
func agentVoiceMatch(spoken: [Int16], received: [Int16]) -> (correlation: Double, lag: Int)? {
    guard let onset = spoken.firstIndex(where: { abs($0) > 500 }), onset + 40_000 <= spoken.count,
        let arrived = received.firstIndex(where: { abs($0) > 500 })
    else { return nil }
    return bestAlignment(
        source: Array(spoken[onset..<onset + 40_000]),
        recorded: Array(received[max(0, arrived - 480)..<min(received.count, arrived + 41_000)]))
}

/// Where `recorded` best matches `source` (the lag in samples of the recording) and Pearson's
/// correlation there over the source's whole length: the lag is found on 1 ms envelopes, then to
/// the sample within ±1 ms. (0, 0) when the recording is shorter than the source.
func bestAlignment(source: [Int16], recorded: [Int16]) -> (correlation: Double, lag: Int) {
    guard recorded.count >= source.count, !source.isEmpty else { return (0, 0) }
    let block = 48
    func envelope(_ x: [Int16]) -> [Int16] {
        stride(from: 0, to: x.count - block + 1, by: block).map { start in
            Int16(x[start..<start + block].reduce(0) { $0 + abs(Int($1)) } / block)
        }
    }
    let sourceEnvelope = envelope(source)
    let recordedEnvelope = envelope(recorded)
    var coarse = (correlation: -2.0, lag: 0)
    for lag in 0...(recordedEnvelope.count - sourceEnvelope.count) {
        let c = pearson(sourceEnvelope[...], recordedEnvelope[lag..<lag + sourceEnvelope.count])
        if c > coarse.correlation { coarse = (c, lag * block) }
    }
    var best = (correlation: -2.0, lag: 0)
    for lag in max(0, coarse.lag - block)...min(recorded.count - source.count, coarse.lag + block) {
        let c = pearson(source[...], recorded[lag..<lag + source.count])
        if c > best.correlation { best = (c, lag) }
    }
    return best
}

/// Pearson's correlation of two equally long slices, in one pass.
private func pearson(_ a: ArraySlice<Int16>, _ b: ArraySlice<Int16>) -> Double {
    var sa = 0.0
    var sb = 0.0
    var saa = 0.0
    var sbb = 0.0
    var sab = 0.0
    for (x, y) in zip(a, b) {
        let dx = Double(x)
        let dy = Double(y)
        sa += dx
        sb += dy
        saa += dx * dx
        sbb += dy * dy
        sab += dx * dy
    }
    let n = Double(a.count)
    let cov = sab - sa * sb / n
    let va = saa - sa * sa / n
    let vb = sbb - sb * sb / n
    return va > 0 && vb > 0 ? cov / (va * vb).squareRoot() : 0
}
