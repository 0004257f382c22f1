public import Synchronization

/// The worker's counters and gauges, in Prometheus text (https://prometheus.io/docs/instrumenting/exposition_formats/):
/// names prefixed `roomtap_`, units in the names.
///
/// Thread: any (atomics).
public final class WorkerMetrics: Sendable {
    public let rooms = Atomic<Int>(0)
    public let tracks = Atomic<Int>(0)
    public let capacityTracks: Int
    public let ready = Atomic<Bool>(false)
    public let draining = Atomic<Bool>(false)
    public let jobsDone = Atomic<Int>(0)
    public let jobsFailed = Atomic<Int>(0)
    public let jobsCancelled = Atomic<Int>(0)
    public let jobsHandedOver = Atomic<Int>(0)
    public let jobsLost = Atomic<Int>(0)
    public let claims = Atomic<Int>(0)
    public let reclaims = Atomic<Int>(0)
    public let leaseRenewals = Atomic<Int>(0)
    public let leaseRenewalsFailed = Atomic<Int>(0)
    public let bytesWritten = Atomic<Int>(0)
    public let bytesUploaded = Atomic<Int>(0)
    public let uploadFailures = Atomic<Int>(0)
    /// Milliseconds of room audio lost to failovers of rooms this worker finished.
    public let audioLostMilliseconds = Atomic<Int>(0)
    public let lateTicks = Atomic<Int>(0)
    public let packetsReceived = Atomic<Int>(0)
    public let packetsLost = Atomic<Int>(0)
    public let packetsLate = Atomic<Int>(0)

    public init(capacityTracks: Int) { self.capacityTracks = capacityTracks }

    /// The exposition text of every metric.
    public func text(worker: String) -> String {
        let label = "{worker=\"\(worker.replacingOccurrences(of: "\"", with: "'"))\"}"
        var out = ""
        func metric(_ name: String, _ type: String, _ help: String, _ value: Int) {
            out += "# HELP roomtap_\(name) \(help)\n# TYPE roomtap_\(name) \(type)\nroomtap_\(name)\(label) \(value)\n"
        }
        metric("rooms", "gauge", "Rooms this worker records now.", rooms.load(ordering: .relaxed))
        metric(
            "tracks", "gauge", "Tracks (claimed) of the rooms this worker records now.", tracks.load(ordering: .relaxed)
        )
        metric("capacity_tracks", "gauge", "Tracks this worker records at most.", capacityTracks)
        metric(
            "capacity_free_tracks", "gauge", "Tracks this worker could still take (0 while draining).",
            draining.load(ordering: .relaxed) ? 0 : max(0, capacityTracks - tracks.load(ordering: .relaxed)))
        metric("ready", "gauge", "1 when the worker takes work (/readyz 200).", isReady ? 1 : 0)
        metric(
            "draining", "gauge", "1 after SIGTERM: no new work, rooms finishing or handed over.",
            draining.load(ordering: .relaxed) ? 1 : 0)
        out += "# HELP roomtap_jobs_total Jobs this worker ended, by result.\n# TYPE roomtap_jobs_total counter\n"
        for (result, value) in [
            ("done", jobsDone.load(ordering: .relaxed)), ("failed", jobsFailed.load(ordering: .relaxed)),
            ("cancelled", jobsCancelled.load(ordering: .relaxed)),
            ("handed_over", jobsHandedOver.load(ordering: .relaxed)),
            ("lost", jobsLost.load(ordering: .relaxed)),
        ] {
            out += "roomtap_jobs_total{worker=\"\(worker)\",result=\"\(result)\"} \(value)\n"
        }
        metric("claims_total", "counter", "Jobs claimed (new and reclaimed).", claims.load(ordering: .relaxed))
        metric(
            "reclaims_total", "counter", "Jobs taken over from a worker whose lease expired.",
            reclaims.load(ordering: .relaxed))
        metric(
            "lease_renewals_total", "counter", "Lease renewals that succeeded.", leaseRenewals.load(ordering: .relaxed))
        metric(
            "lease_renewals_failed_total", "counter",
            "Lease renewals that failed (Redis unreachable or the lease lost).",
            leaseRenewalsFailed.load(ordering: .relaxed))
        metric(
            "written_bytes_total", "counter", "Bytes of finished rooms' files.", bytesWritten.load(ordering: .relaxed))
        metric("uploaded_bytes_total", "counter", "Bytes uploaded to storage.", bytesUploaded.load(ordering: .relaxed))
        metric(
            "upload_failures_total", "counter", "Uploads that failed after their retries.",
            uploadFailures.load(ordering: .relaxed))
        metric(
            "audio_lost_seconds_total", "counter",
            "Seconds of room time lost to failovers (gaps in rooms finished here), rounded down.",
            audioLostMilliseconds.load(ordering: .relaxed) / 1000)
        metric(
            "late_ticks_total", "counter", "Late clock ticks of the rooms finished here.",
            lateTicks.load(ordering: .relaxed))
        metric(
            "packets_received_total", "counter", "RTP packets received by the rooms finished here.",
            packetsReceived.load(ordering: .relaxed))
        metric(
            "packets_lost_total", "counter", "RTP packets lost (never arrived) in the rooms finished here.",
            packetsLost.load(ordering: .relaxed))
        metric(
            "packets_late_total", "counter", "RTP packets that arrived too late for the record.",
            packetsLate.load(ordering: .relaxed))
        return out
    }

    /// Taking work: started, not draining, and with free capacity.
    public var isReady: Bool {
        ready.load(ordering: .relaxed) && !draining.load(ordering: .relaxed)
            && tracks.load(ordering: .relaxed) < capacityTracks
    }
}
