//! The record as `keeper run` publishes it, assembled from the chain and the files beside it:
//! the gate's logs decoded into rows ([`read_chain_record`]), then the keeper's labels and
//! off-chain rows from the feed on disk and, for rows not in the feed yet, from the journal
//! ([`assemble`]). `keeper report` and `keeper serve` both stand on this, so the report and the
//! floor cannot disagree.

use crate::{
    chain::{journal::JournalError, reads},
    record::{
        self,
        feed::{self, ChainRecord, FeedRow},
        RecordError,
    },
};
use alloy::{primitives::Address, providers::DynProvider};
use std::{collections::HashMap, path::Path};

#[derive(Debug, thiserror::Error)]
pub enum AssembleError {
    #[error(transparent)]
    Collect(#[from] reads::CollectError),
    #[error(transparent)]
    Record(#[from] RecordError),
    #[error("reading the keeper's journal")]
    Journal(#[source] Box<JournalError>),
}

impl crate::domain::exit::Classify for AssembleError {
    fn fault(&self) -> crate::domain::exit::Fault {
        match self {
            Self::Collect(e) => e.fault(),
            Self::Record(e) => e.fault(),
            Self::Journal(e) => e.fault(),
        }
    }
}

pub type Result<T> = std::result::Result<T, AssembleError>;

/// The gate's record over `[from, to]` from the chain alone: its logs (read by the collectors)
/// decoded by the recorder, each row timed by its block.
pub async fn read_chain_record(
    provider: &DynProvider,
    chain_id: u64,
    gate: Address,
    labels: &[String],
    from: u64,
    to: u64,
    range: u64,
) -> Result<ChainRecord> {
    let logs = reads::gate_logs(provider, gate, from, to, range).await?;
    let times = reads::block_times(provider, &logs, HashMap::new()).await?;
    let mut gas = HashMap::new();
    reads::tx_gas(provider, &logs, &mut gas).await?;
    Ok(feed::decode_logs(&logs, chain_id, gate, labels, &times, &gas)?)
}

/// A gate's record as `keeper run` publishes it, from the chain's record read to block `to`.
#[derive(Debug, Clone)]
pub struct Assembled {
    /// The off-chain rows: the feed's, then the journal's up to `to` after the feed's last row.
    pub offchain: Vec<feed::OffchainRow>,
    /// Every row in feed order, the chain's with the labels the feed or the journal holds.
    pub rows: Vec<FeedRow>,
    pub rebuilt: record::Rebuilt,
}

/// The record of `gate` from its chain `record` (read to block `to`) and the
/// files in `results`: the labels and off-chain rows of the feed on disk (`disk_rows`, already
/// refused if another gate's), then, for rows not in the feed yet, the labels and off-chain
/// rows the journal holds, as the keeper shows them. `keeper report` and `keeper serve` both
/// stand on this, so the floor and the report cannot disagree.
pub fn assemble(
    record: &ChainRecord,
    disk_rows: &[FeedRow],
    results: &Path,
    chain_id: u64,
    gate: Address,
    to: u64,
) -> Result<Assembled> {
    let (mut notes, mut offchain) = feed::split_feed(disk_rows);
    // Rows not in the feed yet (still waiting) carry the labels the journal holds, and the
    // off-chain rows it holds up to the block read: the pages show them as the keeper does.
    let journal = crate::chain::journal::Journal::read_only(results, chain_id, gate)
        .map_err(|e| AssembleError::Journal(Box::new(e)))?;
    if let Some(journal) = &journal {
        let by_tx = journal.behind(&record.decided);
        for d in &record.decided {
            if notes.contains_key(&d.id) {
                continue;
            }
            if let Some(t) = by_tx.get(&d.id) {
                let n = feed::RowNote { note: t.sub.note.clone(), raw: Some(t.sub.raw.clone()) };
                notes.insert(d.id, n);
            }
        }
        let after = disk_rows.last().map(|r| r.sort_key());
        for row in journal.offchain() {
            let key = (row.block, 1, 0);
            if row.block <= to && after.is_none_or(|k| key > k) && !offchain.contains(row) {
                offchain.push(row.clone());
            }
        }
    }
    let rows = feed::merge(record, &notes, &offchain);
    let rebuilt = record::rebuild(&rows);
    Ok(Assembled { offchain, rows, rebuilt })
}
