// The RoomTap library under one import: the room core, ingest (files, RTP, recordings in
// WebM/Matroska/MP4), sinks (WAV, ALSA),
// the control socket, the WebSocket client and the Realtime agent, Sora audio streaming.
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
