public import Foundation

/// What a file says about where it sits on the room's timeline and what it holds: the BWF `bext`
/// of a WAV, Vorbis comments in FLAC and Ogg Opus, a `LIST`/`INFO` chunk for channel names.
public struct AudioFileMetadata: Sendable {
    /// When the room started (nil: unknown; the time fields are left out).
    public var roomStartTime: Date?
    /// The room sample (48 kHz) of the file's first sample; 0: the room's start.
    public var timelineOrigin: Int64
    /// A title, e.g. "roomtap track alice".
    public var title: String
    /// One name per channel, in channel order (a multichannel file: the speakers in room order).
    /// Empty: not stated.
    public var channelNames: [String]

    /// Metadata for a file starting at `timelineOrigin` of a room that started at `roomStartTime`.
    public init(
        roomStartTime: Date? = nil, timelineOrigin: Int64 = 0, title: String = "", channelNames: [String] = []
    ) {
        self.roomStartTime = roomStartTime
        self.timelineOrigin = timelineOrigin
        self.title = title
        self.channelNames = channelNames
    }

    /// The BWF-equivalent Vorbis comments (name, value) for a file at `sampleRate`:
    /// `TITLE`; `DATE` and `TIME` (UTC, as bext's OriginationDate/Time); `TIME_REFERENCE` (bext's
    /// TimeReference: samples at `sampleRate` since that midnight of the file's first sample, the
    /// name ffmpeg and bwfmetaedit use); `ROOMTAP_START_TIME` (the room's start, ISO 8601 with
    /// milliseconds); `ROOMTAP_TIMELINE_ORIGIN` (room samples at 48 kHz); `ROOMTAP_CHANNELS`
    /// (comma-separated channel names); `ENCODER`.
    public func vorbisComments(sampleRate: Int) -> [(String, String)] {
        let bext = BroadcastExtension(
            description: title, channels: 1, roomStartTime: roomStartTime,
            timelineOrigin: timelineOrigin * Int64(sampleRate) / 48_000, sampleRate: sampleRate)
        var comments: [(String, String)] = []
        if !title.isEmpty { comments.append(("TITLE", title)) }
        if !bext.originationDate.isEmpty { comments.append(("DATE", bext.originationDate)) }
        if !bext.originationTime.isEmpty { comments.append(("TIME", bext.originationTime)) }
        comments.append(("TIME_REFERENCE", String(bext.timeReference)))
        if let start = roomStartTime {
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            comments.append(("ROOMTAP_START_TIME", formatter.string(from: start)))
        }
        comments.append(("ROOMTAP_TIMELINE_ORIGIN", String(timelineOrigin)))
        if !channelNames.isEmpty { comments.append(("ROOMTAP_CHANNELS", channelNames.joined(separator: ","))) }
        comments.append(("ENCODER", "roomtap"))
        return comments
    }
}
