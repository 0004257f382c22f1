// RoomTapAgent: see docs/ARCHITECTURE.md.
