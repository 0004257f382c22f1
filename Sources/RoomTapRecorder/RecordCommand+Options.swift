import Foundation
import RoomTapAll

/// What `roomtap record` was asked: its command line parsed and checked
/// (``RecordCommand/parse(_:)``), read by the plan, the recording and the report.
extension RecordCommand {
    /// How recordings are placed against each other (`--align`).
    enum Alignment: String {
        /// Each file on its own timeline from the room's start (plus its @SECONDS); Janus
        /// recordings, whose times are always wall-clock, line up by them.
        case file
        /// WebM/Matroska/MP4 files too line up by the wall-clock start their tags give.
        case wallclock
    }

    struct Options {
        var files: [FileSpec] = []
        /// `--janus-room DIR`: every audio recording of the one Janus room in DIR.
        var janusRoom: String?
        /// `--sora-recording DIR`: every connection of the one Sora recording in DIR.
        var soraRecording: String?
        /// `--sora-name-key KEY`: the key of a connection's `metadata` that names its track.
        var soraNameKey: String?
        /// `--align`: how recordings are placed against each other.
        var align = Alignment.file
        var out = ""
        var mix = false
        var force = false
        var channels = 1
        var allowTruncated = false
        var quiet = false
        /// Print the summary as JSON on stdout (--json).
        var json = false
        /// Check and print the plan; create nothing (--dry-run).
        var dryRun = false
        /// Live: addresses to listen on for Opus RTP.
        var listen: [ListenAddress] = []
        /// Live: an SDP file describing the room.
        var sdp: String?
        /// Live: a JSON room file describing the room.
        var roomFile: String?
        /// Live: who may send (--allow); empty: anyone (unless the room file says).
        var allow: [SourcePrefix] = []
        /// Live: SRTP keys given outside the room description (--srtp), by participant name.
        var srtpKeys: [SRTPKeyOption] = []
        /// Live: record SSRCs the description did not name on its described ports (--discover).
        var discover = false
        var maxTracks = 64
        var jitterMilliseconds = 60
        var jitterMaxMilliseconds = 200
        var jitterFixed = false
        /// Live: how long after a stream's least-delayed packets its audio goes into the files (ms).
        var recordDelayMilliseconds = 2000
        var leaveAfter: Double = 5
        /// Stop after this many seconds of room time.
        var duration: Double?
        /// Pace file tracks at real time (a live clock) instead of as fast as possible.
        var realtime = false
        /// --realtime-priority [N]: the SCHED_FIFO priority (1-99, 10 when left out) for the clock
        /// and render threads (the receive thread one below), memory locked; nil: normal priority.
        var realtimePriority: Int32?
        /// The control socket (--control); nil: `ROOMTAP_CONTROL` or the per-user default.
        var control: String?
        /// ALSA playback device (--play), "default" when given without a name.
        var play: String?
        /// The track to play (--play-track); nil plays the mix.
        var playTrack: String?
        /// ALSA capture device (--mic), "default" when given without a name.
        var mic: String?
        /// The microphone's track name (--mic-name).
        var micName = "local"
        /// The Realtime agent (--agent and its options).
        var agent: AgentOptions?
        /// Per-speaker transcription (--transcribe and its options).
        var transcribe: TranscribeOptions?
        /// Render threads (--threads); nil: one per core, at most one per track.
        var threads: Int?
        /// Format and rate of the files (--format, --rate, --bitrate).
        var output = OutputFormat()
        /// Measure each file's loudness and true peak into room.json (--loudness).
        var loudness = false
        /// One file with a channel per speaker, written when the room ends (--multichannel).
        var multichannel: String?
        /// --upload s3://BUCKET/PREFIX and its options (docs/STORAGE.md); nil: no upload.
        var upload: RecordUploadOptions?
        /// --webhook URL: events of the recording and its upload.
        var webhook: String?
        /// The `s3://` URL each downloaded input came from, by the local copy's path
        /// (``RemoteInputs``): room.json names the URL.
        var inputOrigins: [String: String] = [:]
        /// --metrics HOST:PORT: the recorder's Prometheus endpoint; nil: none.
        var metrics: String?
        /// --http HOST:PORT: the live page, its JSON API and /metrics (RoomRecording+Live.swift); nil: none.
        var http: String?
        /// --join URL / --whep NAME=URL: a room joined over WebRTC; nil: none.
        var join: RoomJoin.Target?
        /// --stun HOST:PORT: the STUN server of a WebRTC join.
        var stun: (host: String, port: UInt16)?
        /// --ice-host ADDR: the local addresses a WebRTC join's ICE may use.
        var iceHosts: [String] = []
        /// --sora-audio-streaming HOST:PORT: the HTTP/2 listener for Sora's audio streaming; nil: none.
        var soraStreaming: ListenAddress?
        /// --sora-name ID=NAME: track names by Sora connection id.
        var soraNames: [String: String] = [:]
        /// --tls-cert FILE / --tls-key FILE: serve the Sora audio streaming over TLS (https://).
        var soraTLS: (certificate: String, key: String)?

        /// True when the room has network participants.
        var hasNetwork: Bool {
            !listen.isEmpty || sdp != nil || roomFile != nil || join != nil || soraStreaming != nil
        }
        /// True when the room has live participants (network, microphone, an agent) and runs until
        /// stopped (SIGINT/SIGTERM or --duration), not until its files end.
        var isLive: Bool { hasNetwork || mic != nil || agent != nil }
        /// True when the room needs a mix track (written with --mix, played with --play).
        var needsMix: Bool { mix || (play != nil && playTrack == nil) }
        /// True when something listens live (playback, an agent): network streams then decode twice,
        /// once for the live playout and once, later, for the record.
        var hasLiveConsumer: Bool { play != nil || agent != nil }
        /// How the record follows the live audio: network rooms record `--record-delay` after the
        /// streams' least-delayed packets, and everything else equally late (see ``RoomTiming``).
        var timing: RoomTiming {
            guard hasNetwork else { return RoomTiming() }
            var live = LiveRoom.Options()
            live.recordDelayMilliseconds = recordDelayMilliseconds
            live.jitterMilliseconds = jitterMilliseconds
            live.livePlayout = hasLiveConsumer
            return LiveRoom.roomTiming(for: live)
        }
        /// Room samples the record keeps after a stop (network rooms drain the record delay).
        var drainSamples: Int64 { hasNetwork ? Int64(recordDelayMilliseconds) * 48 : 0 }
        /// True when the room runs on the real-time clock.
        /// Playback is heard at the pace it is played, so it needs the real-time clock too.
        /// Transcription streams each speaker to the service as the room plays, so it runs at real
        /// time too (a file room still ends with its files).
        var usesRealTimeClock: Bool { isLive || realtime || play != nil || transcribe != nil }
        /// True when the room writes transcript.jsonl (an agent, per-speaker transcription).
        var writesTranscript: Bool { agent != nil || transcribe != nil }
    }
}
