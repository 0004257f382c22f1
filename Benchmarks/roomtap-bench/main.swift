// roomtap-bench: offline throughput of `roomtap record` (seconds of audio per CPU second) on rooms
// of 8 and 64 one-minute speakers, and its ratio to a bare libopus decode loop over the same
// packets, the physical limit for this job. Run with `make bench` (release build).
import Foundation

let options = BenchOptions.parse()
if !options.bareOnly.isEmpty {
    print(String(format: "bare decode: %.3f s CPU", BareDecode.cpuSeconds(files: options.bareOnly)))
    exit(0)
}
if let senders = options.soakSenders {
    let outcome = try LiveSoak.run(senders: senders, seconds: options.liveSeconds)
    print("live soak: " + outcome.report)
    exit(outcome.passed ? 0 : 1)
}
if let turns = options.pipelineTurns {
    for line in try PipelinePath.runAll(turns: turns) { print(line) }
    exit(0)
}
if options.agentOnly {
    print(
        AgentPath.line(
            try AgentPath.run(
                seconds: options.liveSeconds, port: 27_950, chunkMilliseconds: options.agentChunkMilliseconds)))
    exit(0)
}
if options.formatsOnly {
    try OutputFormats.report(
        files: try BenchFiles.prepare(count: 8, seconds: options.seconds), repeats: options.repeats,
        seconds: options.seconds)
    exit(0)
}
if options.coresOnly {
    try AllCores.report(files: try BenchFiles.prepare(count: 8, seconds: options.seconds), repeats: options.repeats)
    exit(0)
}
if options.impairmentOnly || (options.liveSearch && options.liveSenders == nil) {
    print("exact live (3 speakers, 10 s, through a seeded bad network into roomtap record --listen):")
    for rtcp in [false, true] {
        let how = rtcp ? "with RTCP sender reports" : "no RTCP"
        print(
            ImpairmentRun.report(
                "5 % loss, 2 % reorder, 1 % duplicates, 0-30 ms jitter, \(how)",
                try ImpairmentRun.run(jitter: 30, loss: 0.05, rtcp: rtcp, port: 27_960)))
        print(
            ImpairmentRun.report(
                "0-100 ms jitter storm, no loss, \(how)",
                try ImpairmentRun.run(jitter: 100, loss: 0, rtcp: rtcp, port: 27_961)))
    }
    if options.impairmentOnly { exit(0) }
    print("")
}
if let senders = options.liveSenders {
    let outcome = try LiveCapacity.run(
        senders: senders, seconds: options.liveSeconds, port: 27_900, layout: options.liveLayout)
    print(options.liveLayout.label + ": " + LiveReport.line(outcome))
    exit(outcome.passed ? 0 : 1)
}
let files = try BenchFiles.prepare(count: 8, seconds: options.seconds)
print("roomtap-bench: \(files.count) distinct \(Int(options.seconds)) s speech-like Ogg Opus files (24 kbit/s, 20 ms)")
print(
    "CPU time = user + system of the measured process (roomtap record --threads 1); best of \(options.repeats) runs each\n"
)

var rows: [[String]] = [
    [
        "room", "audio", "roomtap CPU", "roomtap x", "bare decode CPU", "bare x", "ratio", "round-robin bare", "ratio",
        "wall",
    ]
]
for (speakers, mix) in [(8, false), (8, true), (64, false)] {
    let room = (0..<speakers).map { files[$0 % files.count] }
    // Alternate the three measurements so that a noisy stretch of the machine hits all of them.
    var bares: [Double] = []
    var roundRobins: [Double] = []
    var runs: [RecorderRun.Measurement] = []
    for _ in 0..<options.repeats {
        bares.append(BareDecode.cpuSeconds(files: room))
        roundRobins.append(BareDecode.cpuSeconds(files: room, order: .roundRobin))
        runs.append(try RecorderRun.measure(files: room, mix: mix, threads: 1))
    }
    let bare = bares.min()!
    let roundRobin = roundRobins.min()!
    let best = runs.min { $0.cpuSeconds < $1.cpuSeconds }!
    let audio = Double(speakers) * options.seconds
    rows.append([
        "\(speakers) speakers" + (mix ? " +mix" : ""),
        String(format: "%.0f s", audio),
        String(format: "%.3f s", best.cpuSeconds),
        String(format: "%.0f", audio / best.cpuSeconds),
        String(format: "%.3f s", bare),
        String(format: "%.0f", audio / bare),
        String(format: "%.3f", bare / best.cpuSeconds),
        String(format: "%.3f s", roundRobin),
        String(format: "%.3f", roundRobin / best.cpuSeconds),
        String(format: "%.3f s", best.wallSeconds),
    ])
}
let widths = rows[0].indices.map { c in rows.map { $0[c].count }.max()! }
for row in rows {
    print(
        row.enumerated().map { $1.padding(toLength: widths[$0], withPad: " ", startingAt: 0) }.joined(separator: "  "))
}
print(
    "\nx = seconds of audio per CPU second; ratio = roomtap throughput / bare libopus decode throughput (target >= 0.85)"
)

try OutputFormats.report(files: files, repeats: options.repeats, seconds: options.seconds)

try AllCores.report(files: files, repeats: options.repeats)

// The live capacity search: N senders at real time, doubling then bisecting to the largest N that
// passes (no late tick, every packet received, complete files).
if options.liveSearch {
    for layout in [
        LiveCapacity.Layout(), LiveCapacity.Layout(portPerParticipant: true),
        LiveCapacity.Layout(portPerParticipant: false, play: true),
    ] {
        print(
            "\nlive capacity, \(layout.label) (senders at real time into one recorder, \(Int(options.liveSeconds)) s each):"
        )
        var best = 0
        var n = 125
        var failed: Int?
        while n <= 1024 {
            let outcome = try LiveCapacity.run(senders: n, seconds: options.liveSeconds, port: 27_900, layout: layout)
            print("  " + LiveReport.line(outcome))
            if outcome.passed {
                best = n
                if let failed, failed - n <= 50 { break }
                n = failed.map { (n + $0) / 2 } ?? n * 2
            } else {
                failed = n
                if n - best <= 50 { break }
                n = (best + n) / 2
            }
        }
        print("  largest N with no late tick and complete files: \(best)")
    }
}

print("\n" + AgentPath.line(try AgentPath.run(seconds: options.liveSeconds, port: 27_950)))
