// Requests, replies and events are `JSONValue`s: whoever uses the control protocol uses them too.
@_exported public import RoomTapJSON
