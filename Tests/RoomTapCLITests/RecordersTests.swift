import Foundation
import RoomTapAll
import RoomTapCLITestSupport
import RoomTapSync
import RoomTapTestSupport
import Testing

/// Several recorders on one machine: each gets a control socket of its own in the runtime
/// directory, `roomtap list` shows them, the verbs ask which one when there are several, `--dir`
/// picks one, and `roomtap stop` finalises one as Ctrl-C does while the others keep recording.
/// Each test has a runtime directory of its own ($XDG_RUNTIME_DIR), so tests never meet.
@Suite("CLI: several recorders, list and stop")
struct RecordersTests {
    /// A fresh $XDG_RUNTIME_DIR (a short path: socket paths are limited), removed at the end.
    final class Runtime {
        let path: String
        /// Environment for roomtap: this runtime directory, and no $ROOMTAP_CONTROL (empty is unset).
        let environment: [String: String]
        /// Where the recorders' sockets go.
        var sockets: String { path + "/roomtap" }

        init() {
            let n = runtimeCounter.withLock { c -> Int in
                c += 1
                return c
            }
            path = "/tmp/rtr-\(getpid())-\(n)"
            try? FileManager.default.removeItem(atPath: path)
            mkdir(path, 0o700)
            environment = ["XDG_RUNTIME_DIR": path, "ROOMTAP_CONTROL": ""]
        }

        deinit { try? FileManager.default.removeItem(atPath: path) }

        /// The files in the socket directory.
        var socketFiles: [String] { ((try? FileManager.default.contentsOfDirectory(atPath: sockets)) ?? []).sorted() }
    }

    /// A live room recording `alice` into `out` until stopped, with no --control.
    private func startRecorder(_ out: URL, _ runtime: Runtime) throws -> CLIRunner.Running {
        try CLIRunner.start(
            [
                "record", "--listen", "127.0.0.1:\(try freeUDPPort())", "--file", "alice=\(sample("alice"))",
                "--record-delay", "100", "--out", out.path, "--quiet",
            ], environment: runtime.environment)
    }

    private func run(_ arguments: [String], _ runtime: Runtime) throws -> CLIRunner.Outcome {
        try CLIRunner.run(arguments, environment: runtime.environment, timeout: 60)
    }

    /// `roomtap list --json`, parsed (nil when it failed).
    private func list(_ runtime: Runtime) -> [[String: Any]]? {
        guard let outcome = try? run(["list", "--json"], runtime), outcome.status == 0 else { return nil }
        return (try? JSONSerialization.jsonObject(with: Data(outcome.stdout.utf8))) as? [[String: Any]]
    }

    /// Waits until `list` shows `count` recorders recording (each with its room started).
    private func waitForRecorders(_ count: Int, _ runtime: Runtime) -> [[String: Any]] {
        var last: [[String: Any]] = []
        _ = waitUntil(timeout: .seconds(60)) {
            last = list(runtime) ?? []
            return last.count == count && last.allSatisfy { $0["state"] as? String == "recording" }
        }
        return last
    }

    private func absolute(_ url: URL) -> String { url.standardizedFileURL.path }

    /// The WAV's header claims exactly the audio in the file (as after a clean stop).
    private func expectFinalised(_ path: String) throws {
        let size = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        let wav = try WAVFile.inspect(path: path)
        #expect(wav.dataOffset + wav.dataSize == Int64(size), "\(path): header and data agree")
        #expect(wav.riffSize == Int64(size) - 8, "\(path): RIFF size")
        #expect(wav.dataSize > 0, "\(path) has audio")
    }

    @Test func twoRecordersAreListedChosenByDirAndStoppedOneAtATime() throws {
        let runtime = Runtime()
        let outA = try temporaryDirectory("recorderA")
        let outB = try temporaryDirectory("recorderB")
        let a = try startRecorder(outA, runtime)
        defer { if a.isRunning { a.signal(SIGKILL) } }
        _ = waitForRecorders(1, runtime)  // a is the older one: list shows it first
        let b = try startRecorder(outB, runtime)
        defer { if b.isRunning { b.signal(SIGKILL) } }

        // Both start (no collision), each on a socket of its own, and list shows both.
        let listed = waitForRecorders(2, runtime)
        #expect(a.isRunning && b.isRunning)
        #expect(listed.count == 2, "list: \(listed)")
        let byPID = Dictionary(listed.map { (($0["pid"] as? Int) ?? 0, $0) }, uniquingKeysWith: { x, _ in x })
        #expect(byPID[Int(a.pid)]?["dir"] as? String == absolute(outA))
        #expect(byPID[Int(b.pid)]?["dir"] as? String == absolute(outB))
        #expect(byPID[Int(a.pid)]?["socket"] as? String == runtime.sockets + "/rec-\(a.pid).sock")
        #expect(byPID[Int(b.pid)]?["socket"] as? String == runtime.sockets + "/rec-\(b.pid).sock")
        #expect(runtime.socketFiles == ["rec-\(a.pid).sock", "rec-\(b.pid).sock"].sorted())
        let text = try run(["list"], runtime)
        #expect(text.status == 0)
        let lines = text.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 2, "one line per recorder: \(text.stdout)")
        // Oldest first, as documented.
        #expect(lines.first?.hasPrefix(absolute(outA) + "  pid \(a.pid)") == true, "\(text.stdout)")
        #expect(lines.first?.contains("rec-\(a.pid).sock") == true)
        #expect(lines.last?.hasPrefix(absolute(outB) + "  pid \(b.pid)") == true)
        #expect(lines.last?.contains("rec-\(b.pid).sock") == true)
        #expect(listed.first?["pid"] as? Int == Int(a.pid), "list --json is oldest first too: \(listed)")

        // A verb without --control or --dir refuses, naming both.
        let ambiguous = try run(["tracks"], runtime)
        #expect(ambiguous.status == 1)
        #expect(ambiguous.stderrLines.count == 1, "one line: \(ambiguous.stderr)")
        let refusal = ambiguous.stderrLines.first ?? ""
        #expect(refusal.hasPrefix("roomtap: error: 2 recorders are running: "))
        #expect(
            refusal.contains("\(absolute(outA)) (pid \(a.pid))") && refusal.contains("\(absolute(outB)) (pid \(b.pid))")
        )
        #expect(refusal.contains("--dir DIR") && refusal.contains("--control PATH"))
        #expect(ambiguous.stdout.isEmpty)

        // --dir picks the recorder by the directory itself, however it is spelled.
        for (out, pid) in [(outA, a.pid), (outB, b.pid)] {
            let status = try run(["status", "--json", "--dir", out.path + "/."], runtime)
            #expect(status.status == 0, "\(status.stderr)")
            let json = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
            #expect(json?["pid"] as? Int == Int(pid))
            #expect(json?["dir"] as? String == absolute(out))
        }
        let nowhere = try run(["status", "--dir", outA.appendingPathComponent("missing").path], runtime)
        #expect(nowhere.status == 1 && nowhere.stderrLines.count == 1, "\(nowhere.stderr)")
        #expect(nowhere.stderr.contains("no recorder is recording to"))
        let both = try run(["stop", "--dir", outA.path, "--control", "/tmp/x.sock"], runtime)
        #expect(both.status == 64 && both.stderrLines.count == 1, "\(both.stderr)")
        #expect(a.isRunning && b.isRunning, "nothing was stopped by the refusals")

        // stop --dir finalises that recorder alone, and returns once room.json is written.
        let stopA = try run(["stop", "--dir", outA.path], runtime)
        #expect(stopA.status == 0, "\(stopA.stderr)")
        #expect(
            stopA.stdout
                == "stopped the recorder of \(absolute(outA)) (pid \(a.pid)); wrote \(absolute(outA))/room.json\n")
        #expect(state(outA) == "complete", "stop returns once the final room.json is written")
        #expect(a.wait(timeout: 30).status == 0)
        try expectFinalised(outA.appendingPathComponent("alice.wav").path)
        let report = try JSONSerialization.jsonObject(with: Data(contentsOf: outA.appendingPathComponent("room.json")))
        #expect((report as? [String: Any])?["stoppedEarly"] as? Bool == true, "stopped as by Ctrl-C")
        #expect(b.isRunning, "the other recorder keeps recording")
        #expect(state(outB) == "recording", "its room.json is the one kept while recording")
        let left = list(runtime) ?? []
        #expect(left.count == 1 && left.first?["pid"] as? Int == Int(b.pid), "list: \(left)")
        #expect(runtime.socketFiles == ["rec-\(b.pid).sock"], "the stopped recorder's socket is removed")

        // With one left, the verbs and stop need no option.
        let tracks = try run(["tracks", "--json"], runtime)
        #expect(tracks.status == 0 && tracks.stdout.contains("alice"), "\(tracks.stderr)")
        let stopB = try run(["stop"], runtime)
        #expect(stopB.status == 0, "\(stopB.stderr)")
        #expect(state(outB) == "complete")
        #expect(b.wait(timeout: 30).status == 0)
        try expectFinalised(outB.appendingPathComponent("alice.wav").path)
        #expect(runtime.socketFiles.isEmpty)

        // Nothing running: list prints nothing and says so; verbs say so in one line.
        let empty = try run(["list"], runtime)
        #expect(empty.status == 0 && empty.stdout.isEmpty)
        #expect(empty.stderrLines == ["roomtap: no recorder is running (none in \(runtime.sockets))"])
        for verb in [["stop"], ["status"], ["mute", "alice"]] {
            let none = try run(verb, runtime)
            #expect(none.status == 1)
            #expect(
                none.stderrLines == [
                    "roomtap: error: no recorder is running (none in \(runtime.sockets)); start one with roomtap "
                        + "record, or give --control PATH"
                ])
        }
    }

    @Test func stopAsSoonAsTheSocketExistsStillFinishesTheRecording() throws {
        let runtime = Runtime()
        let out = try temporaryDirectory("early")
        let recorder = try startRecorder(out, runtime)
        defer { if recorder.isRunning { recorder.signal(SIGKILL) } }
        // The socket opens before the room starts: a stop then waits for the room, then stops it.
        #expect(waitUntil(timeout: .seconds(60)) { runtime.socketFiles == ["rec-\(recorder.pid).sock"] })
        let stop = try run(["stop"], runtime)
        #expect(stop.status == 0, "\(stop.stderr)")
        #expect(FileManager.default.fileExists(atPath: out.appendingPathComponent("room.json").path))
        #expect(recorder.wait(timeout: 30).status == 0)
        try expectFinalised(out.appendingPathComponent("alice.wav").path)
    }

    @Test func aRecorderKilledWithSIGKILLIsNotListedAndItsSocketIsRemoved() throws {
        let runtime = Runtime()
        let killed = try startRecorder(try temporaryDirectory("killed"), runtime)
        defer { if killed.isRunning { killed.signal(SIGKILL) } }
        #expect(waitForRecorders(1, runtime).first?["pid"] as? Int == Int(killed.pid))
        killed.signal(SIGKILL)
        #expect(killed.wait(timeout: 30).status == -SIGKILL)
        let stale = "rec-\(killed.pid).sock"
        #expect(runtime.socketFiles == [stale], "kill -9 leaves the socket behind")

        // The next recorder removes it before it opens its own.
        let out = try temporaryDirectory("next")
        let next = try startRecorder(out, runtime)
        defer { if next.isRunning { next.signal(SIGKILL) } }
        let own = "rec-\(next.pid).sock"
        #expect(waitUntil(timeout: .seconds(60)) { runtime.socketFiles.contains(own) })
        #expect(runtime.socketFiles == [own], "the stale socket is gone")
        #expect(waitForRecorders(1, runtime).map { $0["pid"] as? Int } == [Int(next.pid)])
        #expect(try run(["stop"], runtime).status == 0)
        #expect(next.wait(timeout: 30).status == 0)

        // And list removes one too, without listing it.
        let again = try startRecorder(try temporaryDirectory("again"), runtime)
        defer { if again.isRunning { again.signal(SIGKILL) } }
        #expect(waitForRecorders(1, runtime).first?["pid"] as? Int == Int(again.pid))
        again.signal(SIGKILL)
        #expect(again.wait(timeout: 30).status == -SIGKILL)
        #expect(runtime.socketFiles == ["rec-\(again.pid).sock"])
        let listed = try run(["list", "--json"], runtime)
        #expect(listed.status == 0 && listed.stdout == "[]\n", "\(listed.stdout) \(listed.stderr)")
        #expect(runtime.socketFiles.isEmpty, "list removed the stale socket")
    }

    /// room.json's `state` in `out` (nil without a readable room.json).
    private func state(_ out: URL) -> String? {
        guard let data = try? Data(contentsOf: out.appendingPathComponent("room.json")) else { return nil }
        return ((try? JSONSerialization.jsonObject(with: data)) as? [String: Any])?["state"] as? String
    }
}

private let runtimeCounter = Locked(0)
