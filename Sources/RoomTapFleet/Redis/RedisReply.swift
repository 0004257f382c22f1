/// One RESP2 reply (https://redis.io/docs/latest/develop/reference/protocol-spec/).
public enum RedisReply: Sendable, Equatable {
    case string(String)
    case status(String)
    case integer(Int64)
    case array([RedisReply])
    case null

    /// The text of a bulk or status reply; nil otherwise.
    public var text: String? {
        switch self {
        case .string(let s), .status(let s): s
        case .integer(let n): String(n)
        default: nil
        }
    }

    /// The number of an integer reply, or of a bulk string holding one.
    public var integer: Int64? {
        switch self {
        case .integer(let n): n
        case .string(let s): Int64(s)
        default: nil
        }
    }

    /// The elements of an array reply ([] for null).
    public var elements: [RedisReply] {
        if case .array(let items) = self { return items }
        return []
    }

    /// An HGETALL-style array as a dictionary (later keys win).
    public var fields: [String: String] {
        var result: [String: String] = [:]
        let items = elements
        var i = 0
        while i + 1 < items.count {
            if let key = items[i].text, let value = items[i + 1].text { result[key] = value }
            i += 2
        }
        return result
    }
}
