import Foundation
import RoomTapAgentTestSupport
import RoomTapAll
import RoomTapCLITestSupport
import RoomTapRTPTestSupport
import RoomTapSora
import RoomTapTestSupport
import Testing

/// `roomtap record --sora-audio-streaming` end to end: the real binary as the receiver of Sora's
/// audio streaming, real HTTP/2 clients (curl with `--http2-prior-knowledge` posting a prepared
/// body at once, Python's `h2` sending each frame when its timestamp comes, as Sora streams live),
/// known audio encoded by libopus. Every track must equal libopus's own decode of its packets (one
/// PLC call per lost packet, FEC where the next packet has it), placed by the timestamps to the
/// sample, a 2 s pause silent; a malformed frame ends its own request only.
@Suite("CLI: Sora audio streaming", .serialized)
struct SoraAudioStreamingCLITests {
    /// One Sora connection's frames: Opus packets with their timestamps and sequence numbers.
    struct Connection {
        var id: String
        var packets: [[UInt8]]
        /// (timestamp µs, sequence, packet index) of each frame sent, in order.
        var frames: [(timestamp: UInt64, sequence: UInt64, packet: Int)]

        /// The request body: each frame behind its 20-byte header.
        func body() -> [UInt8] {
            var out: [UInt8] = []
            for f in frames {
                SoraStreamingFrame.writeHeader(
                    timestamp: f.timestamp, sequence: f.sequence, payloadLength: UInt32(packets[f.packet].count),
                    into: &out)
                out += packets[f.packet]
            }
            return out
        }
    }

    static let curl = URL(fileURLWithPath: "/usr/bin/curl")
    static let python = repositoryRoot.appendingPathComponent(".venv/bin/python")
    static let sender = repositoryRoot.appendingPathComponent("Tests/Interop/sora/h2_sender.py")

    /// Starts the recorder on a kernel-chosen port and returns it with the `HOST:PORT` it printed.
    /// `duration`: seconds of room time (the clients are timed well inside it, so the recorder
    /// ends by itself and drains its record delay).
    static func startRecorder(
        _ out: URL, duration: Int = 60, extra: [String] = [], environment: [String: String] = [:]
    ) throws -> (CLIRunner.Running, String) {
        let recorder = try CLIRunner.start(
            [
                "record", "--sora-audio-streaming", "127.0.0.1:0", "--duration", "\(duration)", "--out", out.path,
                "--quiet",
            ]
                + RealtimeTestPriority.recordFlags + extra, environment: environment)
        let marker = "roomtap: sora audio streaming on http://"
        let said = waitUntil { recorder.stderrSoFar.contains(marker) || !recorder.isRunning }
        let line = recorder.stderrSoFar.split(separator: "\n").first { $0.hasPrefix(marker) }
        guard said, let line else {
            let outcome = recorder.wait(timeout: 5)
            throw TestFailure("the recorder did not say where it listens: \(outcome.stderr)")
        }
        let address = line.dropFirst(marker.count).replacingOccurrences(of: "/speech", with: "")
        return (recorder, address)
    }

    struct TestFailure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// `curl --http2-prior-knowledge` posting `body` as connection `id`: prints the body, then the
    /// status on a line of its own.
    static func startCurl(address: String, id: String?, body: URL, path: String = "/speech") throws -> CLIRunner.Running
    {
        var arguments = ["-sS", "--http2-prior-knowledge", "-H", "content-type: application/octet-stream"]
        if let id { arguments += ["-H", "sora-connection-id: \(id)", "-H", "sora-channel-id: sora-test"] }
        arguments += ["--data-binary", "@\(body.path)", "-w", "\n%{http_code}\n", "http://\(address)\(path)"]
        return try CLIRunner.start(arguments, executable: curl)
    }

    static func write(_ bytes: [UInt8], to url: URL) throws { try Data(bytes).write(to: url) }

    @Test func threeConnectionsFromCurlAndH2AreEachTheLibopusDecodePlacedByTheirTimestamps() throws {
        #expect(FileManager.default.isExecutableFile(atPath: Self.curl.path), "curl is needed (Debian curl)")
        #expect(
            FileManager.default.isExecutableFile(atPath: Self.python.path),
            "\(Self.python.path) is needed: make venv (PyPI h2)")
        let out = try temporaryDirectory()
        let (recorder, address) = try Self.startRecorder(
            out, duration: 14, extra: ["--sora-name", "CONNPAUSE0001=alice"])

        // The timeline, in Sora's microseconds (the wall clock, as Sora stamps live audio): the
        // first frame 1.5 s from now, the others 250 and 500 ms after it.
        let t0 = UInt64((Date().timeIntervalSince1970 + 1.5) * 1_000) * 1_000
        // A: curl, a prepared body: 2 s of speech, a 2 s pause (sequence numbers go on), 2 s more.
        let speechA = RTPTestSender.encode(TestSignal.speechLike(samples: 200 * 960, seed: 81)).packets
        var a = Connection(id: "CONNPAUSE0001", packets: speechA, frames: [])
        for i in 0..<200 {
            let pause: UInt64 = i >= 100 ? 2_000_000 : 0
            a.frames.append((t0 + UInt64(i) * 20_000 + pause, 7_000 + UInt64(i), i))
        }
        // B: Python h2, timed: 3 s with lost packets (never the first or the last).
        let speechB = RTPTestSender.encode(TestSignal.speechLike(samples: 150 * 960, seed: 82)).packets
        let lost: Set<Int> = [9, 10, 37, 60, 61, 62, 99, 120, 141]
        var b = Connection(id: "CONNLOSS0002", packets: speechB, frames: [])
        for i in 0..<150 where !lost.contains(i) {
            b.frames.append((t0 + 250_000 + UInt64(i) * 20_000, 90_000 + UInt64(i), i))
        }
        // C: curl, 3 s, no loss.
        let speechC = RTPTestSender.encode(TestSignal.speechLike(samples: 150 * 960, seed: 83)).packets
        var c = Connection(id: "CONNPLAIN0003", packets: speechC, frames: [])
        for i in 0..<150 { c.frames.append((t0 + 500_000 + UInt64(i) * 20_000, UInt64(i), i)) }
        // D: curl, 1 s of good frames, then a frame announcing an empty packet, then more.
        let speechD = RTPTestSender.encode(TestSignal.speechLike(samples: 80 * 960, seed: 84)).packets
        var d = Connection(id: "CONNBAD0004", packets: speechD, frames: [])
        for i in 0..<50 { d.frames.append((t0 + UInt64(i) * 20_000, UInt64(i), i)) }
        var bodyD = d.body()
        SoraStreamingFrame.writeHeader(timestamp: t0 + 1_000_000, sequence: 50, payloadLength: 0, into: &bodyD)
        for i in 51..<80 {
            SoraStreamingFrame.writeHeader(
                timestamp: t0 + UInt64(i) * 20_000, sequence: UInt64(i), payloadLength: UInt32(speechD[i].count),
                into: &bodyD)
            bodyD += speechD[i]
        }

        let files = (a: out.appendingPathComponent("a.body"), b: out.appendingPathComponent("b.body"))
        let fileC = out.appendingPathComponent("c.body")
        let fileD = out.appendingPathComponent("d.body")
        try Self.write(a.body(), to: files.a)
        try Self.write(b.body(), to: files.b)
        try Self.write(c.body(), to: fileC)
        try Self.write(bodyD, to: fileD)

        // B sends each frame at its timestamp (it starts early and waits).
        let senderB = try CLIRunner.start(
            [Self.sender.path, address, b.id, files.b.path], executable: Self.python)
        // The curl bodies are posted when their first timestamp is due, as Sora would start
        // streaming then: the test's own pacing of a sender.
        let startWall = Double(t0) / 1e6
        while Date().timeIntervalSince1970 < startWall { usleep(1_000) }
        let curlA = try Self.startCurl(address: address, id: a.id, body: files.a)
        let curlC = try Self.startCurl(address: address, id: c.id, body: fileC)
        let curlD = try Self.startCurl(address: address, id: d.id, body: fileD)

        let resultD = curlD.wait(timeout: 60)
        let resultA = curlA.wait(timeout: 60)
        let resultC = curlC.wait(timeout: 60)
        let resultB = senderB.wait(timeout: 60)
        // The room runs 14 s (the last frame is due about 7.5 s in), then drains its record delay.
        let outcome = recorder.wait(timeout: 60)
        #expect(outcome.status == 0, "stderr: \(outcome.stderr)")

        #expect(
            resultA.status == 0 && resultA.stdout.hasSuffix("\n200\n"), "curl A: \(resultA.stdout) \(resultA.stderr)")
        #expect(
            resultC.status == 0 && resultC.stdout.hasSuffix("\n200\n"), "curl C: \(resultC.stdout) \(resultC.stderr)")
        #expect(
            resultB.status == 0 && resultB.stdout.hasPrefix("status=200"), "h2 B: \(resultB.stdout) \(resultB.stderr)")
        // D: 400 with suzu's error shape, and one log line naming the connection and the fault.
        #expect(resultD.stdout.hasSuffix("\n400\n"), "curl D: \(resultD.stdout) \(resultD.stderr)")
        #expect(resultD.stdout.contains(#""type":"error""#) && resultD.stdout.contains("length 0"))
        let warnings = outcome.stderr.split(separator: "\n").filter { $0.contains("CONNBAD0004") }
        #expect(
            warnings.count == 1 && warnings[0].hasPrefix("roomtap: warning: sora audio streaming:"), "\(outcome.stderr)"
        )

        let json = try roomJSON(out)
        let roomSamples = try #require(json["durationSamples"] as? Int)
        let dropped = Set(lost)
        let referenceB = ReferenceOpusDecode.decode(
            (0..<150).map { .init(payload: speechB[$0], arrived: !dropped.contains($0)) }, fec: true)
        var referenceA = ReferenceOpusDecode.decode(speechA[0..<200].map { .init(payload: $0, arrived: true) })
        referenceA.insert(contentsOf: [Int16](repeating: 0, count: 96_000), at: 100 * 960)
        let referenceC = ReferenceOpusDecode.decode(speechC[0..<150].map { .init(payload: $0, arrived: true) })
        let referenceD = ReferenceOpusDecode.decode(speechD[0..<50].map { .init(payload: $0, arrived: true) })

        var onsets: [String: Int] = [:]
        for (name, reference) in [
            ("alice", referenceA), ("CONNLOSS0002", referenceB), ("CONNPLAIN0003", referenceC),
            ("CONNBAD0004", referenceD),
        ] {
            let wav = try WAVFile.readSamples(path: out.appendingPathComponent("\(name).wav").path).1
            #expect(wav.count == roomSamples, "\(name).wav has the room's length")
            let onset = try #require(placement(of: reference, in: wav), "\(name)'s audio is in its file")
            let n = min(reference.count, wav.count - onset)
            #expect(n == reference.count, "the whole of \(name) is in its file")
            let mismatch = (0..<n).first { wav[onset + $0] != reference[$0] }
            #expect(mismatch == nil, "\(name).wav differs from libopus's decode at sample \(mismatch ?? -1)")
            #expect(wav[..<onset].allSatisfy { $0 == 0 } && wav[(onset + n)...].allSatisfy { $0 == 0 })
            onsets[name] = onset
        }
        // The pause is exact silence: 2 s of zeros between the halves (checked above sample for
        // sample; said here in so many words).
        if let onset = onsets["alice"] {
            let wav = try WAVFile.readSamples(path: out.appendingPathComponent("alice.wav").path).1
            #expect(wav[(onset + 96_000)..<(onset + 192_000)].allSatisfy { $0 == 0 }, "the 2 s pause is silent")
        }
        // Placed by the timestamps: 250 ms and 500 ms after A, and D with A, to the sample.
        if let a = onsets["alice"], let b = onsets["CONNLOSS0002"], let c = onsets["CONNPLAIN0003"],
            let d = onsets["CONNBAD0004"]
        {
            #expect(b - a == 12_000, "B is \(Double(b - a) / 48) ms after A; its timestamps say 250")
            #expect(c - a == 24_000, "C is \(Double(c - a) / 48) ms after A; its timestamps say 500")
            #expect(d == a, "D is \(Double(d - a) / 48) ms from A; its timestamps say 0")
        }

        let sora = try #require(json["soraAudioStreaming"] as? [String: Any])
        let connections = try #require(sora["connections"] as? [[String: Any]])
        let byID = Dictionary(uniqueKeysWithValues: connections.map { ($0["connectionID"] as? String ?? "", $0) })
        #expect(byID["CONNPAUSE0001"]?["track"] as? String == "alice")
        #expect(byID["CONNPAUSE0001"]?["packets"] as? Int == 200)
        #expect(byID["CONNLOSS0002"]?["packets"] as? Int == 150 - lost.count)
        #expect(byID["CONNLOSS0002"]?["languageCode"] as? String == "ja-JP")
        #expect(byID["CONNPLAIN0003"]?["packets"] as? Int == 150)
        #expect(byID["CONNBAD0004"]?["packets"] as? Int == 50)
        #expect(byID["CONNBAD0004"]?["malformed"] as? Int == 1)
        for id in ["CONNPAUSE0001", "CONNLOSS0002", "CONNPLAIN0003"] {
            #expect(byID[id]?["malformed"] as? Int == 0 && byID[id]?["cancelled"] as? Int == 0)
        }
        let tracks = try #require(json["tracks"] as? [[String: Any]])
        let trackB = try #require(tracks.first { $0["name"] as? String == "CONNLOSS0002" })
        let record = try #require((trackB["rtp"] as? [String: Any])?["record"] as? [String: Any])
        #expect(record["lost"] as? Int == lost.count && record["late"] as? Int == 0, "\(record)")
    }

    /// The same connection id in a second request continues its track (named by `--room`), placed by its timestamps
    /// (the track goes silent between the requests), within 1 ms.
    /// `--transcribe`: each speaker's final transcription goes back in the response of that
    /// speaker's own request, one JSON line in suzu's shape, while the body still streams (Sora
    /// pushes suzu's results to the channel as they come), with the same times as transcript.jsonl.
    @Test func transcribeLinesStreamInTheResponseOfTheirOwnConnection() throws {
        let key = "sk-test-SORA-TRANSCRIBE-0123456789"
        let server = try FakeRealtimeServer(expectedKey: key, transcribe: FakeRealtimeServer.namingTones([300, 500]))
        defer { server.stop() }
        let out = try temporaryDirectory()
        let (recorder, address) = try Self.startRecorder(
            out, duration: 16,
            extra: ["--transcribe", "--transcribe-url", server.transcriptionURL, "--transcribe-language", "en"],
            environment: ["OPENAI_API_KEY": key])
        // Two connections, 6 s each: a 300 Hz tone at 0.5-1.5 s, a 500 Hz tone at 1.0-2.2 s.
        let t0 = UInt64((Date().timeIntervalSince1970 + 1.5) * 1_000) * 1_000
        var senders: [(id: String, run: CLIRunner.Running)] = []
        for (id, frequency, from, to) in [("CONNTONE0300", 300.0, 0.5, 1.5), ("CONNTONE0500", 500.0, 1.0, 2.2)] {
            let pcm = (0..<(300 * 960)).map { n -> Int16 in
                let t = Double(n) / 48_000
                return t >= from && t < to ? Int16((8_000 * sin(2 * Double.pi * frequency * t)).rounded()) : 0
            }
            var connection = Connection(id: id, packets: RTPTestSender.encode(pcm).packets, frames: [])
            for i in 0..<300 { connection.frames.append((t0 + UInt64(i) * 20_000, UInt64(i), i)) }
            let file = out.appendingPathComponent("\(id).body")
            try Self.write(connection.body(), to: file)
            senders.append(
                (id, try CLIRunner.start([Self.sender.path, address, id, file.path], executable: Self.python)))
        }
        let results = senders.map { ($0.id, $0.run.wait(timeout: 60)) }
        let outcome = recorder.wait(timeout: 60)
        #expect(outcome.status == 0, "stderr: \(outcome.stderr)")
        #expect(!outcome.stderr.contains(key))

        let transcript = try String(contentsOf: out.appendingPathComponent("transcript.jsonl"), encoding: .utf8)
            .split(separator: "\n").compactMap {
                try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
        for (id, result) in results {
            #expect(
                result.status == 0 && result.stdout.hasPrefix("status=200\n"),
                "\(id): \(result.stdout) \(result.stderr)")
            let lines = result.stdout.split(separator: "\n").dropFirst().map(String.init)
            let objects = lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            let tone = id == "CONNTONE0300" ? "tone 300" : "tone 500"
            #expect(objects.count == lines.count && objects.count == 1, "\(id): one JSON line: \(lines)")
            guard let line = objects.first else { continue }
            #expect(line["type"] as? String == "openai" && line["is_final"] as? Bool == true, "\(line)")
            #expect(line["message"] as? String == tone && line["connection_id"] as? String == id, "\(line)")
            // The same words, at the same room times, as transcript.jsonl says.
            let written = transcript.first { $0["speaker"] as? String == id }
            #expect(written?["text"] as? String == tone, "\(transcript)")
            #expect(
                line["start"] as? Double == written?["start"] as? Double
                    && line["end"] as? Double == written?["end"] as? Double, "\(line) vs \(String(describing: written))"
            )
            // Streamed: the line was in the response before the request's body ended.
            #expect(result.stderr.contains("early_lines=1"), "\(id): \(result.stderr)")
        }
        let sora = try #require(try roomJSON(out)["soraAudioStreaming"] as? [String: Any])
        for connection in sora["connections"] as? [[String: Any]] ?? [] {
            #expect(connection["resultLines"] as? Int == 1 && connection["droppedResultLines"] as? Int == 0)
        }
    }

    @Test func aSecondRequestOfTheSameConnectionContinuesItsTrack() throws {
        let out = try temporaryDirectory()
        // Named by the room file's `sora` object.
        let roomFile = try temporaryDirectory("room-file").appendingPathComponent("people.json")
        try Data(#"{"sora": {"CONNAGAIN0005": "dave"}}"#.utf8).write(to: roomFile)
        let (recorder, address) = try Self.startRecorder(out, duration: 8, extra: ["--room", roomFile.path])
        let t0 = UInt64((Date().timeIntervalSince1970 + 1.0) * 1_000) * 1_000
        let speech = RTPTestSender.encode(TestSignal.speechLike(samples: 100 * 960, seed: 85)).packets
        var first = Connection(id: "CONNAGAIN0005", packets: speech, frames: [])
        for i in 0..<50 { first.frames.append((t0 + UInt64(i) * 20_000, UInt64(i), i)) }
        var second = first
        // The second request 1.5 s after the first ended, its sequence numbers starting anew.
        second.frames = (50..<100).map { (t0 + 2_500_000 + UInt64($0 - 50) * 20_000, UInt64($0 - 50), $0) }
        let one = out.appendingPathComponent("one.body")
        let two = out.appendingPathComponent("two.body")
        try Self.write(first.body(), to: one)
        try Self.write(second.body(), to: two)
        while Date().timeIntervalSince1970 < Double(t0) / 1e6 { usleep(1_000) }  // the sender's pacing
        let r1 = try Self.startCurl(address: address, id: first.id, body: one).wait(timeout: 60)
        let r2 = try Self.startCurl(address: address, id: first.id, body: two).wait(timeout: 60)
        let outcome = recorder.wait(timeout: 60)
        #expect(outcome.status == 0, "stderr: \(outcome.stderr)")
        #expect(r1.stdout.hasSuffix("\n200\n") && r2.stdout.hasSuffix("\n200\n"), "\(r1.stdout) \(r2.stdout)")

        let wav = try WAVFile.readSamples(path: out.appendingPathComponent("dave.wav").path).1
        let firstHalf = ReferenceOpusDecode.decode(speech[0..<50].map { .init(payload: $0, arrived: true) })
        // A new request is a new stream for the decoder (as a restarted RTP sender is).
        let secondHalf = ReferenceOpusDecode.decode(speech[50..<100].map { .init(payload: $0, arrived: true) })
        let onset = try #require(placement(of: firstHalf, in: wav))
        #expect(wav[onset..<(onset + 48_000)].elementsEqual(firstHalf), "the first request, exactly")
        // A new request starts a new stream, placed like a restarted RTP sender: by its paced
        // arrivals, within 1 ms of its timestamps (the first request's streams are placed by
        // their timestamps to the sample).
        let expectedOnset = onset + 2_500 * 48
        let found = placement(of: secondHalf, in: Array(wav[(onset + 48_000)...])).map { $0 + onset + 48_000 }
        let secondOnset = try #require(found, "the second request is in the file")
        #expect(
            abs(secondOnset - expectedOnset) <= 48, "the second request is \(secondOnset - expectedOnset) samples off")
        #expect(wav[(onset + 48_000)..<secondOnset].allSatisfy { $0 == 0 }, "silence between the requests")
        #expect(
            wav[secondOnset..<(secondOnset + 48_000)].elementsEqual(secondHalf),
            "the second request continues the track, exactly libopus's decode")
        let json = try roomJSON(out)
        let sora = try #require(json["soraAudioStreaming"] as? [String: Any])
        let connection = try #require((sora["connections"] as? [[String: Any]])?.first)
        #expect(connection["requests"] as? Int == 2 && connection["packets"] as? Int == 100)
        #expect(connection["track"] as? String == "dave" && connection["connectionID"] as? String == "CONNAGAIN0005")
    }

    /// Other paths, a missing connection id, HTTP/1: refused with the right status and a clear
    /// body; nothing becomes a track.
    @Test func wrongPathsMissingIdsAndHTTP1AreRefused() throws {
        let out = try temporaryDirectory()
        let (recorder, address) = try Self.startRecorder(out)
        let body = out.appendingPathComponent("x.body")
        var bytes: [UInt8] = []
        SoraStreamingFrame.writeHeader(timestamp: 1, sequence: 1, payloadLength: 3, into: &bytes)
        bytes += [0xF8, 0xFF, 0xFE]
        try Self.write(bytes, to: body)
        let notFound = try Self.startCurl(address: address, id: "CONNX", body: body, path: "/other").wait(timeout: 30)
        let noID = try Self.startCurl(address: address, id: nil, body: body).wait(timeout: 30)
        let http1 = try CLIRunner.start(
            [
                "-sS", "--http1.1", "-H", "sora-connection-id: CONNY", "--data-binary", "@\(body.path)", "-w",
                "\n%{http_code}\n", "http://\(address)/speech",
            ], executable: Self.curl
        ).wait(timeout: 30)
        recorder.signal(SIGINT)
        let outcome = recorder.wait(timeout: 60)
        #expect(outcome.status == 0, "stderr: \(outcome.stderr)")
        #expect(notFound.stdout.hasSuffix("\n404\n") && notFound.stdout.contains("/speech"), "\(notFound.stdout)")
        #expect(
            noID.stdout.hasSuffix("\n400\n") && noID.stdout.contains("sora-connection-id"),
            "\(noID.stdout) \(noID.stderr)")
        #expect(
            http1.stdout.hasSuffix("\n505\n") && http1.stdout.contains("HTTP/2 only"), "\(http1.stdout) \(http1.stderr)"
        )
        #expect(outcome.stderr.contains("no sora-connection-id header") && outcome.stderr.contains("refused an HTTP/1"))
        let json = try roomJSON(out)
        let sora = try #require(json["soraAudioStreaming"] as? [String: Any])
        #expect((sora["connections"] as? [Any])?.isEmpty == true && sora["refusedRequests"] as? Int == 3)
    }

    /// A self-signed certificate for 127.0.0.1 made by the openssl tool: (certificate, key).
    static func makeCertificate(in directory: URL) throws -> (URL, URL) {
        let certificate = directory.appendingPathComponent("cert.pem")
        let key = directory.appendingPathComponent("key.pem")
        let made = try CLIRunner.run(
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-keyout", key.path, "-out",
                certificate.path, "-days", "1", "-nodes", "-subj", "/CN=127.0.0.1", "-addext",
                "subjectAltName=IP:127.0.0.1",
            ], executable: URL(fileURLWithPath: "/usr/bin/openssl"))
        if made.status != 0 { throw TestFailure("openssl req failed: \(made.stderr)") }
        return (certificate, key)
    }

    /// `https://` (--tls-cert/--tls-key): curl over TLS with ALPN h2 records exactly; an HTTP/1-only
    /// client fails the handshake (no_application_protocol) and is named in a warning.
    @Test func overTLSWithALPNh2ARequestIsRecordedExactly() throws {
        let out = try temporaryDirectory()
        let (certificate, key) = try Self.makeCertificate(in: try temporaryDirectory("tls-keys"))
        let recorder = try CLIRunner.start(
            [
                "record", "--sora-audio-streaming", "127.0.0.1:0", "--tls-cert", certificate.path, "--tls-key",
                key.path, "--duration", "6", "--out", out.path, "--quiet",
            ] + RealtimeTestPriority.recordFlags)
        let marker = "roomtap: sora audio streaming on https://"
        #expect(waitUntil { recorder.stderrSoFar.contains(marker) || !recorder.isRunning })
        let line = try #require(recorder.stderrSoFar.split(separator: "\n").first { $0.hasPrefix(marker) })
        let address = line.dropFirst(marker.count).replacingOccurrences(of: "/speech", with: "")
        let speech = RTPTestSender.encode(TestSignal.speechLike(samples: 50 * 960, seed: 86)).packets
        let t0 = UInt64(Date().timeIntervalSince1970 * 1_000) * 1_000
        let connection = Connection(
            id: "CONNTLS0006", packets: speech, frames: (0..<50).map { (t0 + UInt64($0) * 20_000, UInt64($0), $0) })
        let body = out.appendingPathComponent("tls.body")
        try Self.write(connection.body(), to: body)
        let url = "https://\(address)/speech"
        let h2 = try CLIRunner.run(
            [
                "-sS", "--http2", "--cacert", certificate.path, "-H", "sora-connection-id: CONNTLS0006",
                "--data-binary", "@\(body.path)", "-w", "\n%{http_code} %{http_version}\n", url,
            ], timeout: 60, executable: Self.curl)
        let http1 = try CLIRunner.run(
            [
                "-sS", "--http1.1", "--cacert", certificate.path, "-H", "sora-connection-id: CONNTLS0007",
                "--data-binary", "@\(body.path)", url,
            ], timeout: 60, executable: Self.curl)
        let outcome = recorder.wait(timeout: 60)
        #expect(outcome.status == 0, "stderr: \(outcome.stderr)")
        #expect(h2.status == 0 && h2.stdout.hasSuffix("\n200 2\n"), "\(h2.stdout) \(h2.stderr)")
        #expect(http1.status == 35 && http1.stderr.contains("no application protocol"), "\(http1.stderr)")
        #expect(outcome.stderr.contains("TLS handshake failed") && outcome.stderr.contains("no application protocol"))
        let wav = try WAVFile.readSamples(path: out.appendingPathComponent("CONNTLS0006.wav").path).1
        let reference = ReferenceOpusDecode.decode(speech[0..<50].map { .init(payload: $0, arrived: true) })
        let onset = try #require(placement(of: reference, in: wav))
        #expect(wav[onset..<(onset + reference.count)].elementsEqual(reference), "the TLS request, exactly")
        #expect(!FileManager.default.fileExists(atPath: out.appendingPathComponent("CONNTLS0007.wav").path))
    }

    /// A key that is not the certificate's: one line, exit 1, nothing made.
    @Test func aWrongTLSKeyIsOneLineAndNothingIsMade() throws {
        let keys = try temporaryDirectory("tls-keys")
        let (certificate, _) = try Self.makeCertificate(in: keys)
        let other = try Self.makeCertificate(in: try temporaryDirectory("tls-other"))
        let out = try temporaryDirectory().appendingPathComponent("never")
        let run = InProcessCLI.run(
            [
                "record", "--sora-audio-streaming", "127.0.0.1:0", "--tls-cert", certificate.path, "--tls-key",
                other.1.path, "--out", out.path,
            ])
        #expect(run.status == 1, "\(run.stderr)")
        #expect(run.stderrLines.count == 1 && run.stderr.contains("is not the key of --tls-cert"), "\(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out.path), "no directory is made")
        let half = InProcessCLI.run(
            ["record", "--sora-audio-streaming", "0", "--tls-cert", certificate.path, "--out", out.path])
        #expect(half.status == 64 && half.stderr.contains("give --tls-cert and --tls-key together"), "\(half.stderr)")
    }

    /// The recording ends while a request streams: the recorder exits 0, its file has the audio up
    /// to the end of the room, exactly, and no warning blames the client.
    @Test func aRecordingThatEndsMidRequestKeepsWhatCame() throws {
        let out = try temporaryDirectory()
        let (recorder, address) = try Self.startRecorder(out, duration: 4)
        let speech = RTPTestSender.encode(TestSignal.speechLike(samples: 500 * 960, seed: 87)).packets
        let t0 = UInt64((Date().timeIntervalSince1970 + 0.3) * 1_000) * 1_000
        let connection = Connection(
            id: "CONNLONG0008", packets: speech, frames: (0..<500).map { (t0 + UInt64($0) * 20_000, UInt64($0), $0) })
        let body = out.appendingPathComponent("long.body")
        try Self.write(connection.body(), to: body)
        let client = try Self.startCurl(address: address, id: connection.id, body: body)
        let outcome = recorder.wait(timeout: 60)
        let result = client.wait(timeout: 30)
        #expect(outcome.status == 0, "stderr: \(outcome.stderr)")
        #expect(!outcome.stderr.contains("CONNLONG0008"), "no warning about the connection: \(outcome.stderr)")
        #expect(result.status != 0 || !result.stdout.hasSuffix("\n200\n"), "the request did not complete")
        let wav = try WAVFile.readSamples(path: out.appendingPathComponent("CONNLONG0008.wav").path).1
        let reference = ReferenceOpusDecode.decode(speech[0..<500].map { .init(payload: $0, arrived: true) })
        let onset = try #require(placement(of: reference, in: wav))
        let kept = wav.count - onset
        #expect(kept > 48_000 && kept < reference.count, "\(kept) samples of the stream are in the file")
        // What the file holds is exact up to where the stream's audio ends (its request was cut
        // at the stop; the record plays out what it held, then silence).
        let heard = (0..<kept).prefix { wav[onset + $0] == reference[$0] }.count
        #expect(heard > 48_000, "exact for \(heard) samples")
        #expect(wav[(onset + heard)...].allSatisfy { $0 == 0 }, "silence after the last packet placed")
        let json = try roomJSON(out)
        let sora = try #require(json["soraAudioStreaming"] as? [String: Any])
        let entry = try #require((sora["connections"] as? [[String: Any]])?.first)
        #expect(entry["cancelled"] as? Int == 0 && entry["malformed"] as? Int == 0, "\(entry)")
    }

    @Test func aBadAddressIsAUsageError() throws {
        let out = try temporaryDirectory()
        let run = InProcessCLI.run(["record", "--sora-audio-streaming", "localhost:x", "--out", out.path])
        #expect(run.status == 64)
        #expect(
            run.stderrLines.first?.contains("--sora-audio-streaming 'localhost:x' must be HOST:PORT") == true,
            "\(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out.appendingPathComponent("room.json").path))
    }
}
