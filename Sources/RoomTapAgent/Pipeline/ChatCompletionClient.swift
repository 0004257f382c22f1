import RoomTapJSON

/// The chat model of the pipeline agent: one streamed chat completion per call, the reply's text
/// handed over piece by piece as it arrives (so speech can start before the reply is complete).
///
/// Thread: a value; ``complete(messages:names:tools:isCancelled:onText:)`` blocks its caller (the
/// pipeline agent's reply thread).
public struct ChatCompletionClient: Sendable {
    public var endpoint: PipelineEndpoint
    public var model: String

    public init(endpoint: PipelineEndpoint, model: String) {
        self.endpoint = endpoint
        self.model = model
    }

    /// What a completed stream said.
    public struct Reply: Sendable, Equatable {
        public var text = ""
        public var toolCalls: [RealtimeFunctionCall] = []
        public var finishReason: String?
    }

    /// Streams a completion of `messages` (`names`: whether speakers go in `name` or the content)
    /// offering `tools`. `onText` gets each piece of text as it arrives; `isCancelled` is asked at
    /// every received chunk (true aborts: throws ``PipelineFailure/Action/cancelled``). A stream
    /// that ends without `[DONE]` throws ``PipelineFailure/Action/retry`` unless text was already
    /// handed over (then what came is the reply).
    public func complete(
        messages: [ChatMessage], names: Bool, tools: [RealtimeTool], isCancelled: @escaping () -> Bool,
        onText: @escaping (String) -> Void
    ) throws(PipelineFailure) -> Reply {
        let body = ChatCompletionStream.requestBody(
            model: model, messages: messages.map { $0.json(names: names) }, tools: tools.map(\.chatCompletionsJSON))
        let state = StreamState()
        _ = try endpoint.post("chat/completions", body: body, accept: "text/event-stream", what: "chat") { bytes in
            guard !isCancelled() else { return false }
            do throws(ServerSentEventParser.Overflow) {
                try state.parser.feed(bytes) { event in state.take(event, onText: onText) }
            } catch {
                state.failure = PipelineFailure(action: .drop, message: "chat: \(error)")
            }
            return state.failure == nil
        }
        if let failure = state.failure { throw failure }
        guard state.done || !state.reply.text.isEmpty || !state.calls.isEmpty else {
            throw PipelineFailure(action: .retry, message: "chat: the stream ended before data: [DONE]")
        }
        var reply = state.reply
        reply.toolCalls = state.calls.sorted { $0.key < $1.key }.map(\.value)
        return reply
    }
}

/// What the callbacks of one stream share (the transfer's thread only).
private final class StreamState {
    var parser = ServerSentEventParser()
    var reply = ChatCompletionClient.Reply()
    var calls: [Int: RealtimeFunctionCall] = [:]
    var done = false
    var failure: PipelineFailure?

    func take(_ event: ServerSentEventParser.Event, onText: (String) -> Void) {
        guard failure == nil, !done else { return }
        guard let pieces = ChatCompletionStream.decode(event.data) else {
            failure = PipelineFailure(
                action: .drop,
                message: "chat: the stream sent data that is not a chat.completion.chunk: "
                    + PipelineFailure.oneLine(String(event.data.prefix(80))))
            return
        }
        for piece in pieces {
            switch piece {
            case .text(let text):
                reply.text += text
                onText(text)
            case .toolCall(let index, let id, let name, let arguments):
                var call = calls[index] ?? RealtimeFunctionCall(callID: "", name: "", arguments: "")
                if let id { call.callID = id }
                if let name { call.name += name }
                call.arguments += arguments
                calls[index] = call
            case .finish(let reason): reply.finishReason = reason
            case .error(let message):
                failure = PipelineFailure(
                    action: .retry, message: "chat: the stream reported an error: " + PipelineFailure.oneLine(message))
            case .done: done = true
            }
        }
    }
}
