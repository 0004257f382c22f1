import RoomTapRTP
import RoomTapRTPTestSupport

/// Sends `bytes` to `address` from a fresh socket.
func send(_ bytes: [UInt8], to address: ListenAddress) {
    DatagramSocket(address).send(bytes)
}
