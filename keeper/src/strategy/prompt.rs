//! Deterministic prompt rendering: a fixed system part, the user's strategy text, and the
//! market state. The same state always renders to the same bytes, whose keccak256 is the
//! `promptHash` the gate publishes.

use crate::collectors::MarketState;
use alloy::primitives::{keccak256, B256};

/// The fixed system part. The closed answer set is stated here and also sent as a constraint.
pub const SYSTEM_PROMPT: &str = "You are a trading agent for one binary prediction market. \
Prices are probabilities in millionths (1000000 = certainty). UP pays 1 if the event happens, \
DOWN pays 1 otherwise. Buying UP lifts the best ask; buying DOWN hits the best bid and costs \
1000000 minus that bid. A risk gate decides price and size; you only choose a direction. \
Answer with exactly one word from this set and nothing else: BUY_UP, BUY_DOWN, ABSTAIN.";

/// A rendered prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prompt {
    pub system: String,
    pub user: String,
}

impl Prompt {
    /// Renders `state` as seen at chain time `now_sec` with the user's `strategy` text.
    pub fn render(strategy: &str, state: &MarketState, now_sec: u64) -> Self {
        let system = if strategy.trim().is_empty() {
            SYSTEM_PROMPT.to_string()
        } else {
            format!("{SYSTEM_PROMPT}\n\nStrategy:\n{}", strategy.trim_end())
        };
        let i = &state.info;
        let mut user = String::with_capacity(512);
        user.push_str(&format!("market: {}\n", i.address.to_checksum(None)));
        user.push_str(&format!("tick_size: {}\nlot_size: {}\n", i.tick_size, i.lot_size));
        user.push_str(&format!("min_quantity: {}\n", i.min_quantity));
        user.push_str(&format!("expiry_unix: {}\nnow_unix: {now_sec}\n", i.expiry));
        user.push_str(&format!("seconds_to_expiry: {}\n", i.expiry.saturating_sub(now_sec)));
        user.push_str(&format!("finalized: {}\n", state.finalized));
        user.push_str(&format!("best_bid: {}\nbest_ask: {}\n", state.best_bid, state.best_ask));
        user.push_str("bids (UP price, quantity), best first:\n");
        for (p, q) in &state.bids {
            user.push_str(&format!("  {p} x {q}\n"));
        }
        user.push_str("asks (UP price, quantity), best first:\n");
        for (p, q) in &state.asks {
            user.push_str(&format!("  {p} x {q}\n"));
        }
        user.push_str("Answer BUY_UP, BUY_DOWN or ABSTAIN.");
        Self { system, user }
    }

    /// The exact bytes that are hashed: system, a separator line, then the user part.
    pub fn bytes(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(self.system.len() + self.user.len() + 8);
        b.extend_from_slice(self.system.as_bytes());
        b.extend_from_slice(b"\n---\n");
        b.extend_from_slice(self.user.as_bytes());
        b
    }

    pub fn hash(&self) -> B256 {
        keccak256(self.bytes())
    }
}

/// keccak256 of the strategy text (recorded in every row).
pub fn strategy_hash(strategy: &str) -> B256 {
    keccak256(strategy.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collectors::{MarketInfo, MarketState};
    use alloy::primitives::{Address, U256};

    fn state(ask: u64) -> MarketState {
        MarketState {
            info: MarketInfo {
                address: Address::repeat_byte(0x11),
                index: U256::from(3),
                tick_size: U256::from(10_000),
                lot_size: U256::from(100),
                min_quantity: U256::from(1_000),
                expiry: 10_000,
                resolver: Address::repeat_byte(0x22),
                creator: Address::repeat_byte(0x22),
            },
            best_bid: U256::from(300_000),
            best_ask: U256::from(ask),
            finalized: false,
            bids: vec![(U256::from(300_000), U256::from(500))],
            asks: vec![(U256::from(ask), U256::from(700))],
        }
    }

    #[test]
    fn same_state_renders_same_bytes_and_hash() {
        let a = Prompt::render("be careful", &state(400_000), 9_000);
        let b = Prompt::render("be careful", &state(400_000), 9_000);
        assert_eq!(a.bytes(), b.bytes());
        assert_eq!(a.hash(), b.hash());
        assert!(a.user.contains("seconds_to_expiry: 1000\n")); // 10_000 - 9_000
    }

    #[test]
    fn any_change_in_state_or_strategy_changes_the_hash() {
        let base = Prompt::render("", &state(400_000), 9_000).hash();
        assert_ne!(base, Prompt::render("", &state(410_000), 9_000).hash());
        assert_ne!(base, Prompt::render("", &state(400_000), 9_001).hash());
        assert_ne!(base, Prompt::render("x", &state(400_000), 9_000).hash());
    }
}
