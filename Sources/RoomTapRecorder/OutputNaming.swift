/// Turns track names into file names that cannot escape the output directory.
///
/// Characters outside `[A-Za-z0-9._-]` become `_`; a name made only of dots, or starting with a
/// dot, gets a leading `_` (no hidden files, no `.`/`..`); an empty name becomes `track`; names
/// are cut to 100 characters. Collisions (compared case-insensitively, so the set is also safe on
/// case-insensitive file systems) get `-2`, `-3`, ... in the order names are claimed.
struct OutputNaming {
    private var taken: Set<String> = []

    /// Reserves a name (such as "mix" or "room") so no track can take it.
    mutating func reserve(_ name: String) { taken.insert(name.lowercased()) }

    /// The sanitised, unique base name (without extension) for `name`.
    mutating func claim(_ name: String) -> String {
        let base = Self.sanitize(name)
        var candidate = base
        var n = 2
        while taken.contains(candidate.lowercased()) {
            candidate = "\(base)-\(n)"
            n += 1
        }
        taken.insert(candidate.lowercased())
        return candidate
    }

    static func sanitize(_ name: String) -> String {
        var s = String(
            String.UnicodeScalarView(
                name.unicodeScalars.map { c in
                    switch c {
                    case "A"..."Z", "a"..."z", "0"..."9", ".", "_", "-": c
                    default: "_"
                    }
                }))
        if s.count > 100 { s = String(s.prefix(100)) }
        if s.isEmpty { return "track" }
        if s.hasPrefix(".") { s = "_" + s }
        return s
    }
}
