import Foundation
import RoomTapControl
import Testing

@Suite struct SocketPathTests {
    @Test func resolvesByPrecedence() {
        let uid = getuid()
        let all = ["ROOMTAP_CONTROL": "/env/c.sock", "XDG_RUNTIME_DIR": "/run/user/7"]
        #expect(ControlSocketPath.resolve(explicit: "/x/y.sock", environment: all) == "/x/y.sock")
        #expect(ControlSocketPath.resolve(explicit: nil, environment: all) == "/env/c.sock")
        #expect(ControlSocketPath.resolve(explicit: "", environment: all) == "/env/c.sock")
        #expect(
            ControlSocketPath.resolve(explicit: nil, environment: ["XDG_RUNTIME_DIR": "/run/user/7"])
                == "/run/user/7/roomtap/default.sock")
        #expect(
            ControlSocketPath.resolve(
                explicit: nil, environment: ["XDG_RUNTIME_DIR": "/run/user/7/", "ROOMTAP_CONTROL": ""])
                == "/run/user/7/roomtap/default.sock")
        #expect(ControlSocketPath.resolve(explicit: nil, environment: [:]) == "/tmp/roomtap-\(uid)/default.sock")
        #expect(
            ControlSocketPath.resolve(explicit: nil, environment: ["XDG_RUNTIME_DIR": "relative"])
                == "/tmp/roomtap-\(uid)/default.sock")
        #expect(ControlSocketPath.maxPathBytes == 107)
    }
}
