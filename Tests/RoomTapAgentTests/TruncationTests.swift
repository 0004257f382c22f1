import RoomTapAgent
import Testing

/// What a barge-in tells the service of the reply it cut: never more audio than the service's
/// item has (it refuses "already shorter than"), so the claim stays a margin under what arrived;
/// an item nothing of which played, or less than the margin leaves, is deleted, not truncated to 0.
@Suite("Agent: truncation of a cut reply")
struct TruncationTests {
    /// (24 kHz samples received, 48 kHz samples played before the cut) → the cut, in ms.
    @Test(
        arguments: [
            (24_000, 24_000, 500),  // 1 s received, 0.5 s played: the played time
            (24_000, 47_760, 980),  // cut 5 ms before the end: the end less the margin (1000 - 20)
            (24_000, 48_000 - 1, 980),  // one sample before the end
            (2_400, 4_000, 80),  // 100 ms received, 83 ms played: 80 ms (margin-capped)
            (480, 900, nil),  // 20 ms received: the margin leaves nothing → delete
            (24_000, 0, nil),  // nothing played → delete
            (24_000, 40, nil),  // under 1 ms played → delete
        ] as [(Int, Int64, Int?)])
    func aCutClaimsThePlayedAudioAMarginUnderWhatArrived(received: Int, played: Int64, expectedMs: Int?) {
        var attribution = TranscriptAttribution(contextLines: 4)
        let start: Int64 = 10_000
        let taken = attribution.receive(
            itemID: "item_1", responseID: "resp_1", contentIndex: 0, session: 1, samples: received, start: start)
        #expect(taken)
        let cuts = attribution.cut(at: start + played, session: 1)
        if let expectedMs {
            #expect(cuts == [.truncate(itemID: "item_1", contentIndex: 0, audioEndMs: expectedMs)])
            #expect(Int64(expectedMs) * 24 <= Int64(received) - TranscriptAttribution.truncationMarginMs * 24)
        } else {
            #expect(cuts == [.delete(itemID: "item_1")])
        }
    }

    /// An item of an earlier session is stopped but nothing is said of it (the new session does
    /// not know it); a second cut claims nothing again.
    @Test func onlyTheItemsOwnSessionIsToldAndOnlyOnce() {
        var attribution = TranscriptAttribution(contextLines: 4)
        let taken = attribution.receive(
            itemID: "old", responseID: "r0", contentIndex: 0, session: 1, samples: 24_000, start: 0)
        #expect(taken)
        let fromANewSession = attribution.cut(at: 24_000, session: 2)
        #expect(fromANewSession.isEmpty)
        let more = attribution.receive(
            itemID: "old", responseID: "r0", contentIndex: 0, session: 1, samples: 480, start: 0)
        #expect(!more, "a cut item takes no more audio")
        let again = attribution.cut(at: 30_000, session: 1)
        #expect(again.isEmpty)
    }
}
