import Foundation

/// Shows how far an offline room has got: a bar redrawn in place on a terminal, plain lines
/// (every 10 %) otherwise. Writes to stderr. Main thread only.
final class ProgressReporter {
    private let total: Int64
    private let quiet: Bool
    private let isTerminal = isatty(STDERR_FILENO) == 1
    private var lastDecile = -1
    private var drewBar = false

    init(total: Int64, quiet: Bool) {
        self.total = max(total, 1)
        self.quiet = quiet
    }

    /// `position` in room samples at 48 kHz.
    func update(_ position: Int64) {
        guard !quiet else { return }
        let fraction = min(1, Double(position) / Double(total))
        if isTerminal {
            let width = 30
            let filled = Int(fraction * Double(width))
            let bar = String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled)
            let line = String(
                format: "\rrecording [%@] %5.1f%%  %.1f s / %.1f s", bar, fraction * 100, Double(position) / 48_000,
                Double(total) / 48_000)
            FileHandle.standardError.write(Data(line.utf8))
            drewBar = true
        } else {
            let decile = Int(fraction * 10)
            guard decile > lastDecile else { return }
            lastDecile = decile
            let line = String(
                format: "recording: %.1f s of %.1f s (%d%%)\n", Double(position) / 48_000, Double(total) / 48_000,
                decile * 10)
            FileHandle.standardError.write(Data(line.utf8))
        }
    }

    /// Draws the final state and ends the line.
    func finish(_ position: Int64) {
        guard !quiet else { return }
        update(max(position, 0))
        if drewBar { FileHandle.standardError.write(Data("\n".utf8)) }
    }
}
