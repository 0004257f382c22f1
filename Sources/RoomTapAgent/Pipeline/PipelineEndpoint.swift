import RoomTapJSON
import RoomTapStorage

/// An OpenAI-compatible HTTP API (`https://api.openai.com/v1`, a relay, a local server): where
/// requests go and the key they carry — only in the `Authorization: Bearer` header, never in a
/// URL, a log line or room.json (``description`` leaves it out).
///
/// Thread: a value.
public struct PipelineEndpoint: Sendable, CustomStringConvertible {
    /// The API's base URL without a trailing `/` (`https://api.openai.com/v1`).
    public var baseURL: String
    var apiKey: String
    /// A request with no answer (or no byte of a stream) for this long fails (seconds).
    public var stallSeconds = 20

    public init(baseURL: String, apiKey: String) {
        var base = baseURL
        while base.hasSuffix("/") { base.removeLast() }
        self.baseURL = base
        self.apiKey = apiKey
    }

    public var description: String { baseURL }

    /// Posts `body` (JSON) to `{base}/{path}` and streams a 2xx answer's body into `onBody` as it
    /// arrives (false aborts: ``PipelineFailure/Action/cancelled``). Returns the status and the
    /// headers; throws for no answer (``PipelineFailure/Action/retry``) or a non-2xx one.
    /// Blocks the calling thread (a pipeline agent's own, never the room clock's).
    func post(
        _ path: String, body: JSONValue, accept: String, what: String,
        onBody: @escaping (UnsafeRawBufferPointer) -> Bool
    ) throws(PipelineFailure) -> [String: String] {
        var bytes: [UInt8] = []
        body.write(to: &bytes)
        var transfer = HTTPTransfer(
            method: "POST", url: "\(baseURL)/\(path)",
            headers: [
                ("Authorization", "Bearer \(apiKey)"), ("Content-Type", "application/json"), ("Accept", accept),
            ], body: .bytes(bytes))
        transfer.lowSpeedBytes = 1
        transfer.lowSpeedSeconds = stallSeconds
        transfer.onBody = onBody
        let response: HTTPTransfer.Response
        do { response = try transfer.perform() } catch {
            if error.code == HTTPTransfer.cancelledCode {
                throw PipelineFailure(action: .cancelled, message: "cancelled")
            }
            throw PipelineFailure(action: .retry, message: "\(what): no answer from \(baseURL): \(error.message)")
        }
        guard (200..<300).contains(response.status) else {
            throw PipelineFailure.http(status: response.status, body: response.body, what: what)
        }
        return response.headers
    }
}
