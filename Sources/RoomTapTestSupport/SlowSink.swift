public import RoomTapCore

/// A deliberately slow queued sink: a ``QueuedSink`` whose ``RecordingConsumer`` sleeps `delay`
/// per frame, to show that a slow sink costs the room clock nothing (under `.drop`).
public typealias SlowSink = QueuedSink

extension QueuedSink {
    /// A queued sink whose consumer sleeps `delay` per frame.
    public static func slow(
        delay: Duration, channels: Int = 1, capacity: Int = 8, policy: OverflowPolicy = .drop
    ) -> (sink: SlowSink, consumer: RecordingConsumer) {
        let consumer = RecordingConsumer(delay: delay)
        return (QueuedSink(consumer: consumer, channels: channels, capacity: capacity, policy: policy), consumer)
    }
}
