import RoomTapJSON

/// The voice of the pipeline agent: `POST {base}/audio/speech` with `response_format: "pcm"`
/// (https://platform.openai.com/docs/api-reference/audio/createSpeech), whose answer is raw 16-bit
/// little-endian mono at 24 kHz, handed over as it arrives (a chunk may end mid-sample: the odd
/// byte waits for the next).
///
/// Thread: a value; ``speak(_:isCancelled:onSamples:)`` blocks its caller (the pipeline agent's
/// speech thread).
public struct SpeechClient: Sendable {
    /// The rate of the PCM the service sends.
    public static let sampleRate = 24_000

    public var endpoint: PipelineEndpoint
    public var model: String
    public var voice: String

    public init(endpoint: PipelineEndpoint, model: String, voice: String) {
        self.endpoint = endpoint
        self.model = model
        self.voice = voice
    }

    /// Speaks `text`: `onSamples` gets the 24 kHz samples as they arrive (a view valid during the
    /// call). `isCancelled` is asked at every chunk (true aborts: throws
    /// ``PipelineFailure/Action/cancelled``). Returns the samples received.
    @discardableResult
    public func speak(
        _ text: String, isCancelled: @escaping () -> Bool, onSamples: @escaping (UnsafeBufferPointer<Int16>) -> Void
    ) throws(PipelineFailure) -> Int {
        let body: JSONValue = .object([
            "model": .string(model), "input": .string(text), "voice": .string(voice), "response_format": "pcm",
        ])
        let state = PCMState()
        let headers = try endpoint.post("audio/speech", body: body, accept: "audio/pcm", what: "speech") { bytes in
            guard !isCancelled() else { return false }
            state.take(bytes, onSamples)
            return true
        }
        if let type = headers["content-type"], type.hasPrefix("application/json") || type.hasPrefix("text/") {
            throw PipelineFailure(action: .drop, message: "speech: the answer is \(type), not PCM audio")
        }
        return state.samples
    }
}

/// Bytes to samples across chunk boundaries (the transfer's thread only).
private final class PCMState {
    var odd: UInt8?
    var samples = 0
    var buffer = [Int16](repeating: 0, count: 8_192)

    func take(_ bytes: UnsafeRawBufferPointer, _ onSamples: (UnsafeBufferPointer<Int16>) -> Void) {
        var i = 0
        while i < bytes.count {
            var n = 0
            while n < buffer.count && i < bytes.count {
                if let low = odd {
                    buffer[n] = Int16(bitPattern: UInt16(low) | UInt16(bytes[i]) << 8)
                    odd = nil
                    i += 1
                    n += 1
                } else if i + 1 < bytes.count {
                    buffer[n] = Int16(bitPattern: UInt16(bytes[i]) | UInt16(bytes[i + 1]) << 8)
                    i += 2
                    n += 1
                } else {
                    odd = bytes[i]
                    i += 1
                }
            }
            samples += n
            buffer.withUnsafeBufferPointer { onSamples(UnsafeBufferPointer(rebasing: $0[0..<n])) }
        }
    }
}
