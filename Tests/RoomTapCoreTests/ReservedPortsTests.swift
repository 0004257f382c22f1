import RoomTapTestSupport
import Testing

/// Test ports come from outside the kernel's ephemeral range, whatever the machine's range is.
@Suite("Test ports: outside the kernel's ephemeral range")
struct ReservedPortsTests {
    @Test func theRangeIsBelowOrAboveTheEphemeralPortsOrTheKernelsPortZero() {
        #expect(ReservedPorts.candidates(ephemeral: 32768...60999) == 20_000..<32768)  // Debian's default
        #expect(ReservedPorts.candidates(ephemeral: 1024...49151) == 49152..<65536)
        #expect(ReservedPorts.candidates(ephemeral: 1024...65535) == nil)
    }

    @Test func portsAreHandedOutOnceAndAreFree() throws {
        let ports = try (0..<20).map { _ in try freeUDPPort() }
        #expect(Set(ports).count == ports.count)
    }
}
