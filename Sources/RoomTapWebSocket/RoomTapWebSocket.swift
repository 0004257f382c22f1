// RoomTapWebSocket: see docs/ARCHITECTURE.md.
