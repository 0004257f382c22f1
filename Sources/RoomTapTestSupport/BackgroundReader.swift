public import Foundation
import RoomTapSync

/// Reads a pipe to its end on a thread of its own, handing each chunk to `onChunk` as it comes, so
/// a test can wait for what a running child has printed (a terminal view, a line) instead of
/// sleeping.
///
/// Thread: `onChunk` runs on the reader's thread; ``wait()`` from any other.
public final class BackgroundReader: Sendable {
    private let done = DispatchSemaphore(value: 0)

    /// Starts reading `handle` until end-of-file.
    public init(_ handle: FileHandle, onChunk: @escaping @Sendable (Data) -> Void) {
        let done = done
        RoomThread.start("roomtap.t.read") {
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                onChunk(chunk)
            }
            done.signal()
        }
    }

    /// Waits until the pipe ended (every writer closed it). Idempotent.
    public func wait() {
        done.wait()
        done.signal()
    }
}
