import Foundation
import RoomTapControl
import Testing

@Suite struct VolumeLevelTests {
    @Test(
        arguments: [
            ("0.5", 0.5), ("2", 2), ("0", 0), ("10", 10), ("+1", 1), (".25", 0.25), (" 1.5 ", 1.5), ("0dB", 1),
            ("-6dB", 0.501_187), ("+3dB", 1.412_538), ("-6 dB", 0.501_187), ("-6db", 0.501_187), ("+6DB", 1.995_262),
            ("+20dB", 10), ("+30dB", 10), ("-200dB", 0), ("-inf dB", 0), ("-infdB", 0),
        ] as [(String, Float)])
    func parsesGainsAndDecibels(_ text: String, _ expected: Float) throws {
        let level = try #require(VolumeLevel.parse(text))
        #expect(abs(level - expected) < 1e-5)
    }

    @Test(arguments: ["", "dB", "-", "1e2", "0x1", "nan", "inf", "1.2.3", "5%", "abc", "1 2", "--6dB", "6 d B"])
    func rejectsWhatIsNotAVolume(_ text: String) {
        #expect(VolumeLevel.parse(text) == nil)
        #expect(throws: ControlFailure.self) { try VolumeLevel.parse(JSONValue.string(text)) }
        #expect(failure(.string(text))?.code == .badRequest)
    }

    @Test func linearValuesOutsideTheRangeAreOutOfRange() {
        for value: JSONValue in [-0.1, 10.5, 1e9, "-1", "11", .number(.nan), .number(.infinity)] {
            #expect(failure(value)?.code == .outOfRange, "\(value)")
        }
        #expect(VolumeLevel.parse("11") == nil)
        #expect(VolumeLevel.parse("-0.5") == nil)
    }

    @Test func numbersAndWrongTypes() throws {
        #expect(try VolumeLevel.parse(JSONValue.number(0.75)) == 0.75)
        #expect(try VolumeLevel.parse(JSONValue.number(10)) == 10)
        #expect(failure(true)?.code == .badRequest)
        #expect(failure(["x": 1])?.code == .badRequest)
    }

    private func failure(_ value: JSONValue) -> ControlFailure? {
        do throws(ControlFailure) {
            _ = try VolumeLevel.parse(value)
            return nil
        } catch {
            return error
        }
    }
}
