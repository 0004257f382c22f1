/// The prose of `roomtap export` and `roomtap transcript` (their OPTIONS come from their tables).
extension Help {
    static let exportIntro = """
        OVERVIEW: Convert a finished recording: FLAC, Opus, any rate, one multichannel file, a
        normalized mix.

        Reads DIR/room.json and the WAVs of a recording (roomtap record --out DIR) and writes every
        speaker and the mix to OUT/<name>.<format> at --rate, measuring each file's integrated
        loudness (EBU R 128, LUFS) and true peak (dBTP) with libebur128. --multichannel adds one
        file with a channel per speaker; --normalize re-makes the mix with every speaker at one
        loudness. The report goes to OUT/room.json (OUT/export.json when OUT is DIR). Nothing is
        overwritten without --force, an input never; everything is checked before the first file
        is created. A live call records at full quality with the least work; export cooks it after.

        USAGE: roomtap export DIR [--out OUT] [--format wav|flac|opus] [--rate HZ] [--bitrate BPS]
                              [--multichannel FILE] [--normalize LUFS] [--force]


        """

    static let transcriptIntro = """
        OVERVIEW: Turn an agent's transcript into subtitles (WebVTT, SRT), text or Audacity labels.

        Reads transcript.jsonl (DIR/transcript.jsonl of a recording made with --agent, or the file
        itself; one {"start", "end", "speaker", "text"} per line, times in room seconds) and writes
        its lines in start order as WebVTT cues with the speakers as voices (<v alice>), SubRip
        cues, plain text, or an Audacity label track, to standard output or --out FILE.

        USAGE: roomtap transcript DIR|FILE [--format vtt|srt|txt|audacity] [--out FILE] [--force]


        """
}
