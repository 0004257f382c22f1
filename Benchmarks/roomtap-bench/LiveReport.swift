import Foundation

enum LiveReport {
    static func line(_ o: LiveCapacity.Outcome) -> String {
        String(
            format:
                "N=%4d  %@  late ticks %d  tracks %d  packets %d/%d  files %@  CPU %.2f s (%.2f ms of CPU per track per second)  peak RSS %.1f MiB (%.0f KiB per track)  threads %d",
            o.senders, o.passed ? "pass" : "FAIL", o.lateTicks, o.tracks, o.packetsReceived, o.packetsSent,
            o.completeFiles ? "complete" : "INCOMPLETE", o.cpuSeconds,
            o.cpuSeconds / Double(o.senders) / o.seconds * 1000, Double(o.peakRSSKiB) / 1024,
            Double(o.peakRSSKiB) / Double(o.senders), o.threads)
    }
}
