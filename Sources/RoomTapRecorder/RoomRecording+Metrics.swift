import Foundation
import RoomTapAll

/// `record --metrics HOST:PORT`: the recorder's own Prometheus endpoint (`/metrics`, `/healthz`)
/// while the room runs, on its own thread (`roomtap.http`); every value is read from counters the
/// clock, the receivers and the sinks keep anyway (atomics, or a lock the clock never takes), so
/// a scrape costs the 10 ms path nothing.
extension RoomRecording {
    /// Binds `address` and serves until ``stopMetrics()``; prints `roomtap: metrics on
    /// http://ADDR/metrics` when a port 0 was asked. Throws a one-line reason (address taken).
    func startMetrics(address: String, room: Room, clock: RealTimeClock?, started: Date) throws -> MetricsServer {
        let server = try MetricsServer(address: address) { [self] request in
            switch request.path {
            case "/metrics":
                return (200, "text/plain; version=0.0.4", metricsText(room: room, clock: clock, started: started))
            case "/healthz": return (200, "text/plain", "ok\n")
            default: return (404, "text/plain", "not found\n")
            }
        }
        server.start()
        if address.hasSuffix(":0") {
            plan.context.console.error("roomtap: metrics on http://\(server.address)/metrics\n")
        }
        return server
    }

    /// Stops the endpoint. Idempotent; any thread.
    func stopMetrics() { assembled.current?.metricsServer?.stop() }

    /// The exposition text: the room (tracks, seconds, late ticks, dropped frames, bytes written),
    /// each network participant (packets received, lost, late, concealed; jitter), the uploads.
    func metricsText(room: Room, clock: RealTimeClock?, started: Date) -> String {
        var out = PrometheusText()
        let tracks = room.tracks
        let s = shared.withLock { (created: $0.created, dropped: $0.sinks.values.reduce(0) { $0 + $1.droppedFrames }) }
        out.metric("roomtap_tracks", "gauge", "Tracks in the room now.", [], tracks.count)
        out.family("roomtap_room_seconds", "gauge", "Seconds since the room started (wall clock).")
        out.sample("roomtap_room_seconds", [], Date().timeIntervalSince(started))
        out.metric(
            "roomtap_late_ticks_total", "counter", "Clock ticks that ran late (10 ms frames rendered late).", [],
            clock?.lateTicks ?? 0)
        out.metric(
            "roomtap_dropped_frames_total", "counter", "Frames the sinks' queues dropped (a slow disk).", [], s.dropped)
        var bytes = 0
        for path in s.created {
            var info = stat()
            if stat(path, &info) == 0 { bytes += Int(info.st_size) }
        }
        out.metric("roomtap_written_bytes", "gauge", "Bytes of the room's files on disk now.", [], bytes)
        let participants = assembled.current?.live?.participants ?? []
        let families: [(String, String, (JitterStatistics) -> Int)] = [
            ("roomtap_packets_received_total", "RTP packets received, by track.", { $0.packets }),
            ("roomtap_packets_lost_total", "RTP packets lost (never arrived), by track.", { $0.lost }),
            ("roomtap_packets_late_total", "RTP packets that arrived too late to play, by track.", { $0.late }),
            ("roomtap_concealed_samples_total", "Samples concealed (loss), by track.", { $0.concealedSamples }),
        ]
        for (name, help, value) in families {
            out.family(name, "counter", help)
            for participant in participants {
                out.sample(name, [("track", participant.track.name)], value(participant.buffer.statistics))
            }
        }
        out.family("roomtap_jitter_seconds", "gauge", "Interarrival jitter (RFC 3550), by track.")
        for participant in participants {
            out.sample(
                "roomtap_jitter_seconds", [("track", participant.track.name)],
                participant.buffer.statistics.jitterMilliseconds / 1000)
        }
        if let upload = liveUpload?.status {
            out.metric("roomtap_segments_uploaded_total", "counter", "Segments uploaded.", [], upload.uploaded)
            out.metric("roomtap_upload_failures_total", "counter", "Segment uploads that failed.", [], upload.failed)
            out.metric("roomtap_segments_pending", "gauge", "Segments waiting to go up.", [], upload.pending)
        }
        return out.text
    }
}
