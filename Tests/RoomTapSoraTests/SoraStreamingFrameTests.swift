import RoomTapSora
import Testing
