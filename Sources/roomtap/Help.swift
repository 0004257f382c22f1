/// Help texts (snapshot-tested in RoomTapCLITests).
enum Help {
    static func text(for command: String) -> String? {
        switch command {
        case "record": record
        case "repair": repair
        case "timeline": timeline
        case "watch": watch
        case "tracks", "status", "mute", "unmute", "volume", "solo", "unsolo": control
        case "agent": agent
        case "help": topLevel
        default: nil
        }
    }

    static let topLevel = """
        roomtap — record and route the audio of a multi-party call room

        USAGE: roomtap <command> [options]

        COMMANDS:
          record    Record every speaker of a room to a time-aligned WAV each (and a mix)
          repair    Fix the header of WAV files cut short (killed recorder, full disk)
          timeline  Draw who spoke when in a recording, as an SVG

        WHILE A RECORDER RUNS (over its control socket):
          tracks    List the tracks: source, state, mute, volume, level, talking, loss
          status    Room time, tracks, sinks, drops, late ticks, files
          mute      Mute a track (unmute to undo); --scope record keeps it off the record too
          volume    Set a track's volume: 0...10 (1 is unity) or dB (-6dB)
          solo      Hear only the named tracks in the mix and playback (unsolo to undo)
          watch     Live level meters; keys to select, mute, change volume
          agent     Talk to the room's agent (say, instructions, mute, unmute)
          help      Show help for a command (roomtap help record)

        OPTIONS:
          -h, --help    Show this help
          --version     Show the version

        Exit status: 0 success, 1 failure, 64 usage error.

        """

    static let record = """
        OVERVIEW: Record every speaker of a room to a time-aligned WAV each.

        Speakers come from Ogg Opus files (--file) or live, as Opus over RTP from an SFU or PBX
        (--listen, --sdp, --room). All speakers share one room timeline that starts at 0: a file
        starts at room time 0 or at its '@' offset (seconds); a live participant is placed by its
        RTP timestamps from its first packet on. Every WAV covers the whole room, start to end,
        with silence where its speaker is absent, so all files of a room have exactly the same
        number of samples (48 kHz, 16-bit).

        USAGE: roomtap record --file NAME=PATH[@SECONDS] ... --out DIR [options]
               roomtap record --listen HOST:PORT ... | --sdp FILE | --room FILE --out DIR [options]

        OPTIONS:
          --file NAME=PATH[@SECONDS]
                          A speaker: track name, Ogg Opus file, optional start offset in
                          seconds (e.g. bob=bob.opus@12.5). Repeat for every speaker.
          --out DIR       Output directory (created if missing). Writes DIR/<name>.wav per
                          speaker, DIR/mix.wav with --mix, and DIR/room.json.
          --mix           Also write the mix of all speakers (limited, never clips).
          --channels 1|2  Channels of the speaker files (default 1; stereo sources are
                          down-mixed). 2 keeps stereo.
          --force         Replace an earlier recording in DIR: the files its room.json lists
                          are removed first (never a link, never an input, nothing else).
          --allow-truncated
                          Record files that end mid-page or without an end-of-stream page
                          (what is there is recorded); without it they are refused.
          --quiet         No progress and no summary table.
          --threads N     Threads decoding the speakers, 1-64 (default: one per core, at
                          most one per speaker). The files are the same for any N.
          -h, --help      Show this help.

        LIVE OPTIONS:
          --listen HOST:PORT
                          Receive Opus RTP (and RTCP on the same port) on this UDP address
                          (127.0.0.1:25000, [::1]:25000, :25000). Repeatable. Every SSRC is a
                          track: named by --sdp/--room, otherwise ssrc-<hex>.
          --sdp FILE      The room as SDP (RFC 8866), e.g. what ffmpeg -sdp_file writes: each
                          m=audio port is listened on; a=label/a=ssrc/a=mid name participants.
          --room FILE     The room as JSON (see docs/ROOM-FILE.md).
          --max-tracks N  Most tracks (default 64): a flood of SSRCs cannot exhaust memory.
          --record-delay MS
                          How long after a stream's least-delayed packets its audio goes into
                          the files (default 2000, 20-5000). The files never move with jitter:
                          every packet arriving within this delay is decoded, a lost one is
                          concealed whole. A stop drains it (files run MS longer).
          --jitter-ms N   Live playout delay in milliseconds (default 60), for what is heard
                          (--play, --agent): the initial and smallest; it adapts to the
                          network's jitter up to --jitter-max-ms, only in silence, and never
                          moves the files (see docs/CLI.md).
          --jitter-max-ms N
                          Largest adaptive live delay in milliseconds (default 200).
          --jitter-fixed  Keep the live delay at --jitter-ms (no adaptation).
          --leave-after S Seconds without packets before a participant counts as left
                          (default 5); their file keeps the timeline (silence).
          --duration S    Receive for S seconds of room time, then drain the record delay
                          (otherwise: Ctrl-C / SIGTERM).
          --realtime      Play --file tracks at real time (a live clock), e.g. beside live ones.
          --mic [DEVICE]  Capture an ALSA device (default: "default") as a live track.
          --mic-name NAME The microphone's track name (default: local).

        AGENT OPTIONS (OpenAI Realtime API; see docs/AGENT.md):
          --agent         Attach an agent: it hears the room's humans (a mix-minus, after their
                          mute/volume/solo), answers by voice, and its voice is the track
                          'agent' (agent.wav, the mix, playback). Needs OPENAI_API_KEY (never
                          printed or written). The room then runs on the real-time clock until
                          Ctrl-C or --duration. Transcripts go to DIR/transcript.jsonl.
          --agent-instructions FILE
                          The agent's instructions (see Samples/agents/).
          --agent-voice V alloy, ash, ballad, coral, echo, sage, shimmer, verse, marin (default),
                          cedar.
          --agent-hears all|NAME,...
                          Which tracks the agent hears (default all humans).
          --agent-send rtp://HOST:PORT
                          Also send the agent's voice as Opus RTP (payload type 111), e.g. into
                          the SFU or PBX the call runs on.
          --agent-model M Realtime model (default gpt-realtime).
          --agent-url URL WebSocket URL (default wss://api.openai.com/v1/realtime?model=M).
          --agent-vad-threshold X
                          Server VAD threshold 0...1 (default 0.5).
          --agent-vad-silence-ms N
                          Silence that ends a turn (default 500).
          --agent-transcription MODEL|none
                          Transcription of what the agent hears (default gpt-4o-mini-transcribe).
          --agent-chunk-ms N
                          Audio per input_audio_buffer.append, 20...100 ms (default 40).

        CONTROL AND PLAYBACK:
          --control PATH  The control socket (default: $ROOMTAP_CONTROL, else
                          $XDG_RUNTIME_DIR/roomtap/default.sock, else /tmp/roomtap-UID/...).
                          Opened whenever the room runs on the real-time clock (live rooms,
                          --realtime); --control also opens it for an offline room. Other roomtap
                          commands (tracks, mute, volume, solo, watch) talk to it.
          --play [DEVICE] Play the mix through ALSA (default device: "default"), as heard:
                          after mute, volume and solo, at real time (files are paced as with
                          --realtime). Underruns are recovered and counted.
          --play-track NAME
                          Play this track instead of the mix (implies --play).

        Names are sanitised to [A-Za-z0-9._-] (other characters become '_'), so no file can land
        outside DIR; two tracks may not share a name (case-folded), and mix/agent are reserved
        when roomtap makes those tracks. Nothing is overwritten unless --force is given, never
        through a symbolic link and never an input: the command checks every output path it
        knows before it creates anything, and a live participant who appears later gets a name
        no file in DIR has yet.

        A corrupt stretch inside a file (bad pages, undecodable packets) is concealed with Opus
        packet-loss concealment and counted; the timeline is kept. Live loss is recovered from
        Opus in-band FEC when the next packet carries it, concealed otherwise, and counted per
        track in room.json. Progress goes to stderr, the summary table to stdout. Ctrl-C stops the
        room and finalises every file (exit 0).

        EXAMPLES:
          roomtap record --file alice=a.opus --file bob=b.opus@2.5 --out out/standup --mix
          roomtap record --sdp room.sdp --out out/call --mix --duration 3600

        """

    static let repair = """
        OVERVIEW: Fix the header of WAV files cut short.

        A recorder killed mid-write (kill -9, power loss, full disk) leaves WAV files whose header
        may understate the audio after it (roomtap refreshes it every second). repair rewrites the
        RIFF/RF64 sizes so every complete sample frame in the file is readable, and trims a
        trailing partial sample frame. The audio bytes are not touched. Running it twice is safe.

        USAGE: roomtap repair FILE...

        OPTIONS:
          -h, --help      Show this help.

        """

    static let timeline = """
        OVERVIEW: Draw who spoke when in a recording, as an SVG.

        Reads DIR/room.json and the speaker WAVs of a finished recording (roomtap record --out DIR)
        and draws one lane per speaker (the mix is left out) on the room's time axis: a bar where
        the speaker talks (10 ms frames at -45 dBFS or louder; pauses up to 200 ms bridged, bursts
        under 100 ms ignored), with the times as tooltips. Track controls listed in room.json (mute,
        volume, solo) are drawn as markers. Open the file in a browser.

        USAGE: roomtap timeline DIR [--out FILE] [--force]

        OPTIONS:
          --out FILE      Where to write the SVG (default DIR/timeline.svg).
          --force         Overwrite FILE if it exists.
          -h, --help      Show this help.

        """

    static let control = """
        OVERVIEW: Control a running recorder (roomtap record) from another terminal.

        USAGE: roomtap tracks [--json]
               roomtap status [--json]
               roomtap mute NAME [--scope heard|record|all]
               roomtap unmute NAME
               roomtap volume NAME LEVEL [--scope heard|record|all]
               roomtap solo NAME...
               roomtap unsolo

        LEVEL is a linear gain from 0 to 10 (1 is unity, 0 silent, like the Sora SDK's volume) or
        a level in dB such as -6dB or +3dB (clamped to the same range). A change takes effect at
        the next 10 ms frame, ramped across it (no click); the reply says the room time.

        Scope: by default a control shapes what is heard (the mix, playback, the agent) and the
        speaker's own file keeps the raw speaker. --scope record (or all) applies it to the
        speaker's file too: someone who asks to be off the record gets silence in their file, with
        the timeline kept. room.json lists every change with its room time.

        Solo: the mix and playback hear only the named tracks; unsolo restores.

        OPTIONS:
          --control PATH  The recorder's control socket (default as for roomtap record).
          --json          Print the recorder's reply as JSON (tracks, status).
          -h, --help      Show this help.

        With no recorder running: "no recorder at PATH; start one with roomtap record", exit 1.
        The protocol (one JSON object per line) is in docs/CONTROL-PROTOCOL.md.

        """

    static let watch = """
        OVERVIEW: Watch a running room: level meter and talking indicator per track.

        USAGE: roomtap watch [--control PATH] [--json]

        On a terminal the view is redrawn in place about 10 times a second. Keys: up/down (or
        k/j) select a track, m mutes or unmutes it, + and - change its volume by 3 dB, 0 sets
        unity, s solos it, u ends the solo, q (or Ctrl-C) quits and restores the terminal.
        Not on a terminal, or with --json, it prints one line per event instead.

        OPTIONS:
          --control PATH  The recorder's control socket (default as for roomtap record).
          --json          Print every event as one JSON line.
          -h, --help      Show this help.

        """

    static let agent = """
        OVERVIEW: Talk to the agent of a running room (roomtap record --agent).

        USAGE: roomtap agent say TEXT
               roomtap agent instructions FILE
               roomtap agent mute | unmute

        say sends TEXT into the conversation and asks for a spoken answer (queued while the
        agent is answering). instructions replaces the agent's instructions. mute stops what the
        agent hears without ending its session; unmute resumes.

        OPTIONS:
          --control PATH  The recorder's control socket (default as for roomtap record).
          -h, --help      Show this help.

        """
}
