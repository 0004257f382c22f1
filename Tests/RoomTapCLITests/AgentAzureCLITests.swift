import Foundation
import RoomTapAgentTestSupport
import RoomTapAll
import RoomTapCLITestSupport
import Testing

/// `record --agent` on Azure OpenAI: the resource key from AZURE_OPENAI_API_KEY in the `api-key`
/// header, never Authorization, never in a URL, room.json or a log line.
@Suite("CLI: the agent on Azure OpenAI", .serialized)
struct AgentAzureCLITests {
    static let azureKey = "azure-key-DO-NOT-PRINT-9f8e7d6c"
    static let openAIKey = "sk-openai-NOT-FOR-AZURE-0123"

    @Test func theHostOrTheFlagChoosesTheHeader() {
        #expect(
            RealtimeAuthentication.forURL("wss://my-res.openai.azure.com/openai/v1/realtime?model=d") == .azureAPIKey)
        #expect(RealtimeAuthentication.forURL("wss://MY-RES.OPENAI.AZURE.COM/openai/v1/realtime") == .azureAPIKey)
        #expect(RealtimeAuthentication.forURL("wss://api.openai.com/v1/realtime?model=gpt-realtime") == .bearer)
        #expect(RealtimeAuthentication.forURL("wss://openai.azure.com.example.org/v1/realtime") == .bearer)
        #expect(RealtimeAuthentication.azureAPIKey.header(key: "k") == ("api-key", "k"))
        let configuration = RealtimeAgentConfiguration(
            apiKey: "k", url: "wss://my-res.openai.azure.com/openai/v1/realtime?model=my-deployment")
        #expect(configuration.authentication == .azureAPIKey && configuration.keyName == "AZURE_OPENAI_API_KEY")
        #expect(configuration.session.model == "my-deployment")
    }

    @Test func theKeyGoesInTheAPIKeyHeaderAndNowhereElse() throws {
        let server = try FakeRealtimeServer(expectedAzureKey: Self.azureKey)
        defer { server.stop() }
        let out = try temporaryDirectory()
        let url = "ws://127.0.0.1:\(server.port)/openai/v1/realtime?model=my-deployment"
        let outcome = InProcessCLI.run(
            [
                "record", "--file", "alice=\(sample("alice"))", "--realtime", "--duration", "2", "--agent",
                "--agent-azure", "--agent-url", url, "--out", out.path, "--quiet",
            ],
            environment: [
                "AZURE_OPENAI_API_KEY": Self.azureKey, "OPENAI_API_KEY": Self.openAIKey,
                "ROOMTAP_CONTROL": uniqueControlPath(),
            ])
        #expect(outcome.status == 0, "stderr: \(outcome.stderr)")
        #expect(!server.events(ofType: "session.update").isEmpty, "the session was set up")
        let head = try #require(server.upgradeRequests.first)
        #expect(head.contains("api-key: \(Self.azureKey)"), "\(head)")
        #expect(!head.lowercased().contains("authorization:"), "no Authorization header: \(head)")
        #expect(!head.contains(Self.openAIKey))
        let requestLine = head.split(separator: "\r\n").first.map(String.init) ?? ""
        #expect(!requestLine.contains(Self.azureKey), "never in the URL: \(requestLine)")
        let roomJSON = try String(contentsOf: out.appendingPathComponent("room.json"), encoding: .utf8)
        #expect(!roomJSON.contains(Self.azureKey) && !outcome.stdout.contains(Self.azureKey))
        #expect(!outcome.stderr.contains(Self.azureKey))
        let report = try JSONSerialization.jsonObject(with: Data(roomJSON.utf8)) as? [String: Any]
        let agent = report?["agent"] as? [String: Any]
        #expect(agent?["authentication"] as? String == "api-key")
        #expect(agent?["model"] as? String == "my-deployment")
        #expect((agent?["statistics"] as? [String: Any])?["errors"] as? Int == 0, "\(outcome.stderr)")
    }

    @Test func aMissingAzureKeyIsOneLineAndNothingIsMade() throws {
        let out = try temporaryDirectory()
        let missing = InProcessCLI.run(
            [
                "record", "--file", "alice=\(sample("alice"))", "--agent", "--agent-url",
                "wss://my-res.openai.azure.com/openai/v1/realtime?model=my-deployment", "--out", out.path,
            ],
            // The OpenAI key is no stand-in for the Azure one.
            environment: ["OPENAI_API_KEY": Self.openAIKey, "ROOMTAP_CONTROL": uniqueControlPath()])
        #expect(missing.status == 1, "\(missing.stderr)")
        #expect(missing.stderrLines.count == 1 && missing.stderr.contains("AZURE_OPENAI_API_KEY"), "\(missing.stderr)")
        #expect(!missing.stderr.contains(Self.openAIKey))
        #expect(try listing(out).isEmpty, "nothing recorded without the key")
    }

    @Test func aKeyInTheURLAndAzureWithoutAURLAreUsageErrors() throws {
        let out = try temporaryDirectory()
        let env = ["AZURE_OPENAI_API_KEY": Self.azureKey, "ROOMTAP_CONTROL": uniqueControlPath()]
        let inURL = InProcessCLI.run(
            [
                "record", "--file", "alice=\(sample("alice"))", "--agent", "--agent-url",
                "wss://my-res.openai.azure.com/openai/v1/realtime?model=d&api-key=\(Self.azureKey)", "--out",
                out.path,
            ], environment: env)
        #expect(inURL.status == 64)
        #expect(inURL.stderr.contains("must not carry a key"), "\(inURL.stderr)")
        #expect(!inURL.stderr.contains(Self.azureKey), "the refusal does not repeat the key")
        let noURL = InProcessCLI.run(
            ["record", "--file", "alice=\(sample("alice"))", "--agent", "--agent-azure", "--out", out.path],
            environment: env)
        #expect(noURL.status == 64)
        #expect(noURL.stderr.contains("--agent-azure needs --agent-url"), "\(noURL.stderr)")
        #expect(try listing(out).isEmpty)
    }
}
