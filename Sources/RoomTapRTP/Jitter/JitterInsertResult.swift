extension JitterBuffer {
    /// What ``JitterBuffer/insert(sequence:timestamp:payload:arrival:)`` did with a packet.
    /// Every result but `accepted` means the packet was dropped (and counted).
    public enum InsertResult: Sendable, Equatable {
        /// Stored; it will be decoded at its playout point.
        case accepted
        /// A copy of a packet already received.
        case duplicate
        /// It arrived after its playout point (the buffer has played past it).
        case late
        /// So far behind playout that the ring no longer remembers its place (counted as late).
        case tooOld
        /// Not a valid Opus packet (empty, bad TOC or frame lengths, longer than 120 ms or a slot).
        case invalid
        /// Too far ahead of playout for the ring (a flood, or a consumer that is not rendering).
        case overflow
    }
}
