import RoomTapRTP
import RoomTapTestSupport
import Testing

@Suite("Wire: NTP timestamps (RFC 3550 §4)")
struct WireNTPTimestampTests {
    @Test func theUnixEpochIs2208988800NTPSeconds() {
        let t = NTPTimestamp(secondsSince1970: 0)
        #expect(t.seconds == 2_208_988_800 && t.fraction == 0)
        #expect(t.secondsSince1970 == 0)
        #expect(NTPTimestamp(secondsSince1970: 1.5) == NTPTimestamp(seconds: 2_208_988_801, fraction: 0x8000_0000))
        #expect(NTPTimestamp(seconds: 1, fraction: 0x4000_0000).secondsSince1900 == 1.25)
    }

    @Test func wordsAndRawValueAgree() {
        let t = NTPTimestamp(rawValue: 0xE8A1_2345_89AB_CDEF)
        #expect(t.seconds == 0xE8A1_2345 && t.fraction == 0x89AB_CDEF)
        #expect(t.middle32 == 0x2345_89AB)
        #expect(NTPTimestamp(seconds: 0xE8A1_2345, fraction: 0x89AB_CDEF) == t)
    }

    @Test func secondsRoundTripWithinAMicrosecond() {
        var rng = SplitMix64(seed: 7)
        for _ in 0..<10_000 {
            let s = rng.nextUnit() * 4_294_967_295.0
            let back = NTPTimestamp(secondsSince1900: s).secondsSince1900
            #expect(abs(back - s) < 1e-6, "\(s)")
        }
        // Present-day Unix times, to the nanosecond of the fraction.
        let now = 1_764_480_000.123456
        #expect(abs(NTPTimestamp(secondsSince1970: now).secondsSince1970 - now) < 1e-6)
    }

    @Test func outOfRangeValuesClamp() {
        #expect(NTPTimestamp(secondsSince1900: -1).rawValue == 0)
        #expect(NTPTimestamp(secondsSince1900: .nan).rawValue == 0)
        #expect(NTPTimestamp(secondsSince1900: -.infinity).rawValue == 0)
        #expect(NTPTimestamp(secondsSince1900: .infinity).rawValue == .max)
        #expect(NTPTimestamp(secondsSince1900: 4_294_967_296).rawValue == .max)
        #expect(NTPTimestamp(secondsSince1900: 4_294_967_295.999_999_999_9).rawValue == .max)  // fraction carries
        #expect(NTPTimestamp(secondsSince1970: -3e9).rawValue == 0)
    }

    @Test func differencesBetweenReports() {
        let a = NTPTimestamp(seconds: 100, fraction: 0)
        let b = NTPTimestamp(seconds: 105, fraction: 0x8000_0000)
        #expect(a.seconds(to: b) == 5.5)
        #expect(b.seconds(to: a) == -5.5)
        #expect(a < b)
        // Across the end of era 0.
        let end = NTPTimestamp(seconds: 0xFFFF_FFFF, fraction: 0)
        let next = NTPTimestamp(seconds: 1, fraction: 0)
        #expect(end.seconds(to: next) == 2)
    }
}
