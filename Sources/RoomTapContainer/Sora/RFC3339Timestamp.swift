/// A date-time as RFC 3339 §5.6 writes it (https://www.rfc-editor.org/rfc/rfc3339#section-5.6),
/// what Sora puts in `start_timestamp` and `stop_timestamp`:
///
///     2025-06-01T09:30:12.345678Z
///     └ full-date ┘└ partial-time ┘└ time-offset: Z or ±HH:MM
///
/// Kept as microseconds since the Unix epoch (UTC) and the number of fraction digits written, which
/// is the precision the writer gave (0: whole seconds, 3: milliseconds, 6: microseconds). Digits
/// past the sixth are read and dropped. A leap second (`:60`) counts as the second after `:59`.
///
/// Thread: a value type; pure, any thread.
public struct RFC3339Timestamp: Sendable, Equatable, Comparable {
    /// Microseconds since 1970-01-01T00:00:00Z.
    public let microseconds: Int64
    /// Digits after the decimal point as written (0 when there is no fraction).
    public let fractionDigits: Int

    public init(microseconds: Int64, fractionDigits: Int) {
        self.microseconds = microseconds
        self.fractionDigits = fractionDigits
    }

    /// The precision the text gave, in seconds (1, 0.001, 0.000001; never finer than 1 µs).
    public var precisionSeconds: Double {
        var scale = 1
        for _ in 0..<min(fractionDigits, 6) { scale *= 10 }
        return 1 / Double(scale)
    }

    public static func < (a: Self, b: Self) -> Bool { a.microseconds < b.microseconds }

    /// Parses `text`; nil unless it is exactly an RFC 3339 date-time (years 0001–9999, valid month
    /// and day, hours 00–23, a `T`, `t` or space between date and time, at most 18 fraction digits).
    public init?(_ text: String) {
        let b = Array(text.utf8)
        guard b.count >= 20, b.count <= 64 else { return nil }
        var i = 0
        func digits(_ n: Int) -> Int? {
            guard i + n <= b.count else { return nil }
            var value = 0
            for k in i..<(i + n) {
                guard b[k] >= 0x30, b[k] <= 0x39 else { return nil }
                value = value * 10 + Int(b[k] - 0x30)
            }
            i += n
            return value
        }
        func expect(_ c: UInt8) -> Bool {
            guard i < b.count, b[i] == c else { return false }
            i += 1
            return true
        }
        guard let year = digits(4), expect(0x2D), let month = digits(2), expect(0x2D), let day = digits(2),
            year >= 1, (1...12).contains(month), day >= 1, day <= Self.days(inMonth: month, year: year)
        else { return nil }
        guard i < b.count, b[i] == 0x54 || b[i] == 0x74 || b[i] == 0x20 else { return nil }
        i += 1
        guard let hour = digits(2), expect(0x3A), let minute = digits(2), expect(0x3A), let second = digits(2),
            hour <= 23, minute <= 59, second <= 60
        else { return nil }
        var micros: Int64 = 0
        var fractionDigits = 0
        if i < b.count, b[i] == 0x2E {
            i += 1
            while i < b.count, b[i] >= 0x30, b[i] <= 0x39 {
                if fractionDigits < 6 { micros = micros * 10 + Int64(b[i] - 0x30) }
                fractionDigits += 1
                i += 1
            }
            guard fractionDigits >= 1, fractionDigits <= 18 else { return nil }
            for _ in min(fractionDigits, 6)..<6 { micros *= 10 }
        }
        var offsetSeconds = 0
        guard i < b.count else { return nil }
        switch b[i] {
        case 0x5A, 0x7A:  // Z, z
            i += 1
        case 0x2B, 0x2D:  // +, -
            let sign = b[i] == 0x2D ? -1 : 1
            i += 1
            guard let h = digits(2), expect(0x3A), let m = digits(2), h <= 23, m <= 59 else { return nil }
            offsetSeconds = sign * (h * 3600 + m * 60)
        default:
            return nil
        }
        guard i == b.count else { return nil }
        let days = Self.daysFromCivil(year: year, month: month, day: day)
        let seconds = Int64(days) * 86_400 + Int64(hour * 3600 + minute * 60 + second) - Int64(offsetSeconds)
        self.microseconds = seconds * 1_000_000 + micros
        self.fractionDigits = fractionDigits
    }

    static func days(inMonth month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's `days_from_civil`).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }
}
