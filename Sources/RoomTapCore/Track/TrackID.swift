/// A track's identity within one room: assigned in the order tracks are added, never reused.
public struct TrackID: Hashable, Sendable, Comparable, CustomStringConvertible, Codable {
    /// The number, starting at 1.
    public let rawValue: UInt32
    /// Wraps a number.
    public init(_ rawValue: UInt32) { self.rawValue = rawValue }
    public static func < (a: TrackID, b: TrackID) -> Bool { a.rawValue < b.rawValue }
    public var description: String { "#\(rawValue)" }
}
