// RoomTapRTP: live rooms. Opus over RTP (RFC 3550, RFC 7587) from an SFU or PBX, RTCP (RFC 5761
// mux), room descriptions (SDP RFC 8866, JSON), and the jitter buffer that puts packets on the
// room timeline. Receive threads push packets; the room clock pulls frames.
