/// Sums chosen tracks of a room into one frame per tick, through a ``Limiter``: the source of a
/// mix track (see ``Room/addMix(name:inputs:channels:)``).
///
/// Inputs of another channel count are converted (stereo to mono averages, mono to stereo
/// duplicates). Each input is mixed as it is heard: after its mute, volume and the room's solo,
/// with the gain ramped across the frame (see ``TrackControls``); the recorded mix (`render`) also
/// applies the input's record mute and volume, so a speaker off the record is in no file. Inputs
/// whose frame is silence or muted are skipped. Mix-minus is a mix that
/// leaves a track out.
///
/// A mixer makes two mixes when the room has a live playout (see ``RoomTiming``): `render` mixes
/// the inputs' record frames with the controls as they were when that audio was heard (for
/// `mix.wav`), ``renderLive(into:at:)`` their live frames with the controls now (for playback
/// and an agent's ears). So the recorded mix holds exactly what was heard, later.
///
/// Thread: `render` and `renderLive` run on the room clock's thread after every input track has
/// rendered the same tick. `inputs`, `setInputs`, `addInput` and `removeInput` are safe from any other thread and take
/// effect at the next tick.
public final class Mixer: LivePlayoutSource, @unchecked Sendable {
    public let channels: Int
    /// Always true: a mix never keeps an offline room going (the room ends when its source tracks
    /// do; derived tracks are not consulted).
    public var isFinished: Bool { true }

    private let inputList: PublishedSnapshot<[AudioTrack]>
    // Room clock's thread only:
    private var clockInputs: [AudioTrack] = []
    private var clockGeneration: UInt64 = 0
    private let accumulator: UnsafeMutableBufferPointer<Float>
    private let converted: UnsafeMutableBufferPointer<Int16>
    private var limiter = Limiter()
    private var liveLimiter = Limiter()

    /// Creates a mixer of `inputs` producing `channels`-channel frames.
    public init(inputs: [AudioTrack], channels: Int = 1) {
        precondition(channels == 1 || channels == 2, "a mix has 1 or 2 channels")
        self.channels = channels
        inputList = PublishedSnapshot(inputs)
        clockInputs = inputs
        accumulator = .allocate(capacity: AudioFrame.samplesPerChannel * AudioFrame.maxChannels)
        accumulator.initialize(repeating: 0)
        converted = .allocate(capacity: AudioFrame.samplesPerChannel * AudioFrame.maxChannels)
        converted.initialize(repeating: 0)
    }

    deinit {
        accumulator.deallocate()
        converted.deallocate()
    }

    /// The tracks now mixed.
    public var inputs: [AudioTrack] { inputList.value }

    /// Replaces the mixed tracks. Thread-safe; takes effect at the next tick.
    public func setInputs(_ tracks: [AudioTrack]) {
        inputList.update { list in
            list = tracks
            return true
        }
    }

    /// Adds a track to the mix; adding one already mixed does nothing.
    public func addInput(_ track: AudioTrack) {
        inputList.update { list in
            guard !list.contains(where: { $0 === track }) else { return false }
            list.append(track)
            return true
        }
    }

    /// Takes a track out of the mix; does nothing if it is not mixed.
    public func removeInput(_ track: AudioTrack) {
        inputList.update { list in
            guard let i = list.firstIndex(where: { $0 === track }) else { return false }
            list.remove(at: i)
            return true
        }
    }

    /// Releases, on this thread, the input lists the clock no longer holds (a removed track's last
    /// reference may be one). Control side.
    func releaseRetiredInputs() { inputList.releaseRetired() }

    /// Always true: a mix has a live mix when its room has a live playout.
    public var hasLivePlayout: Bool { true }

    public func render(into samples: UnsafeMutableBufferPointer<Int16>, at roomSample: Int64) -> FrameStatus {
        mix(into: samples, at: roomSample, live: false)
    }

    public func renderLive(into samples: UnsafeMutableBufferPointer<Int16>, at roomSample: Int64) -> FrameStatus {
        mix(into: samples, at: roomSample, live: true)
    }

    private func mix(into samples: UnsafeMutableBufferPointer<Int16>, at roomSample: Int64, live: Bool) -> FrameStatus {
        // Never waits, never frees the list it replaces (see PublishedSnapshot).
        _ = inputList.take(into: &clockInputs, generation: &clockGeneration)
        let count = AudioFrame.samplesPerChannel * channels
        let acc = accumulator.baseAddress!
        acc.update(repeating: 0, count: count)
        var any = false
        var concealed = false
        for input in clockInputs {
            let view = input.mixView(live: live)
            let buffer = view.frame
            let gain = view.gain
            guard buffer.roomSample == roomSample, !buffer.status.isZero, !gain.isSilent else { continue }
            any = true
            if buffer.status == .concealed { concealed = true }
            let src: UnsafePointer<Int16>
            if buffer.channels == channels {
                src = UnsafePointer(buffer.samples.baseAddress!)
            } else {
                buffer.frame.copy(into: converted.baseAddress!, channels: channels)
                src = UnsafePointer(converted.baseAddress!)
            }
            if gain.isUnity {
                for i in 0..<count { acc[i] += Float(src[i]) }
            } else {
                for i in 0..<count { acc[i] += Float(src[i]) * gain.gain(at: i / channels) }
            }
        }
        if live {
            liveLimiter.process(
                acc, frames: AudioFrame.samplesPerChannel, channels: channels, into: samples.baseAddress!)
        } else {
            limiter.process(acc, frames: AudioFrame.samplesPerChannel, channels: channels, into: samples.baseAddress!)
        }
        guard any else { return .silence }
        return concealed ? .concealed : .normal
    }
}
