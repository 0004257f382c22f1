// Tests for RoomTapControl live in this folder.
