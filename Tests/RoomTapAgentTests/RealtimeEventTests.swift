import Foundation
import RoomTapAgent
import RoomTapFuzzing
import Testing

/// Client events encode to the GA shapes of the fact sheet; server events decode, unknown types
/// are tolerated and hostile input never crashes.
@Suite struct RealtimeEventTests {
    private func object(_ json: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
    }

    @Test func sessionUpdateHasTheGAShape() throws {
        let settings = RealtimeSessionSettings(
            model: "gpt-realtime", instructions: "Be a food critic.", voice: "cedar", vadThreshold: 0.7,
            vadPrefixPaddingMs: 200, vadSilenceDurationMs: 800, transcriptionModel: "gpt-4o-mini-transcribe")
        let o = try object(RealtimeClientEvent.sessionUpdate(settings).json())
        #expect(o["type"] as? String == "session.update")
        let session = try #require(o["session"] as? [String: Any])
        #expect(session["type"] as? String == "realtime")
        #expect(session["model"] == nil, "the model is the URL's, fixed when the session opens")
        #expect(session["instructions"] as? String == "Be a food critic.")
        #expect(session["output_modalities"] as? [String] == ["audio"])
        let audio = try #require(session["audio"] as? [String: Any])
        let input = try #require(audio["input"] as? [String: Any])
        let output = try #require(audio["output"] as? [String: Any])
        for format in [input["format"], output["format"]] {
            let f = try #require(format as? [String: Any])
            #expect(f["type"] as? String == "audio/pcm")
            #expect(f["rate"] as? Int == 24_000)
        }
        #expect(output["voice"] as? String == "cedar")
        let vad = try #require(input["turn_detection"] as? [String: Any])
        #expect(vad["type"] as? String == "server_vad")
        #expect(vad["threshold"] as? Double == 0.7)
        #expect(vad["prefix_padding_ms"] as? Int == 200)
        #expect(vad["silence_duration_ms"] as? Int == 800)
        #expect(vad["interrupt_response"] as? Bool == true)
        #expect((input["transcription"] as? [String: Any])?["model"] as? String == "gpt-4o-mini-transcribe")
        #expect(session["voice"] == nil, "GA puts the voice under audio.output")
    }

    @Test func emptyInstructionsAreLeftOutAndEventIDsGoOnEveryEvent() throws {
        let o = try object(RealtimeClientEvent.sessionUpdate(RealtimeSessionSettings()).json(eventID: "rt_1"))
        #expect(o["event_id"] as? String == "rt_1")
        #expect((o["session"] as? [String: Any])?.keys.contains("instructions") == false, "empty clears them")
        let append = [Int16](repeating: 0, count: 4).withUnsafeBufferPointer {
            RealtimeClientEvent.appendAudio($0, eventID: "rt_2")
        }
        #expect(try object(append)["event_id"] as? String == "rt_2")
        let system = try object(RealtimeClientEvent.systemMessage("earlier").json())
        #expect((system["item"] as? [String: Any])?["role"] as? String == "system")
    }

    @Test func conversationEventsHaveTheirShapes() throws {
        let say = try object(RealtimeClientEvent.userMessage("What's for dinner? \"quoted\"").json())
        #expect(say["type"] as? String == "conversation.item.create")
        let item = try #require(say["item"] as? [String: Any])
        #expect(item["type"] as? String == "message")
        #expect(item["role"] as? String == "user")
        let content = try #require(item["content"] as? [[String: Any]])
        #expect(content.count == 1)
        #expect(content[0]["type"] as? String == "input_text")
        #expect(content[0]["text"] as? String == "What's for dinner? \"quoted\"")
        #expect(try object(RealtimeClientEvent.responseCreate.json())["type"] as? String == "response.create")
        #expect(try object(RealtimeClientEvent.responseCancel.json())["type"] as? String == "response.cancel")
        let t = try object(RealtimeClientEvent.truncate(itemID: "item_9", contentIndex: 0, audioEndMs: 1_234).json())
        #expect(t["type"] as? String == "conversation.item.truncate")
        #expect(t["item_id"] as? String == "item_9")
        #expect(t["content_index"] as? Int == 0)
        #expect(t["audio_end_ms"] as? Int == 1_234)
        let instructions = try object(RealtimeClientEvent.updateInstructions("new").json())
        let session = try #require(instructions["session"] as? [String: Any])
        #expect(session.keys.sorted() == ["instructions", "type"], "only the instructions change")
    }

    /// The exact text (what `JSONSerialization` wrote with `.sortedKeys, .withoutEscapingSlashes`
    /// before the one writer): keys sorted, slashes and non-ASCII as they are, control characters
    /// escaped; appends in their own fixed order.
    @Test func clientEventsHaveTheirExactText() {
        #expect(
            RealtimeClientEvent.truncate(itemID: "item_9", contentIndex: 0, audioEndMs: 1_234).json(eventID: "rt_7")
                == #"{"audio_end_ms":1234,"content_index":0,"event_id":"rt_7","item_id":"item_9","#
                + #""type":"conversation.item.truncate"}"#)
        #expect(
            RealtimeClientEvent.userMessage("a/b \"c\"\n😀").json()
                == #"{"item":{"content":[{"text":"a/b \"c\"\n😀","type":"input_text"}],"role":"user","#
                + #""type":"message"},"type":"conversation.item.create"}"#)
        let settings = RealtimeTranscriptionSettings(model: "gpt-realtime-whisper", vadThreshold: 0.7)
        #expect(
            RealtimeClientEvent.transcriptionSessionUpdate(settings).json()
                == #"{"session":{"audio":{"input":{"format":{"rate":24000,"type":"audio/pcm"},"#
                + #""noise_reduction":{"type":"near_field"},"transcription":{"model":"gpt-realtime-whisper"},"#
                + #""turn_detection":null}},"type":"transcription"},"type":"session.update"}"#)
        let append = [Int16(1), -1].withUnsafeBufferPointer { RealtimeClientEvent.appendAudio($0, eventID: "rt_\"8") }
        #expect(append == #"{"type":"input_audio_buffer.append","audio":"AQD//w==","event_id":"rt_\"8"}"#)
    }

    @Test func appendCarriesLittleEndianBase64PCM() throws {
        let samples: [Int16] = [0, 1, -1, 32_767, -32_768, 0x1234]
        let json = samples.withUnsafeBufferPointer { RealtimeClientEvent.appendAudio($0) }
        let o = try object(json)
        #expect(o["type"] as? String == "input_audio_buffer.append")
        let bytes = try #require(Data(base64Encoded: o["audio"] as? String ?? ""))
        #expect([UInt8](bytes) == [0, 0, 1, 0, 0xFF, 0xFF, 0xFF, 0x7F, 0x00, 0x80, 0x34, 0x12])
    }

    @Test func serverEventsDecode() throws {
        let pcm: [Int16] = [5, -6, 32_767]
        let b64 = Data([5, 0, 0xFA, 0xFF, 0xFF, 0x7F]).base64EncodedString()
        let cases: [(String, RealtimeServerEvent)] = [
            (#"{"type":"session.created","session":{}}"#, .sessionCreated(expiresAt: nil)),
            (
                #"{"type":"session.created","session":{"expires_at":1764547200}}"#,
                .sessionCreated(expiresAt: 1_764_547_200)
            ),
            (#"{"type":"session.created","session":{"expires_at":"soon"}}"#, .sessionCreated(expiresAt: nil)),
            (
                #"{"type":"conversation.item.input_audio_transcription.failed","item_id":"u","error":{"message":"m"}}"#,
                .inputTranscriptionFailed(itemID: "u", message: "m")
            ),
            (
                #"{"type":"conversation.item.input_audio_transcription.failed","error":7}"#,
                .inputTranscriptionFailed(itemID: "", message: "")
            ),
            (
                #"{"type":"response.output_text.done","item_id":"i","text":"hello"}"#,
                .outputTextDone(itemID: "i", text: "hello")
            ),
            (#"{"type":"session.updated"}"#, .sessionUpdated),
            (
                #"{"type":"input_audio_buffer.speech_started","audio_start_ms":1500,"item_id":"i1"}"#,
                .speechStarted(itemID: "i1", audioStartMs: 1_500)
            ),
            (
                #"{"type":"input_audio_buffer.speech_stopped","audio_end_ms":2750,"item_id":"i1"}"#,
                .speechStopped(itemID: "i1", audioEndMs: 2_750)
            ),
            (#"{"type":"response.created","response":{"id":"r1"}}"#, .responseCreated(responseID: "r1")),
            (
                #"{"type":"response.done","response":{"id":"r1","status":"failed","status_details":{"type":"failed"}}}"#,
                .responseDone(responseID: "r1", status: "failed", statusDetails: #"{"type":"failed"}"#)
            ),
            (
                #"{"type":"response.output_audio.delta","response_id":"r1","item_id":"a1","output_index":0,"content_index":0,"delta":"\#(b64)"}"#,
                .outputAudioDelta(responseID: "r1", itemID: "a1", contentIndex: 0, pcm: pcm)
            ),
            (
                #"{"type":"response.output_audio.done","response_id":"r1","item_id":"a1"}"#,
                .outputAudioDone(responseID: "r1", itemID: "a1")
            ),
            (
                #"{"type":"response.output_audio_transcript.delta","item_id":"a1","delta":"Hel"}"#,
                .outputAudioTranscriptDelta(itemID: "a1", delta: "Hel")
            ),
            (
                #"{"type":"response.output_audio_transcript.done","item_id":"a1","transcript":"Hello"}"#,
                .outputAudioTranscriptDone(itemID: "a1", transcript: "Hello")
            ),
            (
                #"{"type":"conversation.item.input_audio_transcription.completed","item_id":"i1","content_index":0,"transcript":"hi there"}"#,
                .inputTranscriptionCompleted(itemID: "i1", transcript: "hi there")
            ),
            (#"{"type":"rate_limits.updated","rate_limits":[]}"#, .other(type: "rate_limits.updated")),
            (#"{"type":"response.audio.delta","delta":"AAAA"}"#, .other(type: "response.audio.delta")),
        ]
        for (json, expected) in cases {
            #expect(RealtimeServerEvent.decode(json) == expected, "\(json)")
        }
    }

    @Test func errorsDecodeAndOnlyAccountErrorsAreFatal() throws {
        let json =
            #"{"type":"error","event_id":"e1","error":{"type":"invalid_request_error","code":"session_expired","message":"Your session hit the maximum duration of 60 minutes.","param":null,"event_id":"c7"}}"#
        guard case .error(let e) = RealtimeServerEvent.decode(json) else {
            Issue.record("not an error event")
            return
        }
        #expect(e.type == "invalid_request_error")
        #expect(e.code == "session_expired")
        #expect(e.message.hasPrefix("Your session"))
        #expect(e.param == nil)
        #expect(e.eventID == "c7")
        #expect(!e.isFatal, "session_expired reconnects")
        for code in ["invalid_api_key", "insufficient_quota", "account_deactivated", "billing_hard_limit_reached"] {
            #expect(RealtimeError(type: "x", code: code, message: "").isFatal)
        }
        for code in ["conversation_already_has_active_response", "rate_limit_exceeded", "server_error"] {
            #expect(!RealtimeError(type: "x", code: code, message: "").isFatal)
        }
    }

    @Test func hostileInputNeverCrashes() {
        let hostile: [String] = [
            "", "{", "}", "null", "[]", "\"type\"", "{\"type\":5}", "{\"type\":null}", "{\"type\":\"error\"}",
            "{\"type\":\"error\",\"error\":7}", "{\"type\":\"error\",\"error\":{\"code\":[1,2]}}",
            "{\"type\":\"response.output_audio.delta\",\"delta\":\"!!!not base64\"}",
            "{\"type\":\"response.output_audio.delta\",\"delta\":\"AAE\"}",
            "{\"type\":\"response.output_audio.delta\",\"delta\":12}",
            "{\"type\":\"input_audio_buffer.speech_started\",\"audio_start_ms\":1e300}",
            "{\"type\":\"input_audio_buffer.speech_started\",\"audio_start_ms\":-1e300,\"item_id\":{}}",
            "{\"type\":\"input_audio_buffer.speech_started\",\"audio_start_ms\":\"12\"}",
            "{\"type\":\"response.done\",\"response\":\"x\"}",
            "{\"type\":\"response.done\",\"response\":{\"status_details\":[1,{\"a\":null}]}}",
            "{\"type\":\"\u{0}\"}", "{\"type\":\"a\",\"type\":\"b\"}",
            String(repeating: "[", count: 100_000), "{\"a\":" + String(repeating: "{\"a\":", count: 50_000),
            "{\"type\":\"x\",\"n\":" + String(repeating: "9", count: 10_000) + "}",
        ]
        for text in hostile { _ = RealtimeServerEvent.decode(text) }
        #expect(RealtimeServerEvent.decode("{\"type\":5}") == nil)
        #expect(RealtimeServerEvent.decode("[]") == nil)
        #expect(
            RealtimeServerEvent.decode("{\"type\":\"input_audio_buffer.speech_started\",\"audio_start_ms\":1e300}")
                == .speechStarted(itemID: "", audioStartMs: 0))
        #expect(
            RealtimeServerEvent.decode("{\"type\":\"response.output_audio.delta\",\"delta\":\"AAE\"}")
                == .outputAudioDelta(responseID: "", itemID: "", contentIndex: 0, pcm: []))
        // Random bytes through the fuzz entry point.
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            var bytes = [UInt8]("{\"type\":\"response.output_audio.delta\",\"delta\":\"".utf8)
            bytes += (0..<Int.random(in: 0..<64, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            bytes.withUnsafeBytes { RealtimeEventFuzz.exercise($0) }
        }
    }
}
