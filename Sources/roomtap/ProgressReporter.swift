import Foundation

/// Shows how far a room has got, on stderr: a line redrawn in place on a terminal, plain lines
/// otherwise (every 10 % of a known length, or every 10 s of a live room). Main thread only.
final class ProgressReporter {
    private let total: Int64
    private let quiet: Bool
    private let isTerminal = isatty(STDERR_FILENO) == 1
    private var lastDecile = -1
    private var lastLiveLine: Int64 = -1
    private var drewLine = false

    /// `total` in room samples at 48 kHz, or 0 when the length is not known (a live room).
    init(total: Int64, quiet: Bool) {
        self.total = total
        self.quiet = quiet
    }

    /// `position` in room samples at 48 kHz; `tracks` in the room now.
    func update(_ position: Int64, tracks: Int) {
        guard !quiet else { return }
        let seconds = Double(position) / 48_000
        guard total > 0 else {
            if isTerminal {
                draw(String(format: "\rrecording %.1f s, %d track(s)   ", seconds, tracks))
            } else if position / 480_000 > lastLiveLine {
                lastLiveLine = position / 480_000
                write(String(format: "recording: %.1f s, %d track(s)\n", seconds, tracks))
            }
            return
        }
        let fraction = min(1, Double(position) / Double(total))
        if isTerminal {
            let width = 30
            let filled = Int(fraction * Double(width))
            let bar = String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled)
            draw(
                String(
                    format: "\rrecording [%@] %5.1f%%  %.1f s / %.1f s", bar, fraction * 100, seconds,
                    Double(total) / 48_000))
        } else {
            let decile = Int(fraction * 10)
            guard decile > lastDecile else { return }
            lastDecile = decile
            write(String(format: "recording: %.1f s of %.1f s (%d%%)\n", seconds, Double(total) / 48_000, decile * 10))
        }
    }

    /// Draws the final state and ends the line.
    func finish(_ position: Int64, tracks: Int) {
        guard !quiet else { return }
        update(max(position, 0), tracks: tracks)
        if drewLine { write("\n") }
    }

    private func draw(_ line: String) {
        write(line)
        drewLine = true
    }

    private func write(_ text: String) { FileHandle.standardError.write(Data(text.utf8)) }
}
