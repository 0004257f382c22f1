import Foundation
import RoomTapSync

/// The stand-in's response simulation: a reply streamed as the service streams one.
extension FakeRealtimeServer {
    /// Streams `pcm` (24 kHz) as a response on the latest connection: the response asked for with
    /// `response.create` and not yet streaming, else a new one (as server VAD starts one), with
    /// `response.created` first. Then `response.output_item.added`, `conversation.item.added`,
    /// `response.content_part.added`, `response.output_audio.delta` chunks of `chunkMs` (each
    /// followed by a `response.output_audio_transcript.delta` with the transcript's words due by
    /// then), `response.output_audio.done`, the transcript's `.done` (the full text, also when
    /// cancelled), `response.content_part.done`, `response.output_item.done`,
    /// `conversation.item.done`, `response.done`, `rate_limits.updated`.
    /// `paced`: one chunk per `chunkMs` of wall time; otherwise all at once. Returns at once (the
    /// reply runs on its own thread); a `response.cancel` or speech (with `interrupt_response`)
    /// ends it early with status `cancelled`. Returns the response id.
    @discardableResult
    public func reply(
        pcm: [Int16], itemID: String = "item_reply", transcript: String? = nil, chunkMs: Int = 100, paced: Bool = false
    ) -> String {
        guard let c = connection(nil) else { return "" }
        let (response, created) = record.withLock { r -> (FakeRealtimeResponse, String?) in
            let i = r.connections.firstIndex { $0 === c } ?? 0
            if let pending = r.sessions[i].active, pending.beginStreaming() {
                guard r.unannounced.remove(pending.id) != nil else { return (pending, nil) }
                return (pending, Self.text(Self.responseCreated(pending, r.sessions[i].eventID())))
            }
            r.nextResponse += 1
            let response = FakeRealtimeResponse(id: "resp_\(r.nextResponse)")
            _ = response.beginStreaming()
            r.sessions[i].active = response
            return (response, Self.text(Self.responseCreated(response, r.sessions[i].eventID())))
        }
        if let created { c.send(text: created) }
        startStream(
            response, on: c, pcm: pcm, itemID: itemID, transcript: transcript, chunkMs: chunkMs, paced: paced)
        return response.id
    }

    /// Starts a response on the latest connection as server VAD does, without telling the client
    /// yet (its `response.created` still on the way): a `response.create` crossing it on the wire
    /// is refused with `conversation_already_has_active_response`. ``reply(pcm:itemID:transcript:chunkMs:paced:)``
    /// then streams it, `response.created` first. Returns its id.
    @discardableResult
    public func startResponseUnannounced() -> String {
        guard let c = connection(nil) else { return "" }
        return record.withLock { r in
            let i = r.connections.firstIndex { $0 === c } ?? 0
            r.nextResponse += 1
            let response = FakeRealtimeResponse(id: "resp_\(r.nextResponse)")
            r.sessions[i].active = response
            r.unannounced.insert(response.id)
            return response.id
        }
    }

    /// Streams `response` (claimed with `beginStreaming`, `response.created` already sent) on a
    /// thread of its own.
    func startStream(
        _ response: FakeRealtimeResponse, on c: WebSocketTestConnection, pcm: [Int16], itemID: String,
        transcript: String?, chunkMs: Int, paced: Bool
    ) {
        RoomThread.start("fake-realtime.reply") { [self] in
            stream(
                pcm, response: response, on: c, itemID: itemID, transcript: transcript, chunkMs: chunkMs, paced: paced)
        }
    }

    private func stream(
        _ pcm: [Int16], response: FakeRealtimeResponse, on c: WebSocketTestConnection, itemID: String,
        transcript: String?, chunkMs: Int, paced: Bool
    ) {
        let responseID = response.id
        func send(_ object: [String: Any]) { Self.send(object, on: c) }
        let session = record.withLock { r -> Int in
            let i = r.connections.firstIndex { $0 === c } ?? 0
            r.sessions[i].items.insert(itemID)
            r.sessions[i].assistantAudioMs[itemID] = 0
            return i
        }
        let item: [String: Any] = [
            "id": itemID, "type": "message", "role": "assistant", "status": "in_progress",
            "content": [] as [Any],
        ]
        let part = ["type": "audio", "transcript": ""]
        let position: [String: Any] = [
            "response_id": responseID, "item_id": itemID, "output_index": 0, "content_index": 0,
        ]
        send(["type": "response.output_item.added", "response_id": responseID, "output_index": 0, "item": item])
        send(["type": "conversation.item.added", "previous_item_id": NSNull(), "item": item])
        send(position.merging(["type": "response.content_part.added", "part": part]) { $1 })
        let per = max(1, chunkMs * 24)
        var offset = 0
        let start = ContinuousClock.now
        var index = 0
        var sentWords = 0
        let words = transcript.map { $0.split(separator: " ", omittingEmptySubsequences: false) } ?? []
        while offset < pcm.count && !response.isCancelled {
            let end = min(pcm.count, offset + per)
            var bytes = [UInt8](repeating: 0, count: (end - offset) * 2)
            for i in offset..<end {
                let u = UInt16(bitPattern: pcm[i])
                bytes[2 * (i - offset)] = UInt8(u & 0xFF)
                bytes[2 * (i - offset) + 1] = UInt8(u >> 8)
            }
            send(
                position.merging(["type": "response.output_audio.delta", "delta": Data(bytes).base64EncodedString()]) {
                    $1
                })
            record.withLock { r in
                r.sessions[session].audioProduced = true
                r.sessions[session].assistantAudioMs[itemID] = end / 24
            }
            if !words.isEmpty {
                // The transcript streams with the audio: the words due by the end of this chunk.
                let due = (words.count * end + pcm.count - 1) / max(1, pcm.count)
                if due > sentWords {
                    let piece = (sentWords > 0 ? " " : "") + words[sentWords..<due].joined(separator: " ")
                    send(position.merging(["type": "response.output_audio_transcript.delta", "delta": piece]) { $1 })
                    sentWords = due
                }
            }
            offset = end
            index += 1
            if paced {
                let due = start + .milliseconds(chunkMs * index)
                let now = ContinuousClock.now
                if due > now {
                    let d = (due - now).components
                    Thread.sleep(forTimeInterval: Double(d.seconds) + Double(d.attoseconds) / 1e18)  // pacing
                }
            }
        }
        let cancelled = response.isCancelled
        // The service ends a cancelled item too, with the whole transcript it generated.
        send(position.merging(["type": "response.output_audio.done"]) { $1 })
        if let transcript {
            send(position.merging(["type": "response.output_audio_transcript.done", "transcript": transcript]) { $1 })
        }
        send(
            position.merging([
                "type": "response.content_part.done", "part": ["type": "audio", "transcript": transcript ?? ""],
            ]) { $1 })
        var doneItem = item
        doneItem["status"] = cancelled ? "incomplete" : "completed"
        send(["type": "response.output_item.done", "response_id": responseID, "output_index": 0, "item": doneItem])
        send(["type": "conversation.item.done", "previous_item_id": NSNull(), "item": doneItem])
        let ids = record.withLock { r -> (String, String)? in
            guard response.finish() else { return nil }
            if r.sessions[session].active === response { r.sessions[session].active = nil }
            return (r.sessions[session].eventID(), r.sessions[session].eventID())
        }
        guard let (doneID, limitsID) = ids else { return }
        send(Self.responseDone(response, cancelled ? "cancelled" : "completed", doneID))
        send(Self.rateLimits(limitsID, exhausted: false))
    }

    static func responseCreated(_ response: FakeRealtimeResponse, _ eventID: String) -> [String: Any] {
        [
            "type": "response.created", "event_id": eventID,
            "response": [
                "id": response.id, "object": "realtime.response", "status": "in_progress", "output": [] as [Any],
            ]
                as [String: Any],
        ]
    }

    /// `response.done` with `status`; `cancelled` says why in `status_details.reason`, `failed`
    /// carries `status_details.error` with `failure` as its code.
    static func responseDone(
        _ response: FakeRealtimeResponse, _ status: String, _ eventID: String, failure: String? = nil
    ) -> [String: Any] {
        var body: [String: Any] = ["id": response.id, "object": "realtime.response", "status": status]
        switch status {
        case "cancelled":
            body["status_details"] = ["type": "cancelled", "reason": response.cancelReason]
        case "failed":
            let code = failure ?? "server_error"
            body["status_details"] =
                [
                    "type": "failed",
                    "error": [
                        "type": code == "rate_limit_exceeded" ? "rate_limit_error" : "invalid_request_error",
                        "code": code,
                        "message": code == "insufficient_quota"
                            ? "You exceeded your current quota, please check your plan and billing details."
                            : "Rate limit reached. Please try again later.",
                    ],
                ] as [String: Any]
        default:
            body["status_details"] = NSNull()
        }
        return ["type": "response.done", "event_id": eventID, "response": body]
    }

    static func rateLimits(_ eventID: String, exhausted: Bool) -> [String: Any] {
        [
            "type": "rate_limits.updated", "event_id": eventID,
            "rate_limits": [
                ["name": "requests", "limit": 5_000, "remaining": exhausted ? 0 : 4_999, "reset_seconds": 0.012],
                ["name": "tokens", "limit": 400_000, "remaining": exhausted ? 0 : 398_000, "reset_seconds": 0.3],
            ],
        ]
    }
}
