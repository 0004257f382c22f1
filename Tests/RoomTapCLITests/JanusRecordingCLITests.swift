import Foundation
import RoomTapAll
import RoomTapRTPTestSupport
import Testing

/// The Janus fixtures beside the checkout (`../shared/fixtures/janus-mjr/`: three publishers of one
/// Janus 1.1.2 VideoRoom whose speech starts 2.5 s apart, and their source WAVs).
let janusFixtures = repositoryRoot.deletingLastPathComponent().appendingPathComponent("shared/fixtures/janus-mjr")
let haveJanusFixtures = FileManager.default.fileExists(atPath: janusFixtures.appendingPathComponent("README.md").path)
let needsJanusFixtures = Testing.ConditionTrait.enabled(
    if: haveJanusFixtures, "needs ../shared/fixtures/janus-mjr beside the checkout")

/// The fixture participants: name, publisher id, .mjr, source WAV, when the speech started (unix s).
struct JanusParticipant {
    let name: String
    let mjr: URL
    let source: URL
    let startUnix: Double

    static func all() throws -> [JanusParticipant] {
        let data = try Data(contentsOf: janusFixtures.appendingPathComponent("participants.json"))
        let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let list = try #require(json["participants"] as? [[String: Any]])
        return try list.map {
            JanusParticipant(
                name: try #require($0["name"] as? String),
                mjr: janusFixtures.appendingPathComponent(try #require($0["mjr"] as? String)),
                source: janusFixtures.appendingPathComponent(try #require($0["source_wav"] as? String)),
                startUnix: try #require($0["source_start_unix"] as? Double))
        }
    }
}

/// Where `source` lies in `track` and the correlation of the whole source there: the lag of the
/// best correlation of their 10 ms RMS envelopes, refined on the signals averaged over 8 samples
/// (±10 ms), then on the samples (±8), each time over the whole source.
func bestLag(of source: [Int16], in track: [Int16]) -> (lag: Int, correlation: Double) {
    func envelope(_ x: [Int16]) -> [Double] {
        stride(from: 0, to: x.count - 479, by: 480).map { i in
            (x[i..<(i + 480)].reduce(0.0) { $0 + Double($1) * Double($1) } / 480).squareRoot()
        }
    }
    func centred(_ x: [Double]) -> [Double] {
        let mean = x.reduce(0, +) / Double(max(1, x.count))
        return x.map { $0 - mean }
    }
    /// The lag in `range` where `b` (all of it that overlaps) best matches `a`: the matched filter.
    func best(_ a: [Double], _ b: [Double], in range: ClosedRange<Int>) -> Int {
        var found = (lag: range.lowerBound, score: -Double.infinity)
        a.withUnsafeBufferPointer { a in
            b.withUnsafeBufferPointer { b in
                for lag in range {
                    let from = max(0, -lag)
                    let to = min(b.count, a.count - lag)
                    guard to > from else { continue }
                    var dot = 0.0
                    var energy = 0.0
                    for j in from..<to {
                        dot += a[lag + j] * b[j]
                        energy += a[lag + j] * a[lag + j]
                    }
                    let score = dot / max(1, energy.squareRoot())
                    if score > found.score { found = (lag, score) }
                }
            }
        }
        return found.lag
    }
    func averaged(_ x: [Int16]) -> [Double] {
        stride(from: 0, to: x.count - 7, by: 8).map { i in x[i..<(i + 8)].reduce(0.0) { $0 + Double($1) } / 8 }
    }
    let e = centred(envelope(track))
    let f = centred(envelope(source))
    let coarse = best(e, f, in: -f.count...e.count)
    let middle = best(averaged(track), averaged(source), in: (coarse * 60 - 60)...(coarse * 60 + 60))
    let lag = best(track.map(Double.init), source.map(Double.init), in: (middle * 8 - 8)...(middle * 8 + 8))
    let from = max(0, -lag)
    let end = min(track.count, lag + source.count)
    let placed = Array(track[max(0, lag)..<end])
    return (lag, correlation(placed, Array(source[from..<(from + placed.count)])))
}

@Suite("CLI: Janus recordings (.mjr) in")
struct JanusRecordingCLITests {
    /// The acceptance test of issue 13: the three publishers recorded together land 2.5 s and
    /// 5.0 s apart (±20 ms), each file correlating ≥ 0.9 with its source, on the wall clock the
    /// recordings say (room.json's start plus the lag within 50 ms of when the speech started).
    @Test(needsJanusFixtures) func theFixtureRoomLandsAlignedAndCorrelatesWithItsSources() throws {
        let out = try temporaryDirectory()
        let participants = try JanusParticipant.all()
        var arguments = ["record", "--mix", "--quiet", "--out", out.path]
        for p in participants { arguments += ["--file", "\(p.name)=\(p.mjr.path)"] }
        try roomtap(arguments, expect: 0)
        let json = try roomJSON(out)
        let start = try #require(roomStartTime(json)).timeIntervalSince1970
        var lags: [String: Int] = [:]
        var length: Int?
        for p in participants {
            let (_, track) = try WAVFile.readSamples(path: out.appendingPathComponent("\(p.name).wav").path)
            let (_, source) = try WAVFile.readSamples(path: p.source.path)
            if let length { #expect(track.count == length, "every file covers the room") }
            length = track.count
            let (lag, c) = bestLag(of: source, in: track)
            lags[p.name] = lag
            #expect(c >= 0.9, "\(p.name): correlation \(c)")
            let wallClock = start + Double(lag) / 48_000
            #expect(abs(wallClock - p.startUnix) < 0.05, "\(p.name): speech at \(wallClock), sent at \(p.startUnix)")
        }
        let alice = try #require(lags["alice"])
        #expect(abs(try #require(lags["bob"]) - alice - 120_000) <= 960, "bob - alice: \(lags)")
        #expect(abs(try #require(lags["carol"]) - alice - 240_000) <= 960, "carol - alice: \(lags)")
        let tracks = try #require(json["tracks"] as? [[String: Any]])
        let sources = tracks.compactMap { $0["source"] as? [String: Any] }
        #expect(sources.count == 3 && sources.allSatisfy { $0["kind"] as? String == "janus-mjr" })
        #expect(tracks.contains { $0["name"] as? String == "mix" })
    }

    /// --janus-room takes the room's audio recordings (not its video, not other files), names
    /// them by publisher, and places them by their first-packet times.
    @Test(needsJanusFixtures) func janusRoomTakesEveryAudioRecordingOfTheRoom() throws {
        let work = try temporaryDirectory()
        let recordings = work.appendingPathComponent("rec")
        try FileManager.default.createDirectory(at: recordings, withIntermediateDirectories: true)
        let participants = try JanusParticipant.all()
        var firstPacket: [String: Int64] = [:]
        for p in participants {
            try FileManager.default.copyItem(at: p.mjr, to: recordings.appendingPathComponent(p.mjr.lastPathComponent))
            firstPacket[p.mjr.lastPathComponent] = try JanusRecording.read(path: p.mjr.path).firstPacketMicroseconds
        }
        let video = JanusRecordingBuilder(header: "{\"t\": \"v\", \"c\": \"vp8\", \"s\": 1, \"u\": 2}")
        try Data(video.bytes()).write(
            to: recordings.appendingPathComponent("videoroom-587429-user-1001-1796070494380244-video-1.mjr"))
        try Data("notes".utf8).write(to: recordings.appendingPathComponent("README.md"))
        let out = work.appendingPathComponent("out")
        try roomtap(["record", "--janus-room", recordings.path, "--quiet", "--out", out.path], expect: 0)
        #expect(try listing(out) == ["room.json", "user-1001.wav", "user-1002.wav", "user-1003.wav"])
        let tracks = try #require(try roomJSON(out)["tracks"] as? [[String: Any]])
        let origin = try #require(firstPacket.values.min())
        for track in tracks {
            let source = try #require(track["source"] as? [String: Any])
            let file = ((source["path"] as? String ?? "") as NSString).lastPathComponent
            let u = try #require(firstPacket[file])
            #expect(source["offsetSamples"] as? Int == Int((u - origin) * 48 / 1000), "\(track)")
        }
    }

    @Test(needsJanusFixtures) func aDirectoryOfTwoRoomsIsOneLineNamingThem() throws {
        let work = try temporaryDirectory()
        let participants = try JanusParticipant.all()
        try FileManager.default.copyItem(
            at: participants[0].mjr, to: work.appendingPathComponent(participants[0].mjr.lastPathComponent))
        try FileManager.default.copyItem(
            at: participants[1].mjr,
            to: work.appendingPathComponent("videoroom-1234-user-7-1796070494380244-audio-0.mjr"))
        let out = work.appendingPathComponent("out")
        let outcome = try roomtap(["record", "--janus-room", work.path, "--out", out.path], expect: 1)
        #expect(outcome.stderrLines.count == 1, "\(outcome.stderr)")
        #expect(outcome.stderr.contains("2 rooms (videoroom-1234, videoroom-587429)"), "\(outcome.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out.path))
    }

    @Test func aVideoRecordingIsRefusedWithOneLine() throws {
        let work = try temporaryDirectory()
        var video = JanusRecordingBuilder(header: "{\"t\": \"v\", \"c\": \"vp8\", \"s\": 1, \"u\": 2}")
        video.frames.append((0, RTPPacketBuilder(payloadType: 96, payload: [0x90, 0x80, 1, 2]).bytes()))
        let path = work.appendingPathComponent("cam.mjr")
        try Data(video.bytes()).write(to: path)
        let out = work.appendingPathComponent("out")
        let outcome = try roomtap(
            ["record", "--file", "alice=\(sample("alice"))", "--file", "bob=\(path.path)", "--out", out.path],
            expect: 1)
        #expect(outcome.stderrLines.count == 1, "\(outcome.stderr)")
        #expect(outcome.stderr.hasPrefix("roomtap: error: \(path.path): a Janus video recording"), "\(outcome.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out.path))
    }

    /// A recording cut mid-frame (a killed Janus) is refused unless --allow-truncated, which
    /// records its whole frames.
    @Test(needsJanusFixtures) func aCutRecordingIsRecordedWithAllowTruncated() throws {
        let work = try temporaryDirectory()
        let whole = try Data(contentsOf: try JanusParticipant.all()[0].mjr)
        let cut = work.appendingPathComponent("cut.mjr")
        try whole.prefix(whole.count / 2 + 3).write(to: cut)
        let out = work.appendingPathComponent("out")
        let refused = try roomtap(["record", "--file", "a=\(cut.path)", "--out", out.path], expect: 1)
        #expect(refused.stderrLines.count == 1 && refused.stderr.contains("--allow-truncated"), "\(refused.stderr)")
        try roomtap(
            ["record", "--file", "a=\(cut.path)", "--allow-truncated", "--quiet", "--out", out.path], expect: 0)
        let (_, samples) = try WAVFile.readSamples(path: out.appendingPathComponent("a.wav").path)
        #expect(samples.count > 48_000 * 6 && samples.count < 48_000 * 10, "\(samples.count)")
    }
}
