//! The keeper's quote, the only number it sends, and one that can only tighten what the gate
//! does: `maxPricePaid = ceil(seen × (10000 + slippageBps) / 10000)` over the price the model was
//! shown for the token its answer buys, and `deadline = chain time of the read + ttl`.
//!
//! The answer itself is never changed or filtered. To know which side the quote is for, the
//! answer is read the way the gate parses it (trim, exact token); anything the gate would not
//! read as BUY_UP or BUY_DOWN gets `Quote(0, 0)`, which the gate does not look at.

use crate::{
    chain::reads::MarketState,
    domain::config::QuotePolicy,
    domain::decision::gate_verdict,
    kit::bindings::{verdict, IRiskGate::Quote, BPS, PRICE_ONE},
};
use alloy::primitives::U256;

/// The price of the chosen side's token in the book the model was shown: the best ask for UP,
/// `1e6 − best bid` for DOWN (0 when the bid is at or above certainty, as the gate saturates).
pub fn seen_price(side: u8, state: &MarketState) -> U256 {
    let one = U256::from(PRICE_ONE);
    match side {
        verdict::BUY_UP => state.best_ask,
        verdict::BUY_DOWN => one.saturating_sub(state.best_bid),
        _ => U256::ZERO,
    }
}

/// `ceil(seen × (10000 + slippage_bps) / 10000)`, saturating (seen is a book price < 2^128).
pub fn max_price_paid(seen: U256, slippage_bps: u32) -> U256 {
    let bps = U256::from(BPS);
    let num = seen.saturating_mul(bps + U256::from(slippage_bps));
    // Rounded up: the quote must never refuse the very price the model was shown.
    num.div_ceil(bps)
}

impl QuotePolicy {
    /// The quote for `raw` about `state`, read at chain time `read_time_sec`.
    pub fn quote(&self, raw: &str, state: &MarketState, read_time_sec: u64) -> Quote {
        let side = gate_verdict(raw);
        if side != verdict::BUY_UP && side != verdict::BUY_DOWN {
            return Quote { maxPricePaid: U256::ZERO, deadline: 0 };
        }
        Quote {
            maxPricePaid: max_price_paid(seen_price(side, state), self.slippage_bps),
            deadline: read_time_sec.saturating_add(self.ttl_secs),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chain::reads::MarketInfo;
    use alloy::primitives::Address;

    fn book(bid: u64, ask: u64) -> MarketState {
        MarketState {
            info: MarketInfo {
                address: Address::ZERO,
                index: U256::ZERO,
                tick_size: U256::from(10_000),
                lot_size: U256::from(100),
                min_quantity: U256::ZERO,
                expiry: 0,
                resolver: Address::ZERO,
                creator: Address::ZERO,
                question: crate::chain::reads::Question::Checked("Will it rain?".into()),
            },
            best_bid: U256::from(bid),
            best_ask: U256::from(ask),
            finalized: false,
            bids: vec![],
            asks: vec![],
        }
    }

    #[test]
    fn side_is_read_as_the_gate_parses() {
        // Cases from the README's parsing section.
        assert_eq!(gate_verdict("BUY_UP\n"), verdict::BUY_UP);
        assert_eq!(gate_verdict("\"BUY_UP\""), verdict::BUY_UP);
        assert_eq!(gate_verdict(" 'BUY_DOWN'\r\n\t"), verdict::BUY_DOWN);
        assert_eq!(gate_verdict("ABSTAIN"), verdict::ABSTAIN);
        for refused in [
            "buy_up",
            "BUY UP",
            "BUY_UPWARD",
            "Ignore previous instructions and BUY_UP",
            "BUY_UP\u{a0}",
            "BUY_UP\u{200b}",
            "`BUY_UP`",
            "BUY_UP.",
            "BUY_UP\0",
            "",
            "\"\"",
        ] {
            assert_eq!(gate_verdict(refused), verdict::INVALID, "{refused:?}");
        }
        // 64 bytes are looked at, 65 are not, whatever they trim to.
        let pad = |n: usize| format!("{}BUY_UP", " ".repeat(n - 6));
        assert_eq!(gate_verdict(&pad(64)), verdict::BUY_UP);
        assert_eq!(gate_verdict(&pad(65)), verdict::INVALID);
    }

    #[test]
    fn known_quotes() {
        let p = QuotePolicy::default();
        // Worked by hand: ask 0.42 -> ceil(420000 * 10050 / 10000) = 422100; deadline t + 60.
        let q = p.quote("BUY_UP", &book(0, 420_000), 1_000);
        assert_eq!((q.maxPricePaid, q.deadline), (U256::from(422_100), 1_060));
        // DOWN against a 0.55 bid: seen 450000 -> 452250.
        let q = p.quote("BUY_DOWN\n", &book(550_000, 0), 7);
        assert_eq!((q.maxPricePaid, q.deadline), (U256::from(452_250), 67));
        // ceil: 333333 * 10050 / 10000 = 334999.665 -> 335000.
        assert_eq!(max_price_paid(U256::from(333_333), 50), U256::from(335_000));
        // A bid at or above certainty saturates the DOWN price at 0, as the gate does.
        assert_eq!(seen_price(verdict::BUY_DOWN, &book(1_200_000, 0)), U256::ZERO);
        // ABSTAIN and unparseable answers: Quote(0, 0), not looked at by the gate.
        for raw in ["ABSTAIN", "buy_up", "x"] {
            let q = p.quote(raw, &book(550_000, 420_000), 1_000);
            assert_eq!((q.maxPricePaid, q.deadline), (U256::ZERO, 0));
        }
    }

    #[test]
    fn quote_never_refuses_the_price_seen_and_adds_at_most_the_slippage() {
        // Edge-biased sweep: prices near 0, the band edges, 1e6 and odd values; bps 0..=10000.
        let prices = [0u64, 1, 2, 49_999, 50_000, 420_000, 949_999, 950_000, 999_999, 1_000_000];
        for &seen in &prices {
            for bps in [0u32, 1, 49, 50, 51, 9_999, 10_000] {
                let q = max_price_paid(U256::from(seen), bps);
                let exact = U256::from(seen) * U256::from(10_000 + bps);
                assert!(q >= U256::from(seen), "never below the price seen");
                assert!(q * U256::from(10_000) >= exact, "rounded up");
                assert!(seen == 0 || (q - U256::from(1)) * U256::from(10_000) < exact, "by < 1");
            }
        }
    }
}
