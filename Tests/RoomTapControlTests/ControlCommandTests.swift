import Foundation
import RoomTapControl
import RoomTapSync
import RoomTapTestSupport
import Synchronization
import Testing

/// ``ControlCommand``: every command survives command → request → command, every malformed request
/// gets the exact code and message the recorder has always given, and a command about tracks sent
/// before the room is set up is answered `starting` at once (the clients ask again).
@Suite struct ControlCommandTests {
    /// Every case, with every kind of payload (scopes given and not, a gain and a dB change, each
    /// agent action).
    static let commands: [ControlCommand] = [
        .ping, .hello, .tracks, .status, .unsolo, .watch, .stop,
        .mute(track: "alice", scope: nil), .mute(track: "Alice", scope: .heard),
        .mute(track: "ssrc-4d2", scope: .record), .mute(track: "bob", scope: .all),
        .unmute(track: "bob", scope: nil), .unmute(track: "bob", scope: .heard),
        .volume(track: "bob", change: .set(0.5), scope: nil),
        .volume(track: "bob", change: .set(VolumeLevel.parse("-6dB")!), scope: .record),
        .volume(track: "bob", change: .set(0), scope: .all), .volume(track: "bob", change: .set(10), scope: .heard),
        .volume(track: "bob", change: .change(decibels: -3), scope: nil),
        .volume(track: "bob", change: .change(decibels: 200), scope: .all),
        .solo(tracks: ["alice"]), .solo(tracks: ["alice", "bob", "mix"]),
        .agent(.say("hello \"room\"\nbye")), .agent(.instructions("be brief")), .agent(.mute), .agent(.unmute),
    ]

    @Test func theListCoversEveryCommand() {
        #expect(Set(Self.commands.map(\.name)) == Set(ControlCommand.Name.allCases))
    }

    @Test(arguments: commands)
    func roundTripsThroughARequestAndItsLine(_ command: ControlCommand) throws {
        let request = command.request(id: 7)
        #expect(request.command == command.name.rawValue && request.id == 7)
        #expect(try ControlCommand(request) == command)
        let line = Array(request.jsonText.utf8)
        let parsed = try line.withUnsafeBytes { ControlRequest.parse($0) }.get()
        #expect(parsed == request)
        #expect(try ControlCommand(parsed) == command)
    }

    @Test func requestsCarryTheProtocolsParameters() {
        #expect(ControlCommand.mute(track: "bob", scope: nil).parameters == ["track": "bob"])
        #expect(
            ControlCommand.unmute(track: "bob", scope: .record).parameters == ["track": "bob", "scope": "record"])
        #expect(
            ControlCommand.volume(track: "bob", change: .set(0.5), scope: .all).parameters
                == ["track": "bob", "volume": 0.5, "scope": "all"])
        #expect(
            ControlCommand.volume(track: "bob", change: .change(decibels: 3), scope: nil).parameters
                == ["track": "bob", "change_db": 3])
        #expect(ControlCommand.solo(tracks: ["a", "b"]).parameters == ["tracks": ["a", "b"]])
        #expect(ControlCommand.agent(.say("hi")).parameters == ["action": "say", "text": "hi"])
        #expect(ControlCommand.agent(.mute).parameters == ["action": "mute"])
        #expect(ControlCommand.stop.request().jsonText == #"{"cmd":"stop"}"#)
    }

    @Test func readsWhatClientsSend() throws {
        func command(_ line: String) throws -> ControlCommand {
            try ControlCommand(Array(line.utf8).withUnsafeBytes { ControlRequest.parse($0) }.get())
        }
        #expect(
            try command(#"{"id":2,"cmd":"volume","track":"alice","volume":"-6dB"}"#)
                == .volume(track: "alice", change: .set(VolumeLevel.parse("-6dB")!), scope: nil))
        #expect(
            try command(#"{"cmd":"volume","track":"alice","volume":"+30dB","scope":"record"}"#)
                == .volume(track: "alice", change: .set(10), scope: .record))
        #expect(try command(#"{"cmd":"mute","track":"bob","scope":null}"#) == .mute(track: "bob", scope: nil))
        // Parameters a command does not take are ignored, as they always were.
        #expect(try command(#"{"cmd":"tracks","scope":"everything","x":[1]}"#) == .tracks)
    }

    @Test func namesTracksIsTheSetUpGatesSet() {
        let named = Set(Self.commands.filter(\.namesTracks).map(\.name))
        #expect(named == [.tracks, .mute, .unmute, .volume, .solo, .unsolo])
    }

    /// Each malformed request: the code and the one-line message (as the recorder's handler gave
    /// them before commands were typed).
    static let malformed: [(String, ControlErrorCode, String)] = [
        (#"{"cmd":"mute"}"#, .badRequest, #""mute" needs "track" (a string)"#),
        (#"{"cmd":"unmute","track":null}"#, .badRequest, #""unmute" needs "track" (a string)"#),
        (#"{"cmd":"unmute","track":5}"#, .badRequest, #""track" must be a string"#),
        (#"{"cmd":"volume","volume":1}"#, .badRequest, #""volume" needs "track" (a string)"#),
        (
            #"{"cmd":"mute","track":"a","scope":"everything"}"#, .badRequest,
            #""scope" must be one of "heard", "record", "all""#
        ),
        (
            #"{"cmd":"mute","track":"a","scope":"Heard"}"#, .badRequest,
            #""scope" must be one of "heard", "record", "all""#
        ),
        (#"{"cmd":"volume","track":"a","scope":1,"volume":1}"#, .badRequest, #""scope" must be a string"#),
        (#"{"cmd":"volume","track":"a"}"#, .badRequest, #""volume" needs "volume" (a volume)"#),
        (
            #"{"cmd":"volume","track":"a","volume":11}"#, .outOfRange,
            #""volume" 11 is outside 0...10 (use decibels like "-6dB" to clamp)"#
        ),
        (
            #"{"cmd":"volume","track":"a","volume":"-0.5"}"#, .outOfRange,
            #""volume" "-0.5" is outside 0...10 (use decibels like "-6dB" to clamp)"#
        ),
        (
            #"{"cmd":"volume","track":"a","volume":"loud"}"#, .badRequest,
            #""volume" must be a gain 0...10 (like 0.5) or decibels (like "-6dB")"#
        ),
        (
            #"{"cmd":"volume","track":"a","volume":true}"#, .badRequest,
            #""volume" must be a number or a string like "-6dB""#
        ),
        (#"{"cmd":"volume","track":"a","change_db":"3"}"#, .badRequest, #""change_db" must be a number"#),
        (
            #"{"cmd":"volume","track":"a","change_db":3,"volume":1}"#, .badRequest,
            #"give "volume" or "change_db", not both"#
        ),
        (#"{"cmd":"volume","track":"a","change_db":-201}"#, .outOfRange, #""change_db" must be -200...200 (dB)"#),
        (#"{"cmd":"solo"}"#, .badRequest, #""solo" needs "tracks" (an array of strings)"#),
        (#"{"cmd":"solo","tracks":"alice"}"#, .badRequest, #""tracks" must be an array of strings"#),
        (#"{"cmd":"solo","tracks":["alice",1]}"#, .badRequest, #""tracks" must be an array of strings"#),
        (#"{"cmd":"solo","tracks":[]}"#, .badRequest, "'solo' needs at least one track name"),
        (#"{"cmd":"agent"}"#, .badRequest, #"'agent' needs "action": say, instructions, mute or unmute"#),
        (
            #"{"cmd":"agent","action":"dance"}"#, .badRequest,
            #""action" must be one of "say", "instructions", "mute", "unmute""#
        ),
        (#"{"cmd":"agent","action":"say"}"#, .badRequest, #""agent" needs "text" (a string)"#),
        (#"{"cmd":"agent","action":"instructions","text":[]}"#, .badRequest, #""text" must be a string"#),
        (
            #"{"cmd":"fly"}"#, .unknownCommand,
            "unknown command 'fly' (commands: ping, hello, tracks, status, mute, unmute, volume, solo, unsolo, watch, "
                + "stop, agent)"
        ),
        (
            #"{"cmd":"MUTE","track":"a"}"#, .unknownCommand,
            "unknown command 'MUTE' (commands: ping, hello, tracks, status, mute, unmute, volume, solo, unsolo, watch, "
                + "stop, agent)"
        ),
    ]

    @Test(arguments: malformed)
    func malformedRequestsGetTheirCodeAndMessage(_ line: String, _ code: ControlErrorCode, _ message: String) throws {
        let request = try Array(line.utf8).withUnsafeBytes { ControlRequest.parse($0) }.get()
        #expect(throws: ControlFailure(code, message)) { try ControlCommand(request) }
    }

    // MARK: - The set-up: answered at once, asked again by the client

    /// A handler shaped as the recorder's: a typed command, refused `starting` until the gate
    /// opens; then every command is `{"done": NAME}`.
    final class GatedHandler: ControlHandler {
        let gate = SetUpGate()
        let refused = Atomic<Int>(0)

        func handle(_ request: ControlRequest) -> ControlResponse {
            do throws(ControlFailure) {
                let command = try ControlCommand(request)
                if let refusal = gate.refusal(of: command) {
                    refused.add(1, ordering: .relaxed)
                    return .failure(refusal)
                }
                return .ok(["done": .string(command.name.rawValue)])
            } catch { return .failure(error) }
        }
    }

    @Test func theGateRefusesOnlyTrackCommandsUntilItOpens() {
        let gate = SetUpGate()
        for command in Self.commands {
            #expect(gate.refusal(of: command) == (command.namesTracks ? ControlFailure.starting : nil))
        }
        gate.open()
        gate.open()  // idempotent
        #expect(gate.isOpen && Self.commands.allSatisfy { gate.refusal(of: $0) == nil })
        #expect(ControlFailure.starting.code == .starting)
        #expect(ControlFailure.starting.message == "the recorder is still starting; try again in a moment")
    }

    @Test func aTrackCommandBeforeTheSetUpIsAnsweredAtOnceAndTheServerGoesOn() throws {
        let directory = ShortTemporaryDirectory()
        let path = directory.file("c.sock")
        let handler = GatedHandler()
        let server = try ControlServer(path: path, handler: handler)
        defer { server.stop() }
        let raw = try #require(RawConnection(path: path))
        let start = ContinuousClock.now
        // A mute, then a ping behind it on the same connection: both answered, in order, while
        // the room is still not set up (a handler that waited would hold the ping too).
        raw.send(#"{"id":1,"cmd":"mute","track":"alice"}"# + "\n" + #"{"id":2,"cmd":"ping"}"# + "\n")
        let first = raw.readLine(timeout: 30)
        let second = raw.readLine(timeout: 30)
        let elapsed = ContinuousClock.now - start
        #expect(
            first
                == #"{"id":1,"ok":false,"error":{"code":"starting","message":"the recorder is still starting; try again in a moment"}}"#
        )
        #expect(second == #"{"id":2,"ok":true,"result":{"done":"ping"}}"#)
        // The old handler held a track command up to 10 s; an answer at once takes microseconds.
        // The bound is generous for a loaded machine and still far below that wait.
        #expect(elapsed < .seconds(5), "answered after \(elapsed)")

        // A client that does not ask again gets the failure as it is.
        let client = try ControlClient(path: path)
        #expect(
            throws: ControlClientError.failure(
                code: .starting, message: "the recorder is still starting; try again in a moment")
        ) { try client.request(.solo(tracks: ["alice"])) }
    }

    @Test func aClientAsksAgainUntilTheRoomIsSetUp() throws {
        let directory = ShortTemporaryDirectory()
        let path = directory.file("c.sock")
        let handler = GatedHandler()
        let server = try ControlServer(path: path, handler: handler)
        defer { server.stop() }
        let answer = Locked<JSONValue?>(nil)
        let work = BackgroundWork {
            guard let client = try? ControlClient(path: path) else { return }
            let volume = ControlCommand.volume(track: "alice", change: .set(0.5), scope: nil)
            let result = try? client.request(volume, whileStarting: .seconds(60))
            answer.withLock { $0 = result }
        }
        // Refused at least twice (so it did ask again), then the room is set up.
        #expect(waitUntil(timeout: .seconds(60)) { handler.refused.load(ordering: .relaxed) >= 2 })
        handler.gate.open()
        #expect(work.wait(timeout: 60), "the request finished")
        #expect(answer.withLock { $0 } == ["done": "volume"])
    }
}
