import Foundation
import RoomTapAll

/// `record --transcribe ...`: per-speaker transcription (docs/AGENT.md, "Transcription per
/// speaker"): the model, the language, a prompt, where to connect.
struct TranscribeOptions {
    var model = RealtimeTranscriptionSettings.defaultModel
    /// ISO-639-1 (`en`); nil: the model finds it.
    var language: String?
    var prompt = ""
    /// --transcribe-url (a relay, Azure, a local stand-in); nil: OpenAI's.
    var url: String?
    /// Azure OpenAI: the key from `AZURE_OPENAI_API_KEY` in the `api-key` header (a --transcribe-url
    /// under `*.openai.azure.com`).
    var azure = false

    /// The transcription options of `args`, or nil without --transcribe or --agent-pipeline (which
    /// implies it; and then no other --transcribe-* option).
    static func parse(_ args: ParsedArguments) throws(UsageError) -> TranscribeOptions? {
        let enabled = args.flag("--transcribe") || args.flag("--agent-pipeline")  // the pipeline hears transcripts
        let model = args.value("--transcribe-model")
        let language = args.value("--transcribe-language")
        let prompt = args.value("--transcribe-prompt")
        let url = args.value("--transcribe-url")
        guard enabled else {
            if [model, language, prompt, url].contains(where: { $0 != nil }) {
                throw UsageError(description: "--transcribe-* options need --transcribe", command: "record")
            }
            return nil
        }
        var o = TranscribeOptions()
        if let model {
            guard !model.isEmpty, model.allSatisfy({ $0.isLetter || $0.isNumber || "-_.".contains($0) }) else {
                throw UsageError(description: "--transcribe-model '\(model)' is not a model name", command: "record")
            }
            o.model = model
        }
        if let language {
            guard (2...3).contains(language.count), language.allSatisfy({ ("a"..."z").contains($0) }) else {
                throw UsageError(
                    description: "--transcribe-language takes an ISO-639-1 code such as en or de, not '\(language)'",
                    command: "record")
            }
            o.language = language
        }
        if let prompt {
            guard prompt.utf8.count <= 4_096 else {
                throw UsageError(description: "--transcribe-prompt is longer than 4096 bytes", command: "record")
            }
            o.prompt = prompt
        }
        if let url {
            guard url.hasPrefix("ws://") || url.hasPrefix("wss://") else {
                throw UsageError(
                    description: "--transcribe-url '\(url)' must be a ws:// or wss:// URL", command: "record")
            }
            let query = URLComponents(string: url)?.queryItems ?? []
            if query.contains(where: {
                ["api-key", "api_key", "apikey", "key", "access_token"].contains($0.name.lowercased())
            }) {
                throw UsageError(
                    description: "--transcribe-url must not carry a key (it would be logged and written to "
                        + "room.json): remove it and export OPENAI_API_KEY (or AZURE_OPENAI_API_KEY for Azure)",
                    command: "record")
            }
            if query.contains(where: { $0.name == "model" }) {
                throw UsageError(
                    description: "--transcribe-url must not name a model= (that opens a conversation session); the "
                        + "model is --transcribe-model", command: "record")
            }
            o.url = url
            o.azure = RealtimeAuthentication.isAzureHost(url)
        }
        return o
    }

    /// The settings of every speaker's transcription session.
    var settings: RealtimeTranscriptionSettings {
        RealtimeTranscriptionSettings(model: model, language: language, prompt: prompt)
    }
}
