// RoomTapALSA: see docs/ARCHITECTURE.md.
