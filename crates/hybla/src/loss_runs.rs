//! Losses in a row: which packets a loss batch took, in send order.
//!
//! quinn tells a controller of a loss batch only its bytes and the send time of its newest
//! packet. A batch of two losses can be one overflow's tail (two packets sent back to back,
//! both dropped) or two random losses far apart that one ACK frame declared together (a thin
//! return link acknowledges tens of packets per frame). ZigZag [Cen2003] and the loss-pair
//! schemes take losses in a row as the queue's and isolated ones as the link's: random loss at
//! rate p loses a packet's successor with probability p only. Told apart by bytes alone, the
//! two cost Hybla the ceiling on thin return links (reports/hybla-friendliness §7, "Losses in
//! a row under jitter"). This log keeps the packets whose fate is still open, in send order,
//! and answers per batch how many of its losses came in a row.
//!
//! The log holds what quinn reports: every transmit (`on_sent`, with its bytes and, through
//! the packet numbers, how many packets it held), every ack-eliciting packet acknowledged
//! (`on_ack`, by its send time), every batch lost (the newest send time and the bytes).
//! Packets are told apart by send time; where several share one, their losses are read as
//! the last ones sent then (see [`LossRuns`]). ACK-only transmits are not
//! logged ([`MIN_LOGGED_BYTES`]): quinn never reports their fate to a controller. A logged
//! packet whose fate never comes (a packet number quinn skipped, an MTU probe) leaves the log
//! once quinn's packet threshold ([`PACKET_THRESHOLD`]) would have declared it lost.
//!
//! On a path that reorders, a packet the receiver has not seen is not necessarily lost: the
//! run read through missing packets (`on_lost`) then overstates, as quinn's own loss
//! detection does.

use std::collections::VecDeque;
use std::time::Duration;

/// quinn's (and RFC 9002 §6.1.1's) reordering threshold: a packet this many packets older
/// than one acknowledged is declared lost in the same ACK frame.
pub(crate) const PACKET_THRESHOLD: u64 = 3;

/// The most packets the log keeps: beyond it the oldest open ones are forgotten (a controller
/// driven without acknowledgements must not grow without bound). 2¹⁶ packets of 1200 B are
/// 79 MB in flight, past any window the controller reaches.
const MAX_OPEN_PACKETS: usize = 1 << 16;

/// How many packets from the log's front an acknowledgement is looked for before a binary
/// search: acknowledgements come in send order, so the packet is nearly always among them.
const FRONT_SCAN_PACKETS: usize = 8;

/// Transmits smaller than this are not logged: an ACK-only packet (quinn's are 40–60 B) is
/// never acknowledged or declared lost to a controller, and next to a loss it would read as
/// one more loss in the row.
const MIN_LOGGED_BYTES: u64 = 100;

#[derive(Debug, Clone, Copy)]
struct OpenPacket {
    /// Position in send order.
    seq: u64,
    sent: Duration,
    bytes: u64,
    acked: bool,
}

/// The last packet a batch took as lost.
#[derive(Debug, Clone, Copy)]
struct LastLost {
    seq: u64,
    /// The losses in a row it ended.
    run: u64,
}

/// Packets sent and not yet resolved, in send order, and the run of losses the last batch
/// ended with.
///
/// Packets sent at one instant (a GSO batch; a paced burst in the simulator's virtual time)
/// share a send time, so an acknowledgement marks the oldest open one of them: the log keeps
/// such an instant's lost packets last, wherever they sat, and two losses among them read as a
/// run. A drop-tail queue drops a burst's tail, so that is where an overflow's losses sit;
/// two random losses in one burst of n packets read so too, with probability about (n − 1)·p
/// per random loss at loss rate p. Reading an instant's losses as a run of one instead (the
/// order being unknown) took the loss matrix's jitter cells back to 40–50 % of their queue
/// drops taken as congestion (reports/hybla-friendliness §7, "Losses in a row where the
/// queue reading is noise").
#[derive(Debug, Clone, Default)]
pub(crate) struct LossRuns {
    open: VecDeque<OpenPacket>,
    next_seq: u64,
    /// The newest packet acknowledged, by position.
    highest_acked_seq: Option<u64>,
    /// [`Self::highest_acked_seq`] at the end of the previous ACK frame.
    threshold_passed_seq: Option<u64>,
    last_lost: Option<LastLost>,
}

impl LossRuns {
    /// `packets` packets of `bytes` in all sent at `sent`: one transmit (quinn reports a GSO
    /// batch once, with its bytes and its last packet number).
    pub(crate) fn on_sent(&mut self, sent: Duration, bytes: u64, packets: u64) {
        let packets = packets.clamp(1, MAX_OPEN_PACKETS as u64);
        if bytes < MIN_LOGGED_BYTES * packets {
            return;
        }
        for i in 0..packets {
            if self.open.len() >= MAX_OPEN_PACKETS {
                self.open.pop_front();
            }
            // The batch's segments are full-sized but for the last.
            let share = bytes / packets + u64::from(i + 1 == packets) * (bytes % packets);
            self.open.push_back(OpenPacket {
                seq: self.next_seq,
                sent,
                bytes: share,
                acked: false,
            });
            self.next_seq += 1;
        }
    }

    /// An ack-eliciting packet sent at `sent` was acknowledged: the oldest open packet sent
    /// then.
    pub(crate) fn on_ack(&mut self, sent: Duration) {
        let front = self.open.len().min(FRONT_SCAN_PACKETS);
        let start = match self.open.range(..front).position(|p| p.sent >= sent) {
            Some(i) => i,
            None => self.open.partition_point(|p| p.sent < sent),
        };
        let found = self
            .open
            .range_mut(start..)
            .take_while(|p| p.sent == sent)
            .find(|p| !p.acked);
        if let Some(packet) = found {
            packet.acked = true;
            self.highest_acked_seq = Some(
                self.highest_acked_seq
                    .map_or(packet.seq, |s| s.max(packet.seq)),
            );
        }
        while self.open.front().is_some_and(|p| p.acked) {
            self.open.pop_front();
        }
    }

    /// A batch of `lost_bytes` whose newest packet was sent at `newest_sent` was declared lost:
    /// the oldest open packets sent by then, up to those bytes (quinn declares every
    /// unacknowledged packet older than the newest one lost). Returns the longest run of
    /// losses in a row among them, a run the previous batch ended included, and through the
    /// packets after them already missing; 0 when the log holds none of them.
    pub(crate) fn on_lost(&mut self, newest_sent: Duration, lost_bytes: u64) -> u64 {
        let mut remaining = lost_bytes;
        let mut longest = 0;
        let mut last = self.last_lost;
        let mut taken = 0;
        let mut resolved = 0;
        for (i, packet) in self.open.iter().enumerate() {
            if remaining == 0 || packet.sent > newest_sent {
                break;
            }
            resolved = i + 1;
            if packet.acked {
                continue;
            }
            let lost = Self::after(last, packet);
            longest = longest.max(lost.run);
            last = Some(lost);
            remaining = remaining.saturating_sub(packet.bytes);
            taken += 1;
        }
        if taken == 0 {
            return longest;
        }
        self.last_lost = last;
        self.open.drain(..resolved);
        // The run goes on through the packets after it that are missing: older than one
        // acknowledged, not acknowledged themselves, and not yet past quinn's threshold (on a
        // path that keeps order, lost; declared in a later frame).
        if let Some(highest) = self.highest_acked_seq {
            for packet in self.open.iter() {
                if packet.acked || packet.seq >= highest {
                    break;
                }
                let Some(previous) = last.filter(|l| l.seq + 1 == packet.seq) else {
                    break;
                };
                let lost = Self::after(Some(previous), packet);
                longest = longest.max(lost.run);
                last = Some(lost);
            }
        }
        longest
    }

    /// `packet`, lost, after the previous loss `last`.
    fn after(last: Option<LastLost>, packet: &OpenPacket) -> LastLost {
        let run = match last {
            Some(l) if l.seq + 1 == packet.seq => l.run + 1,
            _ => 1,
        };
        LastLost {
            seq: packet.seq,
            run,
        }
    }

    /// The end of an ACK frame's acknowledgements. quinn declares this frame's losses after
    /// it, so what its packet threshold passed by the previous frame is resolved by now: a
    /// packet still open there was ack-only.
    pub(crate) fn on_end_acks(&mut self) {
        if let Some(passed) = self.threshold_passed_seq {
            while self
                .open
                .front()
                .is_some_and(|p| p.acked || p.seq + PACKET_THRESHOLD <= passed)
            {
                self.open.pop_front();
            }
        }
        self.threshold_passed_seq = self.highest_acked_seq;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    /// Sends `n` packets of 1200 B, one per millisecond from `from_ms`.
    fn sent(log: &mut LossRuns, from_ms: u64, n: u64) {
        for i in 0..n {
            log.on_sent(ms(from_ms + i), 1200, 1);
        }
    }

    /// A log of 20 packets sent 1 ms apart from 0.
    fn twenty_sent() -> LossRuns {
        let mut log = LossRuns::default();
        sent(&mut log, 0, 20);
        log
    }

    /// One ACK frame: the packets sent at `acked` acknowledged, then quinn's order of
    /// `on_end_acks` before the losses.
    fn frame(log: &mut LossRuns, acked: impl IntoIterator<Item = u64>) {
        for i in acked {
            log.on_ack(ms(i));
        }
        log.on_end_acks();
    }

    #[test]
    fn two_losses_far_apart_in_one_batch_are_not_a_run() {
        let mut log = twenty_sent();
        frame(&mut log, (0..20).filter(|&i| i != 3 && i != 12));
        assert_eq!(log.on_lost(ms(12), 2400), 1);
    }

    #[test]
    fn two_losses_back_to_back_are_a_run_of_two() {
        let mut log = twenty_sent();
        frame(&mut log, (0..20).filter(|&i| i != 7 && i != 8));
        assert_eq!(log.on_lost(ms(8), 2400), 2);
    }

    /// quinn may declare a run's packets over two ACK frames (the packet threshold reaches the
    /// older ones first): the second batch continues the run.
    #[test]
    fn a_run_declared_over_two_batches_is_one_run() {
        let mut log = twenty_sent();
        frame(&mut log, 0..5);
        assert_eq!(log.on_lost(ms(5), 1200), 1);
        assert_eq!(log.on_lost(ms(7), 2400), 3);
        frame(&mut log, [8]);
        // A later loss after an acknowledged packet starts a new run.
        assert_eq!(log.on_lost(ms(9), 1200), 1);
    }

    /// A packet older than one acknowledged and not acknowledged itself is missing: on a path
    /// that keeps order it is lost, though quinn declares it only in a later frame.
    #[test]
    fn a_run_goes_on_through_the_missing_packets_after_it() {
        let mut log = twenty_sent();
        frame(&mut log, (0..20).filter(|&i| !(5..8).contains(&i)));
        assert_eq!(log.on_lost(ms(5), 1200), 3);
        // A missing packet that no acknowledged one follows is not yet known.
        let mut log = twenty_sent();
        frame(&mut log, 0..5);
        assert_eq!(log.on_lost(ms(5), 1200), 1);
    }

    /// Packets sent at one instant (a GSO batch, a burst in virtual time): the batch's bytes
    /// say how many of them it lost; the rest are still in flight.
    #[test]
    fn a_batch_takes_only_its_bytes_of_packets_sent_at_its_instant() {
        let mut log = LossRuns::default();
        log.on_sent(ms(10), 4800, 4);
        sent(&mut log, 11, 5);
        frame(&mut log, []);
        assert_eq!(log.on_lost(ms(10), 1200), 1);
        frame(&mut log, [10, 10, 10]);
        // The three left were acknowledged, so a loss now starts afresh.
        assert_eq!(log.on_lost(ms(11), 1200), 1);
    }

    /// Acknowledgements mark an instant's packets oldest first, so losses among packets sent
    /// at one instant read as its last ones: at the 3rd and 8th of ten, a run of two, as a
    /// burst's tail dropped by a full buffer would be; and a run that goes on into the next
    /// instant's first packet.
    #[test]
    fn losses_among_packets_sent_at_one_instant_read_as_its_last() {
        let mut log = LossRuns::default();
        log.on_sent(ms(10), 12_000, 10);
        sent(&mut log, 11, 5);
        frame(&mut log, std::iter::repeat_n(10, 8).chain(11..16));
        assert_eq!(log.on_lost(ms(10), 2400), 2);
        let mut log = LossRuns::default();
        log.on_sent(ms(10), 12_000, 10);
        sent(&mut log, 11, 5);
        frame(&mut log, std::iter::repeat_n(10, 9).chain(12..16));
        assert_eq!(log.on_lost(ms(11), 2400), 2);
    }

    /// An ACK-only transmit is never acknowledged or declared lost to a controller: it is not
    /// logged, so the data packets either side of it are next to each other.
    #[test]
    fn an_ack_only_packet_is_not_a_loss_in_the_row() {
        let mut log = LossRuns::default();
        sent(&mut log, 0, 5);
        log.on_sent(ms(5), 50, 1);
        sent(&mut log, 6, 10);
        // Packet 4 lost, the ACK-only one at 5 unseen, 6 acknowledged: a single loss.
        frame(&mut log, (0..4).chain(6..16));
        assert_eq!(log.on_lost(ms(4), 1200), 1);
        // Packets 7 and 8 either side of an ACK-only one, both lost: a run of two.
        let mut log = LossRuns::default();
        sent(&mut log, 0, 8);
        log.on_sent(ms(8), 50, 1);
        sent(&mut log, 9, 10);
        frame(&mut log, (0..7).chain(10..19));
        assert_eq!(log.on_lost(ms(9), 2400), 2);
    }

    /// A logged packet whose fate never comes (a packet number quinn skipped) leaves the log
    /// once the packet threshold has passed it, one frame later (quinn declares a frame's
    /// losses after its acknowledgements).
    #[test]
    fn a_packet_never_resolved_leaves_the_log_past_the_packet_threshold() {
        let mut log = LossRuns::default();
        sent(&mut log, 0, 10);
        frame(&mut log, (0..10).filter(|&i| i != 2));
        assert_eq!(log.open.front().map(|p| p.seq), Some(2));
        frame(&mut log, []);
        assert!(log.open.is_empty(), "{:?}", log.open);
    }

    #[test]
    fn unknown_send_times_change_nothing() {
        let mut log = LossRuns::default();
        frame(&mut log, [5]);
        assert_eq!(log.on_lost(ms(5), 1200), 0);
        sent(&mut log, 10, 2);
        log.on_ack(ms(3));
        assert_eq!(log.open.len(), 2);
    }
}
