public import RoomTapCore
