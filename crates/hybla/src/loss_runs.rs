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
//! The log holds what quinn reports: every packet sent (`on_sent`, ack-only ones included),
//! every ack-eliciting packet acknowledged (`on_ack`, by its send time), every batch lost (the
//! newest send time and the bytes). Packets are told apart by send time; packets sent at the
//! same instant are taken in send order, as quinn acknowledges and declares them. An ack-only
//! packet is never acknowledged or declared lost to a controller: it leaves the log once
//! quinn's packet threshold ([`PACKET_THRESHOLD`]) would have declared it lost, and a loss
//! batch that reaches it before then counts it with the batch (a few tens of bytes). So does
//! the packet number quinn skips now and then against optimistic acknowledgements, which the
//! log takes for a packet of the transmit after it.
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

#[derive(Debug, Clone, Copy)]
struct OpenPacket {
    /// Position in send order.
    seq: u64,
    sent: Duration,
    bytes: u64,
    acked: bool,
}

/// Packets sent and not yet resolved, in send order, and the run of losses the last batch
/// ended with.
#[derive(Debug, Clone, Default)]
pub(crate) struct LossRuns {
    open: VecDeque<OpenPacket>,
    next_seq: u64,
    /// The newest packet acknowledged, by position.
    highest_acked_seq: Option<u64>,
    /// [`Self::highest_acked_seq`] at the end of the previous ACK frame.
    threshold_passed_seq: Option<u64>,
    /// The last packet a batch lost and the number of losses in a row it ended.
    last_lost: Option<(u64, u64)>,
}

impl LossRuns {
    /// `packets` packets of `bytes` in all sent at `sent`: one transmit (quinn reports a GSO
    /// batch once, with its bytes and its last packet number).
    pub(crate) fn on_sent(&mut self, sent: Duration, bytes: u64, packets: u64) {
        let packets = packets.max(1);
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
    /// losses in a row among them, a run the previous batch ended included; 0 when the log
    /// holds none of them.
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
            let run = match last {
                Some((seq, run)) if seq + 1 == packet.seq => run + 1,
                _ => 1,
            };
            last = Some((packet.seq, run));
            longest = longest.max(run);
            remaining = remaining.saturating_sub(packet.bytes);
            taken += 1;
        }
        if taken > 0 {
            self.last_lost = last;
            self.open.drain(..resolved);
            // The run goes on through the packets after it that are missing: older than one
            // acknowledged, not acknowledged themselves, and not yet past quinn's threshold
            // (on a path that keeps order, lost; declared in a later frame).
            if let (Some((mut seq, mut run)), Some(highest)) = (last, self.highest_acked_seq) {
                for packet in self.open.iter() {
                    if packet.seq != seq + 1 || packet.acked || packet.seq >= highest {
                        break;
                    }
                    seq = packet.seq;
                    run += 1;
                }
                longest = longest.max(run);
            }
        }
        longest
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

    #[test]
    fn two_losses_far_apart_in_one_batch_are_not_a_run() {
        let mut log = LossRuns::default();
        sent(&mut log, 0, 20);
        for i in (0..20).filter(|&i| i != 3 && i != 12) {
            log.on_ack(ms(i));
        }
        assert_eq!(log.on_lost(ms(12), 2400), 1);
    }

    #[test]
    fn two_losses_back_to_back_are_a_run_of_two() {
        let mut log = LossRuns::default();
        sent(&mut log, 0, 20);
        for i in (0..20).filter(|&i| i != 7 && i != 8) {
            log.on_ack(ms(i));
        }
        assert_eq!(log.on_lost(ms(8), 2400), 2);
    }

    /// quinn may declare a run's packets in two ACK frames (the packet threshold reaches the
    /// older ones first): the second batch continues the run.
    #[test]
    fn a_run_declared_over_two_batches_is_one_run() {
        let mut log = LossRuns::default();
        sent(&mut log, 0, 20);
        for i in 0..5 {
            log.on_ack(ms(i));
        }
        assert_eq!(log.on_lost(ms(5), 1200), 1);
        assert_eq!(log.on_lost(ms(7), 2400), 3);
        log.on_ack(ms(8));
        // A later loss after an acknowledged packet starts a new run.
        assert_eq!(log.on_lost(ms(9), 1200), 1);
    }

    /// A packet older than one acknowledged and not acknowledged itself is missing: on a path
    /// that keeps order it is lost, though quinn declares it only in a later frame.
    #[test]
    fn a_run_goes_on_through_the_missing_packets_after_it() {
        let mut log = LossRuns::default();
        sent(&mut log, 0, 20);
        for i in (0..20).filter(|&i| !(5..8).contains(&i)) {
            log.on_ack(ms(i));
        }
        assert_eq!(log.on_lost(ms(5), 1200), 3);
        // A missing packet the next one acknowledged does not follow is not yet known.
        let mut log = LossRuns::default();
        sent(&mut log, 0, 20);
        for i in 0..5 {
            log.on_ack(ms(i));
        }
        assert_eq!(log.on_lost(ms(5), 1200), 1);
    }

    /// Packets sent at one instant (a paced burst in virtual time): the batch's bytes say how
    /// many of them it lost, the oldest first; the rest are still in flight.
    #[test]
    fn a_batch_takes_only_its_bytes_of_packets_sent_at_its_instant() {
        let mut log = LossRuns::default();
        log.on_sent(ms(10), 4800, 4);
        sent(&mut log, 11, 5);
        assert_eq!(log.on_lost(ms(10), 1200), 1);
        log.on_ack(ms(10));
        log.on_ack(ms(10));
        log.on_ack(ms(10));
        // The three left were acknowledged, so a loss now starts afresh.
        assert_eq!(log.on_lost(ms(11), 1200), 1);
    }

    /// An ack-only packet is never acknowledged to a controller: it leaves the log once the
    /// packet threshold has passed it, and does not join a later loss to an earlier one.
    #[test]
    fn an_ack_only_packet_leaves_the_log_past_the_packet_threshold() {
        let mut log = LossRuns::default();
        sent(&mut log, 0, 10);
        for i in (0..10).filter(|&i| i != 2) {
            log.on_ack(ms(i));
        }
        log.on_end_acks();
        // quinn declares the frame's losses after its acknowledgements: packet 2 stays open
        // until the next frame.
        assert_eq!(log.open.front().map(|p| p.seq), Some(2));
        log.on_end_acks();
        assert!(log.open.is_empty(), "{:?}", log.open);
        sent(&mut log, 10, 3);
        log.on_ack(ms(10));
        assert_eq!(log.on_lost(ms(12), 1200), 1);
    }

    #[test]
    fn unknown_send_times_change_nothing() {
        let mut log = LossRuns::default();
        log.on_ack(ms(5));
        log.on_end_acks();
        assert_eq!(log.on_lost(ms(5), 1200), 0);
        sent(&mut log, 10, 2);
        log.on_ack(ms(3));
        assert_eq!(log.open.len(), 2);
    }
}
