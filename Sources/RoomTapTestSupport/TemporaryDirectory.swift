import Foundation

/// A fresh directory under the system's temporary directory, removed (with its contents) when the
/// value is released. For tests that write real files.
public final class TemporaryDirectory: Sendable {
    /// Absolute path of the directory.
    public let path: String

    /// Creates `<tmp>/<prefix>-XXXXXX`.
    public init(prefix: String = "roomtap-test") throws {
        let base = URL(fileURLWithPath: NSTemporaryDirectory()).standardizedFileURL.path
        var template = Array("\(base)/\(prefix)-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        guard made != nil else { throw CocoaError(.fileWriteUnknown) }
        path = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// The path of `name` inside the directory.
    public func file(_ name: String) -> String { path + "/" + name }
}
