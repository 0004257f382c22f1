import RoomTapSync

/// The result lines of one Sora connection on their way to its open `POST /speech` response
/// (`--transcribe`): posted from the thread that writes the transcript, taken by the request on
/// the server's thread (``SoraStreamRequest``), which sends them as parts of its response.
///
/// Bounded: at most ``capacity`` lines wait; a line posted while the queue is full, or while no
/// request of the connection is open, is dropped and counted, so a client that does not read its
/// response never holds up the transcript's writer.
///
/// Thread: any; ``post(_:)`` never blocks longer than a short lock.
final class SoraResultLines: Sendable {
    /// Lines that may wait for the response at once.
    static let capacity = 256

    private struct State {
        var isOpen = false
        var lines: [String] = []
        var sent = 0
        var dropped = 0
    }

    private let state = Locked(State())

    /// A request of the connection opened: lines posted from now on are kept for it. Idempotent.
    func open() { state.withLock { $0.isOpen = true } }

    /// The request ended: waiting lines are dropped (counted), later ones too until ``open()``.
    /// Idempotent.
    func close() {
        state.withLock {
            $0.isOpen = false
            $0.dropped += $0.lines.count
            $0.lines.removeAll()
        }
    }

    /// Queues one line (a JSON object, without its newline). False when it was dropped.
    @discardableResult
    func post(_ line: String) -> Bool {
        state.withLock {
            guard $0.isOpen, $0.lines.count < Self.capacity else {
                $0.dropped += 1
                return false
            }
            $0.lines.append(line)
            return true
        }
    }

    /// The lines waiting, oldest first, each with its newline, as the response's bytes (empty:
    /// none).
    func take() -> [UInt8] {
        let lines = state.withLock {
            let taken = $0.lines
            $0.lines.removeAll(keepingCapacity: true)
            $0.sent += taken.count
            return taken
        }
        var bytes: [UInt8] = []
        for line in lines { bytes += Array((line + "\n").utf8) }
        return bytes
    }

    /// Lines sent to a response so far, and lines dropped.
    var counts: (sent: Int, dropped: Int) { state.withLock { ($0.sent, $0.dropped) } }
}
