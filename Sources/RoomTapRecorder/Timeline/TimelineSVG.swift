import Foundation

/// Draws "who spoke when" as a standalone SVG 1.1 document: one lane per speaker with its talk
/// spans as bars, a time axis with round ticks, and the track controls of the recording as markers
/// (on the lane of the track they changed; solo and unsolo across every lane).
///
/// Off-the-record stretches (`rect.muted`) are drawn from what the file holds: where the control
/// log says the track was off the record *and* the file's frames are exact zeros; the log only
/// labels them. A heard-only mute is not in the file: it is a thin band (`rect.heard-muted`) at the
/// foot of the lane, drawn from the log.
///
/// Every bar and marker carries a `<title>` (a tooltip in browsers) and `data-*` attributes with
/// exact times in seconds, for scripts. Text is XML-escaped.
struct TimelineSVG {
    struct Lane {
        var name: String
        var spans: [TalkSpan]
        /// Where the file holds exact zeros (``ActivityDetector/silentRuns``).
        var silentRuns: [TalkSpan] = []
    }

    var lanes: [Lane]
    /// Room length in seconds (the axis runs 0 ... duration).
    var duration: Double
    var controls: [TimelineRoom.Control] = []
    var title: String = "roomtap timeline"

    // Layout, in SVG user units (px).
    private let left = 130.0
    private let plotWidth = 960.0
    private let right = 30.0
    private let top = 56.0
    private let laneHeight = 34.0
    private let laneGap = 10.0
    private static let palette = ["#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#e15759", "#76b7b2", "#edc948"]

    private var scale: Double { plotWidth / max(duration, 0.01) }
    private func x(_ seconds: Double) -> Double { left + min(max(seconds, 0), max(duration, 0.01)) * scale }
    private func laneTop(_ i: Int) -> Double { top + Double(i) * (laneHeight + laneGap) }
    private var lanesBottom: Double { laneTop(lanes.count) - laneGap }

    func render() -> String {
        let width = left + plotWidth + right
        let height = lanesBottom + 46
        var out = """
            <?xml version="1.0" encoding="UTF-8"?>
            <svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="\(n(width))" height="\(n(height))" \
            viewBox="0 0 \(n(width)) \(n(height))" font-family="sans-serif" font-size="13">
            <title>\(escape(title))</title>
            <rect x="0" y="0" width="\(n(width))" height="\(n(height))" fill="#ffffff"/>
            <text x="\(n(left))" y="24" font-size="15" font-weight="bold">\(escape(title))</text>

            """
        out += axis()
        for (i, lane) in lanes.enumerated() { out += self.lane(lane, index: i) }
        out += roomWideMarkers()
        out += "</svg>\n"
        return out
    }

    // MARK: - Parts

    private func axis() -> String {
        let step = Self.tickStep(duration: duration)
        var out = "<g class=\"axis\" stroke=\"#d0d0d0\" fill=\"#555555\" font-size=\"11\" text-anchor=\"middle\">\n"
        let baseline = lanesBottom + 8
        out += "<line x1=\"\(n(left))\" y1=\"\(n(baseline))\" x2=\"\(n(left + plotWidth))\" y2=\"\(n(baseline))\"/>\n"
        var k = 0
        while Double(k) * step <= duration + 1e-9 {
            let t = Double(k) * step
            let px = n(x(t))
            out += "<line x1=\"\(px)\" y1=\"\(n(top - 6))\" x2=\"\(px)\" y2=\"\(n(baseline + 4))\"/>\n"
            out +=
                "<text x=\"\(px)\" y=\"\(n(baseline + 18))\" stroke=\"none\">"
                + "\(escape(Self.tickLabel(t, step: step, duration: duration)))</text>\n"
            k += 1
        }
        out += "</g>\n"
        return out
    }

    private func lane(_ lane: Lane, index: Int) -> String {
        let y = laneTop(index)
        let color = Self.palette[index % Self.palette.count]
        var out = "<g class=\"lane\" data-track=\"\(escape(lane.name))\">\n"
        out +=
            "<text x=\"\(n(left - 10))\" y=\"\(n(y + laneHeight / 2 + 5))\" text-anchor=\"end\">"
            + "\(escape(lane.name))</text>\n"
        out +=
            "<rect class=\"lane-background\" x=\"\(n(left))\" y=\"\(n(y))\" width=\"\(n(plotWidth))\" "
            + "height=\"\(n(laneHeight))\" fill=\"#000000\" fill-opacity=\"0.04\"/>\n"
        for span in lane.spans {
            let x0 = x(span.start)
            let w = max(1, x(span.end) - x0)
            out +=
                "<rect class=\"talk\" data-start=\"\(s(span.start))\" data-end=\"\(s(span.end))\" "
                + "x=\"\(n(x0))\" y=\"\(n(y + 4))\" width=\"\(n(w))\" height=\"\(n(laneHeight - 8))\" rx=\"3\" "
                + "fill=\"\(color)\"><title>\(escape(lane.name)): "
                + "\(Self.clock(span.start)) – \(Self.clock(span.end)) "
                + "(\(String(format: "%.2f", span.end - span.start)) s)</title></rect>\n"
        }
        for (start, end, label) in offRecordSpans(of: lane) {
            let x0 = x(start)
            out +=
                "<rect class=\"muted\" data-start=\"\(s(start))\" data-end=\"\(s(end))\" x=\"\(n(x0))\" "
                + "y=\"\(n(y))\" width=\"\(n(max(1, x(end) - x0)))\" height=\"\(n(laneHeight))\" fill=\"#d62728\" "
                + "fill-opacity=\"0.12\"><title>\(escape(lane.name)) off the record (silence in the file) "
                + "\(Self.clock(start)) – \(Self.clock(end)); \(escape(label))</title></rect>\n"
        }
        for (start, end) in stretches(of: lane.name, muted: \.leavesHeardMuted) {
            let x0 = x(start)
            out +=
                "<rect class=\"heard-muted\" data-start=\"\(s(start))\" data-end=\"\(s(end))\" x=\"\(n(x0))\" "
                + "y=\"\(n(y + laneHeight - 4))\" width=\"\(n(max(1, x(end) - x0)))\" height=\"4\" "
                + "fill=\"#d62728\" fill-opacity=\"0.6\"><title>\(escape(lane.name)) muted for what is heard "
                + "(the file keeps the speaker) \(Self.clock(start)) – \(Self.clock(end))</title></rect>\n"
        }
        for control in controls where control.track == lane.name && !Self.isRoomWide(control) {
            out += marker(control, from: y, to: y + laneHeight)
        }
        out += "</g>\n"
        return out
    }

    /// Where the control log says `track` was in a state (`muted` of a change says whether the
    /// state holds after it, nil: unchanged): from the change that entered it to the one that left
    /// it, or the end of the room.
    func stretches(of track: String, muted: (TimelineRoom.Control) -> Bool?) -> [(Double, Double)] {
        var open: Double?
        var out: [(Double, Double)] = []
        for c in controls where c.track == track && ["mute", "unmute", "volume"].contains(c.change) {
            guard let holds = muted(c) else { continue }
            if holds {
                if open == nil { open = c.roomTime }
            } else if let start = open {
                out.append((start, c.roomTime))
                open = nil
            }
        }
        if let start = open { out.append((start, duration)) }
        return out
    }

    /// What the file holds: the lane's silent runs inside the stretches the log says the track
    /// was off the record (one frame of slack at the end, for the unmute's ramp), each labelled
    /// with the changes that began and ended it.
    private func offRecordSpans(of lane: Lane) -> [(Double, Double, String)] {
        var out: [(Double, Double, String)] = []
        for (from, to) in stretches(of: lane.name, muted: \.leavesRecordMuted) {
            let label = labelOfStretch(lane.name, from: from, to: to)
            for run in lane.silentRuns where run.end > from && run.start < to + 0.01 {
                let start = max(run.start, from)
                let end = min(run.end, to + 0.01)
                if end > start { out.append((start, end, label)) }
            }
        }
        return out
    }

    private func labelOfStretch(_ track: String, from: Double, to: Double) -> String {
        let ofTrack = controls.filter { $0.track == track }
        var words: [String] = []
        if let begin = ofTrack.first(where: { $0.roomTime == from }) {
            words.append("\(Self.describe(begin)) at \(Self.clock(from))")
        }
        if to < duration, let end = ofTrack.first(where: { $0.roomTime == to && $0.leavesRecordMuted == false }) {
            words.append("\(Self.describe(end)) at \(Self.clock(to))")
        }
        return words.joined(separator: "; ")
    }

    /// Solo/unsolo, and changes of tracks without a lane (the mix): across every lane.
    private func roomWideMarkers() -> String {
        let names = Set(lanes.map(\.name))
        let wide = controls.filter { Self.isRoomWide($0) || !names.contains($0.track ?? "") }
        guard !wide.isEmpty else { return "" }
        var out = "<g class=\"room-controls\">\n"
        for control in wide { out += marker(control, from: top - 6, to: lanesBottom) }
        out += "</g>\n"
        return out
    }

    private func marker(_ control: TimelineRoom.Control, from y0: Double, to y1: Double) -> String {
        let px = n(x(control.roomTime))
        let (color, dash) = Self.style(control.change)
        let text = "\(Self.clock(control.roomTime)) \(Self.describe(control))"
        var out = "<g class=\"control\" data-change=\"\(escape(control.change))\" data-time=\"\(s(control.roomTime))\""
        if let track = control.track { out += " data-track=\"\(escape(track))\"" }
        out += "><title>\(escape(text))</title>\n"
        out +=
            "<line x1=\"\(px)\" y1=\"\(n(y0))\" x2=\"\(px)\" y2=\"\(n(y1))\" stroke=\"\(color)\" stroke-width=\"2\""
            + (dash ? " stroke-dasharray=\"4 3\"" : "") + "/>\n"
        let cx = x(control.roomTime)
        out +=
            "<path d=\"M \(n(cx - 5)) \(n(y0 - 7)) L \(n(cx + 5)) \(n(y0 - 7)) L \(n(cx)) \(n(y0)) Z\" "
            + "fill=\"\(color)\"/>\n</g>\n"
        return out
    }

    // MARK: - Words and numbers

    static func isRoomWide(_ control: TimelineRoom.Control) -> Bool {
        control.change == "solo" || control.change == "unsolo" || control.track == nil
    }

    private static func style(_ change: String) -> (String, Bool) {
        switch change {
        case "mute": ("#d62728", false)
        case "unmute": ("#2ca02c", false)
        case "volume": ("#ff7f0e", false)
        case "solo", "unsolo": ("#9467bd", true)
        default: ("#7f7f7f", true)
        }
    }

    /// "alice muted (heard)", "bob volume 50% (record)", "solo bob, carol", "unsolo".
    static func describe(_ c: TimelineRoom.Control) -> String {
        let scope = c.scope.map { " (\($0))" } ?? ""
        let who = c.track ?? ""
        switch c.change {
        case "mute": return "\(who) muted\(scope)"
        case "unmute": return "\(who) unmuted\(scope)"
        case "volume":
            let gain = c.scope == "record" ? c.recordVolume ?? c.volume : c.volume
            let volume = gain.map { "\(Int(($0 * 100).rounded()))%" } ?? "changed"
            let muted = c.muted == true ? ", muted" : ""
            let offRecord = c.recordMuted == true ? ", off the record" : ""
            return "\(who) volume \(volume)\(muted)\(offRecord)\(scope)"
        case "solo": return "solo " + (c.tracks ?? [who]).filter { !$0.isEmpty }.joined(separator: ", ")
        case "unsolo": return "unsolo"
        default: return [who, c.change].filter { !$0.isEmpty }.joined(separator: " ") + scope
        }
    }

    /// A round tick step giving at most 12 ticks.
    static func tickStep(duration: Double) -> Double {
        let steps = [0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1_800, 3_600, 7_200, 14_400]
        return steps.first { duration / $0 <= 12 } ?? 28_800
    }

    /// "2.5 s" / "10 s" under a minute, "m:ss" or "h:mm:ss" beyond.
    static func tickLabel(_ t: Double, step: Double, duration: Double) -> String {
        if duration < 60 {
            return step < 1 ? String(format: "%.1f s", t) : "\(Int(t.rounded())) s"
        }
        let total = Int(t.rounded())
        let (h, m, sec) = (total / 3_600, total / 60 % 60, total % 60)
        return h > 0 ? String(format: "%d:%02d:%02d", h, m, sec) : String(format: "%d:%02d", m, sec)
    }

    /// "0:03.02", "1:02:03.50": minutes (and hours) and seconds to the hundredth.
    static func clock(_ t: Double) -> String {
        let centis = Int((t * 100).rounded())
        let (h, m, sec, cs) = (centis / 360_000, centis / 6_000 % 60, centis / 100 % 60, centis % 100)
        return h > 0
            ? String(format: "%d:%02d:%02d.%02d", h, m, sec, cs) : String(format: "%d:%02d.%02d", m, sec, cs)
    }

    /// XML text and attribute escaping.
    static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.count)
        for ch in text {
            switch ch {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            default:
                // Control characters are not allowed in XML 1.0 text.
                if let a = ch.asciiValue, a < 0x20, a != 0x09, a != 0x0A, a != 0x0D {
                    out += "\u{FFFD}"
                } else {
                    out.append(ch)
                }
            }
        }
        return out
    }

    private func escape(_ text: String) -> String { Self.escape(text) }
    /// A coordinate: two decimals at most.
    private func n(_ v: Double) -> String {
        let r = (v * 100).rounded() / 100
        return r == r.rounded() ? String(Int(r)) : String(format: "%.2f", r)
    }
    /// Seconds for data attributes: milliseconds precision.
    private func s(_ v: Double) -> String { String(format: "%.3f", v) }
}
