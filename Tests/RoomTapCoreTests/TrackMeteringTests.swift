import RoomTapCore
import RoomTapTestSupport
import Testing

/// A room meters its tracks unless made without (offline, where nobody reads the meters, the pass
/// over every frame's samples is saved).
@Suite("Track metering")
struct TrackMeteringTests {
    @Test(arguments: [true, false])
    func theMeterReadsTheAudioOnlyInAMeteringRoom(metersTracks: Bool) {
        let room = Room(clock: VirtualClock(), metersTracks: metersTracks)
        let track = room.addTrack(name: "loud", source: ConstantSource(8_000, length: 4_800))
        room.run()
        #expect(room.metersTracks == metersTracks)
        if metersTracks {
            #expect(track.meter.levelDBFS != nil)
            #expect(track.meter.isTalking)
        } else {
            #expect(track.meter.levelDBFS == nil)
            #expect(!track.meter.isTalking)
        }
    }
}
