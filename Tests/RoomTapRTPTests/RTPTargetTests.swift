import RoomTapRTP
import Testing

@Test func theRTPTargetLinks() {
    #expect(Bool(true))
}
