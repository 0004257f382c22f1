import Foundation
import RoomTapAgent
import RoomTapAgentTestSupport
import RoomTapCore
import RoomTapSync
import RoomTapTestSupport
import Testing

/// Per-speaker transcription against the stand-in's transcription sessions (`?intent=transcription`,
/// server VAD, each turn transcribed): every speaker's own session, lines attributed to the right
/// speaker at the room times of their words, silence never sent, one speaker's failure nobody
/// else's. A live room on the real-time clock.
@Suite(.serialized) struct TranscriptionTests {
    static let tones: [Double] = [300, 500, 700]

    /// The stand-in's "model": names the strongest of the test tones in a turn.
    static let toneTranscriber = FakeRealtimeServer.namingTones(tones)

    /// A tone from `from` to `to` seconds of the room.
    static func speech(_ frequency: Double, from: Double, to: Double) -> SineSource {
        SineSource(
            frequency: frequency, amplitude: 8_000, offset: Int64(from * 48_000), length: Int64((to - from) * 48_000))
    }

    /// A room of `speakers` on the real-time clock, each transcribed in a session of its own.
    final class Rig {
        let server: FakeRealtimeServer
        let room: Room
        let transcription: RoomTranscription
        let tracks: [AudioTrack]
        let writer: TranscriptWriter
        let directory: TemporaryDirectory
        let log: LogCapture

        init(
            _ speakers: [(String, any FrameSource)], server: FakeRealtimeServer? = nil,
            settings: RealtimeTranscriptionSettings = RealtimeTranscriptionSettings(language: "en"),
            before: (AudioTrack) -> Void = { _ in }
        ) throws {
            let fake = try server ?? FakeRealtimeServer(expectedKey: AgentTestRig.key, transcribe: toneTranscriber)
            self.server = fake
            directory = try TemporaryDirectory()
            let writer = try TranscriptWriter(path: directory.file("transcript.jsonl"), recordLagSamples: 4_800)
            self.writer = writer
            let url = fake.transcriptionURL
            let capture = LogCapture()
            log = capture
            let sink = capture.sink
            transcription = RoomTranscription(configure: { speaker in
                var c = RealtimeAgentConfiguration.transcription(
                    apiKey: AgentTestRig.key, url: url, settings: settings,
                    speaker: speaker, transcript: writer, log: { sink("\(speaker): \($0)") })
                c.reconnectDelay = { _ in 0.05 }
                return c
            })
            let room = Room(clock: RealTimeClock(), endsWhenSourcesFinish: false)
            self.room = room
            tracks = speakers.map { room.addTrack(name: $0.0, source: $0.1) }
            for track in tracks {
                before(track)
                try transcription.transcribe(track)
            }
            // Every session open (or refused) before the room plays, so no word is missed meanwhile.
            _ = waitUntil {
                self.transcription.speakers.allSatisfy { [.connected, .failed].contains($0.statistics.state) }
            }
            room.start()
        }

        /// Runs the room to `seconds` of room time, stops it, finishes the transcription.
        func run(to seconds: Double) -> [[String: Any]] {
            #expect(waitUntil(timeout: .seconds(60)) { self.room.position >= Int64(seconds * 48_000) })
            room.stop()
            room.waitUntilFinished()
            transcription.finish(timeout: .seconds(10))
            writer.close()
            server.stop()
            return transcriptLines(directory.file("transcript.jsonl"))
        }
    }

    @Test func theGateSendsOnlyVoiceWithItsPrerollAndHangover() {
        var gate = VoiceGate(settings: VoiceGate.Settings(prerollMilliseconds: 300, hangoverMilliseconds: 500))
        let loud = [Int16](repeating: 3_000, count: 480)
        let quiet = [Int16](repeating: 0, count: 480)
        var passed: [Int64] = []
        var closedAt: Int64?
        for k in 0..<200 {
            let samples = (50..<80).contains(k) ? loud : quiet
            samples.withUnsafeBufferPointer { buffer in
                let frame = AudioFrame(
                    samples: buffer, channels: 1, roomSample: Int64(k) * 480,
                    status: (50..<80).contains(k) ? .normal : .silence)
                if gate.admit(frame, pass: { passed.append($0.index) }) { closedAt = Int64(k) }
            }
        }
        // 30 frames of pre-roll (20..<50), the 30 voiced frames, 50 frames of hangover (80..<130).
        #expect(passed == Array(20..<130), "\(passed.first ?? -1)...\(passed.last ?? -1) (\(passed.count))")
        #expect(closedAt == 129)
        #expect(!gate.isOpen)
        // A muted frame is never voice, whatever it holds.
        loud.withUnsafeBufferPointer { buffer in
            #expect(!gate.isVoiced(AudioFrame(samples: buffer, channels: 1, roomSample: 0, status: .muted)))
            #expect(gate.isVoiced(AudioFrame(samples: buffer, channels: 1, roomSample: 0, status: .normal)))
        }
    }

    @Test func aTranscriptionSessionIsOpenedAndSetUpAsTheServiceWants() throws {
        let configuration = RealtimeAgentConfiguration.transcription(
            apiKey: "k", settings: RealtimeTranscriptionSettings(), speaker: "alice")
        #expect(configuration.url == "wss://api.openai.com/v1/realtime?intent=transcription")
        #expect(!configuration.url.contains("model="))
        let azure = RealtimeAgentConfiguration.transcription(
            apiKey: "k", url: "wss://r.openai.azure.com/openai/v1/realtime", settings: RealtimeTranscriptionSettings(),
            speaker: "a")
        #expect(azure.url.hasSuffix("/openai/v1/realtime?intent=transcription") && azure.authentication == .azureAPIKey)

        let rig = try Rig([("alice", Self.speech(300, from: 0.3, to: 1.0))])
        let written = rig.run(to: 2.5)
        let update = try #require(
            rig.server.events(ofType: "session.update").first?.object["session"] as? [String: Any])
        #expect(update["type"] as? String == "transcription")
        let input = (update["audio"] as? [String: Any])?["input"] as? [String: Any]
        let transcription = input?["transcription"] as? [String: Any]
        #expect(transcription?["model"] as? String == "gpt-4o-mini-transcribe")
        #expect(transcription?["language"] as? String == "en")
        #expect((input?["turn_detection"] as? [String: Any])?["type"] as? String == "server_vad")
        #expect(rig.server.events(ofType: "error").isEmpty && !rig.log.all.contains { $0.contains("refused") })
        #expect(rig.server.transcriptionConnections == [0])
        #expect(written.count == 1, "\(written)")
    }

    @Test func threeSpeakersGetThreeSessionsAndEveryLineIsTheirs() throws {
        // alice and bob talk over each other; carol says nothing.
        let rig = try Rig([
            ("alice", Self.speech(300, from: 0.4, to: 1.4)),
            ("bob", Self.speech(500, from: 1.0, to: 2.2)),
            ("carol", ConstantSource(0)),
        ])
        let written = rig.run(to: 4)
        #expect(rig.server.transcriptionConnections.count == 3, "one session per speaker")
        let bySpeaker = Dictionary(grouping: written) { $0["speaker"] as? String ?? "" }
        #expect(Set(bySpeaker.keys) == ["alice", "bob"], "\(written)")
        let alice = try #require(bySpeaker["alice"]?.first)
        let bob = try #require(bySpeaker["bob"]?.first)
        #expect(alice["text"] as? String == "tone 300" && bob["text"] as? String == "tone 500", "\(written)")
        // Room times where the files hold the words (the prefix the server keeps is 0.3 s).
        func near(_ line: [String: Any], _ key: String, _ value: Double, _ slack: Double) -> Bool {
            guard let t = line[key] as? Double else { return false }
            return abs(t - value) <= slack
        }
        #expect(near(alice, "start", 0.4 - 0.3, 0.1) && near(alice, "end", 1.4, 0.1), "\(alice)")
        #expect(near(bob, "start", 1.0 - 0.3, 0.1) && near(bob, "end", 2.2, 0.1), "\(bob)")
        // Only voice is sent: carol nothing, the others their words with pre-roll and hangover.
        let stats = Dictionary(uniqueKeysWithValues: rig.transcription.speakers.map { ($0.track.name, $0.statistics) })
        #expect(
            stats["carol"]?.secondsSent == 0 && stats["carol"]?.framesGated ?? 0 > 300,
            "\(String(describing: stats["carol"]))")
        for (name, talk) in [("alice", 1.0), ("bob", 1.2)] {
            let sent = stats[name]?.secondsSent ?? 0
            #expect(sent >= talk && sent <= talk + 0.3 + 1.0 + 0.05, "\(name) sent \(sent) s for \(talk) s of talk")
        }
        #expect(stats.values.allSatisfy { $0.errors == 0 && $0.sessions == 1 }, "\(stats)")
    }

    @Test func oneSpeakersFailedSessionStallsNoOtherSpeaker() throws {
        let server = try FakeRealtimeServer(expectedKey: AgentTestRig.key, transcribe: Self.toneTranscriber)
        server.refuseNextUpgrades(status: 403)  // whoever comes first: a refused key ends that session
        let rig = try Rig(
            [
                ("alice", Self.speech(300, from: 0.5, to: 1.2)),
                ("bob", Self.speech(500, from: 0.5, to: 1.2)),
                ("carol", Self.speech(700, from: 0.5, to: 1.2)),
            ], server: server)
        let written = rig.run(to: 3)
        let failed = rig.transcription.speakers.filter { $0.statistics.state == .failed }
        #expect(failed.count == 1, "\(rig.transcription.speakers.map(\.statistics))")
        let loser = try #require(failed.first?.track.name)
        let lines = written.map { "\($0["speaker"] as? String ?? ""): \($0["text"] as? String ?? "")" }
        let expected = ["alice": "alice: tone 300", "bob": "bob: tone 500", "carol": "carol: tone 700"]
        #expect(Set(lines) == Set(expected.filter { $0.key != loser }.values), "\(lines)")
        let fatal = rig.log.all.filter { $0.contains("refused the API key") }
        #expect(fatal.count == 1 && fatal[0].hasPrefix("\(loser): "), "\(rig.log.all)")
        #expect(!rig.log.all.contains { $0.contains(AgentTestRig.key) })
    }

    @Test func aSpeakerOffTheRecordIsNeverSent() throws {
        let rig = try Rig(
            [("alice", Self.speech(300, from: 0.3, to: 1.0)), ("bob", Self.speech(500, from: 0.3, to: 1.0))],
            before: { track in if track.name == "bob" { track.controls.setEnabled(false, scope: .record) } })
        let written = rig.run(to: 2.5)
        #expect(written.map { $0["speaker"] as? String } == ["alice"], "\(written)")
        let bob = try #require(rig.transcription.speakers.first { $0.track.name == "bob" })
        #expect(bob.statistics.secondsSent == 0)
        let heard = rig.server.transcriptionConnections.map { rig.server.audio(connection: $0).count }
        #expect(heard.filter { $0 == 0 }.count == 1, "bob's session heard nothing: \(heard)")
    }

    /// Muted on the record mid-room (`roomtap mute bob --scope record` while he talks): from that
    /// tick on nothing of him is sent, and his line ends where the record went silent.
    @Test func aSpeakerTakenOffTheRecordMidRoomIsSentNothingMore() throws {
        let rig = try Rig([
            ("alice", Self.speech(300, from: 0.3, to: 1.0)), ("bob", Self.speech(500, from: 0.3, to: 3.0)),
        ])
        let bob = try #require(rig.tracks.first { $0.name == "bob" })
        #expect(waitUntil(timeout: .seconds(60)) { rig.room.position >= 48_000 })
        bob.controls.setEnabled(false, scope: .record)
        let mutedAt = Double(rig.room.position) / 48_000  // the tick it took effect, or just before
        let written = rig.run(to: 4.5)
        let session = try #require(rig.transcription.speakers.first { $0.track.name == "bob" })
        // bob's session is the one whose audio is his 500 Hz tone.
        let audios = rig.server.transcriptionConnections.map { rig.server.audio(connection: $0) }
        let bobsAudio = try #require(
            audios.first { a in
                !a.isEmpty
                    && toneAmplitude(500, in: a[...], rate: 24_000) > toneAmplitude(300, in: a[...], rate: 24_000)
            })
        // alice: 0.7 s of tone; bob: his tone from 0.3 s until the mute (0.7 s + the test's lag),
        // never the 2.7 s he talked.
        let bobVoiced = Double(bobsAudio.filter { abs($0) > 1_000 }.count) / 24_000
        #expect(
            bobVoiced >= 0.5 && bobVoiced <= mutedAt - 0.3 + 0.15,
            "bob's tone sent: \(bobVoiced) s (muted at \(mutedAt) s)")
        #expect(session.statistics.secondsSent <= mutedAt + 1.5, "\(session.statistics)")
        let bobLines = written.filter { $0["speaker"] as? String == "bob" }
        #expect(bobLines.count == 1, "\(written)")
        let end = bobLines.first?["end"] as? Double ?? 99
        #expect(end <= mutedAt + 0.1 + 0.15, "his line ends where the record went silent: \(end) s")
    }

    @Test func aTurnCutOffByTheRoomsEndIsCommittedAndTranscribed() throws {
        // alice talks until the room stops: no silence ends her turn, so the end commits it.
        let rig = try Rig([("alice", SineSource(frequency: 300, amplitude: 8_000, offset: 48_000))])
        let written = rig.run(to: 2)
        #expect(rig.server.events(ofType: "input_audio_buffer.commit").count == 1)
        #expect(rig.server.events(ofType: "error").isEmpty)
        let line = try #require(written.first)
        #expect(written.count == 1 && line["speaker"] as? String == "alice" && line["text"] as? String == "tone 300")
        #expect(((line["start"] as? Double) ?? 0) >= 0.6 && ((line["end"] as? Double) ?? 0) >= 1.9, "\(line)")
    }
}

/// The JSON objects of a transcript.jsonl, in order.
func transcriptLines(_ path: String) -> [[String: Any]] {
    guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [] }
    return text.split(separator: "\n").compactMap {
        (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
    }
}

extension TranscriptionTests {
    /// The live transcription models take no turn detection (the stand-in refuses `server_vad`
    /// with them, as the service does): the session is set up with `turn_detection: null` and each
    /// turn is committed when the gate closes, the line placed where the speaker talked.
    @Test func aModelWithoutTurnDetectionGetsEachTurnCommittedByTheGate() throws {
        let rig = try Rig(
            [("alice", MixSource([Self.speech(300, from: 0.4, to: 0.9), Self.speech(300, from: 2.4, to: 2.9)]))],
            settings: RealtimeTranscriptionSettings(model: "gpt-live-transcribe"))
        let written = rig.run(to: 4.5)
        let update = rig.server.events(ofType: "session.update").first?.object["session"] as? [String: Any]
        let input = (update?["audio"] as? [String: Any])?["input"] as? [String: Any]
        #expect(input?["turn_detection"] is NSNull, "\(String(describing: input))")
        #expect(rig.server.events(ofType: "error").isEmpty && !rig.log.all.contains { $0.contains("refused") })
        #expect(rig.server.events(ofType: "input_audio_buffer.commit").count == 2)
        #expect(written.map { $0["text"] as? String } == ["tone 300", "tone 300"], "\(written)")
        let starts = written.compactMap { $0["start"] as? Double }
        let ends = written.compactMap { $0["end"] as? Double }
        // From the pre-roll (0.3 s before the voice) to where the voice ended.
        #expect(starts.count == 2 && abs(starts[0] - 0.1) <= 0.05 && abs(starts[1] - 2.1) <= 0.05, "\(starts)")
        #expect(ends.count == 2 && abs(ends[0] - 0.9) <= 0.05 && abs(ends[1] - 2.9) <= 0.05, "\(ends)")
    }
}

/// Sums sources (a speaker who talks twice).
final class MixSource: FrameSource, @unchecked Sendable {
    let parts: [any FrameSource]
    private var scratch = [Int16](repeating: 0, count: 480)
    init(_ parts: [any FrameSource]) { self.parts = parts }
    var channels: Int { 1 }
    var isFinished: Bool { false }
    func render(into samples: UnsafeMutableBufferPointer<Int16>, at roomSample: Int64) -> FrameStatus {
        for i in samples.indices { samples[i] = 0 }
        var any = false
        for part in parts {
            let status = scratch.withUnsafeMutableBufferPointer { part.render(into: $0, at: roomSample) }
            guard !status.isZero else { continue }
            any = true
            for i in samples.indices { samples[i] = samples[i] &+ scratch[i] }
        }
        return any ? .normal : .silence
    }
}
