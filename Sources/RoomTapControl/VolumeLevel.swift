#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A track volume: a linear gain in `0...10` (1 = unchanged, 0 = silent), as the Sora SDK's
/// `MediaStream` volume. Parsed from the control protocol's `volume` parameter.
///
/// Accepted forms (surrounding spaces are ignored; `dB` in any case, with or without a space):
/// - a JSON number or a plain decimal string, `"0.5"`, `"2"`, `"+1"`, `".25"`: the linear gain. It
///   must lie in `0...10`: a negative, larger or non-finite value is `out_of_range`.
/// - decibels, `"-6dB"`, `"+3 dB"`, `"0dB"`: converted with `10^(dB/20)` and **clamped** to
///   `0...10` (so `"+30dB"` is 10, `"-200dB"` is about 0).
/// - `"-inf dB"` (or `"-infdB"`): 0, silence.
///
/// Anything else (exponents, hex, `"nan"`, units other than dB, more than 64 characters) is not
/// a volume (`bad_request`).
public enum VolumeLevel {
    /// The allowed linear gains.
    public static let range: ClosedRange<Float> = 0...10

    /// The linear gain `text` stands for, or nil when it is not a volume or is out of range.
    ///
    /// Thread: any; pure.
    public static func parse(_ text: String) -> Float? {
        if case .level(let level) = classify(text) { return level }
        return nil
    }

    /// The linear gain of a `volume` parameter: a number, or a string as ``parse(_:)-(String)``.
    /// Throws `out_of_range` for a number (or linear string) outside `0...10`, `bad_request` for
    /// another type or text that is not a volume.
    public static func parse(_ value: JSONValue, parameter: String = "volume") throws(ControlFailure) -> Float {
        switch value {
        case .number(let number):
            guard number.isFinite, number >= 0, number <= 10 else {
                throw outOfRange(parameter, JSONValue.number(number).jsonText)
            }
            return Float(number)
        case .string(let text):
            switch classify(text) {
            case .level(let level): return level
            case .outOfRange: throw outOfRange(parameter, "\"\(text)\"")
            case .invalid:
                throw ControlFailure(
                    .badRequest, "\"\(parameter)\" must be a gain 0...10 (like 0.5) or decibels (like \"-6dB\")")
            }
        default:
            throw ControlFailure(.badRequest, "\"\(parameter)\" must be a number or a string like \"-6dB\"")
        }
    }

    enum Classified: Equatable {
        case level(Float)
        case outOfRange
        case invalid
    }

    static func classify(_ text: String) -> Classified {
        var body = Substring(text).trimmingSpaces()
        guard !body.isEmpty, body.utf8.count <= 64 else { return .invalid }
        let lower = body.lowercased()
        if lower.hasSuffix("db") {
            body = body.dropLast(2).trimmingSpaces()
            guard let decibels = signedDecimal(body) else { return .invalid }
            let gain = decibels == -.infinity ? 0 : pow(10, decibels / 20)
            return .level(Float(min(max(gain, 0), 10)))
        }
        guard let linear = signedDecimal(body), linear.isFinite else { return .invalid }
        guard linear >= 0, linear <= 10 else { return .outOfRange }
        return .level(Float(linear))
    }

    /// `[+-]? (digits [. digits?] | . digits | inf)`, or nil.
    private static func signedDecimal(_ text: Substring) -> Double? {
        var rest = text
        var sign = 1.0
        if let first = rest.first, first == "+" || first == "-" {
            sign = first == "-" ? -1 : 1
            rest = rest.dropFirst()
        }
        if rest.lowercased() == "inf" { return sign * .infinity }
        var digits = 0
        var dots = 0
        for character in rest.utf8 {
            if character == UInt8(ascii: ".") {
                dots += 1
            } else if character >= UInt8(ascii: "0") && character <= UInt8(ascii: "9") {
                digits += 1
            } else {
                return nil
            }
        }
        guard digits > 0, dots <= 1, let value = Double(String(rest)) else { return nil }
        return sign * value
    }

    private static func outOfRange(_ parameter: String, _ shown: String) -> ControlFailure {
        ControlFailure(.outOfRange, "\"\(parameter)\" \(shown) is outside 0...10 (use decibels like \"-6dB\" to clamp)")
    }
}

extension Substring {
    fileprivate func trimmingSpaces() -> Substring {
        var result = self
        while let first = result.first, first == " " || first == "\t" { result = result.dropFirst() }
        while let last = result.last, last == " " || last == "\t" { result = result.dropLast() }
        return result
    }
}
