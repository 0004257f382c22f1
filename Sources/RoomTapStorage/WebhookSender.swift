import Foundation
public import RoomTapJSON
import RoomTapSync

/// Sends events to a webhook URL: each an HTTP POST of a JSON body with the headers
/// `Content-Type: application/json`, `X-Roomtap-Event: <event>` and, when a secret is given
/// (`ROOMTAP_WEBHOOK_SECRET`), `X-Roomtap-Signature: sha256=<hex HMAC-SHA256 of the body bytes>`
/// (OpenSSL). A receiver checks the signature over the raw body before parsing it.
///
/// Generic on purpose: the recorder sends `recording.segment`, `recording.done`, `upload.done`,
/// `upload.failed`; the fleet `job.started`, `room.listening`, `room.moved`, `job.done`,
/// `job.failed`. Every body gets `event` (the name) and `sentAt` (ISO 8601) added unless it has them.
///
/// One thread of its own (`roomtap.webhook`) sends the events in order; ``post(event:body:)``
/// only queues and never blocks its caller. The queue is bounded (`capacity` events): when full
/// the new event is dropped and counted (``dropped``). A failed POST (no answer, 5xx, 429) is
/// retried with backoff and jitter per `retry`; after the last try (or a 4xx) the event is counted
/// in ``failed`` and the next one is sent. Delivery is at least once (a receiver may see a retried
/// event twice).
///
/// Thread: any for every method; ``close()`` once, from any thread but the sender's.
public final class WebhookSender: Sendable {
    public let url: String
    private let secret: [UInt8]?
    private let retry: RetryPolicy
    private let capacity: Int
    private let state = Locked<State>(State())
    private let wake = DispatchSemaphore(value: 0)
    /// The thread, once started; joined when it is stopped.
    private let senderThread = Locked<RoomThread?>(nil)

    private struct State {
        var queue: [(event: String, body: [UInt8])] = []
        var sending = false
        var closing = false
        var closed = false
        var sent = 0
        var failed = 0
        var dropped = 0
        var lastError: String?
    }

    /// A sender to `url` (http or https), signing with `secret` when given (nil or empty: no
    /// signature header). Starts its thread.
    public init(url: String, secret: String?, capacity: Int = 256, retry: RetryPolicy = RetryPolicy(attempts: 5)) {
        self.url = url
        self.secret = secret.flatMap { $0.isEmpty ? nil : Array($0.utf8) }
        self.capacity = max(1, capacity)
        self.retry = retry
        senderThread.withLock { thread in
            thread = RoomThread.start("roomtap.webhook") { [self] in
                loop()
            }
        }
    }

    /// Why a URL cannot be a webhook (nil when it can): http(s)://HOST[...].
    public static func problem(with url: String) -> String? {
        let lower = url.lowercased()
        guard lower.hasPrefix("http://") || lower.hasPrefix("https://"), url.count > 8,
            !url.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F })
        else { return "--webhook must be an http:// or https:// URL" }
        return nil
    }

    /// Queues `event` with `body` (an object; `event` and `sentAt` are added). Never blocks;
    /// false when the queue is full or the sender closed (the event is dropped and counted).
    @discardableResult
    public func post(event: String, body: [String: JSONValue]) -> Bool {
        var object = body
        if object["event"] == nil { object["event"] = .string(event) }
        if object["sentAt"] == nil { object["sentAt"] = .string(Self.timestamp()) }
        return post(event: event, json: JSONValue.object(object).jsonText)
    }

    /// Queues `event` with a body already written as JSON (sent as is, signed as is).
    @discardableResult
    public func post(event: String, json: String) -> Bool {
        let accepted = state.withLock { s -> Bool in
            guard !s.closing, s.queue.count < capacity else {
                s.dropped += 1
                return false
            }
            s.queue.append((event, Array(json.utf8)))
            return true
        }
        if accepted { wake.signal() }
        return accepted
    }

    /// Events delivered (a 2xx answer), failed after every try, and dropped (queue full, closed).
    public var counts: (sent: Int, failed: Int, dropped: Int) {
        state.withLock { ($0.sent, $0.failed, $0.dropped) }
    }

    /// The last delivery failure, one line (never the secret).
    public var lastError: String? { state.withLock { $0.lastError } }

    /// Waits until every queued event was delivered or given up, at most `timeout` seconds.
    /// Returns true when nothing is left.
    @discardableResult
    public func flush(timeout: Double) -> Bool {
        let deadline = MonotonicClock.now + .seconds(timeout)
        while MonotonicClock.now < deadline {
            if state.withLock({ $0.queue.isEmpty && !$0.sending }) { return true }
            usleep(5_000)
        }
        return state.withLock { $0.queue.isEmpty && !$0.sending }
    }

    /// Stops taking events, sends what is queued (each with its retries, at most `timeout`
    /// seconds in all; what is left then is dropped and counted) and ends the thread. Idempotent.
    public func close(timeout: Double = 10) {
        let first = state.withLock { s -> Bool in
            defer { s.closing = true }
            return !s.closing
        }
        guard first else { return }
        flush(timeout: timeout)
        state.withLock {
            $0.dropped += $0.queue.count
            $0.queue.removeAll()
            $0.closed = true
        }
        wake.signal()
        senderThread.withLock { $0 }?.join()
    }

    /// The hex HMAC-SHA256 of `body` under `secret`: what `X-Roomtap-Signature` carries after `sha256=`.
    public static func signature(of body: [UInt8], secret: String) -> String {
        HMACSHA256.mac(key: Array(secret.utf8), message: body).hex
    }

    // MARK: - The sender's thread

    private func loop() {
        while true {
            wake.wait()
            while let next = state.withLock({ s -> (event: String, body: [UInt8])? in
                guard !s.closed, !s.queue.isEmpty else { return nil }
                s.sending = true
                return s.queue.removeFirst()
            }) {
                let error = deliver(event: next.event, body: next.body)
                state.withLock { s in
                    s.sending = false
                    if let error {
                        s.failed += 1
                        s.lastError = error
                    } else {
                        s.sent += 1
                    }
                }
            }
            if state.withLock({ $0.closed }) { return }
        }
    }

    /// POSTs one event with retries; nil when delivered, else the last error.
    private func deliver(event: String, body: [UInt8]) -> String? {
        var headers = [("Content-Type", "application/json"), ("X-Roomtap-Event", event)]
        if let secret {
            headers.append(("X-Roomtap-Signature", "sha256=" + HMACSHA256.mac(key: secret, message: body).hex))
        }
        var transfer = HTTPTransfer(method: "POST", url: url)
        transfer.headers = headers
        transfer.body = .bytes(body)
        transfer.timeoutSeconds = 30
        transfer.lowSpeedSeconds = 20
        var lastError = "not sent"
        for attempt in 1...retry.attempts {
            if attempt > 1 {
                if state.withLock({ $0.closed }) { break }
                let pause = retry.delay(beforeRetry: attempt - 1)
                usleep(UInt32(min(pause, 30) * 1e6))
            }
            do {
                let response = try transfer.perform()
                if (200..<300).contains(response.status) { return nil }
                lastError = "webhook \(event): the receiver answered \(response.status)"
                if !S3Client.isRetryable(response.status) { break }
            } catch {
                lastError = "webhook \(event): \(S3Location.printable(error.message))"
                if !error.isRetryable { break }
            }
        }
        return lastError
    }

    static func timestamp() -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: Date())
    }
}
