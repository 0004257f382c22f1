// Every library target under one import: what the recorder (RoomTapRecorder), the tests and the
// benchmarks use. Not a product: the library's users import the curated `RoomTap`.
@_exported public import RoomTapALSA
@_exported public import RoomTapAgent
@_exported public import RoomTapContainer
@_exported public import RoomTapControl
@_exported public import RoomTapCore
@_exported public import RoomTapFleet
@_exported public import RoomTapIngest
@_exported public import RoomTapRTP
@_exported public import RoomTapSinks
@_exported public import RoomTapSora
@_exported public import RoomTapWebRTC
@_exported public import RoomTapWebSocket
