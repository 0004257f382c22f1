import Foundation
import RoomTapTestSupport
import Testing

@Suite("CLI: help, version and usage errors")
struct HelpAndUsageTests {
    @Test func versionPrintsNameAndVersion() throws {
        let outcome = try roomtap(["--version"], expect: 0)
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

    @Test(arguments: [
        (["frobnicate"], "unknown command 'frobnicate'"),
        (["record", "--out", "x"], "no speakers"),
        (["record", "--file", "a=Samples/room/alice.opus"], "no output directory"),
        (["record", "--file", "alice.opus", "--out", "x"], "must be NAME=PATH"),
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

    @Test func noArgumentsIsAUsageError() throws {
        let outcome = try roomtap([], expect: 64)
        #expect(outcome.stderr.contains("USAGE"))
    }
}
