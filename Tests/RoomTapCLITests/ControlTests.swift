import Foundation
import RoomTapAll
import RoomTapCLITestSupport
import RoomTapMediaTestSupport
import RoomTapSync
import RoomTapTestSupport
import Testing

/// Per-stream volume, mute and solo from the CLI while the room runs: `roomtap record --realtime`
/// on the sample room, controlled by `roomtap volume/mute/solo` in other processes; then the mix
/// and the speakers' files are checked against the replies' room times.
@Suite("CLI: controls while the room runs", .serialized)
struct ControlTests {
    /// Environment naming one control socket for the recorder and its clients.
    private func environment() -> [String: String] { ["ROOMTAP_CONTROL": uniqueControlPath()] }

    /// Runs `roomtap ARGS` against the recorder of `env`; returns the reply's JSON (with --json).
    private func control(_ arguments: [String], _ env: [String: String]) throws -> [String: Any] {
        let outcome = try CLIRunner.run(arguments + ["--json"], environment: env, timeout: 20)
        #expect(outcome.status == 0, "roomtap \(arguments): \(outcome.stderr)")
        return try JSONSerialization.jsonObject(with: Data(outcome.stdout.utf8)) as? [String: Any] ?? [:]
    }

    /// Waits until the recorder answers; returns (room time, wall time) of that answer.
    private func waitForRecorder(_ env: [String: String], _ recorder: CLIRunner.Running? = nil) throws -> (Double, Date)
    {
        var answer: (Double, Date)?
        _ = try waitUntil(every: .milliseconds(50)) {  // each look starts a `roomtap status`
            if let recorder, !recorder.isRunning {
                let ended = recorder.wait(timeout: 5)
                throw CLIError("the recorder ended (\(ended.status)) before it answered: \(ended.stderr.suffix(300))")
            }
            let outcome = try CLIRunner.run(["status", "--json"], environment: env, timeout: 20)
            if outcome.status == 0,
                let json = try JSONSerialization.jsonObject(with: Data(outcome.stdout.utf8)) as? [String: Any],
                let time = json["room_time"] as? Double
            {
                answer = (time, Date())
            }
            return answer != nil
        }
        guard let answer else { throw CLIError("the recorder never answered on its control socket") }
        return answer
    }

    /// Starts a recorder of alice at real time for `seconds` on the control socket of `env` and
    /// waits until it answers.
    /// Starts a real-time room of alice for `seconds`; with `untilStopped`, a silent-until-late
    /// second speaker (`later`, placed at 300 s) keeps the room running until the test stops it,
    /// however slowly a loaded machine runs the test's steps.
    private func startAlice(seconds: String, untilStopped: Bool = false, _ env: [String: String]) throws
        -> CLIRunner.Running
    {
        let keepAlive = untilStopped ? ["--file", "later=\(sample("bob"))@300"] : []
        let recorder = try CLIRunner.start(
            [
                "record", "--file", "alice=\(sample("alice"))", "--realtime", "--duration", seconds,
                "--out", try temporaryDirectory().path, "--quiet",
            ] + keepAlive, environment: env)
        _ = try waitForRecorder(env, recorder)
        return recorder
    }

    struct CLIError: Error, CustomStringConvertible {
        let description: String
        init(_ d: String) { description = d }
    }

    @Test func volumeMuteAndSoloLandWhereTheRepliesSayAndFilesKeepTheRawSpeaker() throws {
        let out = try temporaryDirectory()
        let env = environment()
        let recorder = try CLIRunner.start(
            [
                "record", "--file", "alice=\(sample("alice"))", "--file", "bob=\(sample("bob"))@2.5", "--realtime",
                "--mix", "--duration", "10", "--out", out.path, "--quiet",
            ], environment: env)
        let (startTime, startWall) = try waitForRecorder(env)
        func at(_ roomTime: Double) {
            let wait = roomTime - (startTime + Date().timeIntervalSince(startWall))
            if wait > 0 { usleep(UInt32(wait * 1e6)) }  // the test's own pacing on the room timeline
        }
        func time(_ reply: [String: Any]) -> Double { reply["room_time"] as? Double ?? -1 }
        at(1.0)
        let volume = time(try control(["volume", "alice", "0.5"], env))
        at(3.4)
        let muteBob = time(try control(["mute", "bob"], env))
        at(4.2)
        let unmuteBob = time(try control(["unmute", "bob"], env))
        at(4.7)
        let offRecord = time(try control(["mute", "alice", "--scope", "record"], env))
        at(5.2)
        let solo = time(try control(["solo", "bob"], env))
        at(5.8)
        let unsolo = time(try control(["unsolo"], env))
        let tracks = try control(["tracks"], env)["tracks"] as? [[String: Any]] ?? []
        let alice = tracks.first { $0["name"] as? String == "alice" }
        #expect(alice?["record_muted"] as? Bool == true, "off the record")
        #expect(alice?["muted"] as? Bool == false, "a record mute leaves what is heard alone")
        #expect(alice?["volume"] as? Double == 0.5)
        let outcome = recorder.wait(timeout: 30)
        #expect(outcome.status == 0, "stderr: \(outcome.stderr)")
        let times = [volume, muteBob, unmuteBob, offRecord, solo, unsolo]
        #expect(zip(times, times.dropFirst()).allSatisfy { $0 < $1 }, "replies in order: \(times)")

        let a = try WAVFile.readSamples(path: out.appendingPathComponent("alice.wav").path).1
        let b = try WAVFile.readSamples(path: out.appendingPathComponent("bob.wav").path).1
        let mix = try WAVFile.readSamples(path: out.appendingPathComponent("mix.wav").path).1
        #expect(a.count == 480_000 && b.count == 480_000 && mix.count == 480_000, "room length (10 s)")

        // The speakers' files: raw (reference decode) except alice after her record-scope mute.
        // The references padded with silence to the room's length (alice ends at 9 s; the room at 10 s).
        let pad = { (x: [Int16]) in x + [Int16](repeating: 0, count: max(0, 480_000 - x.count)) }
        let refA = pad(try referenceDecode(of: sample("alice")))
        let refB = pad([Int16](repeating: 0, count: 120_000) + (try referenceDecode(of: sample("bob"))))
        let frame = { (t: Double) in Int((t * 100).rounded()) }
        let offFrame = frame(offRecord)
        // (Bools: a failing comparison of arrays would print seconds of audio.)
        let bobRaw = b == Array(refB.prefix(480_000))
        #expect(bobRaw, "bob's file is raw, muted span included")
        let aliceRaw = Array(a[0..<((offFrame - 1) * 480)]) == Array(refA[0..<((offFrame - 1) * 480)])
        #expect(aliceRaw, "alice raw until off the record")
        #expect(a[((offFrame + 2) * 480)...].allSatisfy { $0 == 0 }, "off the record: silence in her own file")

        // The mix: between changes (one frame either side of each reply's time left out for the
        // ramp), exactly the heard gains applied to the raw speakers.
        struct Span {
            let from: Double, to: Double, gainA: Float, gainB: Float
        }
        let spans = [
            Span(from: 0, to: volume, gainA: 1, gainB: 1),
            Span(from: volume, to: muteBob, gainA: 0.5, gainB: 1),
            Span(from: muteBob, to: unmuteBob, gainA: 0.5, gainB: 0),
            Span(from: unmuteBob, to: offRecord, gainA: 0.5, gainB: 1),
            Span(from: offRecord, to: solo, gainA: 0, gainB: 1),
            Span(from: solo, to: unsolo, gainA: 0, gainB: 1),
            Span(from: unsolo, to: 10, gainA: 0, gainB: 1),
        ]
        for span in spans {
            let first = span.from == 0 ? 0 : frame(span.from) + 2
            let last = frame(span.to) - 1
            guard first < last else { continue }
            var worst = 0
            for n in (first * 480)..<(last * 480) {
                let expected = (Float(refA[n]) * span.gainA + Float(refB[n]) * span.gainB).rounded()
                worst = max(worst, abs(Int(mix[n]) - Int(expected)))
            }
            #expect(worst <= 1, "mix from \(span.from) to \(span.to) s: off by up to \(worst)")
        }
        // Muted in the mix, yet bob spoke then (the span is not trivially silent).
        let muted = (frame(muteBob) + 2) * 480..<(frame(unmuteBob) - 1) * 480
        #expect(refB[muted].contains { abs($0) > 1_000 }, "bob speaks while muted")

        let report = try JSONSerialization.jsonObject(with: Data(contentsOf: out.appendingPathComponent("room.json")))
        let controls = (report as? [String: Any])?["controls"] as? [[String: Any]] ?? []
        let aliceTrack = ((report as? [String: Any])?["tracks"] as? [[String: Any]])?.first {
            $0["name"] as? String == "alice"
        }
        let mutedFrames = (aliceTrack?["frames"] as? [String: Any])?["muted"] as? Int ?? -1
        // Her file has audio until 9 s (frame 900): muted from just after the mute's ramp to there.
        #expect(
            abs(mutedFrames - (900 - offFrame - 1)) <= 3, "room.json counts alice's off-record frames: \(mutedFrames)")
        #expect(
            controls.map { $0["change"] as? String ?? "" } == ["volume", "mute", "unmute", "mute", "solo", "unsolo"])
        #expect(controls.map { $0["roomTime"] as? Double ?? -1 } == times)
    }

    @Test func clientsWithoutARecorderGetOneClearLine() throws {
        let env = environment()
        for verb in [["tracks"], ["status"], ["mute", "x"], ["volume", "x", "2"], ["watch"], ["unsolo"]] {
            let outcome = InProcessCLI.run(verb, environment: env)
            #expect(outcome.status == 1)
            #expect(
                outcome.stderrLines == [
                    "roomtap: error: no recorder at \(env["ROOMTAP_CONTROL"]!); start one with roomtap record"
                ])
        }
    }

    @Test func badControlRequestsAreUsageErrorsOrClearRefusals() throws {
        let env = environment()
        // Long enough to outlast every request on a loaded machine; stopped at the end.
        let recorder = try startAlice(seconds: "600", untilStopped: true, env)
        let unknown = try CLIRunner.run(["mute", "nobody"], environment: env)
        #expect(
            unknown.status == 1
                && unknown.stderrLines == ["roomtap: error: no track named 'nobody' (tracks: alice, later)"])
        let range = try CLIRunner.run(["volume", "alice", "11"], environment: env)
        #expect(range.status == 64 && range.stderr.contains("must be 0...10"))
        let decibels = try CLIRunner.run(["volume", "alice", "-6dB"], environment: env)
        #expect(
            decibels.status == 0 && decibels.stdout.contains("volume 0.50"), "\(decibels.stdout) \(decibels.stderr)")
        let scope = try CLIRunner.run(["mute", "alice", "--scope", "everything"], environment: env)
        #expect(scope.status == 64)
        let agent = try CLIRunner.run(["agent", "say", "hello"], environment: env)
        #expect(agent.status == 1 && agent.stderr.contains("no agent"))
        // A second recorder on the same socket is refused before it records anything.
        let second = try temporaryDirectory()
        let refused = try CLIRunner.run(
            ["record", "--file", "alice=\(sample("alice"))", "--realtime", "--duration", "1", "--out", second.path],
            environment: env)
        #expect(refused.status == 1)
        #expect(refused.stderrLines.count == 1 && refused.stderr.contains("another recorder is running at"))
        let left = try listing(second)
        #expect(left.isEmpty, "nothing left behind: \(left)")
        let stop = try CLIRunner.run(["stop"], environment: env, timeout: 60)
        #expect(stop.status == 0, "roomtap stop: \(stop.stderr)")
        #expect(recorder.wait(timeout: 60).status == 0)
        #expect(!FileManager.default.fileExists(atPath: env["ROOMTAP_CONTROL"]!), "the socket is removed at the end")
    }

    /// A verb run as soon as the socket appears, before the room has its tracks: the recorder
    /// answers `starting` at once (it never holds a request), the verb asks again, and the mute
    /// lands once alice exists, as it did when the recorder itself waited.
    @Test func aVerbSentAsTheRecorderStartsActsOnceTheTrackExists() throws {
        let env = environment()
        let socket = try #require(env["ROOMTAP_CONTROL"])
        let recorder = try CLIRunner.start(
            [
                "record", "--file", "alice=\(sample("alice"))", "--realtime", "--duration", "600", "--out",
                try temporaryDirectory().path, "--quiet", "--file", "later=\(sample("bob"))@300",
            ], environment: env)
        // Listening (a connection is accepted), nothing asked yet.
        #expect(waitUntil(timeout: .seconds(60)) { (try? ControlClient(path: socket)) != nil || !recorder.isRunning })
        let reply = try control(["mute", "alice"], env)
        #expect(reply["track"] as? String == "alice" && reply["muted"] as? Bool == true, "\(reply)")
        let stop = try CLIRunner.run(["stop"], environment: env, timeout: 60)
        #expect(stop.status == 0, "roomtap stop: \(stop.stderr)")
        #expect(recorder.wait(timeout: 60).status == 0)
    }

    @Test func watchOnATerminalMutesWithAKeyAndRestoresTheTerminal() throws {
        let env = environment()
        let out = try temporaryDirectory()
        let recorder = try CLIRunner.start(
            [
                "record", "--file", "alice=\(sample("alice"))", "--realtime", "--duration", "600", "--out", out.path,
                "--quiet", "--file", "later=\(sample("bob"))@300",
            ],
            environment: env)
        _ = try waitForRecorder(env, recorder)
        // `roomtap watch` on a pseudo-terminal; each key is pressed once the screen shows the one
        // before took effect.
        let watch = try TerminalSession("watch", environment: env)
        #expect(waitUntil(timeout: .seconds(60)) { watch.shown.contains("alice") }, "the view shows alice")
        watch.press("m")
        #expect(waitUntil(timeout: .seconds(60)) { watch.shown.contains("MUTED") }, "m muted alice on screen")
        watch.press("q")
        #expect(watch.finish(), "q quits")
        let drawn = watch.shown
        #expect(watch.process.terminationStatus == 0, "watch quit with q: \(drawn.suffix(300))")
        #expect(drawn.contains("alice") && drawn.contains("MUTED"), "the view showed alice, then muted")
        #expect(drawn.contains("\u{1B}[?1049l") && drawn.contains("\u{1B}[?25h"), "the terminal was restored")
        let tracks = try control(["tracks"], env)["tracks"] as? [[String: Any]] ?? []
        #expect(tracks.first { $0["name"] as? String == "alice" }?["muted"] as? Bool == true, "m muted alice")
        let stop = try CLIRunner.run(["stop"], environment: env, timeout: 60)
        #expect(stop.status == 0, "roomtap stop: \(stop.stderr)")
        #expect(recorder.wait(timeout: 60).status == 0)
    }

    @Test func watchStreamsLevelsAndControlChanges() throws {
        let env = environment()
        let recorder = try startAlice(seconds: "600", untilStopped: true, env)
        let watcher = try CLIRunner.start(["watch", "--json"], environment: env)
        func count(_ event: String) -> Int {
            watcher.stdoutSoFar.components(separatedBy: "\"event\":\"\(event)\"").count - 1
        }
        // The watcher is connected once it prints its first levels; then the mute is seen.
        #expect(
            waitUntil(timeout: .seconds(60)) { count("levels") >= 1 }, "watch printed levels: \(watcher.stdoutSoFar)")
        _ = try control(["mute", "alice"], env)
        #expect(
            waitUntil(timeout: .seconds(60)) {
                count("control_changed") >= 1 && count("levels") >= 10
                    && watcher.stdoutSoFar.contains("\"talking\":true")
            })
        let stop = try CLIRunner.run(["stop"], environment: env, timeout: 60)
        #expect(stop.status == 0, "roomtap stop: \(stop.stderr)")
        #expect(recorder.wait(timeout: 60).status == 0)
        let watched = watcher.wait(timeout: 10)
        #expect(watched.status == 0, "watch ends when the recorder does: \(watched.stderr)")
        let events = watched.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        let levels = events.filter { $0["event"] as? String == "levels" }
        #expect(levels.count >= 8, "about 10 level events a second: \(levels.count)")
        #expect(levels.contains { ($0["tracks"] as? [[String: Any]])?.first?["talking"] as? Bool == true })
        #expect(events.contains { $0["event"] as? String == "control_changed" && $0["change"] as? String == "mute" })
    }
}

/// Hostile clients against a running recorder: the room keeps recording, every well-formed
/// request gets its reply.
@Suite("CLI: hostile control clients")
struct HostileControlClientTests {
    /// A raw Unix-socket client (no roomtap code on this side).
    final class RawClient {
        let fd: Int32
        init?(path: String) {
            fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { raw in
                for (i, byte) in path.utf8.enumerated() { raw[i] = byte }
            }
            let ok = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0
                }
            }
            guard ok else {
                close(fd)
                return nil
            }
        }
        deinit { close(fd) }

        func send(_ bytes: [UInt8]) {
            var offset = 0
            while offset < bytes.count {
                let n = bytes[offset...].withUnsafeBytes {
                    Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
                }
                if n <= 0 { return }
                offset += n
            }
        }

        /// Reads lines until `count` have arrived or `seconds` pass.
        func readLines(_ count: Int, seconds: Double = 20) -> [String] {
            var lines: [String] = []
            var pending: [UInt8] = []
            let deadline = Date().addingTimeInterval(seconds)
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while lines.count < count && Date() < deadline {
                var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                guard poll(&p, 1, 200) > 0 else { continue }
                let n = recv(fd, &buffer, buffer.count, 0)
                if n <= 0 { break }
                pending += buffer[0..<n]
                while let newline = pending.firstIndex(of: 10) {
                    lines.append(String(decoding: pending[..<newline], as: UTF8.self))
                    pending.removeSubrange(...newline)
                }
            }
            return lines
        }
    }

    @Test func floodsGarbageAndStuckClientsNeitherStopTheRoomNorLoseReplies() throws {
        let path = uniqueControlPath()
        let out = try temporaryDirectory()
        let recorder = try CLIRunner.start(
            [
                "record", "--file", "alice=\(sample("alice"))", "--realtime", "--duration", "4", "--mix",
                "--out", out.path, "--quiet",
            ], environment: ["ROOMTAP_CONTROL": path])
        var stuck: [RawClient] = []
        _ = waitUntil(timeout: .seconds(60)) {
            if let c = RawClient(path: path) { stuck.append(c) }
            return !stuck.isEmpty
        }
        try #require(!stuck.isEmpty, "the recorder's socket never appeared")
        // Clients that watch and never read, and one that sends half a line and stalls.
        stuck[0].send(Array("{\"id\":1,\"cmd\":\"watch\"}\n".utf8))
        for _ in 0..<3 {
            if let c = RawClient(path: path) {
                c.send(Array("{\"id\":1,\"cmd\":\"watch\"}\n{\"id\":2,\"cmd\":\"tracks\"}\n".utf8))
                stuck.append(c)
            }
        }
        if let c = RawClient(path: path) {
            c.send(Array("{\"id\":1,\"cmd\":\"tra".utf8))
            stuck.append(c)
        }
        let garbage = try #require(RawClient(path: path))
        var hostile: [UInt8] = [UInt8](repeating: UInt8(ascii: "x"), count: 1 << 20) + [10]  // a 1 MiB line
        hostile += [0xFF, 0xFE, 0xC0, 0x80, 10]  // invalid UTF-8
        hostile += Array(
            "[1,2]\n{\"id\":\"q\"}\n{\"id\":7,\"cmd\":\"explode\"}\n{\"id\":8,\"cmd\":\"volume\",\"track\":\"alice\",\"volume\":99}\n"
                .utf8)
        hostile += Array("{\"id\":9,\"cmd\":\"ping\"}\n".utf8)
        garbage.send(hostile)
        let garbageReplies = garbage.readLines(7)
        #expect(garbageReplies.count == 7, "one reply per line: \(garbageReplies)")
        let codes = garbageReplies.map { line -> String in
            let json = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            return ((json?["error"] as? [String: Any])?["code"] as? String)
                ?? (json?["ok"] as? Bool == true ? "ok" : "?")
        }
        #expect(
            codes == [
                "line_too_long", "bad_json", "bad_request", "bad_request", "unknown_command", "out_of_range", "ok",
            ])

        // Thousands of well-formed requests, pipelined: every one answered, in order.
        let flood = try #require(RawClient(path: path))
        let count = 3_000
        var burst = ""
        for i in 0..<count { burst += "{\"id\":\(i),\"cmd\":\(i % 2 == 0 ? "\"ping\"" : "\"tracks\"")}\n" }
        flood.send(Array(burst.utf8))
        let replies = flood.readLines(count, seconds: 30)
        #expect(replies.count == count)
        let ids = replies.compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["id"] as? Int
        }
        let inOrder = ids == Array(0..<count)
        #expect(inOrder, "every request answered once, in order")

        let outcome = recorder.wait(timeout: 30)
        #expect(outcome.status == 0, "stderr: \(outcome.stderr)")
        for name in ["alice.wav", "mix.wav"] {
            let samples = try WAVFile.readSamples(path: out.appendingPathComponent(name).path).1
            #expect(samples.count == 192_000, "\(name): the room recorded its whole length")
        }
        let report = try JSONSerialization.jsonObject(with: Data(contentsOf: out.appendingPathComponent("room.json")))
        let tracks = (report as? [String: Any])?["tracks"] as? [[String: Any]] ?? []
        #expect(tracks.allSatisfy { $0["droppedFrames"] as? Int == 0 }, "no frame lost to the flood")
        withExtendedLifetime(stuck) {}
    }
}

extension ControlTests {
    /// Issue 10, 8 and 9, the exact sequence: off the record, a plain volume change, a heard one,
    /// then `unmute`. The speaker stays off the record (silence in the file) until the unmute, the
    /// replies say so, and the timeline draws the stretch where the file has it, not to the end.
    /// (The track is named carol as in the issue; its audio is alice's, which speaks until 8.6 s.)
    @Test func offTheRecordSurvivesVolumeChangesUntilUnmuteAndTheTimelineDrawsWhatTheFileHolds() throws {
        let out = try temporaryDirectory()
        let env = environment()
        let recorder = try CLIRunner.start(
            [
                "record", "--file", "carol=\(sample("alice"))", "--realtime", "--duration", "9", "--out", out.path,
                "--quiet",
            ], environment: env)
        _ = try waitForRecorder(env)
        // While she speaks (0.3-3.7 s): the mute from 0.5 s of room time, the unmute from 1.5 s.
        func reach(_ roomTime: Double) throws {
            let reached = waitUntil(timeout: .seconds(30)) {
                ((try? control(["status"], env))?["room_time"] as? Double ?? 0) >= roomTime
            }
            try #require(reached, "the room reached \(roomTime) s")
        }
        try reach(0.5)
        let mute = try control(["mute", "carol", "--scope", "record"], env)
        let plain = try control(["volume", "carol", "0.5"], env)
        let heard = try control(["volume", "carol", "0.5", "--scope", "heard"], env)
        let tracks = try control(["tracks"], env)["tracks"] as? [[String: Any]] ?? []
        let text = try CLIRunner.run(["volume", "carol", "0.5"], environment: env, timeout: 20)
        let table = try CLIRunner.run(["tracks"], environment: env, timeout: 20).stdout
        try reach(1.5)
        let unmute = try control(["unmute", "carol"], env)
        #expect(recorder.wait(timeout: 30).status == 0)

        for (reply, scope) in [(mute, "record"), (plain, "heard"), (heard, "heard")] {
            #expect(reply["record_muted"] as? Bool == true, "still off the record: \(reply)")
            #expect(reply["muted"] as? Bool == false, "heard all along: \(reply)")
            #expect(reply["scope"] as? String == scope, "the scope of this change, not a sticky one: \(reply)")
        }
        #expect(plain["volume"] as? Double == 0.5 && plain["record_volume"] as? Double == 1)
        let listed = tracks.first { $0["name"] as? String == "carol" }
        #expect(listed?["record_muted"] as? Bool == true && listed?["muted"] as? Bool == false)
        #expect(
            text.stdout.hasPrefix("carol: heard unmuted, volume 0.50; record muted, volume 1.00; from "),
            "the reply shows both: \(text.stdout)")
        // Cells are at least two spaces apart (the source has a space of its own).
        let row = table.split(separator: "\n").first { $0.hasPrefix("carol ") }.map {
            $0.components(separatedBy: "  ").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        #expect(row?.count ?? 0 > 4 && row?[3] == "rec" && row?[4] == "0.50", "MUTED rec, VOLUME heard: \(table)")
        #expect(unmute["record_muted"] as? Bool == false && unmute["muted"] as? Bool == false)
        #expect(unmute["scope"] as? String == "all", "a plain unmute lifts every mute")

        let time = { (reply: [String: Any]) in reply["room_time"] as? Double ?? -1 }
        let frame = { (t: Double) in Int((t * 100).rounded()) }
        let (off, on) = (frame(time(mute)), frame(time(unmute)))
        try #require(off > 0 && on > off + 3 && on < 800, "changes while she speaks: \(off) \(on)")
        let wav = try WAVFile.readSamples(path: out.appendingPathComponent("carol.wav").path).1
        let raw = try referenceDecode(of: sample("alice"))
        let silent = wav[((off + 2) * 480)..<((on - 1) * 480)].allSatisfy { $0 == 0 }
        #expect(silent, "off the record from the mute to the unmute, volume changes or not")
        #expect(raw[((off + 2) * 480)..<((on - 1) * 480)].contains { abs($0) > 1_000 }, "she spoke meanwhile")
        let back = Array(wav[((on + 2) * 480)..<raw.count]) == Array(raw[((on + 2) * 480)...])
        #expect(back, "back on the record, raw, after the unmute")

        let report = try JSONSerialization.jsonObject(with: Data(contentsOf: out.appendingPathComponent("room.json")))
        let controls = (report as? [String: Any])?["controls"] as? [[String: Any]] ?? []
        #expect(controls.map { $0["recordMuted"] as? Bool } == [true, true, true, true, false])

        try roomtap(["timeline", out.path], expect: 0)
        let drawing = try TimelineTests.read(out.appendingPathComponent("timeline.svg").path)
        let drawn = drawing.muted["carol"] ?? []
        #expect(drawn.count == 1, "one stretch off the record: \(drawn)")
        #expect(
            drawn.allSatisfy { $0.start >= time(mute) && $0.end <= time(unmute) + 0.011 },
            "drawn from \(time(mute)) to \(time(unmute)), not beyond: \(drawn)")
        #expect(drawing.heardMuted.isEmpty, "never muted for what is heard")
    }

    /// A value out of range on the command line is a usage error (64), like every other bad
    /// argument; the recorder's own `out_of_range` (a protocol client's request) stays exit 1.
    @Test func aVolumeOutOfRangeOnTheCommandLineIsAUsageError() throws {
        let env = environment()
        for level in ["11", "10.5", "-0.5", "loud"] {
            let outcome = InProcessCLI.run(["volume", "alice", level], environment: env)
            #expect(outcome.status == 64, "volume \(level): \(outcome.status)")
            #expect(
                outcome.stderrLines.count == 1
                    && outcome.stderrLines[0].hasPrefix("roomtap: error: volume '\(level)' must be 0...10"),
                "\(outcome.stderr)")
        }
    }
}
