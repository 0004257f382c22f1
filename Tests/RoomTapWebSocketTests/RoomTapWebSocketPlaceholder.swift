// Tests for RoomTapWebSocket live in this folder.
