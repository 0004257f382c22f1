// roomtap-minimal: the smallest program for roomtap's offline job, the yardstick of `make bench`.
// One thread, one room clock: every 10 ms tick takes 480 samples of every speaker (libogg pages,
// opus_decode of each 20 ms packet when the last one is used up, pre-skip and end trim as RFC 7845
// says), appends them to that speaker's 32 KiB buffer and write(2)s the buffer when full; the room
// ends on the tick in which the last speaker ends, so every WAV (44-byte header, 16-bit mono,
// 48 kHz) has the same length, as roomtap's. No checks beyond what keeps it correct on good
// files, no output gain (the benchmark's files have none).
//
// Usage: roomtap-minimal OUTDIR FILE...   (writes OUTDIR/s0.wav, s1.wav, ...)
import COgg
import COpus
import Glibc

let frame = 480
let bufferBytes = 32 * 1024
let chunk = 64 * 1024

final class Speaker {
    let input: Int32
    let output: Int32
    var sync = ogg_sync_state()
    var stream = ogg_stream_state()
    var page = ogg_page()
    var packet = ogg_packet()
    var streamReady = false
    var headers = 0
    var decoder: OpaquePointer?
    var preSkip = 0  // from OpusHead
    var skipLeft = 0  // pre-skip samples not yet dropped
    var playable = Int64.max  // known at the end-of-stream page
    var produced: Int64 = 0  // playable samples taken so far
    var ended = false
    let pcm = UnsafeMutablePointer<Int16>.allocate(capacity: 5760)
    var pcmStart = 0
    var pcmEnd = 0
    let buffer = UnsafeMutableRawPointer.allocate(byteCount: bufferBytes, alignment: 16)
    var buffered = 0
    var dataBytes = 0

    init(input: String, output: String) {
        self.input = open(input, O_RDONLY)
        self.output = open(output, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard self.input >= 0, self.output >= 0 else { fatalError("cannot open \(input) or \(output)") }
        ogg_sync_init(&sync)
        let header = [UInt8](repeating: 0, count: 44)
        header.withUnsafeBytes { _ = write(self.output, $0.baseAddress, 44) }
    }

    /// The next audio packet into `packet`; false at the end of the file.
    func nextPacket() -> Bool {
        while true {
            if streamReady && ogg_stream_packetout(&stream, &packet) == 1 {
                if headers < 2 {
                    if headers == 0 {
                        preSkip = Int(packet.packet[10]) | Int(packet.packet[11]) << 8
                        skipLeft = preSkip
                        var error: Int32 = 0
                        decoder = opus_decoder_create(48_000, 1, &error)
                    }
                    headers += 1
                    continue
                }
                return true
            }
            let result = ogg_sync_pageout(&sync, &page)
            if result == 1 {
                if !streamReady {
                    ogg_stream_init(&stream, ogg_page_serialno(&page))
                    streamReady = true
                }
                ogg_stream_pagein(&stream, &page)
                if ogg_page_eos(&page) != 0 { playable = ogg_page_granulepos(&page) - Int64(preSkip) }
                continue
            }
            if result < 0 { continue }
            let space = ogg_sync_buffer(&sync, chunk)!
            let n = read(input, space, chunk)
            if n <= 0 { return false }
            ogg_sync_wrote(&sync, n)
        }
    }

    /// Appends this tick's 480 samples to the write buffer.
    func tick() {
        if buffered + 2 * frame > bufferBytes { flush() }
        let out = (buffer + buffered).assumingMemoryBound(to: Int16.self)
        var filled = 0
        while filled < frame && !ended {
            if pcmStart == pcmEnd {
                guard nextPacket() else {
                    ended = true
                    break
                }
                let n = Int(opus_decode(decoder!, packet.packet, Int32(packet.bytes), pcm, 5760, 0))
                pcmStart = 0
                pcmEnd = max(0, n)
                let skip = min(skipLeft, pcmEnd)  // pre-skip: the first samples are not playable
                skipLeft -= skip
                pcmStart = skip
                continue
            }
            let take = Int(min(Int64(min(frame - filled, pcmEnd - pcmStart)), playable - produced))
            if take <= 0 {
                ended = true
                break
            }
            (out + filled).update(from: pcm + pcmStart, count: take)
            filled += take
            pcmStart += take
            produced += Int64(take)
            if produced >= playable { ended = true }
        }
        (out + filled).update(repeating: 0, count: frame - filled)
        buffered += 2 * frame
    }

    func flush() {
        var done = 0
        while done < buffered { done += max(0, write(output, buffer + done, buffered - done)) }
        dataBytes += buffered
        buffered = 0
    }

    func finish() {
        flush()
        var header = [UInt8]()
        func u32(_ v: Int) { for i in 0..<4 { header.append(UInt8(truncatingIfNeeded: v >> (8 * i))) } }
        func u16(_ v: Int) { for i in 0..<2 { header.append(UInt8(truncatingIfNeeded: v >> (8 * i))) } }
        header += Array("RIFF".utf8)
        u32(36 + dataBytes)
        header += Array("WAVEfmt ".utf8)
        u32(16)
        u16(1)
        u16(1)
        u32(48_000)
        u32(96_000)
        u16(2)
        u16(16)
        header += Array("data".utf8)
        u32(dataBytes)
        header.withUnsafeBytes { _ = pwrite(output, $0.baseAddress, 44, 0) }
        close(output)
        close(input)
    }
}

let arguments = CommandLine.arguments
guard arguments.count >= 3 else {
    print("usage: roomtap-minimal OUTDIR FILE...")
    exit(64)
}
mkdir(arguments[1], 0o755)
let speakers = arguments.dropFirst(2).enumerated().map { i, path in
    Speaker(input: path, output: "\(arguments[1])/s\(i).wav")
}
var running = true
while running {
    running = false
    for speaker in speakers {
        speaker.tick()
        if !speaker.ended { running = true }
    }
}
for speaker in speakers { speaker.finish() }
