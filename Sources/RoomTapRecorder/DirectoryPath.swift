/// Pure path arithmetic on the spelling of a path, as dirname(3) does it. Foundation's
/// `NSString.deletingLastPathComponent` traps on a one-character name without a slash (`o`,
/// `é`, `.`) in swift-corelibs-foundation, so `record --out o` crashed; this never traps.
///
/// Thread: any (pure). Nothing is looked up on disk.
enum DirectoryPath {
    /// The directory holding `path`, dirname(3)-style: trailing slashes are ignored, `o` and
    /// `o/` give `.`, `q/x` gives `q`, `/a` and `/` give `/`, `a//b/` gives `a`, and the empty
    /// path gives `.`.
    static func parent(of path: String) -> String {
        var bytes = Array(path.utf8)
        while bytes.count > 1 && bytes.last == UInt8(ascii: "/") { bytes.removeLast() }
        guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")) else { return "." }
        var head = Array(bytes[..<slash])
        while head.count > 1 && head.last == UInt8(ascii: "/") { head.removeLast() }
        if head.isEmpty || head == [UInt8(ascii: "/")] { return "/" }
        return String(decoding: head, as: UTF8.self)
    }
}
