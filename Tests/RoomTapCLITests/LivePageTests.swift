import Foundation
import RoomTapAll
import RoomTapCLITestSupport
import RoomTapRTPTestSupport
import RoomTapSync
import RoomTapTestSupport
import Synchronization
import Testing

/// `roomtap record --http`: the live page of a room recording RTP, driven in real headless
/// Chromium (Tests/Browser/live-check.py over the DevTools protocol), its JSON API and its refusals
/// (no token, another site, hostile requests), checked against what the recorder itself says
/// (`roomtap tracks`) and writes (room.json `controls`).
@Suite("CLI: record --http (the live page)", .serialized)
struct LivePageTests {
    static let token = "live-page-test-token-0123456789"

    /// An RTP sender that loops until stopped: `pattern` (mono 48 kHz) Opus-encoded once, sent as
    /// 20 ms packets paced on the monotonic clock (the test's own pacing of a sender).
    final class LoopingSender: Sendable {
        private let stopping = Atomic<Bool>(false)
        private let done = DispatchSemaphore(value: 0)

        init(pattern: [Int16], to destination: ListenAddress, ssrc: UInt32) {
            let payloads = RTPTestSender.encode(pattern).packets
            let thread = Thread { [self] in
                let socket = DatagramSocket(destination)
                defer {
                    socket.close()
                    done.signal()
                }
                var ts = timespec()
                clock_gettime(CLOCK_MONOTONIC, &ts)
                var due = UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
                var index = 0
                while !stopping.load(ordering: .relaxed) {
                    let packet = RTPPacketBuilder(
                        sequenceNumber: UInt16(truncatingIfNeeded: index),
                        timestamp: UInt32(truncatingIfNeeded: index * 960),
                        ssrc: ssrc, payload: payloads[index % payloads.count])
                    socket.send(packet.bytes())
                    index += 1
                    due += 20_000_000
                    var deadline = timespec(tv_sec: Int(due / 1_000_000_000), tv_nsec: Int(due % 1_000_000_000))
                    while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, nil) == EINTR {}
                }
            }
            thread.name = "roomtap.test-loop"
            thread.start()
        }

        /// Stops sending and waits for the thread's end. Call once.
        func stop() {
            stopping.store(true, ordering: .relaxed)
            done.wait()
        }
    }

    /// A talker: `talk` seconds of a tone, then `pause` seconds of silence.
    static func talker(frequency: Double, talk: Double, pause: Double) -> [Int16] {
        TestSignal.sine(frequency: frequency, samples: Int(talk * 48_000), amplitude: 0.4)
            + [Int16](repeating: 0, count: Int(pause * 48_000))
    }

    /// A room file naming `names` on one loopback port by SSRC (0xA0 + index), and that port.
    static func roomFile(_ names: [String], in directory: URL) throws -> (path: String, port: UInt16) {
        let port = try freeUDPPort()
        let participants = names.enumerated().map { index, name in
            #"{"name": "\#(name)", "port": \#(port), "ssrc": \#(0xA0 + index)}"#
        }
        let path = directory.appendingPathComponent("people.json").path
        try #"{"listen": "127.0.0.1", "participants": [\#(participants.joined(separator: ", "))]}"#.write(
            toFile: path, atomically: true, encoding: .utf8)
        return (path, port)
    }

    /// The port of the `roomtap: live page on http://HOST:PORT/` line.
    static func pagePort(_ recorder: CLIRunner.Running) throws -> UInt16 {
        let line = try #require(
            try RecordMetricsCLITests.address(after: "roomtap: live page on http://", in: recorder),
            "no live page line: \(recorder.stderrSoFar)")
        let hostPort = line.split(separator: "/").first ?? ""
        return try #require(UInt16(hostPort.split(separator: ":").last ?? ""), "\(line)")
    }

    /// One HTTP exchange over a plain socket to 127.0.0.1:`port`: `request` as given (hostile
    /// ones too); the status, the head and the body. Reads until the server closes (30 s bound).
    static func exchange(_ port: UInt16, _ request: [UInt8]) -> (status: Int, head: String, body: String) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return (0, "", "") }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { return (0, "", "") }
        _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = recv(fd, &chunk, chunk.count, 0)
            if n <= 0 { break }
            received += chunk[0..<n]
        }
        let text = String(decoding: received, as: UTF8.self)
        guard let split = text.range(of: "\r\n\r\n") else { return (0, text, "") }
        let head = String(text[..<split.lowerBound])
        let status = Int(head.split(separator: " ").dropFirst().first ?? "") ?? 0
        return (status, head, String(text[split.upperBound...]))
    }

    /// A request with `Host: 127.0.0.1:PORT` and `extra` header lines.
    static func request(
        _ method: String, _ target: String, port: UInt16, extra: [String] = [], body: String = ""
    ) -> [UInt8] {
        var lines = ["\(method) \(target) HTTP/1.1", "Host: 127.0.0.1:\(port)"] + extra
        if method == "POST" { lines.append("Content-Length: \(body.utf8.count)") }
        return Array((lines.joined(separator: "\r\n") + "\r\n\r\n" + body).utf8)
    }

    /// `roomtap ARGS --json` against the recorder of `env`: the reply's JSON.
    static func control(_ arguments: [String], _ env: [String: String]) throws -> [String: Any] {
        let outcome = InProcessCLI.run(arguments + ["--json"], environment: env)
        #expect(outcome.status == 0, "roomtap \(arguments): \(outcome.stderr)")
        return try JSONSerialization.jsonObject(with: Data(outcome.stdout.utf8)) as? [String: Any] ?? [:]
    }

    static func controls(_ roomJSON: URL) throws -> [[String: Any]] {
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: roomJSON)) as? [String: Any]
        return json?["controls"] as? [[String: Any]] ?? []
    }

    // MARK: - The page in Chromium

    @Test func thePageOfARecordingRoomActsAsTheVerbsDoAndNeedsItsToken() throws {
        let out = try temporaryDirectory().appendingPathComponent("standup")
        let names = ["alice", "bob", "carol"]
        let room = try Self.roomFile(names, in: try temporaryDirectory())
        let env = ["ROOMTAP_CONTROL": uniqueControlPath(), "ROOMTAP_HTTP_TOKEN": Self.token]
        // Another address than loopback: the token is required.
        let recorder = try CLIRunner.start(
            ["record", "--room", room.path, "--http", "0.0.0.0:0", "--out", out.path, "--mix", "--quiet"],
            environment: env)
        defer { if recorder.isRunning { recorder.signal(SIGKILL) } }
        let port = try Self.pagePort(recorder)
        #expect(recorder.stderrSoFar.contains("(token required"), "\(recorder.stderrSoFar)")
        #expect(!recorder.stderrSoFar.contains(Self.token), "the token is never printed")
        let destination = try #require(ListenAddress("127.0.0.1:\(room.port)"))
        let senders = [(440.0, 1.2, 0.8), (550.0, 0.9, 1.1), (660.0, 1.5, 0.6)].enumerated().map { index, shape in
            LoopingSender(
                pattern: Self.talker(frequency: shape.0, talk: shape.1, pause: shape.2), to: destination,
                ssrc: UInt32(0xA0 + index))
        }
        defer { for sender in senders { sender.stop() } }

        // Without the token nothing of the room is shown, read or changed.
        for path in ["/", "/events", "/api/tracks", "/api/status", "/metrics"] {
            let answer = Self.exchange(port, Self.request("GET", path, port: port))
            #expect(answer.status == 401, "GET \(path) without the token: \(answer.head)")
            #expect(!answer.body.contains("alice") && !answer.body.contains("roomtap_tracks"), "\(answer.body)")
            #expect(answer.head.contains("WWW-Authenticate: Bearer"))
        }
        let volumeRequest = #"{"cmd":"volume","track":"alice","volume":3}"#
        for extra in [[], ["Authorization: Bearer wrong-token-wrong-token"], ["Cookie: roomtap_token=nope"]] {
            let answer = Self.exchange(
                port,
                Self.request(
                    "POST", "/api", port: port, extra: extra + ["Content-Type: application/json"], body: volumeRequest))
            #expect(answer.status == 401, "POST /api with \(extra): \(answer.head)")
        }
        #expect(Self.exchange(port, Self.request("GET", "/healthz", port: port)).status == 200)
        let withBearer = Self.exchange(
            port, Self.request("GET", "/api/tracks", port: port, extra: ["Authorization: Bearer \(Self.token)"]))
        #expect(withBearer.status == 200 && withBearer.body.contains(#""ok":true"#), "\(withBearer)")

        // The page, as a user opens it: the token once in the address.
        let shot = out.deletingLastPathComponent().appendingPathComponent("live-page.png")
        let script = repositoryRoot.appendingPathComponent("Tests/Browser/live-check.py").path
        let outcome = try CLIRunner.run(
            [
                script, "--url", "http://127.0.0.1:\(port)/?token=\(Self.token)", "--tracks",
                names.joined(separator: ","),
                "--volume", "bob:-6", "--mute", "carol", "--record-mute", "alice", "--solo", "bob",
                "--screenshot", shot.path,
            ], timeout: 240, executable: URL(fileURLWithPath: "/usr/bin/python3"))
        try #require(
            outcome.status == 0,
            "live-check.py exited \(outcome.status) (Chromium: apt-get install chromium, or make deps): \(outcome.stderr)"
        )
        let seen = try #require(try JSONSerialization.jsonObject(with: Data(outcome.stdout.utf8)) as? [String: Any])
        #expect(seen["consoleErrors"] as? [String] == [], "\(seen["consoleErrors"] ?? "")")
        #expect(seen["pageErrors"] as? [String] == [], "\(seen["pageErrors"] ?? "")")
        #expect(seen["lastError"] as? String == "", "\(seen["lastError"] ?? "")")
        #expect(seen["addressBar"] as? String == "http://127.0.0.1:\(port)/", "the token leaves the address bar")
        let listed = (seen["tracks"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
        #expect(Set(listed).isSuperset(of: names), "\(listed)")
        let distinct = seen["distinctLevels"] as? [String: Int] ?? [:]
        let talking = seen["talkingStates"] as? [String: [Bool]] ?? [:]
        for name in names {
            #expect((distinct[name] ?? 0) >= 4, "\(name)'s meter moves: \(distinct)")
            #expect(talking[name] == [false, true], "\(name) talks and pauses: \(talking)")
        }
        #expect((seen["screenshotBytes"] as? Int ?? 0) > 10_000)
        let after = Dictionary(
            uniqueKeysWithValues: (seen["after"] as? [[String: Any]] ?? []).map { ($0["name"] as? String ?? "", $0) })
        #expect(after["bob"]?["volume"] as? Double == 0.5011872, "\(after["bob"] ?? [:])")
        #expect(after["carol"]?["muted"] as? Bool == true)
        #expect(after["alice"]?["recordMuted"] as? Bool == true)
        #expect(seen["solo"] as? [String] == ["bob"])

        // What the recorder itself says, to the CLI.
        let tracks = Dictionary(
            uniqueKeysWithValues: (try Self.control(["tracks"], env)["tracks"] as? [[String: Any]] ?? []).map {
                ($0["name"] as? String ?? "", $0)
            })
        #expect(tracks["bob"]?["volume"] as? Double == 0.5011872, "\(tracks["bob"] ?? [:])")
        #expect(tracks["bob"]?["solo"] as? Bool == true)
        #expect(tracks["carol"]?["muted"] as? Bool == true && tracks["carol"]?["record_muted"] as? Bool == false)
        #expect(tracks["alice"]?["record_muted"] as? Bool == true && tracks["alice"]?["muted"] as? Bool == false)
        // The same changes made by the verbs, to compare their room.json entries with the page's.
        _ = try Self.control(["volume", "carol", "-6dB"], env)
        _ = try Self.control(["mute", "bob"], env)
        _ = try Self.control(["mute", "carol", "--scope", "record"], env)
        _ = try Self.control(["solo", "alice", "bob"], env)

        recorder.signal(SIGINT)
        let ended = recorder.wait(timeout: 60)
        #expect(ended.status == 0, "\(ended.stderr)")
        let entries = try Self.controls(out.appendingPathComponent("room.json"))
        func entry(_ change: String, _ track: String) -> [String: Any]? {
            entries.first { $0["change"] as? String == change && ($0["track"] as? String ?? "") == track }
        }
        /// What a change is, whoever made it and to whom: its fields, its kind and its scope.
        func shape(_ e: [String: Any]?) -> String {
            let e = e ?? [:]
            return "\(e.keys.sorted()) \(e["change"] ?? "") \(e["scope"] ?? "")"
        }
        let pageVolume = try #require(entry("volume", "bob"), "\(entries)")
        #expect(shape(pageVolume) == shape(entry("volume", "carol")), "page and CLI record a volume alike: \(entries)")
        // -6 dB from the page and from the CLI (relative to unity, as pactl): the same gain, to the
        // precision room.json gives it.
        let cliVolume = try #require(entry("volume", "carol")?["volume"] as? Double)
        let pageGain = try #require(pageVolume["volume"] as? Double)
        #expect(abs(cliVolume - pageGain) < 1e-5, "CLI \(cliVolume), page \(pageGain)")
        #expect(abs(pageGain - 0.5011872) < 1e-6 && pageVolume["scope"] as? String == "heard")
        #expect(pageVolume["by"] == nil, "a change from the page is recorded as the verb's: \(pageVolume)")
        let pageMute = try #require(entry("mute", "carol"), "\(entries)")
        #expect(shape(pageMute) == shape(entry("mute", "bob")), "\(entries)")
        #expect(pageMute["muted"] as? Bool == true && pageMute["scope"] as? String == "heard")
        let pageOffRecord = try #require(entry("mute", "alice"), "\(entries)")
        #expect(pageOffRecord["recordMuted"] as? Bool == true && pageOffRecord["scope"] as? String == "record")
        let cliOffRecord = entries.last { $0["change"] as? String == "mute" && $0["track"] as? String == "carol" }
        #expect(Set(pageOffRecord.keys) == Set((cliOffRecord ?? [:]).keys), "\(entries)")
        let solos = entries.filter { $0["change"] as? String == "solo" }
        #expect(solos.count == 2 && solos[0]["tracks"] as? [String] == ["bob"], "\(solos)")
        #expect(Set(solos[0].keys) == Set(solos[1].keys), "page and CLI record a solo alike: \(solos)")
        #expect(Self.exchange(port, Self.request("GET", "/healthz", port: port)).status == 0, "closed with the room")
    }

    // MARK: - The API and hostile requests, loopback

    @Test func onLoopbackTheAPIMirrorsTheSocketAndHostileRequestsAreRefused() throws {
        let out = try temporaryDirectory().appendingPathComponent("room")
        let room = try Self.roomFile(["alice"], in: try temporaryDirectory())
        let env = ["ROOMTAP_CONTROL": uniqueControlPath(), "ROOMTAP_HTTP_TOKEN": ""]
        let recorder = try CLIRunner.start(
            ["record", "--room", room.path, "--http", "0", "--out", out.path, "--quiet"], environment: env)
        defer { if recorder.isRunning { recorder.signal(SIGKILL) } }
        let port = try Self.pagePort(recorder)
        #expect(recorder.stderrSoFar.contains("live page on http://127.0.0.1:\(port)/\n"), "PORT alone is loopback")
        let sender = LoopingSender(
            pattern: Self.talker(frequency: 440, talk: 0.5, pause: 0.5),
            to: try #require(ListenAddress("127.0.0.1:\(room.port)")), ssrc: 0xA0)
        defer { sender.stop() }

        // The page: Resources/live/ as it is (LivePageAssets.swift is up to date: make view-assets).
        let page = Self.exchange(port, Self.request("GET", "/", port: port))
        #expect(page.status == 200 && page.head.contains("Content-Type: text/html"), "\(page.head)")
        for name in ["live.js", "live.css"] {
            let file = try String(
                contentsOf: repositoryRoot.appendingPathComponent("Resources/live/\(name)"), encoding: .utf8)
            #expect(page.body.contains(file.trimmingCharacters(in: .newlines)), "the page lacks Resources/live/\(name)")
        }
        #expect(
            !page.body.contains("http://") && !page.body.contains("https://"), "the page names nothing on the network")
        #expect(page.head.contains("Content-Security-Policy: default-src 'none'"))
        #expect(page.head.contains("X-Frame-Options: DENY"))

        // The API is the socket's: the same replies, the same effect.
        let json = ["Content-Type: application/json"]
        #expect(
            try waitUntil(timeout: .seconds(30), every: .milliseconds(50)) {
                Self.exchange(port, Self.request("GET", "/api/tracks", port: port)).body.contains(#""name":"alice""#)
            }, "alice appears")
        let volume = Self.exchange(
            port,
            Self.request(
                "POST", "/api", port: port, extra: json,
                body: #"{"id":7,"cmd":"volume","track":"alice","volume":"-6dB"}"#))
        #expect(volume.status == 200 && volume.body.hasPrefix(#"{"id":7,"ok":true,"result":{"#), "\(volume)")
        #expect(volume.body.contains(#""volume":0.5011872"#), "\(volume.body)")
        let tracks = try Self.control(["tracks"], env)["tracks"] as? [[String: Any]] ?? []
        #expect(tracks.first?["volume"] as? Double == 0.5011872, "\(tracks)")
        let failures: [(String, Int, String)] = [
            (#"{"cmd":"mute","track":"nobody"}"#, 404, "unknown_track"),
            (#"{"cmd":"volume","track":"alice","volume":11}"#, 400, "out_of_range"),
            (#"{"cmd":"volume","track":"alice","volume":"loud"}"#, 400, "bad_request"),
            (#"{"cmd":"fly"}"#, 404, "unknown_command"),
            (#"{"cmd":"watch"}"#, 400, "bad_request"),
            ("{not json", 400, "bad_json"),
            (#"["cmd"]"#, 400, "bad_request"),
            (String(repeating: "[", count: 5000), 400, "bad_json"),
        ]
        for (body, status, code) in failures {
            let answer = Self.exchange(port, Self.request("POST", "/api", port: port, extra: json, body: body))
            #expect(
                answer.status == status && answer.body.contains(#""code":"\#(code)""#), "\(body.prefix(40)): \(answer)")
        }
        let status = Self.exchange(port, Self.request("GET", "/api/status", port: port))
        #expect(status.status == 200 && status.body.contains(#""late_ticks":"#), "\(status)")
        let metrics = Self.exchange(port, Self.request("GET", "/metrics", port: port))
        #expect(metrics.status == 200 && metrics.body.contains("roomtap_tracks 1"), "\(metrics)")

        // Another site cannot act: no simple (unpreflighted) post, no foreign Origin, no rebound name.
        let refused: [([UInt8], Int)] = [
            (
                Self.request(
                    "POST", "/api", port: port, extra: ["Content-Type: text/plain"], body: #"{"cmd":"unsolo"}"#), 415
            ),
            (Self.request("POST", "/api", port: port, extra: json + ["Origin: http://evil.example"], body: "{}"), 403),
            (Self.request("POST", "/api", port: port, extra: json + ["Sec-Fetch-Site: cross-site"], body: "{}"), 403),
            (Array("GET / HTTP/1.1\r\nHost: evil.example:\(port)\r\n\r\n".utf8), 403),
            (Array("GET / HTTP/1.1\r\n\r\n".utf8), 403),
            (Self.request("DELETE", "/api", port: port), 405),
            (Self.request("GET", "/api", port: port), 405),
            (Self.request("GET", "/nothing", port: port), 404),
            // Malformed, oversized, ambiguous.
            (Array("\u{0}\u{1}garbage\r\n\r\n".utf8), 400),
            (Array("GET / HTTP/1.1\nHost: 127.0.0.1:\(port)\n\n\r\n\r\n".utf8), 400),
            (Array("GET / HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n folded\r\n\r\n".utf8), 400),
            (
                Array(
                    "POST /api HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n".utf8),
                400
            ),
            (
                Array(
                    "POST /api HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n"
                        .utf8), 400
            ),
            (Array("POST /api HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nContent-Length: 9999999\r\n\r\n".utf8), 413),
            (Array(("GET / HTTP/1.1\r\nX: " + String(repeating: "a", count: 9000) + "\r\n\r\n").utf8), 431),
        ]
        for (bytes, expected) in refused {
            let answer = Self.exchange(port, bytes)
            #expect(answer.status == expected, "\(String(decoding: bytes.prefix(60), as: UTF8.self)): \(answer.head)")
        }
        let after = try Self.control(["tracks"], env)["tracks"] as? [[String: Any]] ?? []
        #expect(after.first?["volume"] as? Double == 0.5011872, "nothing refused changed a thing")

        // A client that never sends its request holds up nobody; 70 at once: the extra get 503.
        var idle: [Int32] = []
        for _ in 0..<70 {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
            _ = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            idle.append(fd)
        }
        let busy = Self.exchange(port, Self.request("GET", "/healthz", port: port))
        #expect(busy.status == 503, "the 71st client: \(busy.head)")
        for fd in idle { close(fd) }
        #expect(
            try waitUntil(timeout: .seconds(30), every: .milliseconds(50)) {
                Self.exchange(port, Self.request("GET", "/healthz", port: port)).status == 200
            }, "served again once they are gone")

        // The event stream: the tracks at once, then levels, and at the end `stopped`.
        let stream = EventStream(port)
        let events = stream.read(until: #""event":"levels""#)
        #expect(
            events.hasPrefix("HTTP/1.1 200 OK\r\n") && events.contains("Content-Type: text/event-stream"),
            "\(events.prefix(300))")
        #expect(events.contains(#"data: {"event":"tracks","#), "\(events.prefix(600))")

        recorder.signal(SIGINT)
        let ended = recorder.wait(timeout: 60)
        #expect(ended.status == 0, "the recorder outlived every request: \(ended.stderr)")
        let last = stream.read(until: #""event":"stopped""#)
        #expect(last.contains(#""event":"stopped""#) && last.contains("room.json"), "\(last.suffix(300))")
        let entries = try Self.controls(out.appendingPathComponent("room.json"))
        #expect(
            entries.count == 1 && entries.first?["change"] as? String == "volume", "only the one change: \(entries)")
    }

    /// `GET /events` on a socket of its own, read as far as asked.
    final class EventStream {
        private let fd: Int32
        private(set) var text = ""

        init(_ port: UInt16) {
            fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            var timeout = timeval(tv_sec: 30, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
            _ = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            let request = LivePageTests.request("GET", "/events", port: port)
            _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        }

        deinit { close(fd) }

        /// Reads until `marker` has arrived, the server closes, or 30 s pass without a byte;
        /// everything read so far.
        @discardableResult
        func read(until marker: String) -> String {
            var chunk = [UInt8](repeating: 0, count: 65_536)
            while !text.contains(marker) {
                let n = recv(fd, &chunk, chunk.count, 0)
                if n <= 0 { break }
                text += String(decoding: chunk[0..<n], as: UTF8.self)
            }
            return text
        }
    }

    // MARK: - Refusals at the start

    @Test func anotherAddressWithoutATokenIsOneClearLineAndNothingIsCreated() throws {
        let out = try temporaryDirectory().appendingPathComponent("room")
        let noToken = InProcessCLI.run(
            ["record", "--listen", "127.0.0.1:0", "--http", "0.0.0.0:0", "--out", out.path],
            environment: ["ROOMTAP_HTTP_TOKEN": ""])
        #expect(noToken.status == 1 && noToken.stderrLines.count == 1, "\(noToken.stderr)")
        #expect(noToken.stderr.contains("export ROOMTAP_HTTP_TOKEN"), "\(noToken.stderr)")
        let short = InProcessCLI.run(
            ["record", "--listen", "127.0.0.1:0", "--http", "0.0.0.0:0", "--out", out.path],
            environment: ["ROOMTAP_HTTP_TOKEN": "short"])
        #expect(short.status == 1 && short.stderr.contains("too short"), "\(short.stderr)")
        let offline = InProcessCLI.run([
            "record", "--file", "alice=\(sample("alice"))", "--http", "0", "--out", out.path,
        ])
        #expect(
            offline.status == 64 && offline.stderr.contains("--http serves a room while it runs"), "\(offline.stderr)")
        let bad = InProcessCLI.run([
            "record", "--listen", "127.0.0.1:0", "--http", "example.com:80", "--out", out.path,
        ])
        #expect(bad.status == 64 && bad.stderr.contains("not a numeric IPv4 address"), "\(bad.stderr)")
        let taken = try HTTPServer(address: "127.0.0.1:0", option: "test") { _ in
            .init(status: 200, type: "text/plain", body: "")
        }
        let busy = InProcessCLI.run(
            ["record", "--listen", "127.0.0.1:0", "--http", taken.address, "--out", out.path, "--duration", "1"])
        #expect(
            busy.status == 1 && busy.stderr.contains("cannot listen on \(taken.address) for --http"), "\(busy.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out.path), "nothing created")
    }
}
