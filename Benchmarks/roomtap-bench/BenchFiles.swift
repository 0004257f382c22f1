import Foundation

/// Speech-like one-minute speaker files (band-limited pink noise with a syllable-rate tremolo),
/// made with sox and opusenc once and cached under /tmp/roomtap-bench.
enum BenchFiles {
    static let directory = "/tmp/roomtap-bench"

    static func prepare(count: Int, seconds: Double) throws -> [String] {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return try (0..<count).map { i in
            let opus = "\(directory)/speaker-\(i)-\(Int(seconds))s.opus"
            if FileManager.default.fileExists(atPath: opus) { return opus }
            let wav = "\(directory)/speaker-\(i).wav"
            let low = 150 + 40 * i
            try run(
                "/usr/bin/sox",
                [
                    "-R", "-n", "-r", "48000", "-c", "1", "-b", "16", wav, "synth", "\(seconds)", "pinknoise",
                    "band", "-n", "\(low)", "\(2000 + 150 * i)", "tremolo", "\(3.0 + 0.4 * Double(i))", "90",
                    "gain", "-n", "-6",
                ])
            try run(
                "/usr/bin/opusenc",
                ["--quiet", "--bitrate", "24", "--framesize", "20", "--serial", "\(7000 + i)", wav, opus])
            try? FileManager.default.removeItem(atPath: wav)
            return opus
        }
    }

    static func run(_ tool: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw NSError(domain: "bench", code: 1, userInfo: [NSLocalizedDescriptionKey: "\(tool) failed"])
        }
    }
}
