import Foundation

/// One `roomtap record` process over a room, measured by the CPU time the kernel charged it.
enum RecorderRun {
    typealias Measurement = ChildRun.Measurement

    /// Records `files` into `directory` (default under ``BenchFiles/directory``); `threads` nil:
    /// roomtap's default (one per core).
    /// `extra`: more `record` arguments (e.g. `--format flac`).
    static func measure(
        files: [String], mix: Bool, threads: Int? = nil, directory: String? = nil, extra: [String] = []
    ) throws -> Measurement {
        let out = directory ?? "\(BenchFiles.directory)/out-\(files.count)\(mix ? "-mix" : "")"
        var arguments = ["record", "--out", out, "--force", "--quiet"]
        for (i, file) in files.enumerated() { arguments += ["--file", "s\(i)=\(file)"] }
        if mix { arguments.append("--mix") }
        if let threads { arguments += ["--threads", "\(threads)"] }
        arguments += extra
        return try ChildRun.measure(ChildRun.sibling("roomtap"), arguments)
    }
}
