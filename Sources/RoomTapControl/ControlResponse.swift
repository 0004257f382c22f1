/// What a ``ControlHandler`` answers to one request.
///
/// Thread: a value.
public enum ControlResponse: Sendable, Equatable {
    /// `{"id":..,"ok":true,"result":<value>}`.
    case ok(JSONValue)
    /// `{"id":..,"ok":false,"error":{"code":..,"message":..}}`. The message is one line.
    case failure(ControlErrorCode, String)
    /// Replies ok with the result, then subscribes this client to events (see
    /// ``ControlServer/publish(_:)``) until it disconnects.
    case watch(JSONValue)

    /// A failed reply from a thrown ``ControlFailure``.
    public static func failure(_ failure: ControlFailure) -> ControlResponse {
        .failure(failure.code, failure.message)
    }

    /// The `unknown_command` reply for `request`.
    public static func unknownCommand(_ request: ControlRequest) -> ControlResponse {
        .failure(.unknownCommand, "no command \"\(request.command)\"; see docs/CONTROL-PROTOCOL.md for the list")
    }

    /// Appends the reply line for request `id`, newline included, to `bytes`. Keys go in the order
    /// `id`, `ok`, `result`/`error`; a message's newlines become spaces, so the reply is one line.
    public func writeReply(id: JSONValue, to bytes: inout [UInt8]) {
        bytes.append(contentsOf: #"{"id":"#.utf8)
        id.write(to: &bytes)
        switch self {
        case .ok(let result), .watch(let result):
            bytes.append(contentsOf: #","ok":true,"result":"#.utf8)
            result.write(to: &bytes)
        case .failure(let code, let message):
            bytes.append(contentsOf: #","ok":false,"error":{"code":"#.utf8)
            JSONValue.writeString(code.rawValue, to: &bytes)
            bytes.append(contentsOf: #","message":"#.utf8)
            JSONValue.writeString(oneLine(message), to: &bytes)
            bytes.append(UInt8(ascii: "}"))
        }
        bytes.append(contentsOf: "}\n".utf8)
    }

    /// The reply line for request `id` (with its newline).
    public func replyText(id: JSONValue) -> String {
        var bytes: [UInt8] = []
        writeReply(id: id, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }
}

private func oneLine(_ text: String) -> String {
    guard text.contains(where: \.isNewline) else { return text }
    return String(text.map { $0.isNewline ? " " : $0 })
}
