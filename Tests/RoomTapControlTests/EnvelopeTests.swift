import RoomTapControl
import Testing

@Suite struct EnvelopeTests {
    private func parse(_ text: String) -> Result<ControlRequest, ControlEnvelopeError> {
        Array(text.utf8).withUnsafeBytes { ControlRequest.parse($0) }
    }

    @Test func splitsIdCommandAndParameters() throws {
        let request = try parse(#"{"id":"a1","cmd":"mute","track":"alice","scope":"heard"}"#).get()
        #expect(request == ControlRequest(id: "a1", command: "mute", parameters: ["track": "alice", "scope": "heard"]))
        #expect(try request.string("track") == "alice")
        #expect(try request.choice("scope", ["heard", "record", "all"]) == "heard")
        #expect(try parse(#"{"cmd":"ping"}"#).get().id == .null)
    }

    @Test func reportsWhatIsWrongWithTheEnvelope() {
        func failure(_ text: String) -> ControlEnvelopeError? {
            if case .failure(let error) = parse(text) { return error }
            return nil
        }
        #expect(failure(#"{"id":1,"cmd":"#)?.failure.code == .badJSON)
        #expect(failure(#"{"id":1,"cmd":"#)?.id == .null)
        #expect(failure("[1,2]")?.failure.code == .badRequest)
        #expect(
            failure(#"{"id":3}"#)
                == ControlEnvelopeError(
                    id: 3, failure: ControlFailure(.badRequest, #"missing "cmd" (the command name, like "ping")"#)))
        #expect(
            failure(#"{"id":4,"cmd":5}"#)
                == ControlEnvelopeError(
                    id: 4, failure: ControlFailure(.badRequest, #""cmd" must be a string"#)))
        #expect(failure(#"{"id":true,"cmd":"ping"}"#)?.id == .null)
        #expect(failure(#"{"id":true,"cmd":"ping"}"#)?.failure.code == .badRequest)
    }

    @Test func typedParametersSayWhatIsMissingOrWrong() throws {
        let request = try parse(#"{"cmd":"solo","tracks":["a",1],"track":7,"flag":"yes","scope":"loud"}"#).get()
        #expect(throws: ControlFailure(.badRequest, #""solo" needs "name" (a string)"#)) { try request.string("name") }
        #expect(throws: ControlFailure(.badRequest, #""track" must be a string"#)) { try request.string("track") }
        #expect(throws: ControlFailure(.badRequest, #""tracks" must be an array of strings"#)) {
            try request.strings("tracks")
        }
        #expect(throws: ControlFailure(.badRequest, #""flag" must be true or false"#)) {
            try request.optionalBool("flag")
        }
        #expect(throws: ControlFailure(.badRequest, #""scope" must be one of "heard", "record", "all""#)) {
            try request.choice("scope", ["heard", "record", "all"])
        }
        #expect(try request.optionalString("absent") == nil)
        #expect(try request.number("track") == 7)
    }

    @Test func repliesAreOneLineWithIdFirst() {
        #expect(
            ControlResponse.ok(["pong": true]).replyText(id: 1) == "{\"id\":1,\"ok\":true,\"result\":{\"pong\":true}}\n"
        )
        #expect(
            ControlResponse.failure(.unknownTrack, "no track\nnamed bob").replyText(id: "x")
                == "{\"id\":\"x\",\"ok\":false,\"error\":{\"code\":\"unknown_track\",\"message\":\"no track named bob\"}}\n"
        )
        #expect(
            ControlResponse.watch(["watching": true]).replyText(id: nil)
                == "{\"id\":null,\"ok\":true,\"result\":{\"watching\":true}}\n")
    }

    @Test func errorCodesAreTheDocumentedStrings() {
        #expect(
            ControlErrorCode.allCases.map(\.rawValue) == [
                "bad_json", "bad_request", "line_too_long", "unknown_command", "unknown_track", "out_of_range",
                "unavailable", "starting", "internal",
            ])
    }

    @Test func requestTextRoundTrips() throws {
        let request = ControlRequest(id: 12, command: "volume", parameters: ["track": "bob", "volume": "-6dB"])
        #expect(request.jsonText == #"{"cmd":"volume","id":12,"track":"bob","volume":"-6dB"}"#)
        #expect(try parse(request.jsonText).get() == request)
    }
}
