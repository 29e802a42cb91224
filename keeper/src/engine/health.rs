//! Inference health, owned by the ask stage: a backoff per market and a circuit breaker over the
//! model, so a model that is down writes a few off-chain rows per market per hour instead of one
//! per market per cycle (the review measured 250 rows in 11 s at `--interval-secs 2`).
//!
//! Time is chain time as the node will stamp the next block (`follower::next_block_time`): on a
//! live or quiet chain it follows the wall clock, and in a test that pins the chain's clock it
//! moves only when the test moves it, so no outcome depends on how fast the machine is.
//!
//! - **Per market.** After a market's ask fails (no answer: transport, timeout, HTTP error), it
//!   is not asked again for [`HealthPolicy::backoff_first`] seconds, doubling with every further
//!   failure up to [`HealthPolicy::backoff_cap`]. An answer (whatever it says) clears it.
//! - **Across markets.** After [`HealthPolicy::trip_after`] failures in a row with no answer in
//!   between, the breaker opens: nothing is asked for [`HealthPolicy::cool_first`] seconds. Then
//!   one due market is asked as a probe: an answer closes the breaker, a failure opens it again
//!   for twice as long, up to [`HealthPolicy::cool_cap`].
//!
//! With the defaults (60 s doubling to an hour per market; 5 failures trip a 5-minute pause
//! doubling to an hour) a model that stays down costs each market at most 6 rows in its first
//! hour (asks at 0, 60, 180, 420, 900 and 1,860 s; fewer once the breaker holds them back) and
//! one an hour after that.

use alloy::primitives::Address;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// The knobs, in chain seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HealthPolicy {
    pub backoff_first: u64,
    pub backoff_cap: u64,
    pub trip_after: u32,
    pub cool_first: u64,
    pub cool_cap: u64,
}

impl Default for HealthPolicy {
    fn default() -> Self {
        Self {
            backoff_first: 60,
            backoff_cap: 3_600,
            trip_after: 5,
            cool_first: 300,
            cool_cap: 3_600,
        }
    }
}

/// One market's failures in a row and when it may be asked again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Backoff {
    failures: u32,
    next_at: u64,
}

/// What the breaker allows now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Breaker {
    /// Asks go out as usual.
    Closed,
    /// Nothing is asked before chain time `until`.
    Open { until: u64 },
    /// The pause is over: one market is asked, as a probe.
    Probing,
}

/// Which due markets may be asked now, and why the others may not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Admitted<T> {
    pub ask: Vec<T>,
    /// Due markets still in their backoff.
    pub backing_off: usize,
    /// Due markets held back by the breaker.
    pub held: usize,
    pub breaker: Breaker,
}

/// The breaker opening, for the log line that says why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tripped {
    pub failures: u32,
    pub until: u64,
    pub cool: u64,
}

#[derive(Debug, Clone, Default)]
pub struct InferenceHealth {
    pub policy: HealthPolicy,
    markets: HashMap<Address, Backoff>,
    /// Failures since the last answer, across markets.
    in_a_row: u32,
    /// The current pause: until when, and how long it was.
    open: Option<(u64, u64)>,
}

/// What the inference health remembers, as saved in the state database with each write, so
/// a restart (every `--once` run is one) keeps each market's backoff and the breaker where they
/// were instead of asking every due market again. All times are chain times, which a restart
/// does not change.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HealthState {
    /// Each backing-off market: failures in a row and the chain time it may be asked again.
    pub markets: Vec<(Address, u32, u64)>,
    pub in_a_row: u32,
    /// The breaker's pause: until when, and how long it was.
    pub open: Option<(u64, u64)>,
}

impl InferenceHealth {
    pub fn new(policy: HealthPolicy) -> Self {
        Self { policy, ..Self::default() }
    }

    /// The state to save (markets in address order, so the same state saves the same bytes).
    pub fn state(&self) -> HealthState {
        let mut markets: Vec<_> =
            self.markets.iter().map(|(a, b)| (*a, b.failures, b.next_at)).collect();
        markets.sort_unstable();
        HealthState { markets, in_a_row: self.in_a_row, open: self.open }
    }

    /// Takes up a saved state (the policy stays this keeper's).
    pub fn restore(&mut self, saved: HealthState) {
        self.markets = saved
            .markets
            .into_iter()
            .map(|(a, failures, next_at)| (a, Backoff { failures, next_at }))
            .collect();
        self.in_a_row = saved.in_a_row;
        self.open = saved.open;
    }

    /// The breaker's state at chain time `now`.
    pub fn breaker(&self, now: u64) -> Breaker {
        match self.open {
            None => Breaker::Closed,
            Some((until, _)) if now < until => Breaker::Open { until },
            Some(_) => Breaker::Probing,
        }
    }

    /// Of the `due` markets (`address` of each), those that may be asked at chain time `now`.
    pub fn admit<T>(&self, due: Vec<T>, now: u64, address: impl Fn(&T) -> Address) -> Admitted<T> {
        let breaker = self.breaker(now);
        let (ready, waiting): (Vec<T>, Vec<T>) = due
            .into_iter()
            .partition(|m| self.markets.get(&address(m)).is_none_or(|b| b.next_at <= now));
        let backing_off = waiting.len();
        let mut ask = ready;
        let held = match breaker {
            Breaker::Closed => 0,
            Breaker::Open { .. } => std::mem::take(&mut ask).len(),
            Breaker::Probing => {
                let rest = ask.len().saturating_sub(1);
                ask.truncate(1);
                rest
            }
        };
        Admitted { ask, backing_off, held, breaker }
    }

    /// `market` answered: its backoff is cleared and the breaker closes.
    pub fn answered(&mut self, market: Address) {
        self.markets.remove(&market);
        self.in_a_row = 0;
        self.open = None;
    }

    /// `market`'s ask failed at chain time `now`. Returns the breaker opening, when this
    /// failure opens it (or a failed probe opens it again).
    pub fn failed(&mut self, market: Address, now: u64) -> Option<Tripped> {
        let p = self.policy;
        let b = self.markets.entry(market).or_insert(Backoff { failures: 0, next_at: 0 });
        b.failures = b.failures.saturating_add(1);
        b.next_at = now.saturating_add(doubled(p.backoff_first, b.failures, p.backoff_cap));
        self.in_a_row = self.in_a_row.saturating_add(1);
        match self.open {
            // A failed probe: open again, for twice as long.
            Some((until, cool)) if now >= until => {
                let cool = cool.saturating_mul(2).min(p.cool_cap);
                self.open = Some((now.saturating_add(cool), cool));
                Some(Tripped { failures: self.in_a_row, until: now + cool, cool })
            }
            // Already open (an ask that was in flight when it opened).
            Some(_) => None,
            None if self.in_a_row >= p.trip_after.max(1) => {
                let cool = p.cool_first.min(p.cool_cap);
                self.open = Some((now.saturating_add(cool), cool));
                Some(Tripped { failures: self.in_a_row, until: now + cool, cool })
            }
            None => None,
        }
    }
}

/// `first × 2^(n−1)`, capped.
fn doubled(first: u64, n: u32, cap: u64) -> u64 {
    let shift = n.saturating_sub(1).min(32);
    first.saturating_mul(1u64 << shift).min(cap)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(i: u8) -> Address {
        Address::repeat_byte(i)
    }

    #[test]
    fn a_failing_market_waits_60_then_120_then_240_s_capped_at_an_hour() {
        let mut h =
            InferenceHealth::new(HealthPolicy { trip_after: 1_000, ..HealthPolicy::default() });
        let due = |h: &InferenceHealth, now| h.admit(vec![m(1)], now, |a| *a).ask.len();
        assert_eq!(due(&h, 0), 1);
        h.failed(m(1), 0);
        // 60 × 2^0 = 60: not before 60.
        assert_eq!((due(&h, 59), due(&h, 60)), (0, 1));
        h.failed(m(1), 60);
        // 60 × 2^1 = 120 after 60: 180.
        assert_eq!((due(&h, 179), due(&h, 180)), (0, 1));
        for t in [180, 420, 900, 1_800, 3_600, 7_200] {
            h.failed(m(1), t);
        }
        // The 8th failure: 60 × 2^7 = 7,680, capped at 3,600.
        assert_eq!((due(&h, 7_200 + 3_599), due(&h, 10_800)), (0, 1));
        h.answered(m(1));
        assert_eq!(due(&h, 7_201), 1);
    }

    #[test]
    fn five_failures_in_a_row_open_the_breaker_then_one_probe_decides() {
        let mut h = InferenceHealth::default();
        let all: Vec<Address> = (1..=8).map(m).collect();
        for (i, a) in all.iter().enumerate().take(4) {
            assert_eq!(h.failed(*a, 0), None, "failure {}", i + 1);
        }
        // The 5th failure in a row trips it for 300 s.
        assert_eq!(h.failed(all[4], 0), Some(Tripped { failures: 5, until: 300, cool: 300 }));
        // An ask that was already in flight fails too: no second trip.
        assert_eq!(h.failed(all[5], 0), None);
        // At 50 the six that failed still back off (until 60); the breaker holds the two others.
        let a = h.admit(all.clone(), 50, |a| *a);
        assert_eq!((a.ask.len(), a.backing_off, a.held), (0, 6, 2));
        assert_eq!(a.breaker, Breaker::Open { until: 300 });
        // At 300 the pause is over: one probe, among the markets not backing off (all are by
        // now: 60 s after their failure at 0).
        let a = h.admit(all.clone(), 300, |a| *a);
        assert_eq!((a.ask.len(), a.held, a.breaker), (1, 7, Breaker::Probing));
        // The probe fails: open again for 600 s.
        assert_eq!(h.failed(a.ask[0], 300), Some(Tripped { failures: 7, until: 900, cool: 600 }));
        assert_eq!(h.admit(all.clone(), 899, |a| *a).ask.len(), 0);
        let a = h.admit(all.clone(), 900, |a| *a);
        assert_eq!(a.ask.len(), 1);
        // The probe is answered: closed, every market not backing off is asked again.
        h.answered(a.ask[0]);
        assert_eq!(h.breaker(900), Breaker::Closed);
        assert_eq!(h.admit(all, 900, |a| *a).ask.len(), 8);
    }

    #[test]
    fn an_answer_between_failures_keeps_the_breaker_closed() {
        let mut h = InferenceHealth::default();
        for round in 0..10u8 {
            for i in 0..4u8 {
                assert_eq!(h.failed(m(10 * round + i), 0), None);
            }
            h.answered(m(200));
        }
        assert_eq!(h.breaker(0), Breaker::Closed);
    }

    #[test]
    fn a_saved_state_restores_the_backoffs_and_the_breaker() {
        // Five failures at chain time 100 (trip_after = 5) open the breaker until 100 + 300;
        // market 1 failed twice: next ask at 100 + 60 x 2 = 220.
        let mut h = InferenceHealth::default();
        for i in [1, 1, 2, 3, 4] {
            h.failed(m(i), 100);
        }
        assert_eq!(h.breaker(150), Breaker::Open { until: 400 });
        let saved = serde_json::to_string(&h.state()).unwrap();
        let mut back = InferenceHealth::default();
        back.restore(serde_json::from_str(&saved).unwrap());
        assert_eq!(back.breaker(150), Breaker::Open { until: 400 });
        assert_eq!(back.state(), h.state());
        // At 219 market 1 still backs off and the breaker holds market 5.
        let got = back.admit(vec![m(1), m(5)], 219, |a| *a);
        assert_eq!((got.ask.len(), got.backing_off, got.held), (0, 1, 1));
        // At 400 the pause is over: one market is asked as a probe.
        let got = back.admit(vec![m(1), m(5)], 400, |a| *a);
        assert_eq!((got.ask, got.held, got.breaker), (vec![m(1)], 1, Breaker::Probing));
    }
}
