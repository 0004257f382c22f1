// The RoomTap library: the room core, ingest and sinks, under one import.
@_exported public import RoomTapCore
@_exported public import RoomTapIngest
@_exported public import RoomTapRTP
@_exported public import RoomTapSinks
@_exported public import RoomTapControl
@_exported public import RoomTapALSA
@_exported public import RoomTapWebSocket
@_exported public import RoomTapAgent
