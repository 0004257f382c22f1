import Foundation

/// How often and how long to retry a request that failed for a reason that may pass (no answer,
/// 5xx, 429): exponential backoff with full jitter (AWS's recommendation), capped.
public struct RetryPolicy: Sendable {
    /// Tries in all, the first included (1: no retry).
    public var attempts: Int
    /// The first backoff's upper bound, in seconds; doubled per retry.
    public var baseDelay: Double
    /// The largest backoff, in seconds.
    public var maxDelay: Double

    public init(attempts: Int = 5, baseDelay: Double = 0.2, maxDelay: Double = 10) {
        self.attempts = max(1, attempts)
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
    }

    /// The pause before retry `retry` (1 = the first retry): uniform in 0...min(max, base * 2^(retry-1)).
    public func delay(beforeRetry retry: Int) -> Double {
        let cap = min(maxDelay, baseDelay * pow(2, Double(max(0, retry - 1))))
        return Double.random(in: 0...max(0, cap))
    }
}
