//! A decision's identity on chain, shared by the stages that meet it: the executor finds it in
//! its transaction's receipt, the follower's logs carry it, the recorder keys the keeper's note
//! (from the journal) to the row rebuilt from the log by it.

use alloy::primitives::TxHash;

/// The transaction that published a decision and the index of its `Decision` log in the block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DecisionId {
    pub tx: TxHash,
    pub log_index: u64,
}
