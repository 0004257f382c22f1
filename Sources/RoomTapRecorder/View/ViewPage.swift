/// The review page `roomtap view` writes: one self-contained HTML document, the page's own files
/// (Resources/view/view.html, .css, .js, carried in the binary by ``ViewPageAssets``) with the
/// recording's ``ViewModel`` JSON embedded. It reads nothing from the network; it plays the
/// recording's files next to it by relative URL.
///
/// Thread: pure functions of their arguments.
enum ViewPage {
    /// What marks a page as roomtap's (``ViewCommand`` overwrites such a page without --force).
    static let generatorMark = "<meta name=\"generator\" content=\"roomtap view\">"

    /// The page for `dataJSON` (``ViewModel/scriptJSON()``: already safe inside `<script>`)
    /// titled `title` (escaped here).
    static func render(_ dataJSON: String, title: String) -> String {
        let values = ["TITLE": escape(title), "STYLE": style, "DATA": dataJSON, "SCRIPT": script]
        // One pass over the template: a value holding "{{...}}" (a transcript line) is never expanded.
        var out = ""
        out.reserveCapacity(template.utf8.count + style.utf8.count + script.utf8.count + dataJSON.utf8.count)
        var rest = template[...]
        while let open = rest.range(of: "{{"), let close = rest[open.upperBound...].range(of: "}}") {
            out += rest[..<open.lowerBound]
            let key = String(rest[open.upperBound..<close.lowerBound])
            out += values[key] ?? String(rest[open.lowerBound..<close.upperBound])
            rest = rest[close.upperBound...]
        }
        out += rest
        return out + "\n"
    }

    /// HTML text escaping (`&`, `<`, `>`, `"`).
    static func escape(_ text: String) -> String {
        var out = ""
        for ch in text {
            switch ch {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            default: out.append(ch)
            }
        }
        return out
    }
}
