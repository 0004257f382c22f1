/// Where objects go: a bucket and a key prefix, parsed from `s3://BUCKET/PREFIX`.
///
/// Outside input (a command line, a job): the parser is strict. The bucket follows S3's naming
/// rules (3-63 characters of `a-z 0-9 . -`, starting and ending with a letter or digit, no `..`);
/// the prefix has no empty, `.` or `..` segments, no control characters and at most 900 bytes
/// (S3 keys end at 1024), so every key made from it (``key(for:)``) is a plain relative path. A
/// trailing `/` is dropped: `s3://b/rooms/` and `s3://b/rooms` are the same place.
public struct S3Location: Sendable, Equatable, CustomStringConvertible {
    /// The bucket name.
    public let bucket: String
    /// The key prefix without a leading or trailing `/`; empty for the bucket's root.
    public let prefix: String

    /// Why a text is not an `s3://` location (one line: what is wrong and what to write).
    public struct ParseError: Error, Sendable, Equatable, CustomStringConvertible {
        public let description: String
    }

    /// Parses `s3://BUCKET[/PREFIX]`.
    public init(parsing text: String) throws(ParseError) {
        let shown = text.count > 80 ? String(text.prefix(80)) + "..." : text
        func fail(_ why: String) -> ParseError {
            ParseError(
                description: "'\(Self.printable(shown))' is not an S3 location: \(why) (write s3://BUCKET/PREFIX)")
        }
        guard text.utf8.count <= 1100 else { throw fail("it is longer than 1100 bytes") }
        guard text.lowercased().hasPrefix("s3://") else { throw fail("it does not start with s3://") }
        let rest = text.dropFirst(5)
        let slash = rest.firstIndex(of: "/")
        let bucket = String(slash.map { rest[..<$0] } ?? rest)
        var prefix = slash.map { String(rest[rest.index(after: $0)...]) } ?? ""
        if let why = Self.bucketProblem(bucket) { throw fail(why) }
        while prefix.hasSuffix("/") { prefix.removeLast() }
        if !prefix.isEmpty {
            guard prefix.utf8.count <= 900 else { throw fail("the prefix is longer than 900 bytes") }
            guard !prefix.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
                throw fail("the prefix holds a control character")
            }
            for segment in prefix.split(separator: "/", omittingEmptySubsequences: false) {
                guard !segment.isEmpty else { throw fail("the prefix has an empty segment (//)") }
                guard segment != "." && segment != ".." else { throw fail("the prefix has a '\(segment)' segment") }
            }
        }
        self.bucket = bucket
        self.prefix = prefix
    }

    /// A location from parts already checked (a prefix inside this one).
    init(bucket: String, prefix: String) {
        self.bucket = bucket
        self.prefix = prefix
    }

    /// The object key of `relativePath` (a file's path inside the uploaded directory) under the prefix.
    public func key(for relativePath: String) -> String {
        prefix.isEmpty ? relativePath : prefix + "/" + relativePath
    }

    /// This location with `path` appended to the prefix (`segments`, `segments/alice`).
    public func appending(_ path: String) -> S3Location { S3Location(bucket: bucket, prefix: key(for: path)) }

    /// `s3://BUCKET/PREFIX`.
    public var description: String { "s3://\(bucket)" + (prefix.isEmpty ? "" : "/\(prefix)") }

    /// Why `name` is not a valid bucket name, or nil.
    static func bucketProblem(_ name: String) -> String? {
        guard !name.isEmpty else { return "it names no bucket" }
        guard (3...63).contains(name.utf8.count) else { return "a bucket name has 3 to 63 characters" }
        let allowed = name.utf8.allSatisfy {
            ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2E || $0 == 0x2D
        }
        guard allowed else { return "a bucket name holds only a-z, 0-9, '.' and '-'" }
        let isAlnum = { (c: UInt8) in (c >= 0x61 && c <= 0x7A) || (c >= 0x30 && c <= 0x39) }
        guard isAlnum(name.utf8.first!), isAlnum(name.utf8.last!) else {
            return "a bucket name starts and ends with a letter or digit"
        }
        guard !name.contains("..") else { return "a bucket name has no '..'" }
        return nil
    }

    /// `text` with control characters shown as `?` (an error line stays one line).
    static func printable(_ text: String) -> String {
        String(text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? "?" : Character($0) })
    }
}
