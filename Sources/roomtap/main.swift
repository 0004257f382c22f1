print("roomtap")
