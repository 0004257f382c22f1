import Foundation
import RoomTapAll

/// The one file of `record --multichannel`: every speaker a channel.
enum MultichannelFile {
    /// --multichannel: the speaker files of the finished room (`report`'s), a channel each in
    /// room order (by track id), into one WAV or FLAC (by the name) at 48 kHz. `path` is where
    /// (``RecordingPlan/multichannelPath``), `name` what room.json says (--multichannel as given:
    /// relative to DIR, like the tracks' files). Main thread, after the room ended.
    static func write(
        to path: String, named name: String, speakersOf report: RoomReport, plan: RecordingPlan, startTime: Date
    ) throws
        -> RoomReport.Multichannel
    {
        let speakers = report.tracks.filter { $0.kind == "speaker" }.sorted { $0.id < $1.id }
        guard !speakers.isEmpty else {
            throw RuntimeError(description: "\(path): the room had no speakers, so no multichannel file was written")
        }
        let format: AudioFileFormat = AudioFileFormat.fromExtension(of: path) == .flac ? .flac : .wav
        var options = EncodedFileWriter.Options()
        options.format = format
        options.overwrite = plan.options.force
        options.metadata = AudioFileMetadata(
            roomStartTime: startTime, title: "roomtap room", channelNames: speakers.map(\.name))
        _ = try ExportMixing.interleave(
            speakers.map { RecordingPlan.join(plan.outDirectory, $0.file) }, to: path, options: options)
        return .init(
            file: name, format: format.rawValue, sampleRate: AudioFrame.sampleRate, channels: speakers.map(\.name))
    }
}
