/// What ``HTTP2Server`` hands its delegate and the delegate hands back: a request's head, the
/// handler of a request that is taken, a response.
///
/// Thread: all of it lives on the server's one thread (`roomtap.h2`).

/// The head of a request: pseudo-headers and header fields as received (RFC 9113 §8.3,
/// https://www.rfc-editor.org/rfc/rfc9113#section-8.3; names are lower-case on the wire).
package struct HTTP2RequestHead: Sendable {
    /// `:method`.
    package var method = ""
    /// `:path` (with any query).
    package var path = ""
    /// The regular header fields, in order.
    package var fields: [(name: String, value: String)] = []

    package init() {}

    /// The first value of header `name` (lower-case), if any.
    package func field(_ name: String) -> String? { fields.first { $0.name == name }?.value }
}

/// A response, or a part of one: status, content type, body. Given as ``HTTP2ServiceResult/response``
/// it is sent whole and the stream ends; as ``HTTP2ServiceResult/streamed`` the stream stays open.
package struct HTTP2Response: Sendable, Equatable {
    package var status: Int
    package var contentType: String
    package var body: [UInt8]

    package init(status: Int, contentType: String = "application/json", body: [UInt8] = []) {
        self.status = status
        self.contentType = contentType
        self.body = body
    }
}

/// What a handler asks of the server after ``HTTP2RequestHandler/service(now:unsentResponse:)``.
package struct HTTP2ServiceResult: Sendable {
    /// Body bytes the handler is done with since the last call: the server gives them back to the
    /// client's flow-control window (RFC 9113 §5.2), so a client can never be more than one window
    /// ahead of what the handler has taken.
    package var consumed = 0
    /// The response, once the request is finished (the handler is not called again). After a
    /// ``streamed`` part its status and content type are not sent again (the head went out with
    /// the first part); its body is the last of the stream's.
    package var response: HTTP2Response?
    /// A part of the response while the request goes on: the first part's status and content type
    /// go out as the response's head, each part's body as DATA, and the stream stays open for the
    /// next (libnghttp2 defers the body until there is more, RFC 9113 §8.1).
    package var streamed: HTTP2Response?
    /// `CLOCK_MONOTONIC` ns at which the handler wants to be served again (nil: at the next event).
    package var wakeAt: UInt64?

    package init(
        consumed: Int = 0, response: HTTP2Response? = nil, streamed: HTTP2Response? = nil, wakeAt: UInt64? = nil
    ) {
        self.consumed = consumed
        self.response = response
        self.streamed = streamed
        self.wakeAt = wakeAt
    }
}

/// One request taken by the delegate. Called on the server's thread only, in this order:
/// ``receive(_:)`` for each DATA chunk and ``endOfBody()`` once (each followed by
/// ``service(now:unsentResponse:)``), ``service(now:unsentResponse:)`` again whenever its `wakeAt` comes, until it returns a
/// response; or ``cancel(serverStopping:)`` once if the stream ends first (the client reset it or
/// hung up, or the server is stopping).
package protocol HTTP2RequestHandler: AnyObject {
    /// A chunk of the request body (valid only during the call: copy what is kept).
    func receive(_ bytes: UnsafeRawBufferPointer)
    /// The client ended the body (END_STREAM).
    func endOfBody()
    /// Works through what is due at `now` (`CLOCK_MONOTONIC` ns). `unsentResponse`: bytes of the
    /// response streamed so far that the client has not taken yet (its flow-control window is
    /// full): a handler holds further parts back while it is large.
    func service(now: UInt64, unsentResponse: Int) -> HTTP2ServiceResult
    /// The stream ended before the handler answered: the client's doing, or (`serverStopping`)
    /// the server's.
    func cancel(serverStopping: Bool)
}

/// The delegate's answer to a new request.
package enum HTTP2Disposition {
    /// Answer at once (an error, or a request without a body to take).
    case respond(HTTP2Response)
    /// Take the body with this handler.
    case handle(any HTTP2RequestHandler)
}

/// Decides what each request gets. Called on the server's thread.
package protocol HTTP2ServerDelegate: AnyObject {
    /// A request whose head has arrived (`peer`: the client's address, for log lines).
    func open(_ head: HTTP2RequestHead, peer: String) -> HTTP2Disposition
    /// A client that spoke HTTP/1 (or no HTTP/2 connection preface) was refused.
    func refusedHTTP1(peer: String)
    /// A client broke the HTTP/2 protocol and its connection was closed (libnghttp2's reason).
    func protocolError(peer: String, reason: String)
}
