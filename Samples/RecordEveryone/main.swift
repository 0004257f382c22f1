// record-everyone: the Sora SDK documentation's example, "record every received stream to
// <streamId>.wav", written with the RoomTap library.
//
//   swift run record-everyone OUTDIR NAME=FILE.opus ...
//
// On add-track the handler creates a WAV sink and attaches it; on remove-track (the track is gone
// and its sinks already detached) it closes the file. The application owns the sinks, as in Sora.
import Foundation
import RoomTap
import Synchronization

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count >= 2 else {
    FileHandle.standardError.write(Data("usage: record-everyone OUTDIR NAME=FILE.opus ...\n".utf8))
    exit(64)
}
let outDirectory = arguments[0]
try FileManager.default.createDirectory(atPath: outDirectory, withIntermediateDirectories: true)

/// The application keeps its sinks (the room does not own their resources).
let sinks = Mutex<[TrackID: WAVFileSink]>([:])

let room = Room(clock: VirtualClock())
room.setEvents(
    RoomEvents(
        onTrackAdded: { track in
            // add-stream: attach a WAV-writing sink before the track's first frame.
            do {
                let sink = try WAVFileSink(
                    path: "\(outDirectory)/\(track.id.rawValue)-\(track.name).wav", channels: track.channels,
                    policy: .wait)
                track.addSink(sink)
                sinks.withLock { $0[track.id] = sink }
            } catch {
                FileHandle.standardError.write(Data("record-everyone: \(error)\n".utf8))
            }
        },
        onTrackRemoved: { track in
            // remove-stream: the sink is detached already; close the file.
            guard let sink = sinks.withLock({ $0.removeValue(forKey: track.id) }) else { return }
            do {
                try sink.close()
                print("\(sink.path): \(sink.samplesWritten) samples")
            } catch {
                FileHandle.standardError.write(Data("record-everyone: \(error)\n".utf8))
            }
        },
        onFinished: { print("room finished") }))

for argument in arguments.dropFirst() {
    let parts = argument.split(separator: "=", maxSplits: 1).map(String.init)
    guard parts.count == 2 else { continue }
    do {
        room.addTrack(name: parts[0], source: try OggOpusFileSource(path: parts[1]), role: .speakerFromFile)
    } catch {
        FileHandle.standardError.write(Data("record-everyone: \(error)\n".utf8))
        exit(1)
    }
}
room.run()
