/// Builds Prometheus text exposition (format 0.0.4,
/// https://prometheus.io/docs/instrumenting/exposition_formats/#text-based-format): each family
/// with its `# HELP` and `# TYPE`, then its samples; label values escaped (`\\`, `\"`, `\n`).
/// A value; names are the caller's (`roomtap_` prefixed, units in the name).
public struct PrometheusText: Sendable {
    public private(set) var text = ""

    public init() {}

    /// Starts a family: `type` is `counter` or `gauge`.
    public mutating func family(_ name: String, _ type: String, _ help: String) {
        text += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
    }

    /// One sample of the current family.
    public mutating func sample(_ name: String, _ labels: [(String, String)] = [], _ value: Int) {
        sample(name, labels, String(value))
    }

    /// One sample of the current family.
    public mutating func sample(_ name: String, _ labels: [(String, String)] = [], _ value: Double) {
        sample(name, labels, value.isFinite ? String(value) : (value.isNaN ? "NaN" : value > 0 ? "+Inf" : "-Inf"))
    }

    /// A family of one sample.
    public mutating func metric(
        _ name: String, _ type: String, _ help: String, _ labels: [(String, String)] = [], _ value: Int
    ) {
        family(name, type, help)
        sample(name, labels, value)
    }

    private mutating func sample(_ name: String, _ labels: [(String, String)], _ value: String) {
        text += name
        if !labels.isEmpty {
            text += "{" + labels.map { "\($0.0)=\"\(Self.escape($0.1))\"" }.joined(separator: ",") + "}"
        }
        text += " \(value)\n"
    }

    /// A label value as the format writes it.
    public static func escape(_ value: String) -> String {
        var out = ""
        for character in value {
            switch character {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.append(character)
            }
        }
        return out
    }
}
