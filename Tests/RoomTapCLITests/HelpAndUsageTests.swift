import Foundation
import RoomTapTestSupport
import Testing

@Suite("CLI: help, version and usage errors")
struct HelpAndUsageTests {
    /// On the binary: the executable's wiring (stdout flushed at exit, status 0).
    @Test func versionPrintsNameAndVersion() throws {
        let outcome = try roomtapBinary(["--version"], expect: 0)
        #expect(outcome.stdout.trimmingCharacters(in: .whitespacesAndNewlines).hasPrefix("roomtap 0."))
    }

    @Test func helpListsTheCommands() throws {
        let outcome = try roomtap(["--help"], expect: 0)
        for command in ["record", "repair", "help"] { #expect(outcome.stdout.contains("  \(command) ")) }
        #expect(outcome.stderr.isEmpty)
    }

    @Test func helpRecordEqualsRecordHelp() throws {
        let a = try roomtap(["help", "record"], expect: 0)
        let b = try roomtap(["record", "--help"], expect: 0)
        let c = try roomtap(["record", "-h"], expect: 0)
        #expect(a.stdout == b.stdout)
        #expect(b.stdout == c.stdout)
        #expect(a.stdout.contains("--file NAME=PATH[@SECONDS]"))
        #expect(a.stdout.contains("--force"))
    }

    @Test func repairHelp() throws {
        let outcome = try roomtap(["repair", "--help"], expect: 0)
        #expect(outcome.stdout.contains("USAGE: roomtap repair FILE..."))
    }

    /// record --help says what an undescribed room accepts, and how to narrow it.
    @Test func recordHelpSaysWhoMaySend() throws {
        let outcome = try roomtap(["record", "--help"], expect: 0)
        #expect(
            outcome.stdout.contains(
                """
                Who may send. A room nobody described (--listen only) records plain RTP from any source,
                every SSRC a track (up to --max-tracks).
                """), "\(outcome.stdout)")
        #expect(
            outcome.stdout.contains(
                """
                  --allow ADDR[/PREFIX]
                                  Accept packets only from these sources (192.0.2.7, 10.0.0.0/8,
                """), "\(outcome.stdout)")
        #expect(outcome.stdout.contains("--discover"))
        // Keys outside the description, and why the environment is the place for them.
        #expect(
            outcome.stdout.contains(
                """
                  --srtp NAME=SUITE:env:VAR
                                  SRTP key of participant NAME of --sdp/--room (as --dry-run names
                """), "\(outcome.stdout)")
        #expect(outcome.stdout.contains("line (ps): prefer env."), "\(outcome.stdout)")
        #expect(outcome.stdout.contains("or --srtp (best through the environment: a command line\nis visible in ps)"))
    }

    /// A snapshot: the prose from Help.swift, the OPTIONS section generated from CommandTable.
    @Test func timelineHelpSnapshot() throws {
        let outcome = try roomtap(["timeline", "--help"], expect: 0)
        #expect(
            outcome.stdout == """
                OVERVIEW: Draw who spoke when in a recording, as an SVG.

                Reads DIR/room.json and the speaker WAVs of a finished recording (roomtap record --out DIR)
                and draws one lane per speaker (the mix is left out) on the room's time axis: a bar where
                the speaker talks (10 ms frames at -45 dBFS or louder; pauses up to 200 ms bridged, bursts
                under 100 ms ignored), with the times as tooltips. Track controls listed in room.json (mute,
                volume, solo) are drawn as markers. Open the file in a browser.

                USAGE: roomtap timeline DIR [--out FILE] [--force]

                OPTIONS:
                  -o, --out FILE  Where to write the SVG (default DIR/timeline.svg).
                  -f, --force     Overwrite FILE if it exists.
                  -h, --help      Show this help.

                """)
    }

    /// A snapshot: transcript's prose and generated OPTIONS (a label longer than its column).
    @Test func transcriptHelpSnapshot() throws {
        let outcome = try roomtap(["transcript", "--help"], expect: 0)
        #expect(
            outcome.stdout.hasSuffix(
                """
                USAGE: roomtap transcript DIR|FILE [--format vtt|srt|txt|audacity] [--out FILE] [--force]

                OPTIONS:
                  --format vtt|srt|txt|audacity
                                  vtt (default): WebVTT, speakers as voices (<v alice>); srt: SubRip;
                                  txt: [time] speaker: text; audacity: an Audacity label track.
                  -o, --out FILE  Write to FILE instead of standard output.
                  -f, --force     Overwrite FILE if it exists.
                  -h, --help      Show this help.

                """))
        let export = try roomtap(["help", "export"], expect: 0)
        for option in ["--multichannel FILE", "--normalize LUFS", "--format wav|flac|opus", "--rate HZ"] {
            #expect(export.stdout.contains("  \(option)"), "export --help lists \(option)")
        }
    }

    /// A snapshot of a generated OPTIONS section with a wrapped help text, between prose.
    @Test func muteHelpOptionsSnapshot() throws {
        let outcome = try roomtap(["mute", "--help"], expect: 0)
        #expect(
            outcome.stdout.hasSuffix(
                """
                Solo: the mix and playback hear only the named tracks; unsolo restores.

                status DIR works on a finished recording too: its room.json (state, length, tracks) and
                its upload (DIR/upload-journal.json): what is uploaded, pending, failed.

                OPTIONS:
                  --dir DIR       The recorder whose output directory is DIR (default: the only
                                  recorder running).
                  --control PATH  The recorder's control socket (default as for roomtap record).
                  --json          Print the recorder's reply as JSON (tracks, status).
                  --scope SCOPE   heard (default): the mix, playback, the agent; record: the speaker's
                                  own file and the recorded mix; all: both.
                  --all           Every speaker (not the mixes) instead of NAME...
                  -h, --help      Show this help.

                Without --dir or --control (or $ROOMTAP_CONTROL) the command talks to the only recorder
                running (see roomtap list); with several it names them and asks which (exit 1). With no
                recorder running: "no recorder is running ...; start one with roomtap record", exit 1.
                The protocol (one JSON object per line) is in docs/CONTROL-PROTOCOL.md.

                """), "\(outcome.stdout)")
    }

    @Test(arguments: [
        (["frobnicate"], "unknown command 'frobnicate'"),
        (["record", "--out", "x"], "no speakers"),
        (["record", "--file", "a=Samples/room/alice.opus"], "no output directory"),
        (["record", "--file", "=alice.opus", "--out", "x"], "must be NAME=PATH"),
        (["record", "--file", "-", "--out", "x"], "name the track: NAME=-"),
        (["record", "--file", "a=x.opus@-3", "--out", "x"], "offset must be"),
        (["record", "--file", "a=x.opus", "--out", "x", "--channels", "3"], "--channels must be 1 or 2"),
        (["record", "--file", "a=x.opus", "--out", "x", "--loud"], "unknown option '--loud'"),
        (["record", "--file", "a=x.opus", "--out", "x", "--out", "y"], "given 2 times"),
        (["record", "--file", "a=x.opus", "--out"], "needs a value"),
        (["record", "--file", "a=x.opus", "--out", "x", "stray"], "unexpected argument 'stray'"),
        (["repair"], "no files"),
        (["help", "nothing"], "no help for 'nothing'"),
    ])
    func usageErrorsExit64WithOneLine(arguments: [String], message: String) throws {
        let outcome = try roomtap(arguments, expect: 64)
        #expect(outcome.stderrLines.count == 1, "stderr: \(outcome.stderr)")
        #expect(outcome.stderr.hasPrefix("roomtap: error: "))
        #expect(outcome.stderr.contains(message), "stderr: \(outcome.stderr)")
        #expect(outcome.stderr.contains("--help"))
        #expect(outcome.stdout.isEmpty)
    }

    /// On the binary: the process's exit status 64 and its stderr.
    @Test func noArgumentsIsAUsageError() throws {
        let outcome = try roomtapBinary([], expect: 64)
        #expect(outcome.stderr.contains("USAGE"))
    }
}
