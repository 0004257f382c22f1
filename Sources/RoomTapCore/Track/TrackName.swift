/// The one rule for a track's name, wherever a name is given (`--file NAME=`, `--mic-name`, the
/// room file's participants and Sora names) and looked up (the control verbs): a name is shown,
/// logged and made a file name, so it is 1-64 characters, has no `/` and no control character,
/// and is not `.` or `..`; and two names that differ only in case are one name (a
/// case-insensitive file system would take their files for one), so they cannot both be given
/// and a verb finds `Alice` by `alice`.
///
/// Thread: any; pure.
public enum TrackName {
    /// The longest name, in characters.
    public static let maximumLength = 64

    /// The rule, for messages.
    public static let rule = "1-\(maximumLength) characters, no '/' or control characters, not . or .."

    /// Why `name` is not a track name (`has a control character`), nil when it is one.
    public static func problem(_ name: String) -> String? {
        if name.isEmpty { return "is empty" }
        if name.count > maximumLength { return "is longer than \(maximumLength) characters" }
        if name == "." || name == ".." { return "is \(name), which names a directory" }
        if name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            return "has a control character"
        }
        if name.contains("/") { return "has a '/' (it names a file)" }
        return nil
    }

    /// What two names that are one name have in common: `Alice` and `alice` have the same key.
    public static func key(_ name: String) -> String { name.lowercased() }

    /// `name` as a message may show it: each control character as `?`.
    public static func printable(_ name: String) -> String {
        String(
            String.UnicodeScalarView(
                name.unicodeScalars.map { $0.properties.generalCategory == .control ? "?" : $0 }))
    }
}
