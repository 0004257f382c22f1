import CNice
import Foundation
import RoomTapSync

/// The GLib main loop libnice runs on: one thread (`roomtap.ice`) for every ``ICEAgent`` of a join,
/// where libnice calls back (candidates gathered, state changes, received datagrams) and where the
/// DTLS and RTCP timers run. Everything the agents' callbacks touch is confined to this thread.
///
/// Thread: `init` and `stop` on a control thread; ``run(_:)`` from anywhere (the block runs on the
/// loop's thread, later). `stop` is idempotent.
package final class ICEContext: @unchecked Sendable {
    /// The GLib context the agents attach to.
    let context: OpaquePointer
    private let loop: OpaquePointer
    private let thread: RoomThread
    private let finished = DispatchSemaphore(value: 0)
    private let stopped = Locked(false)

    /// Starts the loop's thread.
    public init() {
        context = g_main_context_new()
        loop = g_main_loop_new(context, 0)
        let pointers = UnsafeSendable((context, loop))
        let finished = self.finished
        thread = RoomThread.start("roomtap.ice") {
            let (context, loop) = pointers.value
            g_main_context_push_thread_default(context)
            g_main_loop_run(loop)
            g_main_context_pop_thread_default(context)
            finished.signal()
        }
    }

    deinit {
        stop()
        g_main_loop_unref(loop)
        g_main_context_unref(context)
    }

    /// Runs `block` on the loop's thread, once, soon. Dropped after ``stop()``.
    public func run(_ block: @escaping @Sendable () -> Void) {
        guard !isStopped else { return }
        let box = Unmanaged.passRetained(Block(block)).toOpaque()
        roomtap_g_invoke(
            context,
            { data in
                Unmanaged<Block>.fromOpaque(data!).takeRetainedValue().body()
                return 0
            }, box)
    }

    /// Whether ``stop()`` was called.
    var isStopped: Bool { stopped.withLock { $0 } }

    /// Ends the loop and joins its thread. Idempotent; not from the loop's thread.
    public func stop() {
        guard
            stopped.withLock({ (done: inout Bool) -> Bool in
                defer { done = true }
                return !done
            })
        else { return }
        g_main_loop_quit(loop)
        g_main_context_wakeup(context)
        finished.wait()
    }

    private final class Block {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
}
