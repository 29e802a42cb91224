//! The gate's promises about one order, re-checked from the bounds, the snapshot and the quote
//! alone, as properties rather than as the formulas `model::evaluate` computes. The simulator runs
//! every accepted order and every fill through these; a checker that accepted everything would
//! make its zero-violation figure meaningless, so each promise has a test that breaks it.

use crate::model::{
    Bounds, Decision, Quote, Snapshot, BPS, HELD_NONE, MAX_MATCHES_PER_TAKE, PRICE_ONE,
};
use alloy::primitives::{U256, U512};

/// Every promise the gate makes about an accepted order, checked from the bounds, the snapshot
/// and the quote alone. `limit` is the order's limit for the token bought, as published (or as
/// the reference computed it). `Err` names the first broken promise.
pub fn check_accepted(
    b: &Bounds,
    s: &Snapshot,
    q: &Quote,
    verdict: u8,
    d: &Decision,
    limit: U256,
) -> Result<(), String> {
    let one = U256::from(PRICE_ONE);
    let fail = |what: &str| {
        Err(format!(
            "{what}: bounds {b:?}, snapshot {s:?}, quote {q:?}, decision {d:?}, limit {limit}"
        ))
    };
    if d.reason != 0 || d.failed_mask != 0 {
        return fail("not a PASS");
    }
    let up = match verdict {
        1 => true,
        2 => false,
        _ => return fail("accepted a verdict that is not a buy"),
    };
    if s.finalized {
        return fail("accepted on a finalized market");
    }
    if !s.resolver_trusted {
        return fail("accepted on a market whose resolver is not trusted");
    }
    if !s.creator_trusted {
        return fail("accepted on a market whose creator is not trusted");
    }
    if s.expiry_sec <= s.now_sec || s.expiry_sec - s.now_sec < u64::from(b.min_headroom_secs) {
        return fail("accepted inside the expiry headroom");
    }
    if s.expiry_sec - s.now_sec > u64::from(b.max_horizon_secs) {
        return fail("accepted beyond the horizon");
    }
    if s.now_sec > q.deadline_sec {
        return fail("accepted after the quote's deadline");
    }
    if s.held_side != HELD_NONE && s.held_side != verdict {
        return fail("accepted the side opposite the one held");
    }
    if d.price_paid < b.min_price || d.price_paid > b.max_price || d.price_paid >= one {
        return fail("price paid outside the band");
    }
    if d.price_paid > q.max_price_paid {
        return fail("price paid above the quote");
    }
    // The limit: no looser than either bound, never below the price paid, on the grid of the
    // price the market gets, and the loosest such grid price (tightening no further than the grid
    // needs).
    let bound = b.max_price.min(q.max_price_paid);
    if limit > bound {
        return fail("limit above min(maxPrice, maxPricePaid)");
    }
    if limit < d.price_paid {
        return fail("limit below the price paid");
    }
    let market_price = if up { limit } else { one - limit };
    if !s.tick_size.is_zero() && !(market_price % s.tick_size).is_zero() {
        return fail("the market's limit price off the tick grid");
    }
    let next = if s.tick_size.is_zero() { limit + U256::from(1) } else { limit + s.tick_size };
    if next <= bound {
        return fail("limit tighter than the grid needs");
    }
    // The price paid is marketable: BUY_UP at or above the best ask, BUY_DOWN's UP price at or
    // below the best bid.
    if up && (s.best_ask.is_zero() || d.price_paid < s.best_ask) {
        return fail("BUY_UP price below the best ask (or no ask)");
    }
    if !up && (s.best_bid.is_zero() || one - d.price_paid > s.best_bid) {
        return fail("BUY_DOWN price above the best bid (or no bid)");
    }
    if !s.tick_size.is_zero() {
        let paid_market = if up { d.price_paid } else { one - d.price_paid };
        if !(paid_market % s.tick_size).is_zero() {
            return fail("price paid off the tick grid");
        }
    }
    if d.quantity.is_zero() || d.quantity > b.max_size || d.quantity < s.min_quantity {
        return fail("quantity outside (0, maxSize] or below the venue minimum");
    }
    if !s.lot_size.is_zero() && !(d.quantity % s.lot_size).is_zero() {
        return fail("quantity off the lot grid");
    }
    // The minimum fill is reachable within the venue's match cap: 64 resting orders of the
    // smallest size the venue lets rest fill all of the quantity, or at least minFillBps of it.
    let smallest = s.min_quantity.max(s.lot_size).max(U256::from(1u8));
    let reach = U512::from(MAX_MATCHES_PER_TAKE) * U512::from(smallest);
    let reaches_all = reach >= U512::from(d.quantity);
    let reaches_minimum =
        reach * U512::from(BPS) >= U512::from(d.quantity) * U512::from(b.min_fill_bps);
    if !reaches_all && !reaches_minimum {
        return fail("the minimum fill is beyond the venue's match cap");
    }
    // cost covers the whole quantity at the limit and is not more than one unit above it.
    let exact = U512::from(d.quantity) * U512::from(limit);
    let cost_scaled = U512::from(d.cost) * U512::from(PRICE_ONE);
    if cost_scaled < exact || cost_scaled >= exact + U512::from(PRICE_ONE) {
        return fail("cost is not ceil(quantity * limit / 1e6)");
    }
    if s.open_positions >= b.max_concurrent {
        return fail("accepted with the concurrent positions cap reached");
    }
    if U512::from(s.open_notional) + U512::from(d.cost) > U512::from(b.max_notional) {
        return fail("openNotional + cost above maxNotional");
    }
    if d.cost > s.collateral_available {
        return fail("cost above the collateral available");
    }
    // Spending the whole cost keeps the balance at or above H - maxDrawdown, with
    // H = max(highWaterMark, collateral + openNotional) (the sum saturating, as specified).
    let h = s.high_water_mark.max(s.collateral_available.saturating_add(s.open_notional));
    let balance_after = U512::from(s.collateral_available) + U512::from(b.max_drawdown);
    if U512::from(h) + U512::from(d.cost) > balance_after {
        return fail("the worst case takes the balance below H - maxDrawdown");
    }
    Ok(())
}

/// The promises about a fill the gate kept: no more than the quantity, at least `minFillBps` of
/// it, no more spent than the worst-case cost, and on average no more per unit than the limit
/// (one unit of rounding allowed).
pub fn check_kept_fill(
    b: &Bounds,
    d: &Decision,
    limit: U256,
    filled: U256,
    spent: U256,
) -> Result<(), String> {
    let fail = |what: &str| {
        Err(format!("{what}: decision {d:?}, limit {limit}, filled {filled}, spent {spent}"))
    };
    if filled > d.quantity {
        return fail("filled more than the quantity");
    }
    if U512::from(filled) * U512::from(BPS) < U512::from(d.quantity) * U512::from(b.min_fill_bps) {
        return fail("kept a fill below minFillBps");
    }
    if spent > d.cost {
        return fail("spent more than the worst-case cost");
    }
    if U512::from(spent) * U512::from(PRICE_ONE)
        >= U512::from(filled) * U512::from(limit) + U512::from(PRICE_ONE)
    {
        return fail("paid more per unit than the limit");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{HELD_DOWN, HELD_UP};

    fn u(v: u64) -> U256 {
        U256::from(v)
    }

    /// Band [0.30, 0.70], maxSize 1000, headroom 3600 s, 3 positions, notional 10_000, horizon
    /// one day, drawdown 20_000, minimum fill 25 %; a book bid 0.40 / ask 0.45 on a 0.01 tick,
    /// lot 10, 10_000 s left, trusted, nothing held, H = equity 1_000_000.
    fn case() -> (Bounds, Snapshot) {
        let b = Bounds {
            min_price: u(300_000),
            max_price: u(700_000),
            max_size: u(1_000),
            min_headroom_secs: 3_600,
            max_concurrent: 3,
            max_notional: u(10_000),
            max_horizon_secs: 86_400,
            max_drawdown: u(20_000),
            write_off_grace_secs: 3_600,
            min_fill_bps: 2_500,
        };
        let s = crate::fixtures::healthy_snapshot();
        (b, s)
    }

    /// The keeper's quotes: BUY_UP saw 450_000, * 1.005 = 452_250; BUY_DOWN saw 600_000,
    /// * 1.005 = 603_000. Deadline = now.
    fn quote(max_price_paid: u64) -> Quote {
        Quote { max_price_paid: u(max_price_paid), deadline_sec: 10_000 }
    }

    fn pass(price: u64, quantity: u64, cost: u64) -> Decision {
        Decision {
            reason: 0,
            failed_mask: 0,
            price_paid: u(price),
            quantity: u(quantity),
            cost: u(cost),
        }
    }

    #[test]
    fn the_checker_accepts_a_correct_order_and_flags_each_broken_promise() {
        let (b, s) = case();
        let (qu, qd) = (quote(452_250), quote(603_000));
        // BUY_UP lifts the ask 450_000; limit 452_250 rounded down = 450_000; 1000 units;
        // cost = 1000 * 0.45 = 450.
        assert_eq!(check_accepted(&b, &s, &qu, 1, &pass(450_000, 1_000, 450), u(450_000)), Ok(()));
        // BUY_DOWN pays 1e6 - 400_000 = 600_000; limit 1e6 - (397_000 rounded up = 400_000)
        // = 600_000; cost 600.
        assert_eq!(check_accepted(&b, &s, &qd, 2, &pass(600_000, 1_000, 600), u(600_000)), Ok(()));
        let up = |d: Decision, limit: u64| (1u8, qu, d, limit);
        let broken = [
            // not a buy
            (0u8, qu, pass(450_000, 1_000, 450), 450_000u64),
            // cost one unit under and one over ceil(450) = 450
            up(pass(450_000, 1_000, 449), 450_000),
            up(pass(450_000, 1_000, 451), 450_000),
            // 995 is not a multiple of the lot 10 (995 * 0.45 = 447.75 -> 448 would be right)
            up(pass(450_000, 995, 448), 450_000),
            // 1010 > maxSize 1000 (cost 454.5 -> 455)
            up(pass(450_000, 1_010, 455), 450_000),
            // 455_000 is off the 10_000 tick (limit 470_000 under a quote of 470_000, cost 470)
            (1, quote(470_000), pass(455_000, 1_000, 470), 470_000),
            // 440_000 is below the ask 450_000: not marketable (cost 450 at the limit)
            up(pass(440_000, 1_000, 450), 450_000),
            // 710_000 is above maxPrice 700_000 (quote 720_000, limit 700_000, cost 700)
            (1, quote(720_000), pass(710_000, 1_000, 700), 700_000),
            // DOWN pays 590_000: its UP price 410_000 is above the bid 400_000 (cost 600)
            (2, qd, pass(590_000, 1_000, 600), 600_000),
            // within the quote's limit: price 460_000 above the quote 452_250 (limit 450_000)
            up(pass(460_000, 1_000, 450), 450_000),
            // limit 460_000 above the quote 452_250 (cost 460 consistent with it)
            up(pass(450_000, 1_000, 460), 460_000),
            // limit 440_000 is on the grid but tighter than it needs (450_000 fits): cost 440
            up(pass(440_000, 1_000, 440), 440_000),
            // limit 445_000 is off the grid (cost 445)
            up(pass(440_000, 1_000, 445), 445_000),
            // limit 440_000 below the price paid 450_000 (cost 440)
            up(pass(450_000, 1_000, 440), 440_000),
            // DOWN limit 595_000: the market's UP price 405_000 is off the grid (cost 595)
            (2, qd, pass(590_000, 1_000, 595), 595_000),
        ];
        for (verdict, q, d, limit) in broken {
            assert!(
                check_accepted(&b, &s, &q, verdict, &d, u(limit)).is_err(),
                "{verdict} {d:?} {limit}"
            );
        }
        // A refusal passed off as a PASS.
        let refused = Decision { reason: 5, failed_mask: 1 << 5, ..pass(450_000, 1_000, 450) };
        assert!(check_accepted(&b, &s, &qu, 1, &refused, u(450_000)).is_err());
        // The state-based promises: finalized, 3599 s of headroom, 3 positions open, notional
        // 9_551 + 450 = 10_001 > 10_000, collateral 449 < 450, resolver not trusted, expiry
        // 86_401 s out, DOWN held, H = 1_019_551 (drawdown 19_551 + 450 = 20_001 > 20_000).
        let d = pass(450_000, 1_000, 450);
        for bad in [
            Snapshot { finalized: true, ..s },
            Snapshot { expiry_sec: 13_599, ..s },
            Snapshot { open_positions: 3, ..s },
            Snapshot { open_notional: u(9_551), ..s },
            Snapshot { collateral_available: u(449), ..s },
            Snapshot { resolver_trusted: false, ..s },
            Snapshot { expiry_sec: 96_401, ..s },
            Snapshot { held_side: HELD_DOWN, ..s },
            Snapshot { held_side: 3, ..s },
            Snapshot { high_water_mark: u(1_019_551), ..s },
            Snapshot { creator_trusted: false, ..s },
            // Match cap: m = max(3, 1, 1) = 3; 64 * 3 = 192 < 1000 and 192 * 10_000 =
            // 1_920_000 < 1000 * 2500 = 2_500_000.
            Snapshot { lot_size: u(1), min_quantity: u(3), ..s },
        ] {
            assert!(check_accepted(&b, &bad, &qu, 1, &d, u(450_000)).is_err(), "{bad:?}");
        }
        // The edges that must still pass: horizon exactly 86_400, UP held, H exactly at the
        // drawdown boundary (1_019_550: 19_550 + 450 = 20_000).
        for ok in [
            Snapshot { expiry_sec: 96_400, ..s },
            Snapshot { held_side: HELD_UP, ..s },
            Snapshot { high_water_mark: u(1_019_550), ..s },
            // m = 4: 64 * 4 * 10_000 = 2_560_000 >= 2_500_000, the minimum fill is reachable.
            Snapshot { lot_size: u(1), min_quantity: u(4), ..s },
            // m = 1 (no lot, no minimum): 64 * 10_000 = 640_000 < 2_500_000 fails, but with a
            // quantity of 64 or less the whole order fits the cap (tested with lot 0 below).
        ] {
            assert_eq!(check_accepted(&b, &ok, &qu, 1, &d, u(450_000)), Ok(()), "{ok:?}");
        }
        // No grid and no minimum, maxSize 64: m = 1, 64 * 1 = 64 >= 64, all of it fits the cap.
        let small = Bounds { max_size: u(64), ..b };
        let tiny = Snapshot { lot_size: U256::ZERO, min_quantity: U256::ZERO, ..s };
        // 64 * 0.45 = 28.8, cost 29.
        assert_eq!(
            check_accepted(&small, &tiny, &qu, 1, &pass(450_000, 64, 29), u(450_000)),
            Ok(())
        );
        // maxSize 65: 64 < 65 and 640_000 < 65 * 2500 = 162_500? No: 640_000 >= 162_500, the
        // minimum (17 units) is reachable, so it passes too; at minFillBps 10_000 it does not
        // (640_000 < 650_000). 65 * 0.45 = 29.25, cost 30.
        let d65 = pass(450_000, 65, 30);
        let bigger = Bounds { max_size: u(65), ..b };
        assert_eq!(check_accepted(&bigger, &tiny, &qu, 1, &d65, u(450_000)), Ok(()));
        let all_or_nothing = Bounds { min_fill_bps: 10_000, ..bigger };
        assert!(check_accepted(&all_or_nothing, &tiny, &qu, 1, &d65, u(450_000)).is_err());
        // Deadline one second before now.
        let stale = Quote { deadline_sec: 9_999, ..qu };
        assert!(check_accepted(&b, &s, &stale, 1, &d, u(450_000)).is_err());
    }

    #[test]
    fn the_fill_checker_flags_each_broken_promise() {
        let (b, _) = case();
        let d = pass(450_000, 1_000, 450);
        let limit = u(450_000);
        // All 1000 at 0.45: 450 spent. 250 (25 %) at 0.44: 110 spent.
        assert_eq!(check_kept_fill(&b, &d, limit, u(1_000), u(450)), Ok(()));
        assert_eq!(check_kept_fill(&b, &d, limit, u(250), u(110)), Ok(()));
        // 1010 > quantity; 249 < 25 %; 451 > cost 450; 250 units for 113 > 250 * 0.45 = 112.5
        // rounded up to 113 is allowed, 114 is not.
        assert!(check_kept_fill(&b, &d, limit, u(1_010), u(450)).is_err());
        assert!(check_kept_fill(&b, &d, limit, u(249), u(100)).is_err());
        assert!(check_kept_fill(&b, &d, limit, u(1_000), u(451)).is_err());
        assert_eq!(check_kept_fill(&b, &d, limit, u(250), u(113)), Ok(()));
        assert!(check_kept_fill(&b, &d, limit, u(250), u(114)).is_err());
    }
}
