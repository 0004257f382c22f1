import RoomTap
