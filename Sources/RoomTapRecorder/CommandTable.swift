import RoomTapAll

/// Every `roomtap` command and its options: the one table that parsing, validation, dispatch,
/// `--help`, `help <command>`, the top-level COMMANDS list and the usage errors come from.
/// To add a command: one entry in ``all`` (name, group, summary, options, help prose) and its
/// run function.
enum CommandTable {
    static let all: [CommandSpec] =
        ownCommands.filter { $0.group != .other } + fleetCommands + ownCommands.filter { $0.group == .other }

    private static let ownCommands: [CommandSpec] = [
        CommandSpec(
            "record", group: .main,
            summary: "Record every speaker of a room to a time-aligned WAV each (and a mix)",
            options: recordOptions + OutputFormat.recordOptions + RecordUploadOptions.options,
            helpIntro: Help.recordIntro,
            helpNotes: Help.recordNotes,
            run: { try RecordCommand.run($0, $1) }),
        CommandSpec(
            "repair", group: .main, summary: "Fix WAV, FLAC and Ogg Opus files cut short (killed recorder, full disk)",
            takesPositionals: true, helpIntro: Help.repairIntro, run: { try RepairCommand.run($0, $1) }),
        CommandSpec(
            "timeline", group: .main, summary: "Draw who spoke when in a recording, as an SVG",
            options: [
                OptionSpec(
                    "--out", short: "o", .value, "FILE", help: "Where to write the SVG (default DIR/timeline.svg)."),
                OptionSpec("--force", short: "f", .flag, help: "Overwrite FILE if it exists."),
            ], takesPositionals: true, helpIntro: Help.timelineIntro, run: { try TimelineCommand.run($0, $1) }),
        CommandSpec(
            "view", group: .main, summary: "Write a recording's review page: lanes, transcript, playback",
            options: ViewCommand.options, takesPositionals: true, helpIntro: Help.viewIntro,
            run: { try ViewCommand.run($0, $1) }),
        CommandSpec(
            "export", group: .main,
            summary: "Convert a recording: FLAC, Opus, any rate, multichannel, normalized mix",
            options: ExportCommand.options, takesPositionals: true, helpIntro: Help.exportIntro,
            run: { try ExportCommand.run($0, $1) }),
        CommandSpec(
            "info", group: .main, summary: "Summarise a recording from its room.json: state, length, tracks",
            options: InfoCommand.options, takesPositionals: true, helpIntro: InfoCommand.helpIntro,
            run: { try InfoCommand.run($0, $1) }),
        CommandSpec(
            "transcript", group: .main, summary: "Turn an agent's transcript into WebVTT, SRT, text or Audacity labels",
            options: TranscriptCommand.options, takesPositionals: true, helpIntro: Help.transcriptIntro,
            run: { try TranscriptCommand.run($0, $1) }),
        CommandSpec(
            "upload", group: .main, summary: "Upload a recording to S3 (verified, idempotent, resumable)",
            options: UploadCommand.options, takesPositionals: true, helpIntro: UploadCommand.helpIntro,
            run: { try UploadCommand.run($0, $1) }),
        control(.tracks, summary: "List the tracks: source, state, mute, volume, level, talking, loss"),
        control(.status, summary: "Room time, tracks, sinks, drops, late ticks, files"),
        control(
            .mute, summary: "Mute tracks (NAME..., --all; unmute to undo); --scope record: off the record",
            scope: "heard (default): the mix, playback, the agent; record: the speaker's\n"
                + "own file and the recorded mix; all: both."),
        control(
            .unmute, summary: "Undo a mute",
            scope: "all (default): every mute of the track; heard: only what is heard;\n"
                + "record: only the record."),
        control(
            .volume,
            summary: "Set a track's volume: 0...10 (1 is unity), 0dB, +3dB/-3dB (relative); NAME alone: show it",
            scope: "heard (default): the mix, playback, the agent; record: the speaker's\n"
                + "own file and the recorded mix; all: both. Never changes a mute."),
        control(.solo, summary: "Hear only the named tracks in the mix and playback (unsolo to undo)"),
        control(.unsolo, summary: "End the solo: every track is heard again"),
        CommandSpec(
            "watch", group: .control, summary: "Live level meters; keys to select, mute, change volume",
            options: [
                dirOption, controlOption,
                OptionSpec("--json", .flag, help: "Print every event as one JSON line."),
            ], helpIntro: Help.watchIntro, run: { try WatchCommand.run($0, $1) }),
        CommandSpec(
            "agent", group: .control, summary: "Talk to the room's agent (say, instructions, mute, unmute)",
            options: [dirOption, controlOption, jsonOption], takesPositionals: true, helpIntro: Help.agentIntro,
            run: { try ControlVerbs.run(.agent, $0, $1) }),
        CommandSpec(
            "list", group: .control, summary: "List the running recorders: directory, pid, tracks, uptime, socket",
            options: [
                OptionSpec(
                    "--json", .flag, help: "Print a JSON array: dir, socket, pid, tracks, uptime (s), started, state.")
            ], helpIntro: Help.listIntro, run: { try ListCommand.run($0, $1) }),
        CommandSpec(
            "stop", group: .control, summary: "Stop a recorder as Ctrl-C does (files finalised, room.json written)",
            options: [
                OptionSpec("--dir", .value, "DIR", help: "The recorder whose output directory is DIR."),
                controlOption,
            ], helpIntro: Help.stopIntro, run: { try StopCommand.run($0, $1) }),
        CommandSpec(
            "help", group: .other, summary: "Show help for a command (roomtap help record)",
            takesPositionals: true, helpIntro: "", run: { try CommandDispatch.help($0, $1.console) }),
        CommandSpec(
            "version", group: .other, summary: "Show the version (also roomtap --version)",
            helpIntro: "OVERVIEW: Show roomtap's version.\n\nUSAGE: roomtap version\n\n",
            run: { $1.console.print("roomtap \(CommandDispatch.version)") }),
    ]

    /// The command called `name`, or nil.
    static func command(named name: String) -> CommandSpec? { all.first { $0.name == name } }

    // MARK: - The control verbs

    static let controlOption = OptionSpec(
        "--control", .value, "PATH", help: "The recorder's control socket (default as for roomtap record).")
    static let dirOption = OptionSpec(
        "--dir", .value, "DIR",
        help: "The recorder whose output directory is DIR (default: the only\nrecorder running).")
    static let jsonOption = OptionSpec("--json", .flag, help: "Print the recorder's reply as JSON (tracks, status).")

    /// A verb that sends one ``ControlCommand`` named `verb` to a running recorder
    /// (docs/CONTROL-PROTOCOL.md), built by ``ControlVerbs/command(_:_:scope:)``.
    /// `scope`: the help of the verb's `--scope` option (nil: the verb takes none).
    private static func control(_ verb: ControlCommand.Name, summary: String, scope: String? = nil) -> CommandSpec {
        var options = [dirOption, controlOption, jsonOption]
        if let scope { options.append(OptionSpec("--scope", .value, "SCOPE", help: scope)) }
        if verb == .mute || verb == .unmute {
            options.append(OptionSpec("--all", .flag, help: "Every speaker (not the mixes) instead of NAME..."))
        }
        return CommandSpec(
            verb.rawValue, group: .control, summary: summary, options: options,
            takesPositionals: ![.tracks, .unsolo].contains(verb), helpIntro: Help.controlIntro,
            helpNotes: Help.controlNotes, run: { try ControlVerbs.run(verb, $0, $1) })
    }

    // MARK: - record

    private static let live = "LIVE OPTIONS"
    private static let agent = "AGENT OPTIONS (OpenAI Realtime API; see docs/AGENT.md)"
    private static let playback = "CONTROL AND PLAYBACK"
    private static let transcription = "TRANSCRIPTION OPTIONS (OpenAI Realtime API; see docs/AGENT.md)"
    private static let pipeline = "PIPELINE AGENT OPTIONS (chat completions and speech; see docs/AGENT.md)"

    static let recordOptions: [OptionSpec] = [
        OptionSpec(
            "--file", .repeatable, "NAME=PATH[@SECONDS]",
            help: "A speaker: track name (left out, PATH[@SECONDS]: the file's name\n"
                + "without extension), a file of Opus audio (Ogg Opus, a Janus\n"
                + "recording .mjr, WebM, Matroska or MP4: read from the content), an\n"
                + "optional start offset in seconds (e.g. bob=bob.opus@12.5). Repeat\n"
                + "for every speaker. A file with several Opus tracks gives a track\n"
                + "NAME-<title> each (docs/RECORDINGS-IN.md).\n"
                + "PATH - reads an Ogg Opus stream from standard input as it\n"
                + "arrives (one --file at most, offline rooms only; e.g.\n"
                + "ffmpeg ... -f ogg - | roomtap record --file alice=- ...).\n"
                + "PATH s3://BUCKET/KEY is downloaded first (to a private temporary\n"
                + "directory, removed afterwards; credentials from AWS_*, as --upload)."),
        OptionSpec(
            "--janus-room", .value, "DIR",
            help: "Every audio recording of the one Janus room in DIR (Janus's\n"
                + "rec_dir: <plugin>-<room>-user-<id>-<time>-audio.mjr), each a\n"
                + "track user-<id>, placed by their own times. DIR may be\n"
                + "s3://BUCKET/PREFIX: the objects directly under it, downloaded first."),
        OptionSpec(
            "--sora-recording", .value, "DIR",
            help: "Every connection of the one Sora recording in DIR (report-<id>.json,\n"
                + "archive-<connection_id>.json/.webm/.mp4, split-archive-...): a track\n"
                + "each, its files placed by their JSONs' start_timestamp (else\n"
                + "start_time_offset) and their own timestamps, from the recording's\n"
                + "start; faults warned and kept in room.json. DIR may be\n"
                + "s3://BUCKET/PREFIX (docs/RECORDINGS-IN.md)."),
        OptionSpec(
            "--sora-name-key", .value, "KEY",
            help: "Name each --sora-recording track by KEY in its connection's metadata\n"
                + "(else client_id, else connection_id)."),
        OptionSpec(
            "--align", .value, "file|wallclock",
            help: "file (default): each WebM/Matroska/MP4 file from the room's start\n"
                + "(plus its @SECONDS). wallclock: line them up by the wall-clock\n"
                + "start their tags give (creation_time, DateUTC, started_at), with\n"
                + "each other and with Janus recordings."),
        OptionSpec(
            "--out", short: "o", .value, "DIR",
            help: "Output directory (created if missing). Writes DIR/<name>.wav per\n"
                + "speaker, DIR/mix.wav with --mix, and DIR/room.json."),
        OptionSpec("--mix", .flag, help: "Also write the mix of all speakers (limited, never clips)."),
        OptionSpec(
            "--channels", .value, "1|2",
            help: "Channels of the speaker files (default 1; stereo sources are\ndown-mixed). 2 keeps stereo."),
        OptionSpec(
            "--force", short: "f", .flag,
            help: "Replace an earlier recording in DIR: the files its room.json lists\n"
                + "are removed first (never a link, never an input, nothing else)."),
        OptionSpec(
            "--allow-truncated", .flag,
            help: "Record files that end mid-page or without an end-of-stream page\n"
                + "(what is there is recorded); without it they are refused."),
        OptionSpec("--quiet", short: "q", .flag, help: "No progress and no summary table."),
        OptionSpec(
            "--threads", .value, "N",
            help: "Threads decoding the speakers, 1-64 (default: one per core, at\n"
                + "most one per speaker). The files are the same for any N."),
        OptionSpec(
            "--json", .flag,
            help: "Print the summary as one JSON document on stdout instead of the\n"
                + "table (see docs/CLI.md); progress stays on stderr."),
        OptionSpec(
            "--dry-run", .flag,
            help: "Run every check, print the plan (tracks, sources, files, room\n"
                + "length, what --force would remove) and create nothing."),
        OptionSpec(
            "--metrics", .value, "HOST:PORT",
            help: "Serve Prometheus text at /metrics (tracks, late ticks, packets\n"
                + "received/lost/late per track, bytes written, uploads) and /healthz\n"
                + "while recording (port 0: any; the address is printed)."),
        OptionSpec(
            "--http", .value, "HOST:PORT",
            help: "Serve the live page while recording: every track's meter and\n"
                + "talking state, volume, mute (heard and record) and solo, acting as\n"
                + "the control verbs do; its JSON API (/api) and /metrics. Loopback\n"
                + "(127.0.0.1:PORT) by default; another address needs\n"
                + "ROOMTAP_HTTP_TOKEN (open the page as /?token=...). Port 0: any;\n"
                + "the address is printed."),
        OptionSpec(
            "--join", .value, "URL", section: live,
            help: "Join a room as a WebRTC participant and record every publisher:\n"
                + "janus+http://HOST:PORT/janus?room=ID[&pin=PIN] (a Janus VideoRoom;\n"
                + "tracks named by display name, following joins and leaves), or\n"
                + "sora+wss://HOST[:PORT]/signaling?channel_id=ID (a Sora channel,\n"
                + "recvonly; sora+ws:// without TLS; tracks named by notify metadata)."),
        OptionSpec(
            "--join-metadata", .value, "JSON|@FILE", section: live,
            help: "The metadata of a Sora connect message (e.g. an access token;\n"
                + "or ROOMTAP_SORA_METADATA). Never printed, logged or written."),
        OptionSpec(
            "--join-name-key", .value, "KEY", section: live,
            help: "The member of a Sora publisher's notify metadata that names its\n"
                + "track (default name; else its client_id, else connection_id)."),
        OptionSpec(
            "--whep", .repeatable, "NAME=URL", section: live,
            help: "Play a WHEP endpoint (WebRTC-HTTP egress) as track NAME.\n"
                + "Repeatable. The bearer token: --whep-token or ROOMTAP_WHEP_TOKEN."),
        OptionSpec("--whep-token", .value, "TOKEN", section: live, help: "Bearer token of the --whep endpoints."),
        OptionSpec(
            "--ice-host", .repeatable, "ADDR", section: live,
            help: "Gather ICE host candidates only on this local address (e.g.\n"
                + "127.0.0.1). Repeatable. Default: every interface."),
        OptionSpec(
            "--sora-audio-streaming", .value, "HOST:PORT", section: live,
            help: "Receive Sora's audio streaming (sora.conf audio_streaming_url =\n"
                + "http://HOST:PORT/speech, audio_streaming_header = true): HTTP/2\n"
                + "(h2c), each Sora connection a track named by its id. A bare PORT\n"
                + "is on loopback; port 0: any (the address is printed)."),
        OptionSpec(
            "--sora-name", .repeatable, "ID=NAME", section: live,
            help: "Name the track of Sora connection ID (default: the id). Repeatable."),
        OptionSpec(
            "--tls-cert", .value, "FILE", section: live,
            help: "PEM certificate chain: --sora-audio-streaming over TLS (an https://\n"
                + "audio_streaming_url; HTTP/2 with ALPN h2). Give --tls-key too."),
        OptionSpec("--tls-key", .value, "FILE", section: live, help: "The PEM private key of --tls-cert."),
        OptionSpec(
            "--stun", .value, "HOST:PORT", section: live,
            help: "STUN server for a --join/--whep connection (server-reflexive\n"
                + "candidates); host candidates alone work on one network."),
        OptionSpec(
            "--listen", .repeatable, "HOST:PORT", section: live,
            help: "Receive Opus RTP (and RTCP on the same port) on this UDP address\n"
                + "(127.0.0.1:25000, localhost:25000, [::1]:25000, :25000; a host name\n"
                + "is resolved once, IPv4 first). Repeatable. Every SSRC is a\n"
                + "track: named by --sdp/--room, otherwise ssrc-<hex>. An undescribed\n"
                + "room accepts plain RTP from any source and SSRC; see --allow."),
        OptionSpec(
            "--sdp", .value, "FILE", section: live,
            help: "The room as SDP (RFC 8866), e.g. what ffmpeg -sdp_file writes: each\n"
                + "m=audio port is listened on; a=label/a=ssrc/a=mid name participants."),
        OptionSpec("--room", .value, "FILE", section: live, help: "The room as JSON (see docs/ROOM-FILE.md)."),
        OptionSpec(
            "--srtp", .repeatable, "NAME=SUITE:env:VAR", section: live,
            help: "SRTP key of participant NAME of --sdp/--room (as --dry-run names\n"
                + "it), read from environment variable VAR: SUITE an a=crypto suite\n"
                + "or Janus's 32/80, VAR holding base64 key||salt. NAME=SUITE:KEY\n"
                + "takes the base64 itself, but anyone on the machine sees a command\n"
                + "line (ps): prefer env. Repeatable. Keys are never shown."),
        OptionSpec(
            "--allow", .repeatable, "ADDR[/PREFIX]", section: live,
            help: "Accept packets only from these sources (192.0.2.7, 10.0.0.0/8,\n"
                + "2001:db8::/32; with a room file's allow: either). Others are\n"
                + "dropped and counted before parsing. Repeatable. Default: anyone."),
        OptionSpec(
            "--discover", .flag, section: live,
            help: "Also record SSRCs the --sdp/--room did not name on a port it\n"
                + "describes with SSRCs (default: only the named ones)."),
        OptionSpec(
            "--max-tracks", .value, "N", section: live,
            help: "Most tracks (default 64): a flood of SSRCs cannot exhaust memory."),
        OptionSpec(
            "--record-delay", .value, "MS", section: live,
            help: "How long after a stream's least-delayed packets its audio goes into\n"
                + "the files (default 2000, 20-5000). The files never move with jitter:\n"
                + "every packet arriving within this delay is decoded, a lost one is\n"
                + "concealed whole. A stop drains it (files run MS longer)."),
        OptionSpec(
            "--jitter-ms", .value, "N", section: live,
            help: "Live playout delay in milliseconds (default 60), for what is heard\n"
                + "(--play, --agent): the initial and smallest; it adapts to the\n"
                + "network's jitter up to --jitter-max-ms, only in silence, and never\n"
                + "moves the files (see docs/CLI.md)."),
        OptionSpec(
            "--jitter-max-ms", .value, "N", section: live,
            help: "Largest adaptive live delay in milliseconds (default 200)."),
        OptionSpec("--jitter-fixed", .flag, section: live, help: "Keep the live delay at --jitter-ms (no adaptation)."),
        OptionSpec(
            "--leave-after", .value, "S", section: live,
            help: "Seconds without packets before a participant counts as left\n"
                + "(default 5); their file keeps the timeline (silence)."),
        OptionSpec(
            "--duration", .value, "S", section: live,
            help: "Receive for S seconds of room time, then drain the record delay\n"
                + "(otherwise: Ctrl-C / SIGTERM)."),
        OptionSpec(
            "--realtime", .flag, section: live,
            help: "Play --file tracks at real time (a live clock), e.g. beside live ones."),
        OptionSpec(
            "--realtime-priority", .optionalValue(default: "10"), "[N]",
            section: live,
            help: "Run the room clock and render threads under SCHED_FIFO priority N\n"
                + "(1-99, default 10; the receive thread one below) and lock memory,\n"
                + "when permitted (CAP_SYS_NICE or ulimit -r; ulimit -l unlimited);\n"
                + "otherwise one warning line."),
        OptionSpec(
            "--mic", .optionalValue(default: "default"), "[DEVICE]", section: live,
            help: "Capture an ALSA device (default: \"default\") as a live track."),
        OptionSpec("--mic-name", .value, "NAME", section: live, help: "The microphone's track name (default: local)."),
        OptionSpec(
            "--agent", .flag, section: agent,
            help: "Attach an agent: it hears the room's humans (a mix-minus, after their\n"
                + "mute/volume/solo), answers by voice, and its voice is the track\n"
                + "'agent' (agent.wav, the mix, playback). Needs OPENAI_API_KEY (never\n"
                + "printed or written). The room then runs on the real-time clock until\n"
                + "Ctrl-C or --duration. Transcripts go to DIR/transcript.jsonl."),
        OptionSpec(
            "--agent-instructions", .value, "FILE", section: agent,
            help: "The agent's instructions (see Samples/agents/)."),
        OptionSpec(
            "--agent-voice", .value, "V", section: agent,
            help: "alloy, ash, ballad, coral, echo, sage, shimmer, verse, marin (default),\n"
                + "cedar, or a custom voice's id (voice_...)."),
        OptionSpec(
            "--agent-hears", .value, "all|NAME,...", section: agent,
            help: "Which tracks the agent hears (default all humans)."),
        OptionSpec(
            "--agent-send", .value, "rtp://HOST:PORT", section: agent,
            help: "Also send the agent's voice as Opus RTP (payload type 111), e.g. into\n"
                + "the SFU or PBX the call runs on."),
        OptionSpec(
            "--agent-publish", .flag, section: agent,
            help: "Publish the agent's voice into the --join room as a publisher named\n"
                + "agent (WebRTC), so every participant hears it."),
        OptionSpec(
            "--agent-model", .value, "M", section: agent,
            help: "Realtime model (default \(RealtimeSessionSettings.defaultModel))."),
        OptionSpec(
            "--agent-url", .value, "URL", section: agent,
            help: "WebSocket URL (default wss://api.openai.com/v1/realtime?model=M)."),
        OptionSpec(
            "--agent-tools", .value, "FILE", section: agent,
            help: "The agent's own function tools: a JSON array of {name, description,\n"
                + "parameters, command: [program, args...], timeout_s}; a call runs the\n"
                + "command, arguments JSON on stdin, its stdout the result (docs/AGENT.md)."),
        OptionSpec(
            "--agent-azure", .flag, section: agent,
            help: "Azure OpenAI (implied by an --agent-url under *.openai.azure.com): the\n"
                + "key from AZURE_OPENAI_API_KEY, sent in the api-key header."),
        OptionSpec(
            "--agent-vad-threshold", .value, "X", section: agent, help: "Server VAD threshold 0...1 (default 0.5)."),
        OptionSpec(
            "--agent-vad-silence-ms", .value, "N", section: agent, help: "Silence that ends a turn (default 500)."),
        OptionSpec(
            "--agent-vad", .value, "server|semantic", section: agent,
            help: "Turn detection: server (level and silence, default) or semantic (a\n"
                + "model judges whether the speaker is done; fewer false turns in a room)."),
        OptionSpec(
            "--agent-vad-eagerness", .value, "E", section: agent,
            help: "Semantic VAD: low, medium, high or auto (default auto)."),
        OptionSpec(
            "--agent-idle-timeout-ms", .value, "N", section: agent,
            help: "Server VAD: after N ms of silence the model speaks up (default: never)."),
        OptionSpec(
            "--agent-noise-reduction", .value, "far_field|near_field|none", section: agent,
            help: "Noise reduction of what the agent hears (default far_field)."),
        OptionSpec(
            "--agent-transcription-language", .value, "LANG", section: agent,
            help: "The language of what it hears, ISO-639-1, for its transcription."),
        OptionSpec(
            "--agent-transcription-prompt", .value, "TEXT", section: agent,
            help: "Words its transcription should expect (names, terms)."),
        OptionSpec(
            "--agent-transcription", .value, "MODEL|none", section: agent,
            help: "Transcription of what the agent hears (default gpt-4o-mini-transcribe)."),
        OptionSpec(
            "--agent-chunk-ms", .value, "N", section: agent,
            help: "Audio per input_audio_buffer.append, 20...100 ms (default 40)."),
        OptionSpec(
            "--agent-pipeline", .flag, section: pipeline,
            help: "The agent that knows who is speaking, instead of --agent: every\n"
                + "speaker's finished turn (--transcribe, implied) goes to a chat model\n"
                + "under the speaker's name; it answers after a pause or when addressed\n"
                + "as 'agent', spoken sentence by sentence as the 'agent' track (as\n"
                + "--agent's: agent.wav, the mix, --agent-send, roomtap agent ...).\n"
                + "Talking over it stops it. Needs OPENAI_API_KEY (never printed)."),
        OptionSpec(
            "--agent-base-url", .value, "URL", section: pipeline,
            help: "An OpenAI-compatible API (default https://api.openai.com/v1): POST\n"
                + "URL/chat/completions (streamed) and URL/audio/speech (pcm)."),
        OptionSpec(
            "--agent-chat-model", .value, "M", section: pipeline, help: "The chat model (default gpt-4.1-mini)."),
        OptionSpec(
            "--agent-tts-model", .value, "M", section: pipeline, help: "The speech model (default gpt-4o-mini-tts)."),
        OptionSpec(
            "--agent-turn-silence-ms", .value, "N", section: pipeline,
            help: "Answer once no new turn came for N ms, 100...10000 (default 700)."),
        OptionSpec(
            "--transcribe", .flag, section: transcription,
            help: "Transcribe every speaker on their own: each speaker's track (as\n"
                + "recorded) goes to a transcription session of its own, only while they\n"
                + "talk (a local voice gate: silence is never sent), so every line of\n"
                + "DIR/transcript.jsonl is that speaker's, at the times their file holds\n"
                + "the words. With or without --agent. Needs OPENAI_API_KEY. Runs at\n"
                + "real time (files as with --realtime)."),
        OptionSpec(
            "--transcribe-model", .value, "M", section: transcription,
            help: "Transcription model (default \(RealtimeTranscriptionSettings.defaultModel))."),
        OptionSpec(
            "--transcribe-language", .value, "LANG", section: transcription,
            help: "The speakers' language, ISO-639-1 (e.g. en; default: detected)."),
        OptionSpec(
            "--transcribe-prompt", .value, "TEXT", section: transcription,
            help: "Words to expect (names, terms), given to the model."),
        OptionSpec(
            "--transcribe-url", .value, "URL", section: transcription,
            help: "WebSocket URL (default wss://api.openai.com/v1/realtime?intent=\n"
                + "transcription; a host under *.openai.azure.com uses AZURE_OPENAI_API_KEY)."),
        OptionSpec(
            "--control", .value, "PATH", section: playback,
            help: "The control socket (default: $ROOMTAP_CONTROL, else a socket of this\n"
                + "recorder's own, rec-PID.sock in $XDG_RUNTIME_DIR/roomtap, else in\n"
                + "/tmp/roomtap-UID). Opened whenever the room runs on the real-time clock\n"
                + "(live rooms, --realtime); --control also opens it for an offline room.\n"
                + "Other roomtap commands (list, stop, tracks, mute, volume, solo, watch)\n"
                + "talk to it."),
        OptionSpec(
            "--play", .optionalValue(default: "default"), "[DEVICE]", section: playback,
            help: "Play the mix through ALSA (default device: \"default\"), as heard:\n"
                + "after mute, volume and solo, at real time (files are paced as with\n"
                + "--realtime). Underruns are recovered and counted. A DEVICE is taken\n"
                + "from --play=DEVICE, or from the next argument unless it starts with '-'."),
        OptionSpec(
            "--play-track", .value, "NAME", section: playback,
            help: "Play this track instead of the mix (implies --play)."),
    ]
}
