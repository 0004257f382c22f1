// libFuzzer entry point for roomtap's parsers and the Ogg Opus decode path, all in memory.
//
//   bash Fuzz/run.sh SECONDS        build with -sanitize=fuzzer and fuzz (corpus under /tmp)
//   swift run roomtap-fuzz FILE...  plain build: run the target once over each file (a crash repro)
//
// Each input goes to the one JSON reader (JSONFuzz: the room file's, control requests' and Realtime
// events'), to the control protocol's parsers (line splitter, JSON, request envelope,
// volume), to the live-ingest parsers (RTP, RTP header extensions, RTCP compound packets,
// the Opus TOC; SDP with a=crypto and the JSON room file with srtp/allow; SDES a=crypto values,
// allow prefixes and libsrtp's unprotect of SRTP/SRTCP in place; the PBX codecs' payloads through a
// jitter buffer), to the Janus .mjr reader and the recorded-stream source (RecordingFuzz), to
// Sora's recording folders (SoraFuzz: archive and report JSONs, RFC 3339 times, file names,
// placement and the pieces of a track played), the WebRTC join's SDP, Janus events and WHEP replies
// (WebRTCFuzz), the pipeline agent's event-stream framing and chat chunks (ChatStreamFuzz), HTTP request heads and the live page's access rules (HTTPFuzz), Sora's
// audio-streaming body (SoraStreamingFuzz), OpusHead.parse, OpusTags.parse, the transcript.jsonl
// parser and its subtitle formats, and through the
// whole Ogg ingest path from a
// byte buffer: inspect, then an OggOpusFileSource rendering 10 ms frames as the room clock would.
// Besides crashes it checks invariants and traps when one fails: the source renders exactly the
// length inspect announced, finishes on the right frame, and a frame is silent only outside the
// file's span.
import RoomTapAgent
import RoomTapContainer
import RoomTapControl
import RoomTapCore
import RoomTapFleet
import RoomTapFuzzing
import RoomTapIngest
import RoomTapJSON
import RoomTapRTP
import RoomTapSora
import RoomTapWebRTC

#if canImport(Glibc)
    import Glibc
#endif

/// Audio rendered per input at most (60 s at 48 kHz), so that a file announcing hours of audio
/// (legitimately, or through granule jumps the demuxer accepted) keeps an iteration fast.
private let maxRenderedSamples: Int64 = 48_000 * 60

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    JSONFuzz.exercise(bytes)
    WireFuzz.exercise(bytes)
    RoomDescriptionFuzz.exercise(bytes)
    SecurityFuzz.exercise(bytes)
    PBXCodecFuzz.exercise(bytes)
    ControlFuzz.exercise(bytes)
    RealtimeEventFuzz.exercise(bytes)
    ChatStreamFuzz.exercise(bytes)
    RecordingFuzz.exercise(bytes)
    SoraFuzz.exercise(bytes)
    WebRTCFuzz.exercise(bytes)
    HTTPFuzz.exercise(bytes)
    SoraStreamingFuzz.exercise(bytes)
    _ = OpusHead.parse(bytes)
    _ = OpusTags.parse(bytes)
    // transcript.jsonl → subtitles: never a crash; what parses renders in every format.
    if let lines = try? TranscriptLine.parse(String(decoding: bytes, as: UTF8.self), source: "fuzz") {
        for format in TranscriptFormat.allCases { _ = format.render(lines) }
    }
    // The first byte picks the output channels and the offset, so both paths are fuzzed.
    let selector = size > 0 ? Int(data[0]) : 0
    let channels = selector & 1 == 0 ? 1 : 2
    let offset = Int64(selector >> 1) * 97
    guard let source = try? OggOpusFileSource(bytes: bytes, name: "fuzz", channels: channels, offset: offset) else {
        return 0
    }
    render(source)
    return 0
}

private func render(_ source: OggOpusFileSource) {
    let frame = AudioFrame.samplesPerChannel
    let end = source.endRoomSample
    let last = min(end, source.offset + maxRenderedSamples)
    let buffer = UnsafeMutableBufferPointer<Int16>.allocate(capacity: frame * source.channels)
    defer { buffer.deallocate() }
    var roomSample: Int64 = 0
    while roomSample < last {
        let status = source.render(into: buffer, at: roomSample)
        let inSpan = roomSample + Int64(frame) > source.offset && roomSample < end
        check(status == .silence ? true : inSpan, "audio outside the file's span")
        if status == .silence { check(buffer.allSatisfy { $0 == 0 }, "a silent frame holds samples") }
        roomSample += Int64(frame)
        check(source.isFinished == (roomSample >= end), "isFinished on the wrong frame")
    }
    check(source.holes >= 0 && source.decodeErrors >= 0 && source.concealedSamples >= 0, "counters")
}

private func check(_ condition: Bool, _ what: StaticString) {
    if !condition { fatalError("invariant failed: \(what)") }
}

#if !FUZZING
    /// Without libFuzzer: runs the target once over each file named on the command line.
    @main
    struct FuzzMain {
        static func main() {
            var count = 0
            for path in CommandLine.arguments.dropFirst() {
                guard let file = fopen(path, "rb") else {
                    print("roomtap-fuzz: cannot open \(path)")
                    exit(1)
                }
                var bytes: [UInt8] = []
                var chunk = [UInt8](repeating: 0, count: 65_536)
                while true {
                    let n = fread(&chunk, 1, chunk.count, file)
                    if n <= 0 { break }
                    bytes += chunk[0..<n]
                }
                fclose(file)
                _ = bytes.withUnsafeBufferPointer { fuzz($0.baseAddress ?? UnsafePointer(bitPattern: 1)!, $0.count) }
                count += 1
            }
            print("roomtap-fuzz: ran \(count) input(s) without a crash (build with Fuzz/run.sh to fuzz)")
        }
    }
#endif
