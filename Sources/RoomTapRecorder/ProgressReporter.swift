import Foundation

/// Shows how far a room has got, on stderr. On a terminal: one line redrawn in place. Otherwise
/// plain lines: for a known length (`total`), one at 0 % and at every further 10 % (each tenth is
/// printed even when the room passed several of them between two updates, as an offline room
/// does), and, with `everyTenSeconds`, also one every 10 s of room time (a long `--duration` keeps
/// reporting); for an unknown length (a live room without `--duration`), one every 10 s.
///
/// A line's time is where the room was at that mark and never more than the length: "X s of
/// Y s" shows both with as many decimals as Y needs (1 for whole tenths of a second, up to 3), so
/// X never reads larger than Y. Written to `console`'s stderr. Main thread only.
final class ProgressReporter {
    private let total: Int64
    private let quiet: Bool
    private let everyTenSeconds: Bool
    private let isTerminal: Bool
    private let console: Console
    /// Decimals the seconds are shown with: enough for `total`.
    private let decimals: Int
    /// The room sample of the last mark printed (-1: none yet).
    private var lastMark: Int64 = -1
    private var drewLine = false

    /// Room samples (48 kHz) between two lines every 10 s.
    private static let tenSeconds: Int64 = 480_000

    /// `total` in room samples at 48 kHz, or 0 when the length is not known (a live room).
    /// `everyTenSeconds`: also a line every 10 s of room time when the length is known (rooms on
    /// the real-time clock, where 10 % of a long room is a long wait).
    init(total: Int64, quiet: Bool, everyTenSeconds: Bool = false, console: Console) {
        self.console = console
        isTerminal = console.errorIsTerminal
        self.total = max(total, 0)
        self.quiet = quiet
        self.everyTenSeconds = everyTenSeconds
        decimals = Self.decimals(for: max(total, 0))
    }

    /// How often ``update(_:tracks:)`` is worth calling: 10 times a second for the line redrawn
    /// on a terminal, once a second for plain lines (their marks are 10 % or 10 s apart), never
    /// when quiet.
    var updateInterval: Duration? { quiet ? nil : isTerminal ? .milliseconds(100) : .seconds(1) }

    /// `position` in room samples at 48 kHz; `tracks`: the speakers in the room now (the tracks a
    /// room makes of others, the mix and agent-hears, are not counted).
    func update(_ position: Int64, tracks: Int) {
        guard !quiet else { return }
        guard total > 0 else {
            let seconds = Double(position) / 48_000
            if isTerminal {
                draw(String(format: "\rrecording %.1f s, %d track(s)   ", seconds, tracks))
            } else if position / Self.tenSeconds > lastMark {
                lastMark = position / Self.tenSeconds
                write(String(format: "recording: %.1f s, %d track(s)\n", seconds, tracks))
            }
            return
        }
        let position = min(max(position, 0), total)
        if isTerminal {
            let fraction = Double(position) / Double(total)
            let width = 30
            let filled = Int(fraction * Double(width))
            let bar = String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled)
            draw(
                String(
                    format: "\rrecording [%@] %5.1f%%  %@ s / %@ s", bar, fraction * 100, seconds(position),
                    seconds(total)))
            return
        }
        while let mark = nextMark(), mark <= position {
            lastMark = mark
            let percent = Int(mark * 100 / total)
            write("recording: \(seconds(mark)) s of \(seconds(total)) s (\(percent)%)\n")
        }
    }

    /// Draws the final state and ends the line.
    func finish(_ position: Int64, tracks: Int) {
        guard !quiet else { return }
        update(max(position, 0), tracks: tracks)
        if drewLine { write("\n") }
    }

    /// The first mark after the last one printed: the next tenth of `total`, or the next 10 s
    /// with `everyTenSeconds`, whichever comes first. Nil after `total`.
    private func nextMark() -> Int64? {
        guard lastMark < total else { return nil }
        guard lastMark >= 0 else { return 0 }
        // The next tenth: the smallest d with total * d / 10 > lastMark.
        var tenth = lastMark * 10 / total
        while total * tenth / 10 <= lastMark { tenth += 1 }
        var mark = total * tenth / 10
        if everyTenSeconds { mark = min(mark, (lastMark / Self.tenSeconds + 1) * Self.tenSeconds) }
        return min(mark, total)
    }

    /// `samples` as seconds with the reporter's decimals.
    private func seconds(_ samples: Int64) -> String {
        String(format: "%.\(decimals)f", Double(samples) / 48_000)
    }

    /// 1 when `total` is whole tenths of a second, 2 for hundredths, else 3. Rounding both numbers
    /// of "X s of Y s" the same way keeps X ≤ Y (X is never past the total).
    private static func decimals(for total: Int64) -> Int {
        if total % 4_800 == 0 { return 1 }
        if total % 480 == 0 { return 2 }
        return 3
    }

    private func draw(_ line: String) {
        write(line)
        drewLine = true
    }

    private func write(_ text: String) { console.error(text) }
}
