//! The default model: a small deterministic rule over the rendered book. It is rule-based and
//! labelled as such in every row; it has no notion of the gate's bounds and computes no price
//! or size, only a direction.

use crate::chain::reads::MarketState;
use alloy::primitives::U256;

/// The model label recorded for this provider.
pub const MODEL_LABEL: &str = "rule-based-v1 (deterministic, not a language model)";

/// UP is "cheap" at or below 0.45, DOWN is cheap when the best bid is at or above 0.55
/// (DOWN then costs at most 0.45); otherwise it abstains.
pub fn decide(state: &MarketState) -> &'static str {
    let cheap_up = U256::from(450_000u64);
    let rich_bid = U256::from(550_000u64);
    if state.finalized {
        return "ABSTAIN";
    }
    if !state.best_ask.is_zero() && state.best_ask <= cheap_up {
        "BUY_UP"
    } else if state.best_bid >= rich_bid && state.best_bid < U256::from(1_000_000u64) {
        "BUY_DOWN"
    } else {
        "ABSTAIN"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chain::reads::{MarketInfo, MarketState};
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
    fn rule_edges() {
        assert_eq!(decide(&book(0, 450_000)), "BUY_UP"); // exactly at the cheap edge
        assert_eq!(decide(&book(0, 450_001)), "ABSTAIN");
        assert_eq!(decide(&book(550_000, 0)), "BUY_DOWN"); // DOWN costs 1e6 - 550_000 = 450_000
        assert_eq!(decide(&book(549_999, 600_000)), "ABSTAIN");
        assert_eq!(decide(&book(0, 0)), "ABSTAIN"); // empty book
        assert_eq!(decide(&book(1_000_000, 0)), "ABSTAIN"); // out-of-range bid is not a signal
    }
}
