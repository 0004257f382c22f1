import Foundation

struct BenchOptions {
    var seconds: Double = 60
    var repeats = 5
    /// Only run the bare decode loop once over these files (for `valgrind --tool=callgrind`).
    var bareOnly: [String] = []
    /// One live capacity run with this many senders (and nothing else).
    var liveSenders: Int?
    /// Run the live capacity search after the offline benchmark.
    var liveSearch = true
    /// Only the exact-live impairment run.
    var impairmentOnly = false
    /// Only measure the agent path.
    var agentOnly = false
    /// Only measure the pipeline agent's latency (`--pipeline [TURNS]`).
    var pipelineTurns: Int?
    /// Audio per append in the agent path (`--agent-chunk-ms`; the agent's default when nil).
    var agentChunkMilliseconds: Int?
    /// With --live: one UDP port per participant, and --play listening live.
    var liveLayout = LiveCapacity.Layout()
    /// Only the every-core comparison with roomtap-minimal.
    var coresOnly = false
    /// Only the cost of the output formats (FLAC, Opus, --rate 16000, --loudness) against WAV.
    var formatsOnly = false
    /// The live soak (`make soak`): this many speakers for --live-seconds, and nothing else.
    var soakSenders: Int?
    /// Seconds of each live run.
    var liveSeconds: Double = 10

    static func parse() -> BenchOptions {
        var options = BenchOptions()
        var args = CommandLine.arguments.dropFirst().makeIterator()
        while let arg = args.next() {
            switch arg {
            case "--seconds": options.seconds = Double(args.next() ?? "") ?? options.seconds
            case "--repeats": options.repeats = Int(args.next() ?? "") ?? options.repeats
            case "--bare-only": while let file = args.next() { options.bareOnly.append(file) }
            case "--live": options.liveSenders = Int(args.next() ?? "")
            case "--soak": options.soakSenders = Int(args.next() ?? "")
            case "--no-live": options.liveSearch = false
            case "--port-each": options.liveLayout.portPerParticipant = true
            case "--play": options.liveLayout.play = true
            case "--agent": options.agentOnly = true
            case "--pipeline": options.pipelineTurns = 30
            case "--pipeline-turns": options.pipelineTurns = Int(args.next() ?? "") ?? 30
            case "--agent-chunk-ms": options.agentChunkMilliseconds = Int(args.next() ?? "")
            case "--impairment": options.impairmentOnly = true
            case "--cores": options.coresOnly = true
            case "--formats": options.formatsOnly = true
            case "--live-seconds": options.liveSeconds = Double(args.next() ?? "") ?? options.liveSeconds
            default:
                FileHandle.standardError.write(
                    Data(
                        "usage: roomtap-bench [--seconds S] [--repeats N] [--no-live] [--live-seconds S] | --live N [--port-each] [--play] | --soak N [--live-seconds S] | --cores | --formats | --agent [--agent-chunk-ms N] | --pipeline [--pipeline-turns N] | --impairment | --bare-only FILE...\n"
                            .utf8))
                exit(64)
            }
        }
        return options
    }
}
