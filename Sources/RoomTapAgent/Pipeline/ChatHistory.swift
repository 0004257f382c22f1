/// The pipeline agent's bounded memory: the last ``recentLimit`` turns and replies as messages,
/// and one summary line of the older ones (who said what, cut to ``summaryLimit`` characters,
/// newest kept), so a three-hour room sends a request of the same size as a three-minute one.
/// Tool calls and their results live only in the request of the reply that made them.
///
/// Thread: a value (the pipeline agent keeps it under its lock).
package struct ChatHistory: Sendable, Equatable {
    public let recentLimit: Int
    public let summaryLimit: Int
    /// The recent messages, oldest first (`user` turns and `assistant` replies).
    public private(set) var recent: [ChatMessage] = []
    /// The older ones, as `name: text; name: text` (empty at first).
    public private(set) var summary = ""

    public init(recentLimit: Int = 24, summaryLimit: Int = 1_500) {
        self.recentLimit = max(2, recentLimit)
        self.summaryLimit = max(100, summaryLimit)
    }

    /// Adds a message; the oldest move into the summary beyond ``recentLimit``. Returns its index
    /// as an identity for ``replace(_:content:)``.
    @discardableResult
    public mutating func append(_ message: ChatMessage) -> Int {
        recent.append(message)
        appended += 1
        while recent.count > recentLimit {
            let old = recent.removeFirst()
            let who = old.role == .assistant ? "you" : (old.name ?? old.role.rawValue)
            summary += (summary.isEmpty ? "" : "; ") + "\(who): \(old.content)"
            if summary.count > summaryLimit { summary = "…" + String(summary.suffix(summaryLimit - 1)) }
        }
        return appended - 1
    }

    private var appended = 0

    /// Changes the content of message `identity` (from ``append(_:)``) if it is still recent: a
    /// reply cut by a barge-in keeps only what was said aloud (empty: nothing was, and the
    /// reply is left out of requests).
    public mutating func replace(_ identity: Int, content: String) {
        let index = recent.count - (appended - identity)
        guard index >= 0 && index < recent.count else { return }
        recent[index].content = content
    }

    /// The request's messages: the system prompt (`instructions` and the summary), then the recent ones.
    public func messages(instructions: String) -> [ChatMessage] {
        var system = instructions
        if !summary.isEmpty {
            system += (system.isEmpty ? "" : "\n\n") + "Earlier in this conversation: \(summary)"
        }
        let said = recent.filter { !$0.content.isEmpty }
        return (system.isEmpty ? [] : [ChatMessage(role: .system, content: system)]) + said
    }
}
