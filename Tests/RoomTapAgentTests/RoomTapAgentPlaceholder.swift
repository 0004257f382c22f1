// Tests for RoomTapAgent live in this folder.
