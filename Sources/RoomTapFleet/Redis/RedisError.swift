/// A Redis failure: the connection (refused, lost, timed out) or a command's error reply.
/// `description` is one line for the user.
public struct RedisError: Error, Sendable, CustomStringConvertible, Equatable {
    public let description: String
    /// True when the server answered with an error (the connection itself is fine).
    public let isReply: Bool

    public init(_ description: String, isReply: Bool = false) {
        self.description = description
        self.isReply = isReply
    }
}
