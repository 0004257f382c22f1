import Foundation
import RoomTapSync

/// One response of the stand-in: created by `response.create` (or by the script, as server VAD
/// would), streamed by ``FakeRealtimeServer/reply(pcm:itemID:transcript:chunkMs:paced:)`` on a
/// thread of its own, cancelled by `response.cancel` or by speech when `interrupt_response` is on.
///
/// Thread: any; the flags are under a lock.
final class FakeRealtimeResponse: Sendable {
    /// `resp_N`.
    let id: String
    private struct State {
        var cancelled = false
        var reason = "client_cancelled"
        var streaming = false
        var finished = false
    }
    private let state = Locked(State())

    init(id: String) { self.id = id }

    /// Asks the stream to stop at its next chunk; `reason` goes into `status_details`
    /// (`client_cancelled`, `turn_detected`). Idempotent (the first reason stays).
    func cancel(reason: String) {
        state.withLock { s in
            guard !s.cancelled else { return }
            s.cancelled = true
            s.reason = reason
        }
    }

    /// Why it was cancelled.
    var cancelReason: String { state.withLock { $0.reason } }

    var isCancelled: Bool { state.withLock { $0.cancelled } }

    /// Claims the response for one stream; false when one already streams it (or it ended).
    func beginStreaming() -> Bool {
        state.withLock { s in
            guard !s.streaming, !s.finished else { return false }
            s.streaming = true
            return true
        }
    }

    /// Marks the response ended (its `response.done` is out); true the first time.
    func finish() -> Bool {
        state.withLock { s in
            defer { s.finished = true }
            return !s.finished
        }
    }

    var isStreaming: Bool { state.withLock { $0.streaming } }
}
