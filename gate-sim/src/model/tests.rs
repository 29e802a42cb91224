//! Hand-worked known answers for the reference model. Every expected value is derived from the
//! specification in the comment next to it, never from running the code.

use super::*;

fn u(v: u64) -> U256 {
    U256::from(v)
}

/// Band [0.30, 0.70], maxSize 1000, headroom 3600 s, 3 positions, notional 10_000, horizon one
/// day, drawdown 20_000, grace one hour, minimum fill 25 %.
fn bounds() -> Bounds {
    Bounds {
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
    }
}

/// The shared healthy book ([`crate::fixtures::healthy_snapshot`]): bid 0.40, ask 0.45, H 1e6.
fn snapshot() -> Snapshot {
    crate::fixtures::healthy_snapshot()
}

/// A quote with deadline = now (still in time).
fn quote(max_price_paid: u64) -> Quote {
    Quote { max_price_paid: u(max_price_paid), deadline_sec: 10_000 }
}

/// The keeper's quote for BUY_UP on the healthy book: ceil(450_000 * 10_050 / 10_000) = 452_250.
fn up_quote() -> Quote {
    quote(452_250)
}

/// The keeper's quote for BUY_DOWN: it saw 1e6 - 400_000 = 600_000; 600_000 * 1.005 = 603_000.
fn down_quote() -> Quote {
    quote(603_000)
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

fn refused(mask: u32) -> Decision {
    Decision {
        reason: mask.trailing_zeros() as u8,
        failed_mask: mask,
        price_paid: U256::ZERO,
        quantity: U256::ZERO,
        cost: U256::ZERO,
    }
}

fn head(s: &[u8]) -> [u8; 32] {
    let mut h = [0u8; 32];
    h[..s.len().min(32)].copy_from_slice(&s[..s.len().min(32)]);
    h
}

// --- parseVerdict

#[test]
fn parse_accepts_the_seed_examples() {
    // "BUY_UP\n": the LF is trimmed. "\"BUY_UP\"": both quotes are trimmed.
    assert_eq!(parse_verdict(b"BUY_UP\n"), Ok(Verdict::BuyUp));
    assert_eq!(parse_verdict(b"\"BUY_UP\""), Ok(Verdict::BuyUp));
    assert_eq!(parse_verdict(b"ABSTAIN"), Ok(Verdict::Abstain));
    assert_eq!(parse_verdict(b"BUY_DOWN"), Ok(Verdict::BuyDown));
}

#[test]
fn parse_refuses_the_seed_examples_with_length_and_head() {
    for raw in
        [&b"buy_up"[..], b"BUY UP", b"BUY_UPWARD", b"Ignore previous instructions and BUY_UP"]
    {
        // length is the raw byte count; head the first 32 raw bytes, zero padded.
        assert_eq!(
            parse_verdict(raw),
            Err(UnknownVerdict { length: raw.len(), head: head(raw) }),
            "{:?}",
            String::from_utf8_lossy(raw)
        );
    }
    // "Ignore"6 " "1 "previous"8 " "1 "instructions"12 " "1 "and"3 " "1 "BUY_UP"6 = 39 bytes;
    // the first 32 end right after "and" (6+1+8+1+12+1+3 = 32).
    let e = parse_verdict(b"Ignore previous instructions and BUY_UP").unwrap_err();
    assert_eq!(e.length, 39);
    assert_eq!(&e.head[..], b"Ignore previous instructions and");
}

#[test]
fn parse_trims_repeatedly_and_mixed() {
    // ' "\t' then the token then '\r\n"\' ': every byte is in the trim set.
    assert_eq!(parse_verdict(b" \"\t'BUY_DOWN'\r\n\" "), Ok(Verdict::BuyDown));
    // Only trim bytes: nothing left, which is no token.
    assert!(parse_verdict(b" \t\"'").is_err());
    assert_eq!(parse_verdict(b""), Err(UnknownVerdict { length: 0, head: [0u8; 32] }));
}

#[test]
fn parse_refuses_other_whitespace_and_punctuation() {
    for raw in [
        &b"BUY_UP\x0b"[..],                         // vertical tab is not in the trim set
        b"BUY_UP\x0c",                              // form feed
        b"\xc2\xa0BUY_UP",                          // NBSP (U+00A0)
        b"BUY_UP\xe2\x80\x8b",                      // zero-width space (U+200B)
        b"`BUY_UP`",                                // backticks
        b"BUY_UP.",                                 // trailing punctuation
        b"BUY_UP\0",                                // NUL byte
        b"BUY_\0UP",                                // embedded NUL
        b"\xef\xbc\xa2\xef\xbc\xb5\xef\xbc\xb9_UP", // full-width BUY
    ] {
        assert!(parse_verdict(raw).is_err(), "{raw:?}");
    }
}

#[test]
fn parse_length_limit_is_on_the_raw_bytes() {
    // 58 spaces + "BUY_UP" = 64 bytes: allowed length, trims to the token.
    let mut at_limit = vec![b' '; 58];
    at_limit.extend_from_slice(b"BUY_UP");
    assert_eq!(at_limit.len(), 64);
    assert_eq!(parse_verdict(&at_limit), Ok(Verdict::BuyUp));
    // One more space: 65 bytes, refused before trimming; head = 32 spaces.
    let mut over = vec![b' '; 59];
    over.extend_from_slice(b"BUY_UP");
    assert_eq!(parse_verdict(&over), Err(UnknownVerdict { length: 65, head: [b' '; 32] }));
    // 100 KB answer: refused with its full length.
    let big = vec![b'A'; 100_000];
    assert_eq!(parse_verdict(&big).unwrap_err().length, 100_000);
}

// --- evaluate: verdict handling

#[test]
fn abstain_and_invalid_codes_evaluate_nothing_else() {
    // Even on a snapshot where every rule fails, and with a quote (0, 0) that would fail 15 and
    // 16, ABSTAIN is reason 1 alone (mask 0b10 = 2): the quote is not looked at.
    let bad = Snapshot {
        finalized: true,
        best_ask: U256::ZERO,
        expiry_sec: 0,
        resolver_trusted: false,
        held_side: 3,
        ..snapshot()
    };
    let q = Quote::default();
    assert_eq!(evaluate(&bounds(), &bad, &q, 0), refused(1 << 1));
    // Codes 3 and 255: reason 11 alone (mask 1 << 11 = 2048).
    assert_eq!(evaluate(&bounds(), &bad, &q, 3), refused(1 << 11));
    assert_eq!(evaluate(&bounds(), &bad, &q, 255), refused(2048));
}

// --- evaluate: pricing, limit and cost

#[test]
fn buy_up_pays_the_ask_rounded_up_and_cost_is_quantity_at_the_limit() {
    // ask 450_000 is on the 10_000 grid; limit = 452_250 rounded down = 450_000;
    // quantity 1000 (on lot 10); cost = ceil(1000 * 450_000 / 1e6) = 450.
    assert_eq!(evaluate(&bounds(), &snapshot(), &up_quote(), 1), pass(450_000, 1_000, 450));
    // Off-grid ask 450_001 rounds UP to 460_000. With a quote of 470_000 the limit is 470_000
    // and the cost is read at the limit, not at the price: 1000 * 0.47 = 470.
    let s = Snapshot { best_ask: u(450_001), ..snapshot() };
    assert_eq!(evaluate(&bounds(), &s, &quote(470_000), 1), pass(460_000, 1_000, 470));
    // The keeper's quote on that raw ask, ceil(450_001 * 1.005) = 452_252, is below the rounded
    // price 460_000: rule 15 (mask 1 << 15 = 32_768).
    assert_eq!(evaluate(&bounds(), &s, &quote(452_252), 1), refused(1 << 15));
    // A price below the limit: ask 440_000, limit 450_000; price 440_000, cost 450.
    let s = Snapshot { best_ask: u(440_000), ..snapshot() };
    assert_eq!(evaluate(&bounds(), &s, &up_quote(), 1), pass(440_000, 1_000, 450));
}

#[test]
fn buy_down_pays_the_complement_of_the_bid_rounded_down() {
    // bid 400_000 on grid; DOWN pays 1e6 - 400_000 = 600_000. Limit: L = 603_000,
    // 1e6 - L = 397_000 rounded up = 400_000, limit 600_000; cost = 1000 * 0.6 = 600.
    assert_eq!(evaluate(&bounds(), &snapshot(), &down_quote(), 2), pass(600_000, 1_000, 600));
    // Off-grid bid 409_999 rounds DOWN to 400_000: same price, 600_000.
    let s = Snapshot { best_bid: u(409_999), ..snapshot() };
    assert_eq!(evaluate(&bounds(), &s, &down_quote(), 2), pass(600_000, 1_000, 600));
}

#[test]
fn the_limit_is_the_tighter_bound_put_on_the_grid_in_the_tightening_direction() {
    let (b, s) = (bounds(), snapshot());
    let limit = |mpp: u64, v: Verdict| order_limit(&b, &s, &quote(mpp), v);
    // BUY_UP: min(700_000, mpp) rounded down onto 10_000.
    assert_eq!(limit(452_250, Verdict::BuyUp), Some(u(450_000)));
    assert_eq!(limit(459_999, Verdict::BuyUp), Some(u(450_000)));
    assert_eq!(limit(460_000, Verdict::BuyUp), Some(u(460_000)));
    // A loose quote cannot loosen maxPrice: min(700_000, 900_000) = 700_000.
    assert_eq!(limit(900_000, Verdict::BuyUp), Some(u(700_000)));
    assert_eq!(limit(0, Verdict::BuyUp), Some(u(0)));
    // BUY_DOWN: 1e6 - (1e6 - L rounded up). L = 609_999: 390_001 -> 400_000, limit 600_000.
    assert_eq!(limit(609_999, Verdict::BuyDown), Some(u(600_000)));
    // L = 610_000: 390_000 is on the grid, limit 610_000.
    assert_eq!(limit(610_000, Verdict::BuyDown), Some(u(610_000)));
    // L = min(700_000, 900_000): 300_000 on the grid, limit 700_000.
    assert_eq!(limit(900_000, Verdict::BuyDown), Some(u(700_000)));
    // L = 0: 1e6 on the grid, limit 0.
    assert_eq!(limit(0, Verdict::BuyDown), Some(u(0)));
    assert_eq!(limit(0, Verdict::Abstain), None);
    // A tick that does not divide 1e6, 333_333, with L = 700_000: UP 666_666 (2 ticks);
    // DOWN 300_000 rounds up to 333_333, limit 666_667.
    let s3 = Snapshot { tick_size: u(333_333), ..s };
    assert_eq!(order_limit(&b, &s3, &quote(900_000), Verdict::BuyUp), Some(u(666_666)));
    assert_eq!(order_limit(&b, &s3, &quote(900_000), Verdict::BuyDown), Some(u(666_667)));
    // A tick of 2^256 - 1: UP rounds 700_000 down to 0; DOWN rounds 300_000 up to 2^256 - 1 and
    // the limit saturates at 0.
    let huge = Snapshot { tick_size: U256::MAX, ..s };
    assert_eq!(order_limit(&b, &huge, &quote(900_000), Verdict::BuyUp), Some(u(0)));
    assert_eq!(order_limit(&b, &huge, &quote(900_000), Verdict::BuyDown), Some(u(0)));
    // No grid: the limit is L itself.
    let free = Snapshot { tick_size: U256::ZERO, ..s };
    assert_eq!(order_limit(&b, &free, &quote(452_251), Verdict::BuyUp), Some(u(452_251)));
    assert_eq!(order_limit(&b, &free, &quote(452_251), Verdict::BuyDown), Some(u(452_251)));
}

#[test]
fn cost_rounds_up_never_down() {
    // maxSize 7, no lot grid, ask 333_333 with no tick grid, quote 333_333 = the limit:
    // 7 * 333_333 = 2_333_331; / 1e6 = 2.333331 -> ceil 3.
    let b = Bounds { max_size: u(7), ..bounds() };
    let s = Snapshot {
        best_ask: u(333_333),
        tick_size: U256::ZERO,
        lot_size: U256::ZERO,
        min_quantity: U256::ZERO,
        ..snapshot()
    };
    assert_eq!(evaluate(&b, &s, &quote(333_333), 1), pass(333_333, 7, 3));
    // Exactly divisible: 1_000_000 * 0.5 = 500_000, no rounding.
    assert_eq!(cost_ceil(u(1_000_000), u(500_000)), u(500_000));
    // 1 * 1 / 1e6 = 0.000001 -> 1.
    assert_eq!(cost_ceil(u(1), u(1)), u(1));
    // MAX * 2e6 / 1e6 = 2 * MAX > MAX: saturates.
    assert_eq!(cost_ceil(U256::MAX, u(2_000_000)), U256::MAX);
    // MAX * 1e6 / 1e6 = MAX exactly.
    assert_eq!(cost_ceil(U256::MAX, u(1_000_000)), U256::MAX);
}

#[test]
fn grids_of_zero_or_not_dividing_one_million() {
    // tick 0 = no grid: ask 450_001 is paid as is; quote 450_001 is the limit;
    // cost = ceil(1000 * 0.450001) = ceil(450.001) = 451.
    let s = Snapshot { best_ask: u(450_001), tick_size: U256::ZERO, ..snapshot() };
    assert_eq!(evaluate(&bounds(), &s, &quote(450_001), 1), pass(450_001, 1_000, 451));
    // tick 333_333 (does not divide 1e6): ask 450_000 rounds up to 666_666 (2 ticks); quote
    // 700_000 gives the limit 666_666; cost = ceil(1000 * 0.666666) = ceil(666.666) = 667.
    let s = Snapshot { tick_size: u(333_333), ..snapshot() };
    assert_eq!(evaluate(&bounds(), &s, &quote(700_000), 1), pass(666_666, 1_000, 667));
    // Same tick for DOWN: bid 400_000 rounds down to 333_333; DOWN pays 666_667; the limit is
    // 1e6 - 333_333 = 666_667 (above); cost = ceil(666.667) = 667.
    assert_eq!(evaluate(&bounds(), &s, &quote(700_000), 2), pass(666_667, 1_000, 667));
    // lot 0 = no grid: quantity = maxSize = 1000. lot 300: 1000 -> 900; cost = 900 * 0.45 = 405.
    let s = Snapshot { lot_size: u(300), ..snapshot() };
    assert_eq!(evaluate(&bounds(), &s, &up_quote(), 1), pass(450_000, 900, 405));
}

#[test]
fn a_tick_larger_than_the_price_moves_it_to_the_tick_or_zero() {
    // tick 1_000_000: ask 450_000 rounds up to 1_000_000 > maxPrice 700_000: rule 5 (mask 32).
    // 1e6 <= the quote 1e6, so not 15; the limit 700_000 rounds down to 0, cost 0.
    let s = Snapshot { tick_size: u(1_000_000), ..snapshot() };
    assert_eq!(evaluate(&bounds(), &s, &quote(1_000_000), 1), refused(1 << 5));
    // DOWN: bid 400_000 rounds down to 0, DOWN pays 1e6 > 700_000: rule 5.
    assert_eq!(evaluate(&bounds(), &s, &quote(1_000_000), 2), refused(1 << 5));
}

#[test]
fn book_values_at_or_above_one_are_outside_every_band() {
    let q = quote(1_000_000);
    // ask 1_000_000 is not rounded: price 1e6 > maxPrice -> rule 5 only (1e6 <= quote).
    let s = Snapshot { best_ask: u(1_000_000), ..snapshot() };
    assert_eq!(evaluate(&bounds(), &s, &q, 1), refused(1 << 5));
    // bid 1_000_000: DOWN pays 1e6 - 1e6 = 0 < minPrice -> rule 5 only.
    let s = Snapshot { best_bid: u(1_000_000), ..snapshot() };
    assert_eq!(evaluate(&bounds(), &s, &q, 2), refused(1 << 5));
    // bid MAX: DOWN pays 0 (saturated) -> rule 5; the cost is at the limit 700_000, 700.
    let s = Snapshot { best_bid: U256::MAX, ..snapshot() };
    assert_eq!(evaluate(&bounds(), &s, &q, 2), refused(1 << 5));
    // ask MAX: price MAX > maxPrice (5) and > the quote (15). The cost is read at the limit,
    // 1000 * 0.7 = 700, so 9, 10 and 14 pass: mask 32 + 32_768 = 32_800, reason 5.
    let s = Snapshot { best_ask: U256::MAX, ..snapshot() };
    assert_eq!(evaluate(&bounds(), &s, &q, 1), refused(32_800));
}

#[test]
fn band_edges_are_inclusive() {
    // ask exactly 700_000 = maxPrice passes; keeper quote 703_500, limit 700_000, cost 700.
    let s = Snapshot { best_ask: u(700_000), ..snapshot() };
    assert_eq!(evaluate(&bounds(), &s, &quote(703_500), 1), pass(700_000, 1_000, 700));
    // ask 700_001 with tick 1: 700_001 > maxPrice -> rule 5.
    let s = Snapshot { best_ask: u(700_001), tick_size: u(1), ..snapshot() };
    assert_eq!(evaluate(&bounds(), &s, &quote(703_501), 1), refused(1 << 5));
    // bid 700_000: DOWN pays 300_000 = minPrice, passes. Quote 301_500: 1e6 - L = 698_500,
    // rounded up 700_000, limit 300_000, cost 300.
    let s = Snapshot { best_bid: u(700_000), ..snapshot() };
    assert_eq!(evaluate(&bounds(), &s, &quote(301_500), 2), pass(300_000, 1_000, 300));
    // bid 700_001 with tick 1: DOWN pays 299_999 < minPrice -> rule 5.
    let s = Snapshot { best_bid: u(700_001), tick_size: u(1), ..snapshot() };
    assert_eq!(evaluate(&bounds(), &s, &quote(301_500), 2), refused(1 << 5));
}

// --- evaluate: each v1 rule on both sides of its boundary

#[test]
fn headroom_exactly_at_minimum_passes_one_second_less_fails() {
    // 3600 s left = minHeadroom: allowed.
    let s = Snapshot { expiry_sec: 13_600, now_sec: 10_000, ..snapshot() };
    assert_eq!(evaluate(&bounds(), &s, &up_quote(), 1), pass(450_000, 1_000, 450));
    // 3599 s left: rule 3 (mask 8).
    let s = Snapshot { expiry_sec: 13_599, ..s };
    assert_eq!(evaluate(&bounds(), &s, &up_quote(), 1), refused(1 << 3));
    // expired (expiry == now): rule 3 only, not 13 (13 needs expiry > now).
    let s = Snapshot { expiry_sec: 10_000, now_sec: 10_000, ..snapshot() };
    assert_eq!(evaluate(&bounds(), &s, &up_quote(), 1), refused(1 << 3));
    // now = u64::MAX, expiry 0: rule 3, no underflow; deadline MAX keeps 16 out.
    let s = Snapshot { expiry_sec: 0, now_sec: u64::MAX, ..snapshot() };
    let late = Quote { max_price_paid: u(603_000), deadline_sec: u64::MAX };
    assert_eq!(evaluate(&bounds(), &s, &late, 2), refused(1 << 3));
}

#[test]
fn empty_side_skips_band_quote_and_cost_rules() {
    // BUY_UP on an empty ask: rule 4 only (mask 16); band, quote, notional, collateral and
    // drawdown not checked even though collateral is 0 and the quote is 0.
    let s = Snapshot { best_ask: U256::ZERO, collateral_available: U256::ZERO, ..snapshot() };
    assert_eq!(evaluate(&bounds(), &s, &quote(0), 1), refused(1 << 4));
    // BUY_DOWN on an empty bid: rule 4.
    let s = Snapshot { best_bid: U256::ZERO, ..snapshot() };
    assert_eq!(evaluate(&bounds(), &s, &down_quote(), 2), refused(1 << 4));
    // The other side being empty does not matter: BUY_UP with no bids passes.
    assert_eq!(evaluate(&bounds(), &s, &up_quote(), 1), pass(450_000, 1_000, 450));
}

#[test]
fn quantity_rules() {
    // lot 1001 > maxSize 1000: quantity 0 -> rule 6 (mask 64); 9, 10 and 14 skipped although
    // collateral is 0.
    let s = Snapshot { lot_size: u(1_001), collateral_available: U256::ZERO, ..snapshot() };
    assert_eq!(evaluate(&bounds(), &s, &up_quote(), 1), refused(1 << 6));
    // minQuantity 1001 > quantity 1000: rule 7 (mask 128).
    let s = Snapshot { min_quantity: u(1_001), ..snapshot() };
    assert_eq!(evaluate(&bounds(), &s, &up_quote(), 1), refused(1 << 7));
    // minQuantity exactly 1000 passes.
    let s = Snapshot { min_quantity: u(1_000), ..snapshot() };
    assert_eq!(evaluate(&bounds(), &s, &up_quote(), 1), pass(450_000, 1_000, 450));
}

#[test]
fn concurrent_positions_cap() {
    // 2 open < 3 passes; 3 open = cap -> rule 8 (mask 256).
    let s = Snapshot { open_positions: 2, ..snapshot() };
    assert_eq!(evaluate(&bounds(), &s, &up_quote(), 1), pass(450_000, 1_000, 450));
    let s = Snapshot { open_positions: 3, ..snapshot() };
    assert_eq!(evaluate(&bounds(), &s, &up_quote(), 1), refused(1 << 8));
}

#[test]
fn notional_and_collateral_one_unit_either_side_of_the_cost() {
    // cost 450: openNotional 9_550 + 450 = 10_000 = maxNotional passes. Drawdown:
    // H = 1_000_000 + 9_550 = 1_009_550; H - (1_000_000 - 450) = 10_000 <= 20_000.
    let s = Snapshot { open_notional: u(9_550), ..snapshot() };
    assert_eq!(evaluate(&bounds(), &s, &up_quote(), 1), pass(450_000, 1_000, 450));
    // 9_551 -> rule 9 (512); drawdown 10_001 still <= 20_000.
    let s = Snapshot { open_notional: u(9_551), ..snapshot() };
    assert_eq!(evaluate(&bounds(), &s, &up_quote(), 1), refused(1 << 9));
    // collateral exactly 450 passes (H = 450, 450 - 0 = 450 <= 20_000); 449 -> rule 10 (1024)
    // (H = 449, 449 - (449 - 450) = 450: 14 passes, computed across the negative balance).
    let s = Snapshot { collateral_available: u(450), ..snapshot() };
    assert_eq!(evaluate(&bounds(), &s, &up_quote(), 1), pass(450_000, 1_000, 450));
    let s = Snapshot { collateral_available: u(449), ..snapshot() };
    assert_eq!(evaluate(&bounds(), &s, &up_quote(), 1), refused(1 << 10));
    // openNotional = MAX with maxNotional = MAX: MAX + 450 > MAX is true, no wrap -> rule 9.
    // H = 1e6 + MAX saturates at MAX; MAX - (1e6 - 450) > 20_000 -> rule 14.
    // mask 512 + 16_384 = 16_896, reason 9.
    let b = Bounds { max_notional: U256::MAX, ..bounds() };
    let s = Snapshot { open_notional: U256::MAX, ..snapshot() };
    assert_eq!(evaluate(&b, &s, &up_quote(), 1), refused(16_896));
}

// --- evaluate: each v2 rule on both sides of its boundary

#[test]
fn rule_12_untrusted_resolver() {
    // Everything else passes: mask 1 << 12 = 4096.
    let s = Snapshot { resolver_trusted: false, ..snapshot() };
    assert_eq!(evaluate(&bounds(), &s, &up_quote(), 1), refused(4_096));
    assert_eq!(evaluate(&bounds(), &s, &down_quote(), 2), refused(4_096));
}

#[test]
fn rule_13_horizon_exactly_at_maximum_passes_one_second_more_fails() {
    // now 10_000: expiry 96_400 is 86_400 s out = maxHorizon: allowed.
    let s = Snapshot { expiry_sec: 96_400, ..snapshot() };
    assert_eq!(evaluate(&bounds(), &s, &up_quote(), 1), pass(450_000, 1_000, 450));
    // 96_401: 86_401 s > 86_400 -> mask 1 << 13 = 8192.
    let s = Snapshot { expiry_sec: 96_401, ..snapshot() };
    assert_eq!(evaluate(&bounds(), &s, &up_quote(), 1), refused(8_192));
    // expiry 2^64 - 1 ("never"): far out -> 13.
    let s = Snapshot { expiry_sec: u64::MAX, ..snapshot() };
    assert_eq!(evaluate(&bounds(), &s, &up_quote(), 1), refused(8_192));
    // maxHorizon 2^32 - 1 with now 0 and expiry 2^32 - 1: exactly at it, allowed (deadline 0).
    let b = Bounds { max_horizon_secs: u32::MAX, ..bounds() };
    let s = Snapshot { now_sec: 0, expiry_sec: u64::from(u32::MAX), ..snapshot() };
    let q = Quote { max_price_paid: u(452_250), deadline_sec: 0 };
    assert_eq!(evaluate(&b, &s, &q, 1), pass(450_000, 1_000, 450));
}

#[test]
fn rule_14_drawdown_one_unit_either_side() {
    // cost 450, collateral 1_000_000, openNotional 0. H = max(hwm, 1_000_000).
    // hwm 1_019_550: H - (1_000_000 - 450) = 19_550 + 450 = 20_000 = maxDrawdown: allowed.
    let s = Snapshot { high_water_mark: u(1_019_550), ..snapshot() };
    assert_eq!(evaluate(&bounds(), &s, &up_quote(), 1), pass(450_000, 1_000, 450));
    // hwm 1_019_551: 20_001 > 20_000 -> mask 1 << 14 = 16_384.
    let s = Snapshot { high_water_mark: u(1_019_551), ..snapshot() };
    assert_eq!(evaluate(&bounds(), &s, &up_quote(), 1), refused(16_384));
    // H comes from equity when it is above the stored mark: maxDrawdown 450, hwm 0;
    // openNotional 0: H = 1_000_000, 1_000_000 - (1_000_000 - 450) = 450 <= 450, allowed;
    // openNotional 1: H = 1_000_001, 451 > 450 -> 14 (9: 1 + 450 <= 10_000 passes).
    let b = Bounds { max_drawdown: u(450), ..bounds() };
    assert_eq!(evaluate(&b, &snapshot(), &up_quote(), 1), pass(450_000, 1_000, 450));
    let s = Snapshot { open_notional: u(1), ..snapshot() };
    assert_eq!(evaluate(&b, &s, &up_quote(), 1), refused(16_384));
    // The sum saturates: collateral MAX, openNotional 1: H = min(MAX + 1, MAX) = MAX;
    // MAX - (MAX - 450) = 450 <= 20_000: allowed (an unsaturated H would be 451, also allowed,
    // but a wrapped one would be 0).
    let s = Snapshot { collateral_available: U256::MAX, open_notional: u(1), ..snapshot() };
    assert_eq!(evaluate(&bounds(), &s, &up_quote(), 1), pass(450_000, 1_000, 450));
    // collateral 449 < cost 450 with hwm MAX: H - (449 - 450) = MAX + 1, which does not fit in
    // 256 bits and is > 20_000 -> 14, along with 10: mask 1024 + 16_384 = 17_408, reason 10.
    let s = Snapshot { collateral_available: u(449), high_water_mark: U256::MAX, ..snapshot() };
    assert_eq!(evaluate(&bounds(), &s, &up_quote(), 1), refused(17_408));
    // maxDrawdown MAX, hwm MAX, collateral 0, cost 450: MAX + 450 > MAX + 0 -> 14 and 10.
    let b = Bounds { max_drawdown: U256::MAX, ..bounds() };
    let s = Snapshot { collateral_available: U256::ZERO, high_water_mark: U256::MAX, ..snapshot() };
    assert_eq!(evaluate(&b, &s, &up_quote(), 1), refused(17_408));
}

#[test]
fn rule_15_price_against_the_quote() {
    // ask 450_000, quote 450_000: price = quote, allowed; limit 450_000, cost 450.
    assert_eq!(evaluate(&bounds(), &snapshot(), &quote(450_000), 1), pass(450_000, 1_000, 450));
    // quote 449_999: 450_000 > 449_999 -> mask 1 << 15 = 32_768.
    assert_eq!(evaluate(&bounds(), &snapshot(), &quote(449_999), 1), refused(32_768));
    // DOWN pays 600_000: quote 600_000 allowed (limit 1e6 - 400_000 = 600_000, cost 600),
    // 599_999 refused.
    assert_eq!(evaluate(&bounds(), &snapshot(), &quote(600_000), 2), pass(600_000, 1_000, 600));
    assert_eq!(evaluate(&bounds(), &snapshot(), &quote(599_999), 2), refused(32_768));
}

#[test]
fn rule_16_deadline_equal_to_now_is_in_time() {
    // deadline 10_000 = now: allowed (up_quote). deadline 9_999 -> mask 1 << 16 = 65_536.
    assert_eq!(evaluate(&bounds(), &snapshot(), &up_quote(), 1), pass(450_000, 1_000, 450));
    let stale = Quote { deadline_sec: 9_999, ..up_quote() };
    assert_eq!(evaluate(&bounds(), &snapshot(), &stale, 1), refused(65_536));
}

#[test]
fn rule_17_the_opposite_side_held() {
    // held UP: BUY_UP adds to it (allowed), BUY_DOWN -> mask 1 << 17 = 131_072.
    let s = Snapshot { held_side: HELD_UP, ..snapshot() };
    assert_eq!(evaluate(&bounds(), &s, &up_quote(), 1), pass(450_000, 1_000, 450));
    assert_eq!(evaluate(&bounds(), &s, &down_quote(), 2), refused(131_072));
    // held DOWN: the mirror image.
    let s = Snapshot { held_side: HELD_DOWN, ..snapshot() };
    assert_eq!(evaluate(&bounds(), &s, &down_quote(), 2), pass(600_000, 1_000, 600));
    assert_eq!(evaluate(&bounds(), &s, &up_quote(), 1), refused(131_072));
    // 3 and 255 are neither side: both buys fail.
    for held in [3u8, 255] {
        let s = Snapshot { held_side: held, ..snapshot() };
        assert_eq!(evaluate(&bounds(), &s, &up_quote(), 1), refused(131_072), "{held}");
        assert_eq!(evaluate(&bounds(), &s, &down_quote(), 2), refused(131_072), "{held}");
    }
}

#[test]
fn several_rules_fail_at_once_and_the_lowest_is_the_reason() {
    // finalized (4) + expired (8) + ask 0.80 above band (32) + 3 open (256) + collateral 0
    // (1024) + 0.80 above the quote 452_250 (32_768). The cost is at the limit 450_000, 450,
    // <= maxNotional so 9 passes; H = 0 and 0 - (0 - 450) = 450 <= 20_000 so 14 passes.
    // mask = 4 + 8 + 32 + 256 + 1024 + 32_768 = 34_092, reason 2.
    let s = Snapshot {
        finalized: true,
        expiry_sec: 1,
        best_ask: u(800_000),
        open_positions: 3,
        collateral_available: U256::ZERO,
        ..snapshot()
    };
    assert_eq!(evaluate(&bounds(), &s, &up_quote(), 1), refused(34_092));
    // Only v2 rules: untrusted (4096) + 86_401 s out (8192) + deadline 9_999 (65_536) + DOWN held
    // on a BUY_UP (131_072) = 208_896, reason 12.
    let s = Snapshot {
        resolver_trusted: false,
        expiry_sec: 96_401,
        held_side: HELD_DOWN,
        ..snapshot()
    };
    let stale = Quote { deadline_sec: 9_999, ..up_quote() };
    assert_eq!(evaluate(&bounds(), &s, &stale, 1), refused(208_896));
}

#[test]
fn rule_18_minimum_fill_one_unit_either_side() {
    // minFillBps 2500 of 1000: 250 * 10_000 = 2_500_000 = 1000 * 2500, kept; 249 is below.
    assert!(!fill_below_minimum(&bounds(), u(1_000), u(250)));
    assert!(fill_below_minimum(&bounds(), u(1_000), u(249)));
    assert!(fill_below_minimum(&bounds(), u(1_000), u(0)));
    // 10_000 bps: only the whole quantity is kept; no overflow at 2^256 - 1.
    let b = Bounds { min_fill_bps: 10_000, ..bounds() };
    assert!(!fill_below_minimum(&b, U256::MAX, U256::MAX));
    assert!(fill_below_minimum(&b, U256::MAX, U256::MAX - u(1)));
}

// --- constructor

#[test]
fn bounds_check_lists_every_broken_rule() {
    use ConstructorError as E;
    assert!(bounds_errors(&bounds()).is_empty());
    // minPrice 0 is also below maxPrice, so only MinPriceZero.
    let b = Bounds { min_price: U256::ZERO, ..bounds() };
    assert_eq!(bounds_errors(&b), vec![E::MinPriceZero]);
    // maxPrice 1e6: at certainty; band 300_000..1e6 is not empty.
    let b = Bounds { max_price: u(1_000_000), ..bounds() };
    assert_eq!(
        bounds_errors(&b),
        vec![E::MaxPriceAtCertainty { max_price: u(1_000_000), ceiling: u(1_000_000) }]
    );
    // headroom 119 < 120; 120 is fine.
    let b = Bounds { min_headroom_secs: 119, ..bounds() };
    assert_eq!(bounds_errors(&b), vec![E::MinHeadroomBelowFloor { min_headroom: 119, floor: 120 }]);
    assert!(bounds_errors(&Bounds { min_headroom_secs: 120, ..bounds() }).is_empty());
    // equal prices: empty band.
    let b = Bounds { min_price: u(5), max_price: u(5), ..bounds() };
    assert_eq!(bounds_errors(&b), vec![E::PriceBandEmpty { min_price: u(5), max_price: u(5) }]);
    // maxHorizon 3_599 < minHeadroom 3_600; 3_600 is fine.
    let b = Bounds { max_horizon_secs: 3_599, ..bounds() };
    assert_eq!(
        bounds_errors(&b),
        vec![E::MaxHorizonBelowHeadroom { max_horizon: 3_599, min_headroom: 3_600 }]
    );
    assert!(bounds_errors(&Bounds { max_horizon_secs: 3_600, ..bounds() }).is_empty());
    // A headroom of 119 with a horizon of 100: both the floor and the horizon.
    let b = Bounds { min_headroom_secs: 119, max_horizon_secs: 100, ..bounds() };
    assert_eq!(
        bounds_errors(&b),
        vec![
            E::MinHeadroomBelowFloor { min_headroom: 119, floor: 120 },
            E::MaxHorizonBelowHeadroom { max_horizon: 100, min_headroom: 119 }
        ]
    );
    assert_eq!(
        bounds_errors(&Bounds { max_drawdown: U256::ZERO, ..bounds() }),
        vec![E::MaxDrawdownZero]
    );
    // grace 3_599 < 3_600; 3_600 is fine.
    let b = Bounds { write_off_grace_secs: 3_599, ..bounds() };
    assert_eq!(
        bounds_errors(&b),
        vec![E::WriteOffGraceBelowFloor { write_off_grace: 3_599, floor: 3_600 }]
    );
    assert!(bounds_errors(&Bounds { write_off_grace_secs: 3_600, ..bounds() }).is_empty());
    // minFillBps 0 and 10_001 are out of range; 1 and 10_000 are in.
    for bps in [0u16, 10_001, u16::MAX] {
        let b = Bounds { min_fill_bps: bps, ..bounds() };
        assert_eq!(
            bounds_errors(&b),
            vec![E::MinFillBpsOutOfRange { min_fill_bps: bps, max: 10_000 }]
        );
    }
    for bps in [1u16, 10_000] {
        assert!(bounds_errors(&Bounds { min_fill_bps: bps, ..bounds() }).is_empty());
    }
}

#[test]
fn resolver_list_check_lists_every_broken_rule() {
    use ConstructorError as E;
    let a = |n: u8| Address::repeat_byte(n);
    assert!(resolver_errors(&[a(1)]).is_empty());
    assert!(resolver_errors(&[a(1), a(2), a(3), a(4), a(5), a(6), a(7), a(8)]).is_empty());
    assert_eq!(resolver_errors(&[]), vec![E::TrustedResolversEmpty]);
    // Nine ascending: too many, nothing else.
    let nine: Vec<Address> = (1..=9).map(a).collect();
    assert_eq!(resolver_errors(&nine), vec![E::TooManyTrustedResolvers { count: 9, max: 8 }]);
    // Zero first: zero at 0 (and 0x00.. < 0x01.. is ascending).
    assert_eq!(resolver_errors(&[Address::ZERO, a(1)]), vec![E::TrustedResolverZero { index: 0 }]);
    // A duplicate: index 1 is not above index 0.
    assert_eq!(
        resolver_errors(&[a(1), a(1)]),
        vec![E::TrustedResolversNotAscending { index: 1, previous: a(1), current: a(1) }]
    );
    // Descending 2, 1: index 1.
    assert_eq!(
        resolver_errors(&[a(2), a(1)]),
        vec![E::TrustedResolversNotAscending { index: 1, previous: a(2), current: a(1) }]
    );
    // Zero after a non-zero: both the zero at 1 and the order at 1.
    assert_eq!(
        resolver_errors(&[a(1), Address::ZERO]),
        vec![
            E::TrustedResolverZero { index: 1 },
            E::TrustedResolversNotAscending { index: 1, previous: a(1), current: Address::ZERO }
        ]
    );
}

#[test]
fn creator_list_check_follows_the_resolver_rules() {
    use ConstructorError as E;
    let a = |n: u8| Address::repeat_byte(n);
    assert!(creator_errors(&[a(1), a(2), a(3), a(4), a(5), a(6), a(7), a(8)]).is_empty());
    assert_eq!(creator_errors(&[]), vec![E::TrustedCreatorsEmpty]);
    let nine: Vec<Address> = (1..=9).map(a).collect();
    assert_eq!(creator_errors(&nine), vec![E::TooManyTrustedCreators { count: 9, max: 8 }]);
    assert_eq!(creator_errors(&[Address::ZERO, a(1)]), vec![E::TrustedCreatorZero { index: 0 }]);
    assert_eq!(
        creator_errors(&[a(3), a(3)]),
        vec![E::TrustedCreatorsNotAscending { index: 1, previous: a(3), current: a(3) }]
    );
}

#[test]
fn the_keeper_is_never_a_trusted_resolver_or_creator() {
    use ConstructorError as E;
    let keeper = Address::repeat_byte(0x4b);
    let config = GateConfig {
        bounds: bounds(),
        trusted_resolvers: vec![Address::repeat_byte(1)],
        trusted_creators: vec![Address::repeat_byte(2)],
        keeper,
        collateral: Address::repeat_byte(0xc0),
        factory_collateral: Address::repeat_byte(0xc0),
    };
    assert!(constructor_errors(&config).is_empty());
    let resolver =
        GateConfig { trusted_resolvers: vec![Address::repeat_byte(1), keeper], ..config.clone() };
    assert_eq!(constructor_errors(&resolver), vec![E::KeeperIsTrustedResolver { keeper }]);
    let creator = GateConfig { trusted_creators: vec![keeper], ..config.clone() };
    assert_eq!(constructor_errors(&creator), vec![E::KeeperIsTrustedCreator { keeper }]);
    // A resolver that is also a creator is allowed (only the keeper is singled out).
    let shared = GateConfig { trusted_creators: vec![Address::repeat_byte(1)], ..config };
    assert!(constructor_errors(&shared).is_empty());
}

#[test]
fn constructor_checks_the_factory_collateral() {
    let config = GateConfig {
        bounds: bounds(),
        trusted_resolvers: vec![Address::repeat_byte(1)],
        trusted_creators: vec![Address::repeat_byte(2)],
        keeper: Address::repeat_byte(0x4b),
        collateral: Address::repeat_byte(0xc0),
        factory_collateral: Address::repeat_byte(0xc0),
    };
    assert!(constructor_errors(&config).is_empty());
    let other = GateConfig { factory_collateral: Address::repeat_byte(0xc1), ..config.clone() };
    assert_eq!(
        constructor_errors(&other),
        vec![ConstructorError::FactoryCollateralMismatch {
            factory_collateral: Address::repeat_byte(0xc1),
            collateral: Address::repeat_byte(0xc0),
        }]
    );
    // Errors from all four sources are listed together.
    let all = GateConfig {
        bounds: Bounds { max_size: U256::ZERO, ..bounds() },
        trusted_resolvers: vec![],
        trusted_creators: vec![],
        ..other
    };
    assert_eq!(constructor_errors(&all).len(), 4);
}

#[test]
fn labels_are_verbatim() {
    assert_eq!(reason_label(0), Some("PASS"));
    assert_eq!(reason_label(4), Some("no resting liquidity on the side needed"));
    assert_eq!(reason_label(11), Some("model output not a valid verdict"));
    assert_eq!(reason_label(12), Some("market resolver not trusted"));
    assert_eq!(reason_label(13), Some("expiry too far out"));
    assert_eq!(reason_label(14), Some("max drawdown reached"));
    assert_eq!(reason_label(15), Some("book moved past the quoted limit"));
    assert_eq!(reason_label(16), Some("verdict expired"));
    assert_eq!(reason_label(17), Some("opposite side already held"));
    assert_eq!(reason_label(18), Some("fill below minimum"));
    assert_eq!(reason_label(19), Some("market creator not trusted"));
    assert_eq!(reason_label(20), Some("minimum fill beyond the venue's match cap"));
    assert_eq!(reason_label(21), Some("answer not attested"));
    assert_eq!(reason_label(22), Some("attestors disagree"));
    assert_eq!(reason_label(23), Some("no consensus in time"));
    assert_eq!(reason_label(24), Some("order failed at the market"));
    assert_eq!(reason_label(25), None);
    assert_eq!(probability(u(450_000)).to_string(), "0.45");
}

// --- issue 14: rules 19 and 20

#[test]
fn an_untrusted_creator_fails_rule_19_alone_or_with_others() {
    // The healthy BUY_UP passes (ask 0.45, 1000 units, cost 450); with the creator untrusted,
    // only bit 19 fails.
    assert_eq!(evaluate(&bounds(), &snapshot(), &up_quote(), 1), pass(450_000, 1_000, 450));
    let s = Snapshot { creator_trusted: false, ..snapshot() };
    assert_eq!(evaluate(&bounds(), &s, &up_quote(), 1), refused(1 << 19));
    // With the resolver untrusted too, 12 is the reason and both bits are set.
    let both = Snapshot { resolver_trusted: false, ..s };
    assert_eq!(evaluate(&bounds(), &both, &up_quote(), 1), refused((1 << 12) | (1 << 19)));
    // ABSTAIN and an invalid code look at nothing else.
    assert_eq!(evaluate(&bounds(), &s, &up_quote(), 0), refused(1 << 1));
    assert_eq!(evaluate(&bounds(), &s, &up_quote(), 7), refused(1 << 11));
}

#[test]
fn rule_20_fails_exactly_when_64_smallest_orders_miss_the_minimum_fill() {
    // quantity 1000 (lot 1), minimum fill 25 % = 250 units. m = max(minQuantity, 1, 1).
    // m = 3: 64 * 3 = 192 < 1000 and 192 * 10_000 = 1_920_000 < 1000 * 2500 = 2_500_000: fails.
    let s3 = Snapshot { lot_size: u(1), min_quantity: u(3), ..snapshot() };
    assert_eq!(evaluate(&bounds(), &s3, &up_quote(), 1), refused(1 << 20));
    // m = 4: 256 * 10_000 = 2_560_000 >= 2_500_000: passes (cost 1000 * 0.45 = 450).
    let s4 = Snapshot { min_quantity: u(4), ..s3 };
    assert_eq!(evaluate(&bounds(), &s4, &up_quote(), 1), pass(450_000, 1_000, 450));
    // The lot counts as the smallest order too: lot 4, minimum 0 -> m = 4, passes.
    let lot4 = Snapshot { lot_size: u(4), min_quantity: U256::ZERO, ..snapshot() };
    assert_eq!(evaluate(&bounds(), &lot4, &up_quote(), 1), pass(450_000, 1_000, 450));
    // No grid and no minimum: m = 1, 640_000 < 2_500_000: fails, for BUY_DOWN as well.
    let none = Snapshot { lot_size: U256::ZERO, min_quantity: U256::ZERO, ..snapshot() };
    assert_eq!(evaluate(&bounds(), &none, &down_quote(), 2), refused(1 << 20));
    // ... unless the whole quantity fits in 64 orders: maxSize 64 -> 64 * 1 >= 64. Cost
    // 64 * 0.45 = 28.8 -> 29.
    let small = Bounds { max_size: u(64), ..bounds() };
    assert_eq!(evaluate(&small, &none, &up_quote(), 1), pass(450_000, 64, 29));
    // minFillBps 10_000 and maxSize 65: 64 < 65 and 640_000 < 650_000: fails.
    let strict = Bounds { max_size: u(65), min_fill_bps: 10_000, ..bounds() };
    assert_eq!(evaluate(&strict, &none, &up_quote(), 1), refused(1 << 20));
    // Quantity 0 (lot 2000 > maxSize): rule 6, never 20.
    let zero = Snapshot { lot_size: u(2_000), min_quantity: U256::ZERO, ..snapshot() };
    assert_eq!(evaluate(&bounds(), &zero, &up_quote(), 1), refused(1 << 6));
    // Rule 20 does not need the side to be there: no ask and m = 3 -> 4 and 20.
    let empty = Snapshot { best_ask: U256::ZERO, ..s3 };
    assert_eq!(evaluate(&bounds(), &empty, &up_quote(), 1), refused((1 << 4) | (1 << 20)));
}

#[test]
fn rule_20_never_overflows() {
    // maxSize 2^256 - 1, no grid: 64 * 1 * 10_000 < (2^256 - 1) * bps, exact in 512 bits.
    let huge = Bounds { max_size: U256::MAX, max_notional: U256::MAX, ..bounds() };
    let none = Snapshot { lot_size: U256::ZERO, min_quantity: U256::ZERO, ..snapshot() };
    assert_ne!(evaluate(&huge, &none, &up_quote(), 1).failed_mask & (1 << 20), 0);
    // A minimum of 2^256 - 1 makes m huge: 64 m >= quantity, rule 20 passes (7 fails instead,
    // since 1000 < minQuantity).
    let s = Snapshot { min_quantity: U256::MAX, ..snapshot() };
    assert_eq!(evaluate(&bounds(), &s, &up_quote(), 1), refused(1 << 7));
}

#[test]
fn a_question_is_one_to_280_bytes_and_its_hash_is_keccak_of_the_bytes() {
    assert_eq!(question_hash(b""), Err(QuestionError::Empty));
    // keccak256("a") from the Keccak test vectors.
    let a: B256 =
        "0x3ac225168df54212a25c1c01fd35bebfea408fdac2e31ddd6f80a4bbf9a5f1cb".parse().unwrap();
    assert_eq!(question_hash(b"a"), Ok(a));
    assert!(question_hash(&[b'x'; 280]).is_ok());
    assert_eq!(question_hash(&[b'x'; 281]), Err(QuestionError::TooLong { length: 281, max: 280 }));
    // The limit is on bytes: 140 two-byte characters fit, 141 (282 bytes) do not.
    assert!(question_hash("é".repeat(140).as_bytes()).is_ok());
    assert_eq!(
        question_hash("é".repeat(141).as_bytes()),
        Err(QuestionError::TooLong { length: 282, max: 280 })
    );
}

#[test]
fn a_read_block_may_be_any_block_up_to_the_current_one() {
    for (read, current) in [(0, 0), (0, 100), (99, 100), (100, 100), (u64::MAX, u64::MAX)] {
        assert_eq!(check_read_block(read, current), Ok(()), "{read} at {current}");
    }
    for (read, current) in [(1, 0), (101, 100), (u64::MAX, 100), (u64::MAX, u64::MAX - 1)] {
        assert_eq!(
            check_read_block(read, current),
            Err(ReadBlockInFuture { read_block: read, current_block: current }),
            "{read} at {current}"
        );
    }
}
