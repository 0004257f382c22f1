// The RoomTap library under one import, curated (docs/api/RoomTap.txt lists what it exports):
// - the Sora-shaped core: the room, its clock, tracks with their handlers, sinks, the mixer;
// - sources: Ogg Opus files, live RTP rooms (SDP, SRTP, the jitter buffer, the PBX codecs),
//   recordings in containers (WebM, Matroska, MP4, Janus, Sora), WebRTC joins (Janus, WHEP,
//   Sora), Sora's audio streaming, ALSA capture;
// - sinks: WAV/RF64, FLAC and Ogg Opus files, ALSA playback;
// - the agent (the Realtime API and the pipeline agent) that joins a room as a track;
// - the recorder (`Recorder`): what `roomtap record` does, in the caller's process.
// The control protocol, the fleet and the WebSocket client are the recorder's own parts and are
// not exported.
@_exported public import RoomTapALSA
@_exported public import RoomTapAgent
@_exported public import RoomTapContainer
@_exported public import RoomTapCore
@_exported public import RoomTapIngest
@_exported public import RoomTapRTP
@_exported public import RoomTapRecorder
@_exported public import RoomTapSinks
@_exported public import RoomTapSora
@_exported public import RoomTapWebRTC
