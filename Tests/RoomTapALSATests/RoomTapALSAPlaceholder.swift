// Tests for RoomTapALSA live in this folder.
