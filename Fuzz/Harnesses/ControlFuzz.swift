import RoomTapControl
import RoomTapJSON

/// Fuzz entry for the control protocol's parsers (Fuzz/roomtap-fuzz): the line splitter, the JSON
/// parser and writer, the request envelope, the typed commands (``ControlCommand``), reply encoding
/// and ``VolumeLevel``. Traps when an invariant fails:
/// - splitting the input in one piece and in small chunks gives the same lines and overflows;
///   no line holds a newline or exceeds the limit;
/// - a parsed JSON value written with ``JSONValue/jsonText`` parses back to the same value, and the
///   text holds no newline;
/// - a parsed request's `id` is a number, a string or null, and its parameters hold neither `id`
///   nor `cmd`; it survives a round trip through ``ControlRequest/jsonText``; an envelope error is
///   `bad_json` or `bad_request`;
/// - a parsed request read as a ``ControlCommand`` is either a command that survives a round trip
///   (command → request → JSON line → request → the same command), with a gain in `0...10` and a
///   `change_db` in `-200...200`, or a refusal: `unknown_command` exactly when `cmd` is no command,
///   otherwise `bad_request` or `out_of_range`, with a message of one line;
/// - every reply is exactly one line of JSON;
/// - any JSON value read as a `hello` reply (``RunningRecorder/init(socket:hello:)``, what `roomtap
///   list` and the verbs read from each socket) gives a recorder with a known state, no negative
///   count, and a `--json` line that parses back;
/// - a volume is nil or a finite gain in `0...10`.
package enum ControlFuzz {
    /// Runs every check over `bytes`. Thread: any.
    package static func exercise(_ bytes: UnsafeRawBufferPointer) {
        // A small limit too, so that over-long lines are reached with small inputs.
        for limit in [ControlLimits.maxLineBytes, 24] {
            let whole = pieces(bytes, maxLineBytes: limit, chunk: max(bytes.count, 1))
            let chunk = bytes.isEmpty ? 1 : Int(bytes[0] % 7) + 1
            check(whole == pieces(bytes, maxLineBytes: limit, chunk: chunk), "splitting depends on chunking")
            for piece in whole {
                guard case .some(let line) = piece else { continue }
                check(!line.contains(0x0A) && line.count <= limit, "a line holds a newline or is too long")
                if limit == ControlLimits.maxLineBytes { exerciseLine(line) }
            }
        }
        exerciseLine(Array(bytes))
    }

    private static func exerciseLine(_ line: [UInt8]) {
        line.withUnsafeBytes { raw in
            if let value = try? JSONValue(parsing: raw) {
                let text = value.jsonText
                check(!text.utf8.contains(0x0A), "JSON text holds a newline")
                check((try? JSONValue(parsing: text)) == value, "JSON does not survive a round trip")
                let recorder = RunningRecorder(socket: "s", hello: value)
                check(["starting", "recording", "stopping"].contains(recorder.state), "hello state unknown")
                check(recorder.tracks >= 0 && (0...RunningRecorder.maxUptime).contains(recorder.uptime), "hello counts")
                check((try? JSONValue(parsing: recorder.json.jsonText)) != nil, "hello as JSON does not parse")
            }
            var reply: [UInt8] = []
            switch ControlRequest.parse(raw) {
            case .success(let request):
                switch request.id {
                case .null, .number, .string: break
                default: check(false, "request id of the wrong type")
                }
                check(request.parameters["id"] == nil && request.parameters["cmd"] == nil, "envelope keys kept")
                let again = Array(request.jsonText.utf8).withUnsafeBytes { ControlRequest.parse($0) }
                check((try? again.get()) == request, "request does not survive a round trip")
                exerciseCommand(request)
                ControlResponse.ok(.object(request.parameters)).writeReply(id: request.id, to: &reply)
                if let volume = try? VolumeLevel.parse(request.parameters["volume"] ?? .null) {
                    check(VolumeLevel.range.contains(volume), "volume parameter out of range")
                }
            case .failure(let error):
                check(error.failure.code == .badJSON || error.failure.code == .badRequest, "envelope error code")
                ControlResponse.failure(error.failure).writeReply(id: error.id, to: &reply)
            }
            check(reply.last == 0x0A && reply.firstIndex(of: 0x0A) == reply.count - 1, "reply is not one line")
            check((try? JSONValue(parsing: String(decoding: reply, as: UTF8.self))) != nil, "reply is not JSON")
        }
        let text = String(decoding: line, as: UTF8.self)
        if let volume = VolumeLevel.parse(text) {
            check(volume.isFinite && VolumeLevel.range.contains(volume), "volume out of range")
        }
    }

    /// The request read as a typed command, and back.
    private static func exerciseCommand(_ request: ControlRequest) {
        let known = ControlCommand.Name(rawValue: request.command) != nil
        let command: ControlCommand
        do throws(ControlFailure) {
            command = try ControlCommand(request)
        } catch {
            check(known == (error.code != .unknownCommand), "unknown_command for a known command, or not for another")
            check(
                [.unknownCommand, .badRequest, .outOfRange].contains(error.code), "command refused with an odd code")
            check(!error.message.isEmpty && !error.message.contains("\n"), "refusal is not one line")
            return
        }
        check(known && command.name.rawValue == request.command, "command of another name")
        if case .volume(_, let change, _) = command {
            switch change {
            case .set(let gain): check(gain.isFinite && VolumeLevel.range.contains(gain), "gain out of range")
            case .change(let decibels):
                check(abs(decibels) <= ControlCommand.maxChangeDecibels, "change_db out of range")
            }
        }
        check((try? ControlCommand(command.request(id: request.id))) == command, "command does not survive a request")
        let line = Array(command.request(id: request.id).jsonText.utf8)
        let again = line.withUnsafeBytes { ControlRequest.parse($0) }
        check((try? again.get()).flatMap { try? ControlCommand($0) } == command, "command does not survive a line")
    }

    /// The splitter's output: a line, or nil for an overflow.
    private static func pieces(_ bytes: UnsafeRawBufferPointer, maxLineBytes: Int, chunk: Int) -> [[UInt8]?] {
        var splitter = LineSplitter(maxLineBytes: maxLineBytes)
        var result: [[UInt8]?] = []
        var start = 0
        while start < bytes.count {
            let end = min(start + chunk, bytes.count)
            splitter.feed(UnsafeRawBufferPointer(rebasing: bytes[start..<end])) { piece in
                switch piece {
                case .line(let line): result.append(Array(line))
                case .tooLong: result.append(nil)
                }
            }
            start = end
        }
        splitter.finish { piece in
            switch piece {
            case .line(let line): result.append(Array(line))
            case .tooLong: result.append(nil)
            }
        }
        return result
    }

    private static func check(_ condition: Bool, _ what: StaticString) {
        if !condition { fatalError("control fuzz invariant failed: \(what)") }
    }
}
