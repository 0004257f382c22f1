/// Help texts: the prose of each command, with the OPTIONS sections and the top-level COMMANDS
/// list generated from ``CommandTable`` (snapshot-tested in RoomTapCLITests).
enum Help {
    /// The help of `roomtap <command>`: its intro, its options by section, its notes.
    static func text(for command: CommandSpec) -> String {
        if command.name == "help" { return topLevel }
        var sections: [(title: String, options: [OptionSpec])] = []
        for option in command.options where option.long != "--help" {
            if let i = sections.firstIndex(where: { $0.title == option.section }) {
                sections[i].options.append(option)
            } else {
                sections.append((option.section, [option]))
            }
        }
        if let i = sections.firstIndex(where: { $0.title == "OPTIONS" }) {
            sections[i].options.append(.help)
        } else {
            sections.insert(("OPTIONS", [.help]), at: 0)
        }
        let options = sections.map { "\($0.title):\n" + $0.options.map(render).joined() }
        return command.helpIntro + options.joined(separator: "\n")
            + (command.helpNotes.isEmpty ? "" : "\n" + command.helpNotes)
    }

    /// One option: its label in a 16-column field (or alone on its line when longer), the help
    /// text beside it, continuation lines indented under it.
    static func render(_ option: OptionSpec) -> String {
        let indent = String(repeating: " ", count: 18)
        let lines = option.help.split(separator: "\n", omittingEmptySubsequences: false)
        let label = option.label
        var text =
            label.count < 16
            ? "  " + label.padding(toLength: 16, withPad: " ", startingAt: 0) + lines[0] + "\n"
            : "  " + label + "\n" + indent + lines[0] + "\n"
        for line in lines.dropFirst() { text += indent + line + "\n" }
        return text
    }

    /// `roomtap --help`: the commands of ``CommandTable``, by group.
    static var topLevel: String {
        let titles: [(CommandGroup, String)] = [
            (.main, "COMMANDS:"), (.control, "WHILE A RECORDER RUNS (over its control socket):"),
            (.fleet, "A FLEET OF RECORDERS (rooms on Redis; see docs/OPERATIONS.md):"),
            (.other, "MORE:"),
        ]
        let width = (CommandTable.all.map(\.name.count).max() ?? 0) + 2
        var text = """
            roomtap — record and route the audio of a multi-party call room

            USAGE: roomtap <command> [options]


            """
        for (group, title) in titles {
            let commands = CommandTable.all.filter { $0.group == group }
            guard !commands.isEmpty else { continue }
            text += title + "\n"
            for command in commands {
                text +=
                    "  " + command.name.padding(toLength: width, withPad: " ", startingAt: 0) + command.summary + "\n"
            }
            text += "\n"
        }
        return text + """
            OPTIONS:
              -h, --help    Show this help
              --version     Show the version

            Exit status: 0 success, 1 failure, 64 usage error.

            """
    }

    static let recordIntro = """
        OVERVIEW: Record every speaker of a room to a time-aligned WAV each.

        Speakers come from files of Opus audio (--file: Ogg Opus, Janus .mjr, WebM, Matroska,
        MP4; --janus-room; --sora-recording) or live, as RTP from an SFU or PBX (--listen,
        --sdp, --room): Opus, or G.711 (PCMU, PCMA), G.722 or L16 where the SDP's a=rtpmap or
        the room file's "codec" says so (docs/ROOM-FILE.md); from Sora's audio streaming
        (--sora-audio-streaming: each Sora connection's Opus over HTTP/2, placed by its
        timestamps; sora.conf needs audio_streaming_header = true; docs/INTEGRATIONS.md). All
        speakers share one room timeline that starts at 0: a file starts at room time 0 or at
        its '@' offset (seconds); Janus recordings (and, with --align wallclock, tagged
        WebM/Matroska/MP4 files) line up by their own wall-clock times; a Sora recording starts
        at the recording's start, each of its files where its JSON puts it; a live participant is
        placed by its RTP timestamps from its first packet on.
        Every WAV covers the whole room, start to end, with silence where its speaker is absent,
        so all files of a room have exactly the same number of samples (48 kHz, 16-bit).

        USAGE: roomtap record --file NAME=PATH[@SECONDS] ... --out DIR [options]
               roomtap record --janus-room DIR --out DIR [options]
               roomtap record --sora-recording DIR [--sora-name-key KEY] --out DIR [options]
               roomtap record --listen HOST:PORT ... | --sdp FILE | --room FILE --out DIR [options]
               roomtap record --sora-audio-streaming HOST:PORT --out DIR [options]


        """

    static let recordNotes = """
        Names are sanitised to [A-Za-z0-9._-] (other characters become '_'), so no file can land
        outside DIR; two tracks may not share a name (case-folded), and mix/agent are reserved
        when roomtap makes those tracks. Nothing is overwritten unless --force is given, never
        through a symbolic link and never an input: the command checks every output path it
        knows before it creates anything, and a live participant who appears later gets a name
        no file in DIR has yet.

        Who may send. A room nobody described (--listen only) records plain RTP from any source,
        every SSRC a track (up to --max-tracks). --allow (or a room file's allow) limits the
        sources; a room described with SSRCs (--sdp, --room) records those SSRCs only, unless
        --discover. SRTP (RFC 3711) takes its keys from the SDP's a=crypto lines, the room
        file's srtp (docs/ROOM-FILE.md) or --srtp (best through the environment: a command line
        is visible in ps); a packet failing authentication or replay protection is dropped.
        Whatever is dropped is counted per listen address in room.json (notAllowed,
        srtpRejected), makes no track and never reaches a parser. Keys are never shown.

        A corrupt stretch inside a file (bad pages, undecodable packets) is concealed with Opus
        packet-loss concealment and counted; the timeline is kept. Live loss is recovered from
        Opus in-band FEC when the next packet carries it, concealed otherwise, and counted per
        track in room.json. Progress goes to stderr, the summary table to stdout. Ctrl-C stops the
        room and finalises every file (exit 0). room.json is kept current while recording
        ("state": "recording"; after a kill -9, roomtap repair DIR); a file that cannot be
        written (disk full) keeps what it got, the others go on, and room.json lists the error
        under "errors" (exit 1). A listen address that gets nothing for 3 s is warned about.

        EXAMPLES:
          roomtap record --file alice=a.opus --file bob=b.opus@2.5 --out out/standup --mix
          roomtap record --sdp room.sdp --out out/call --mix --duration 3600

        """

    static let repairIntro = """
        OVERVIEW: Fix WAV, FLAC and Ogg Opus files cut short.

        A recorder killed mid-write (kill -9, power loss, full disk) leaves WAV files whose header
        may understate the audio after it (roomtap refreshes it every second). repair rewrites the
        RIFF/RF64 sizes so every complete sample frame in the file is readable, and trims a
        trailing partial sample frame. The audio bytes are not touched. Running it twice is safe.

        Given a recording's directory (roomtap record --out DIR), it repairs every WAV in it and
        then brings DIR/room.json up to what the files hold: each track's samples from its file,
        the room's length from the longest, "state": "repaired". room.json is kept current while
        recording, so after a kill -9 it still says which file is whose ("state": "recording").
        A directory without room.json (an older recording) gets its WAVs repaired only. Do not
        repair a recording that is still running. FLAC files (record --format flac) are repaired
        too: STREAMINFO gets the number of samples their whole frames hold and their MD5. Ogg
        Opus files (record --format opus) are cut after their last whole page, which is marked
        the end of the stream; its granule position gives their length.

        USAGE: roomtap repair FILE...
               roomtap repair DIR


        """

    static let timelineIntro = """
        OVERVIEW: Draw who spoke when in a recording, as an SVG.

        Reads DIR/room.json and the speaker WAVs of a finished recording (roomtap record --out DIR)
        and draws one lane per speaker (the mix is left out) on the room's time axis: a bar where
        the speaker talks (10 ms frames at -45 dBFS or louder; pauses up to 200 ms bridged, bursts
        under 100 ms ignored), with the times as tooltips. Track controls listed in room.json (mute,
        volume, solo) are drawn as markers. Open the file in a browser.

        USAGE: roomtap timeline DIR [--out FILE] [--force]


        """

    static let viewIntro = """
        OVERVIEW: Write the review page of a recording: DIR/index.html.

        Reads DIR/room.json, every track's file and DIR/transcript.jsonl (when the room had an
        agent) and writes one self-contained page (no network): a lane per speaker, then the agent
        and the mix, with the level over time (100 peaks a second, computed here, so hours-long
        rooms open at once), talk spans, mutes and volume changes from room.json, stretches without
        sound and gaps; the transcript under the lanes, searchable. The page plays the room's own
        files next to it, every lane in sync (Web Audio): click a lane to play from there; mute,
        solo and volume per lane while it plays; space, arrows, Home/End, + and - for zoom.

        Opened from disk, where browsers forbid a page to read the files beside it, each lane plays
        through an audio element (in sync within tens of ms); for sample-exact playback serve DIR
        (python3 -m http.server --directory DIR) or start Chromium with
        --allow-file-access-from-files. Run it again after repair to bring the page up to date.

        USAGE: roomtap view DIR [--force] [--open]


        """

    static let controlIntro = """
        OVERVIEW: Control a running recorder (roomtap record) from another terminal.

        USAGE: roomtap tracks [--json]
               roomtap status [DIR] [--json]
               roomtap mute NAME... | --all [--scope heard|record|all]
               roomtap unmute NAME... | --all [--scope heard|record|all]
               roomtap volume NAME [LEVEL] [--scope heard|record|all]
               roomtap solo NAME...
               roomtap unsolo

        LEVEL is a linear gain from 0 to 10 (1 is unity, 0 silent, like the Sora SDK's volume) or
        a level in dB: 0dB or -inf dB set it, and as in pactl a signed one such as +3dB or -6dB
        changes the volume it has now (clamped to the same range); without LEVEL, volume prints
        the track's volumes. mute and unmute take several names, or --all (every speaker, not the
        mixes). A change takes effect at
        the next 10 ms frame, ramped across it (no click); the reply says the room time.

        Scope: a track has what is heard (the live mix, playback, the agent) and what is recorded
        (its own file and the recorded mix), each with its own mute and volume. mute and volume
        change what is heard unless --scope record (the record only) or all (both) is given.
        Someone who asks to be off the record (mute NAME --scope record) gets silence in their
        file, with the timeline kept, and stays off it until an unmute covering the record:
        unmute without --scope lifts every mute; volume never changes a mute. The reply shows
        both. room.json lists every change with its room time.

        Solo: the mix and playback hear only the named tracks; unsolo restores.

        status DIR works on a finished recording too: its room.json (state, length, tracks) and
        its upload (DIR/upload-journal.json): what is uploaded, pending, failed.


        """

    static let controlNotes = """
        Without --dir or --control (or $ROOMTAP_CONTROL) the command talks to the only recorder
        running (see roomtap list); with several it names them and asks which (exit 1). With no
        recorder running: "no recorder is running ...; start one with roomtap record", exit 1.
        The protocol (one JSON object per line) is in docs/CONTROL-PROTOCOL.md.

        """

    static let watchIntro = """
        OVERVIEW: Watch a running room: level meter and talking indicator per track.

        USAGE: roomtap watch [--dir DIR | --control PATH] [--json]

        On a terminal the view is redrawn in place about 10 times a second. Keys: up/down (or
        k/j) select a track, m mutes or unmutes it, + and - change its volume by 3 dB, 0 sets
        unity, s solos it, u ends the solo, q (or Ctrl-C) quits and restores the terminal.
        Not on a terminal, or with --json, it prints one line per event instead.


        """

    static let agentIntro = """
        OVERVIEW: Talk to the agent of a running room (roomtap record --agent).

        USAGE: roomtap agent say TEXT
               roomtap agent instructions FILE
               roomtap agent mute | unmute

        say sends TEXT into the conversation and asks for a spoken answer (queued while the
        agent is answering). instructions replaces the agent's instructions. mute stops what the
        agent hears without ending its session; unmute resumes.


        """

    static let stopIntro = """
        OVERVIEW: Stop a running recorder as Ctrl-C does, and wait until it has finished.

        USAGE: roomtap stop [--dir DIR | --control PATH]

        The recorder stops its room (a network room first drains its record delay), finalises
        every WAV header and writes room.json; stop waits for that (at most 30 s) and exits 0.
        Without --dir or --control (or $ROOMTAP_CONTROL) it stops the only recorder running;
        with several it names them and asks which (exit 1).


        """

    static let listIntro = """
        OVERVIEW: List the recorders running for you.

        USAGE: roomtap list [--json]

        One line per recorder, oldest first: its output directory, pid, tracks, uptime and control
        socket ("starting" or "stopping" after it while it is not recording yet or any more).
        Recorders are found by their sockets in $XDG_RUNTIME_DIR/roomtap (else /tmp/roomtap-UID);
        a socket left by a recorder killed with kill -9 is removed. A recorder started with
        --control elsewhere is not listed. With none running nothing is printed (with --json: [])
        and a note goes to stderr; exit 0.


        """
}
