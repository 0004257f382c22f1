import RoomTapAll

extension RecordingPlan.Input {
    /// The input as the room's source for its track: standard input's stream (made while
    /// planning), a recording played through the jitter buffer, or an Ogg Opus file opened now;
    /// each places its first sample at ``offsetSamples``. The thread that builds the room.
    func frameSource(channels: Int) throws -> any FrameSource {
        if let stream { return stream }
        if let sora { return try soraSource(sora, channels: channels) }
        if let recording {
            guard
                let recorded = RecordedStreamSource(stream: recording.stream, offset: offsetSamples, channels: channels)
            else { throw RuntimeError(description: "libopus cannot create a decoder") }
            return recorded
        }
        return try OggOpusFileSource(path: spec.path, channels: channels, offset: offsetSamples)
    }
}
