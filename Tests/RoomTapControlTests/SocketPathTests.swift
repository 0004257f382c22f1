import Foundation
import RoomTapControl
import Testing

@Suite struct SocketPathTests {
    @Test func resolvesByPrecedence() {
        let uid = getuid()
        let all = ["ROOMTAP_CONTROL": "/env/c.sock", "XDG_RUNTIME_DIR": "/run/user/7"]
        #expect(ControlSocketPath.forRecorder(explicit: "/x/y.sock", environment: all, pid: 42) == "/x/y.sock")
        #expect(ControlSocketPath.forRecorder(explicit: nil, environment: all, pid: 42) == "/env/c.sock")
        #expect(ControlSocketPath.forRecorder(explicit: "", environment: all, pid: 42) == "/env/c.sock")
        #expect(ControlSocketPath.configured(explicit: nil, environment: ["ROOMTAP_CONTROL": ""]) == nil)
        #expect(
            ControlSocketPath.forRecorder(explicit: nil, environment: ["XDG_RUNTIME_DIR": "/run/user/7"], pid: 42)
                == "/run/user/7/roomtap/rec-42.sock")
        #expect(
            ControlSocketPath.forRecorder(
                explicit: nil, environment: ["XDG_RUNTIME_DIR": "/run/user/7/", "ROOMTAP_CONTROL": ""], pid: 42)
                == "/run/user/7/roomtap/rec-42.sock")
        #expect(
            ControlSocketPath.forRecorder(explicit: nil, environment: [:], pid: 42) == "/tmp/roomtap-\(uid)/rec-42.sock"
        )
        #expect(
            ControlSocketPath.forRecorder(explicit: nil, environment: ["XDG_RUNTIME_DIR": "relative"], pid: 42)
                == "/tmp/roomtap-\(uid)/rec-42.sock")
        #expect(ControlSocketPath.maxPathBytes == 107)
    }

    @Test func readsThePidOnlyFromARecorderSocketName() {
        #expect(ControlSocketPath.pid(inSocketName: ControlSocketPath.recorderSocketName(pid: 4242)) == 4242)
        for name in [
            "rec-.sock", "rec-12a.sock", "rec--1.sock", "rec-0.sock", "default.sock", "rec-99999999999.sock",
            "rec-12.sock.tmp", "x-rec-12.sock", "rec-+12.sock",
        ] {
            #expect(ControlSocketPath.pid(inSocketName: name) == nil, "\(name)")
        }
    }
}
