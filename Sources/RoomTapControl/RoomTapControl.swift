// RoomTapControl: see docs/ARCHITECTURE.md.
