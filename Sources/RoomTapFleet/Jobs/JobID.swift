public import Foundation

/// A job's name: 1-64 of `A-Z a-z 0-9 . _ -`, not starting with `.` or `-` (it becomes a directory
/// and an object prefix).
public enum JobID {
    public static func isValid(_ id: String) -> Bool {
        guard let first = id.first, id.utf8.count <= 64, first != ".", first != "-" else { return false }
        return id.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) }
    }

    /// A fresh id: `job-YYYYMMDD-HHMMSS-XXXXXX` (UTC, six random hex digits).
    public static func make(now: Date = Date()) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: now)
        let stamp = String(
            format: "%04d%02d%02d-%02d%02d%02d", c.year ?? 0, c.month ?? 0, c.day ?? 0, c.hour ?? 0, c.minute ?? 0,
            c.second ?? 0)
        return "job-\(stamp)-" + String(format: "%06x", UInt32.random(in: 0..<0x100_0000))
    }
}
