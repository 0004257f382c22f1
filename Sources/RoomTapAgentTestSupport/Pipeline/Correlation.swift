/// Normalised cross-correlation, to check that audio is what was sent (a track against the
/// samples a stand-in produced).
///
/// Thread: pure.
public enum Correlation {
    /// The correlation of `a` and `b` (b shifted right by lag) at the best lag in `lags`, over
    /// their overlap: 1 for the same signal, about 0 for unrelated ones.
    public static func best(_ a: [Int16], _ b: [Int16], lags: Range<Int>) -> (lag: Int, value: Double) {
        var best = (lag: 0, value: -1.0)
        for lag in lags {
            var ab = 0.0
            var aa = 0.0
            var bb = 0.0
            var i = max(0, -lag)
            while i < a.count && i + lag < b.count {
                let x = Double(a[i])
                let y = Double(b[i + lag])
                ab += x * y
                aa += x * x
                bb += y * y
                i += 1
            }
            let c = ab / max(1, (aa * bb).squareRoot())
            if c > best.value { best = (lag, c) }
        }
        return best
    }
}
