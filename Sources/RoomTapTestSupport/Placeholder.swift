public import RoomTap
