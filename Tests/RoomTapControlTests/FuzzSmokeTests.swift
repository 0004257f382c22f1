import RoomTapControl
import RoomTapFuzzing
import Testing

/// Runs the fuzz entry over inputs that reach each of its paths; a failed invariant traps.
@Suite struct FuzzSmokeTests {
    @Test(arguments: [
        "", "\n", #"{"id":1,"cmd":"volume","volume":"-6dB"}"#, #"{"cmd":"x","volume":11}\n[1]\n{"id":{}}"#,
        "\u{1}\u{FF}garbage\n\n\r\n", String(repeating: "a", count: 100) + "\nok", "-inf dB", "[[[[[[[[",
        #"{"id":"\ud83d\ude00","cmd":"é","k":[1e300,-0.0,0.1]}"#, #"{"id":7,"cmd":"stop"}"#,
        #"{"pid":1e300,"tracks":-5,"uptime":1e308,"state":"weird","dir":3,"started":[]}"#,
        #"{"pid":-2147483649,"tracks":1.5,"uptime":-1,"state":"stopping"}"#,
        #"{"id":3,"cmd":"volume","track":"b","change_db":-3,"scope":"all"}"#,
        #"{"cmd":"solo","tracks":["a","b"]}\#n{"cmd":"agent","action":"say","text":"x"}\#n{"cmd":"mute","track":1}"#,
        #"{"cmd":"volume","track":"b","volume":11}\#n{"cmd":"volume","track":"b","volume":"-6dB","scope":"x"}"#,
    ])
    func exercisesEveryPath(_ text: String) {
        Array(text.utf8).withUnsafeBytes { ControlFuzz.exercise($0) }
    }

    @Test func survivesInvalidUTF8AndBinary() {
        let bytes: [UInt8] = (0..<2000).map { UInt8(truncatingIfNeeded: $0 &* 7919 &+ $0 >> 3) }
        bytes.withUnsafeBytes { ControlFuzz.exercise($0) }
    }
}
