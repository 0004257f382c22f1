import Foundation

/// The cost of the output formats (issue 13): `roomtap record --threads 1` of one room of 8
/// speakers (+ mix) in 48 kHz WAV, FLAC, Ogg Opus, WAV at 16 kHz and WAV with --loudness, each
/// as CPU time (best of N, alternated) and as a ratio to plain WAV (1.00 = no extra cost). The
/// extra work runs on the writer threads; with --threads 1 it is all charged to the process.
enum OutputFormats {
    static let variants: [(label: String, arguments: [String])] = [
        ("wav 48 kHz", []),
        ("flac", ["--format", "flac"]),
        ("wav --rate 16000", ["--rate", "16000"]),
        ("flac --rate 16000", ["--format", "flac", "--rate", "16000"]),
        ("opus 32 kbit/s", ["--format", "opus"]),
        ("wav --loudness", ["--loudness"]),
    ]

    static func report(files: [String], repeats: Int, seconds: Double) throws {
        let room = (0..<8).map { files[$0 % files.count] }
        var best = [Double](repeating: .infinity, count: variants.count)
        for _ in 0..<repeats {
            for (i, variant) in variants.enumerated() {
                let run = try RecorderRun.measure(
                    files: room, mix: true, threads: 1, directory: "\(BenchFiles.directory)/out-format-\(i)",
                    extra: variant.arguments)
                best[i] = min(best[i], run.cpuSeconds)
            }
        }
        print(
            "\noutput formats, 8 speakers + mix, \(Int(seconds)) s (roomtap record --threads 1, CPU time, best of \(repeats)):"
        )
        for (i, variant) in variants.enumerated() {
            print(
                "  " + variant.label.padding(toLength: 20, withPad: " ", startingAt: 0)
                    + String(format: "%.3f s CPU   x%.2f of wav", best[i], best[i] / best[0]))
        }
    }
}
