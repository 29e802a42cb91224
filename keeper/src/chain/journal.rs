//! The submission journal: what the keeper has signed, sent and seen fail, on disk before it
//! matters. One JSON object per line, appended and fsynced:
//! - `submit`, written after signing and BEFORE the transaction is sent: market, nonce, tx hash,
//!   prompt hash, the whole answer, its quote and annotation;
//! - `submit_batch`, the same for every decision of one `submitVerdicts` transaction, in one line
//!   (one write, one fsync): each member is a submission of its own, sharing the nonce, gas
//!   limit and transactions of the others;
//! - `resend`, written before a replacement at the same nonce (bumped fees) is sent (naming any
//!   member of a batch re-sends the batch's transaction: it applies to every member);
//! - `done`, when a submission is settled: confirmed, replaced by another transaction at its
//!   nonce, reverted, or removed by a reorg;
//! - `offchain`, a failure that never reached the chain, the moment it happens;
//! - `own`, one of the keeper's own calls (`redeem`, `writeOff`), written after signing and
//!   before it is sent; its `resend` and `done` lines are the same as a submission's.
//!
//! - `owner`, the chain id and gate the journal belongs to, written first: a journal of another
//!   chain or gate is refused, so one gate's keeper never adopts another's pending
//!   transactions. (A journal from before this line existed names no owner: it is adopted once,
//!   with a warning, and the line appended.)
//!
//! Submissions and own calls share one id sequence, so `resend` and `done` name either. One
//! tracker follows both: re-signed at their own nonce, recovered after a restart.
//!
//! A submission with no `done` line is pending: its market is never asked again, and a restart
//! picks it up (follows its receipt, re-sends it at the same nonce). The journal and the chain
//! are all the keeper needs; everything else (state.sqlite, see [`crate::record::store`]) is derived
//! from them.
//!
//! In memory the journal holds only its hot set: pending submissions and own calls, confirmed
//! submissions whose rows are not yet in the feed, and off-chain rows not yet stored. The rest
//! is retired ([`Journal::retire`]); a restart reads the file from the [`Checkpoint`] (the
//! first line anything hot still needs), not from its first line.

use crate::domain::decision::{Annotation, Attestations, Decided, DecisionId, OffchainRow};
use alloy::primitives::{Address, Bytes, TxHash, B256, U256};
use serde::{Deserialize, Serialize};
use std::{
    collections::BTreeMap,
    fs::{File, OpenOptions},
    io::Write,
    path::{Path, PathBuf},
};

/// File name of the journal inside a results folder.
pub const JOURNAL_FILE: &str = "journal.jsonl";

#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    #[error("cannot open the submission journal {path}")]
    Open {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot append to the submission journal {path}")]
    Write {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "submission journal {path} belongs to {found}, not {expected}: point --results at this \
         gate's folder (the default is results/<chain-id>/<gate>/)"
    )]
    Foreign { path: String, found: String, expected: String },
    #[error("submission journal {path}, {at}, is not a journal entry: fix or move the file")]
    Corrupt {
        path: String,
        /// "line N", or "the line at byte N" when the read started at a checkpoint.
        at: String,
        #[source]
        source: serde_json::Error,
    },
}

impl crate::domain::exit::Classify for JournalError {
    fn fault(&self) -> crate::domain::exit::Fault {
        use crate::domain::exit::Fault::{Input, Runtime};
        match self {
            // --results names another gate's folder, or a file that does not parse.
            Self::Foreign { .. } | Self::Corrupt { .. } => Input,
            Self::Open { .. } | Self::Write { .. } => Runtime,
        }
    }
}

pub type Result<T> = std::result::Result<T, JournalError>;

/// The keeper's quote for one submission, as sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct QuoteSent {
    pub max_price_paid: U256,
    pub deadline: u64,
}

/// One signed transaction of a submission (the first send, or a replacement).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attempt {
    pub tx: TxHash,
    #[serde(with = "decimal_u128")]
    pub max_fee_per_gas: u128,
    #[serde(with = "decimal_u128")]
    pub max_priority_fee_per_gas: u128,
}

/// Fees as decimal strings: JSON numbers past 2^53 lose precision in most readers, and serde
/// cannot buffer a u128 inside a tagged enum.
mod decimal_u128 {
    use serde::{de::Error, Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &u128, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&v.to_string())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u128, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(|_| D::Error::custom(format!("{text:?} is not a fee in wei")))
    }
}

/// Written after signing, before sending.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Submission {
    /// Sequence number of the submission in this journal (its identity from read to row).
    pub id: u64,
    pub market: Address,
    pub nonce: u64,
    pub prompt_hash: B256,
    pub raw: String,
    pub quote: QuoteSent,
    pub gas: u64,
    pub first: Attempt,
    /// The block and chain time of the book read the prompt was rendered from.
    pub read_block: u64,
    pub read_time: u64,
    pub note: Annotation,
    /// An attested submission's signed answers (absent on a relayed gate, and in journals
    /// written before issue 35).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attested: Option<Attestations>,
}

/// How a submission ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Its `Decision` is in a confirmed block.
    Confirmed,
    /// Another transaction took its nonce: it can never be mined.
    Replaced,
    /// Mined and reverted (nothing published).
    Reverted,
    /// The node refused it outright; nothing is in flight.
    NotSent,
}

/// Which of the keeper's own calls a transaction is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OwnKind {
    /// `redeem(market)`: a final market's payout collected.
    Redeem,
    /// `writeOff(market)`: a position whose market never settled written off.
    WriteOff,
}

impl OwnKind {
    /// The gate function it calls.
    pub fn function(self) -> &'static str {
        match self {
            Self::Redeem => "redeem",
            Self::WriteOff => "writeOff",
        }
    }
}

impl std::fmt::Display for OwnKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.function())
    }
}

/// One of the keeper's own calls, written after signing, before sending.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OwnCall {
    pub id: u64,
    pub what: OwnKind,
    pub market: Address,
    pub nonce: u64,
    /// The calldata, as signed (a re-send signs the same bytes).
    pub input: Bytes,
    pub gas: u64,
    pub first: Attempt,
}

/// An own call and everything known of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrackedOwn {
    pub call: OwnCall,
    /// Every transaction signed for it, first to last (same nonce): at most one can be mined.
    pub attempts: Vec<Attempt>,
    pub outcome: Option<(Outcome, Option<TxHash>)>,
}

impl TrackedOwn {
    pub fn pending(&self) -> bool {
        self.outcome.is_none()
    }

    pub fn latest(&self) -> Attempt {
        *self.attempts.last().unwrap_or(&self.call.first)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[allow(clippy::large_enum_variant)]
pub enum Entry {
    Submit(Submission),
    /// The decisions of one `submitVerdicts` transaction, in its calldata's order: each is a
    /// [`Submission`] with the batch's nonce, gas limit and first attempt.
    SubmitBatch {
        subs: Vec<Submission>,
    },
    Resend {
        id: u64,
        #[serde(flatten)]
        attempt: Attempt,
    },
    Done {
        id: u64,
        outcome: Outcome,
        /// The transaction that settled it (the mined attempt), when one did.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tx: Option<TxHash>,
    },
    /// A confirmed decision whose block a reorg removed: the submission is open again until
    /// its transaction is seen again or provably gone.
    Reopened {
        id: u64,
    },
    Offchain(OffchainRow),
    Own(OwnCall),
    /// The chain and gate the journal belongs to.
    Owner {
        chain_id: u64,
        gate: Address,
    },
}

/// A submission and everything known of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tracked {
    pub sub: Submission,
    /// Every transaction signed for it, first to last (same nonce).
    pub attempts: Vec<Attempt>,
    pub outcome: Option<(Outcome, Option<TxHash>)>,
    /// Confirmed once, then removed by a reorg.
    pub reopened: bool,
    /// The ids of every decision its transaction carries, in calldata order, when it went out
    /// in a `submitVerdicts` batch (itself included); empty for a single `submitVerdict`.
    pub batch: Vec<u64>,
}

impl Tracked {
    pub fn pending(&self) -> bool {
        self.outcome.is_none()
    }

    pub fn latest(&self) -> Attempt {
        *self.attempts.last().unwrap_or(&self.sub.first)
    }

    pub fn owns(&self, tx: TxHash) -> bool {
        self.attempts.iter().any(|a| a.tx == tx)
    }

    /// Its place in its transaction's calldata (0 for a single submission): a batch publishes
    /// one `Decision` per element, in this order.
    pub fn position(&self) -> usize {
        self.batch.iter().position(|&id| id == self.sub.id).unwrap_or(0)
    }

    /// The id its transaction is followed by: the first member's for a batch, its own alone.
    pub fn tx_group(&self) -> u64 {
        self.batch.first().copied().unwrap_or(self.sub.id)
    }
}

/// The journal: its file (none for an in-memory keeper) and its folded hot set.
#[derive(Debug, Default)]
pub struct Journal {
    path: Option<PathBuf>,
    file: Option<File>,
    subs: BTreeMap<u64, Tracked>,
    own: BTreeMap<u64, TrackedOwn>,
    /// Off-chain rows not yet retired, each with the offset of its line (its identity).
    offchain: Vec<(u64, OffchainRow)>,
    /// The first `owner` line's chain id and gate, if any.
    owner: Option<(u64, Address)>,
    /// Offset of the line that opened each hot submission or own call.
    opened_at: BTreeMap<u64, u64>,
    /// The id the next submission or own call gets.
    next_id: u64,
    /// The end of the file as read and written (the next line's offset).
    end: u64,
}

/// Where a restart starts reading the journal: every line before `offset` belongs to entries
/// already retired. `next_id` carries the id sequence past them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Checkpoint {
    pub offset: u64,
    pub next_id: u64,
}

impl Journal {
    /// A journal kept in memory only (tests, the demo's scripted keepers).
    pub fn in_memory() -> Self {
        Self::default()
    }

    /// Opens (creating) `dir/journal.jsonl` and folds all it holds.
    pub fn open(dir: &Path) -> Result<Self> {
        Self::open_at(dir, Checkpoint::default())
    }

    /// Opens (creating) `dir/journal.jsonl` and folds what it holds from `from.offset` on (the
    /// owner line, always first, is read too).
    pub fn open_at(dir: &Path, from: Checkpoint) -> Result<Self> {
        Self::read_at(dir, from, true)
    }

    /// The journal of `gate` on `chain_id` in `dir`, read whole and left as it is (`keeper
    /// report`: nothing is created, cut or appended); None when there is none. One naming
    /// another chain or gate is refused as [`Journal::open_for`] refuses it.
    pub fn read_only(dir: &Path, chain_id: u64, gate: Address) -> Result<Option<Self>> {
        if !dir.join(JOURNAL_FILE).exists() {
            return Ok(None);
        }
        let journal = Self::read_at(dir, Checkpoint::default(), false)?;
        journal.check_owner(dir, chain_id, gate)?;
        Ok(Some(journal))
    }

    fn check_owner(&self, dir: &Path, chain_id: u64, gate: Address) -> Result<()> {
        let show = |(c, g): (u64, Address)| format!("chain {c}, gate {}", g.to_checksum(None));
        match self.owner {
            Some(found) if found != (chain_id, gate) => Err(JournalError::Foreign {
                path: dir.join(JOURNAL_FILE).display().to_string(),
                found: show(found),
                expected: show((chain_id, gate)),
            }),
            _ => Ok(()),
        }
    }

    fn read_at(dir: &Path, from: Checkpoint, writable: bool) -> Result<Self> {
        let path = dir.join(JOURNAL_FILE);
        let open_err = |source| JournalError::Open { path: path.display().to_string(), source };
        if writable {
            std::fs::create_dir_all(dir).map_err(open_err)?;
        }
        let mut journal =
            Self { path: Some(path.clone()), next_id: from.next_id, ..Self::default() };
        if path.exists() {
            use std::io::{BufRead, BufReader, Seek, SeekFrom};
            let mut reader = BufReader::new(File::open(&path).map_err(open_err)?);
            let len = reader.get_ref().metadata().map_err(open_err)?.len();
            let mut offset = 0u64;
            let mut line_no = 0usize;
            let mut skipped = false;
            let mut line = String::new();
            loop {
                line.clear();
                let n = reader.read_line(&mut line).map_err(open_err)? as u64;
                // Every entry ends with a newline. Text after the last one is an append a crash
                // cut short: that entry never completed, so nothing it describes was sent.
                if n == 0 || !line.ends_with('\n') {
                    break;
                }
                line_no += 1;
                let at = offset;
                offset += n;
                if !line.trim().is_empty() {
                    let entry =
                        serde_json::from_str::<Entry>(line.trim_end()).map_err(|source| {
                            JournalError::Corrupt {
                                path: path.display().to_string(),
                                at: if skipped {
                                    format!("the line at byte {at}")
                                } else {
                                    format!("line {line_no}")
                                },
                                source,
                            }
                        })?;
                    journal.apply(entry, at);
                }
                // Only the owner line is read before the checkpoint.
                if at == 0 && from.offset > offset && from.offset <= len {
                    reader.seek(SeekFrom::Start(from.offset)).map_err(open_err)?;
                    offset = from.offset;
                    skipped = true;
                }
            }
            journal.end = offset;
            if offset < len && writable {
                // Cut the torn tail off, so the next append starts on a line of its own.
                let f = OpenOptions::new().write(true).open(&path).map_err(open_err)?;
                f.set_len(offset).map_err(open_err)?;
            }
        }
        if writable {
            let file =
                OpenOptions::new().create(true).append(true).open(&path).map_err(open_err)?;
            journal.file = Some(file);
        }
        Ok(journal)
    }

    fn apply(&mut self, e: Entry, at: u64) {
        match e {
            Entry::Submit(sub) => {
                let first = sub.first;
                self.next_id = self.next_id.max(sub.id + 1);
                self.opened_at.insert(sub.id, at);
                self.subs.insert(
                    sub.id,
                    Tracked {
                        sub,
                        attempts: vec![first],
                        outcome: None,
                        reopened: false,
                        batch: Vec::new(),
                    },
                );
            }
            Entry::SubmitBatch { subs } => {
                let ids: Vec<u64> = subs.iter().map(|s| s.id).collect();
                for sub in subs {
                    let first = sub.first;
                    self.next_id = self.next_id.max(sub.id + 1);
                    self.opened_at.insert(sub.id, at);
                    let t = Tracked {
                        sub,
                        attempts: vec![first],
                        outcome: None,
                        reopened: false,
                        batch: ids.clone(),
                    };
                    self.subs.insert(t.sub.id, t);
                }
            }
            Entry::Resend { id, attempt } => {
                if let Some(t) = self.subs.get(&id) {
                    // A batch's members share their transactions: one line re-sends them all.
                    let members = if t.batch.is_empty() { vec![id] } else { t.batch.clone() };
                    for m in members {
                        if let Some(t) = self.subs.get_mut(&m) {
                            t.attempts.push(attempt);
                        }
                    }
                } else if let Some(o) = self.own.get_mut(&id) {
                    o.attempts.push(attempt);
                }
            }
            Entry::Done { id, outcome, tx } => {
                if let Some(t) = self.subs.get_mut(&id) {
                    t.outcome = Some((outcome, tx));
                } else if let Some(o) = self.own.get_mut(&id) {
                    o.outcome = Some((outcome, tx));
                }
            }
            Entry::Owner { chain_id, gate } => {
                self.owner.get_or_insert((chain_id, gate));
            }
            Entry::Own(call) => {
                let first = call.first;
                self.next_id = self.next_id.max(call.id + 1);
                self.opened_at.insert(call.id, at);
                self.own.insert(call.id, TrackedOwn { call, attempts: vec![first], outcome: None });
            }
            Entry::Reopened { id } => {
                if let Some(t) = self.subs.get_mut(&id) {
                    t.outcome = None;
                    t.reopened = true;
                }
            }
            Entry::Offchain(row) => self.offchain.push((at, row)),
        }
    }

    /// Opens (creating) `dir/journal.jsonl` for `gate` on `chain_id`: a new journal's first line
    /// names them, and a journal that names another chain or gate is refused with both named.
    /// One that names none (written before owners were recorded) is adopted, with a warning.
    pub fn open_for(dir: &Path, chain_id: u64, gate: Address) -> Result<Self> {
        Self::open_for_at(dir, chain_id, gate, Checkpoint::default())
    }

    /// [`Journal::open_for`] from a checkpoint.
    pub fn open_for_at(dir: &Path, chain_id: u64, gate: Address, from: Checkpoint) -> Result<Self> {
        let mut journal = Self::open_at(dir, from)?;
        journal.check_owner(dir, chain_id, gate)?;
        let path = dir.join(JOURNAL_FILE).display().to_string();
        match journal.owner {
            Some(_) => Ok(journal),
            None => {
                let used = !journal.subs.is_empty() || !journal.own.is_empty();
                if used || !journal.offchain.is_empty() {
                    tracing::warn!(journal = %path, chain_id, %gate, "the journal names no chain or gate (written before owners were recorded); adopted for this gate");
                }
                journal.append(Entry::Owner { chain_id, gate })?;
                Ok(journal)
            }
        }
    }

    /// The chain id and gate the journal names, if it names one.
    pub fn owner(&self) -> Option<(u64, Address)> {
        self.owner
    }

    /// Appends `e` durably (written and fsynced) and folds it in.
    pub fn append(&mut self, e: Entry) -> Result<()> {
        self.append_all(vec![e])
    }

    /// Appends `entries` durably in one write and one fsync, and folds them in: a crash leaves
    /// a prefix of them (a torn last line is ignored on reading).
    pub fn append_all(&mut self, entries: Vec<Entry>) -> Result<()> {
        if entries.is_empty() {
            return Ok(());
        }
        let mut text = String::new();
        let mut lens = Vec::with_capacity(entries.len());
        for e in &entries {
            let before = text.len();
            text.push_str(&serde_json::to_string(e).expect("journal entries always serialize"));
            text.push('\n');
            lens.push((text.len() - before) as u64);
        }
        if let (Some(file), Some(path)) = (self.file.as_mut(), self.path.as_ref()) {
            let write_err =
                |source| JournalError::Write { path: path.display().to_string(), source };
            file.write_all(text.as_bytes()).map_err(write_err)?;
            file.sync_data().map_err(write_err)?;
        }
        for (e, len) in entries.into_iter().zip(lens) {
            let at = self.end;
            self.end += len;
            self.apply(e, at);
        }
        Ok(())
    }

    /// The id the next submission or own call gets (one sequence for both).
    pub fn next_id(&self) -> u64 {
        self.next_id
    }

    /// Where a restart may start reading: the first line a hot entry needs (the end, when
    /// nothing is hot).
    pub fn checkpoint(&self) -> Checkpoint {
        self.checkpoint_stored(None)
    }

    /// [`Journal::checkpoint`] once the off-chain rows up to offset `stored` are kept elsewhere.
    pub fn checkpoint_stored(&self, stored: Option<u64>) -> Checkpoint {
        let hot = self.opened_at.values().copied();
        let off =
            self.offchain.iter().map(|(at, _)| *at).filter(|at| stored.is_none_or(|s| *at > s));
        let offset = hot.chain(off).min().unwrap_or(self.end);
        Checkpoint { offset, next_id: self.next_id }
    }

    /// Retires what no longer needs memory: settled own calls, submissions that ended without
    /// a row (replaced, reverted, not sent: their off-chain rows are entries of their own),
    /// confirmed submissions `in_feed` says are in the feed, and off-chain rows up to offset
    /// `stored` (kept by the store). Returns how many entries left.
    pub fn retire(&mut self, in_feed: impl Fn(&Tracked) -> bool, stored: Option<u64>) -> usize {
        let before = self.subs.len() + self.own.len() + self.offchain.len();
        self.own.retain(|_, o| o.pending());
        self.subs.retain(|_, t| match t.outcome {
            None => true,
            Some((Outcome::Confirmed, _)) => !in_feed(t),
            Some(_) => false,
        });
        if let Some(stored) = stored {
            self.offchain.retain(|(at, _)| *at > stored);
        }
        let (subs, own) = (&self.subs, &self.own);
        self.opened_at.retain(|id, _| subs.contains_key(id) || own.contains_key(id));
        before - (self.subs.len() + self.own.len() + self.offchain.len())
    }

    /// Off-chain rows not yet retired, with the offset of each one's line.
    pub fn offchain_entries(&self) -> &[(u64, OffchainRow)] {
        &self.offchain
    }

    /// The keeper's own calls not yet settled.
    pub fn own_pending(&self) -> impl Iterator<Item = &TrackedOwn> {
        self.own.values().filter(|o| o.pending())
    }

    /// The lowest nonce above every pending transaction's, submissions and own calls alike: a
    /// new transaction never reuses a nonce a pending one may still be mined at.
    pub fn pending_nonce_floor(&self) -> u64 {
        let own = self.own_pending().map(|o| o.call.nonce + 1);
        self.pending().map(|t| t.sub.nonce + 1).chain(own).max().unwrap_or(0)
    }

    pub fn submissions(&self) -> impl Iterator<Item = &Tracked> {
        self.subs.values()
    }

    pub fn get(&self, id: u64) -> Option<&Tracked> {
        self.subs.get(&id)
    }

    pub fn pending(&self) -> impl Iterator<Item = &Tracked> {
        self.subs.values().filter(|t| t.pending())
    }

    /// The submission one of whose transactions is `tx`.
    pub fn by_tx(&self, tx: TxHash) -> Option<&Tracked> {
        self.subs.values().find(|t| t.owns(tx))
    }

    /// The hot submission behind each decision of `decided` that has one. A transaction's
    /// decisions are matched to its submissions by order: a batch publishes one `Decision` per
    /// element, in its calldata's order (the same market may be in one batch twice), so the
    /// n-th of a transaction's decisions by log index is the submission at position n, which
    /// must also name its market.
    pub fn behind(&self, decided: &[Decided]) -> std::collections::HashMap<DecisionId, &Tracked> {
        use std::collections::HashMap;
        let mut by_tx: HashMap<TxHash, Vec<&Tracked>> = HashMap::new();
        for t in self.subs.values() {
            for a in &t.attempts {
                by_tx.entry(a.tx).or_default().push(t);
            }
        }
        let mut in_tx: HashMap<TxHash, Vec<&Decided>> = HashMap::new();
        for d in decided.iter().filter(|d| by_tx.contains_key(&d.id.tx)) {
            in_tx.entry(d.id.tx).or_default().push(d);
        }
        let mut out = HashMap::new();
        for (tx, mut ds) in in_tx {
            ds.sort_by_key(|d| d.id.log_index);
            let members = &by_tx[&tx];
            for (n, d) in ds.into_iter().enumerate() {
                let found = members.iter().find(|t| t.position() == n && t.sub.market == d.market);
                if let Some(t) = found {
                    out.insert(d.id, *t);
                }
            }
        }
        out
    }

    /// Markets with a pending submission: never asked again until it settles.
    pub fn pending_markets(&self) -> std::collections::HashSet<Address> {
        self.pending().map(|t| t.sub.market).collect()
    }

    /// The lowest nonce no journalled submission uses (0 when empty).
    pub fn next_nonce_floor(&self) -> u64 {
        self.subs.values().map(|t| t.sub.nonce + 1).max().unwrap_or(0)
    }

    /// Off-chain rows not yet retired.
    pub fn offchain(&self) -> Vec<&OffchainRow> {
        self.offchain.iter().map(|(_, r)| r).collect()
    }

    /// Entries in memory (the hot set), submissions, own calls and off-chain rows together.
    pub fn hot_len(&self) -> usize {
        self.subs.len() + self.own.len() + self.offchain.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sub(id: u64, nonce: u64, market: u8) -> Submission {
        Submission {
            id,
            market: Address::repeat_byte(market),
            nonce,
            prompt_hash: B256::repeat_byte(9),
            raw: "BUY_UP\n\u{1b}[31m".to_string(),
            quote: QuoteSent { max_price_paid: U256::from(420_000u64), deadline: 1_060 },
            gas: 2_000_000,
            first: Attempt {
                tx: TxHash::repeat_byte(id as u8 + 1),
                max_fee_per_gas: 2_000_000_000,
                max_priority_fee_per_gas: 1,
            },
            read_block: 7,
            read_time: 1_000,
            note: Annotation { provider: Some("builtin".into()), ..Annotation::default() },
            attested: None,
        }
    }

    #[test]
    fn a_restart_sees_pending_submissions_and_a_torn_last_line_is_ignored() {
        let dir = tempfile::tempdir().unwrap();
        {
            let mut j = Journal::open(dir.path()).unwrap();
            j.append(Entry::Submit(sub(0, 5, 1))).unwrap();
            j.append(Entry::Submit(sub(1, 6, 2))).unwrap();
            let bumped = Attempt {
                tx: TxHash::repeat_byte(0xee),
                max_fee_per_gas: 2_250_000_001,
                max_priority_fee_per_gas: 2,
            };
            j.append(Entry::Resend { id: 1, attempt: bumped }).unwrap();
            j.append(Entry::Done { id: 0, outcome: Outcome::Confirmed, tx: None }).unwrap();
        }
        // A crash in the middle of an append leaves a torn last line.
        let path = dir.path().join(JOURNAL_FILE);
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(br#"{"kind":"submit","id":2,"mar"#).unwrap();
        drop(f);

        let j = Journal::open(dir.path()).unwrap();
        let pending: Vec<_> = j.pending().map(|t| t.sub.id).collect();
        assert_eq!(pending, vec![1], "0 is done, 2 never completed its line");
        assert_eq!(
            j.pending_markets().into_iter().collect::<Vec<_>>(),
            vec![Address::repeat_byte(2)]
        );
        let t = j.get(1).unwrap();
        assert_eq!(t.attempts.len(), 2, "first send and one replacement at the same nonce");
        assert!(t.owns(TxHash::repeat_byte(0xee)) && t.owns(TxHash::repeat_byte(2)));
        assert_eq!(t.sub.raw, "BUY_UP\n\u{1b}[31m", "the answer survives byte for byte");
        // Nonces 5 and 6 are used: the next new one is at least 7.
        assert_eq!(j.next_nonce_floor(), 7);
        assert_eq!(j.next_id(), 2);
    }

    #[test]
    fn a_corrupt_line_before_the_end_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(JOURNAL_FILE);
        std::fs::write(&path, "not json\n{\"kind\":\"reopened\",\"id\":0}\n").unwrap();
        assert!(Journal::open(dir.path()).unwrap_err().to_string().contains("line 1"));
        // A complete last line that does not parse is corruption too, not a torn append.
        std::fs::write(&path, "{\"kind\":\"reopened\",\"id\":0}\n{\"kind\":\"bogus\"}\n").unwrap();
        let e = Journal::open(dir.path()).unwrap_err();
        assert!(e.to_string().contains("line 2"), "{e}");
    }

    #[test]
    fn own_calls_share_the_id_sequence_and_are_followed_across_a_restart() {
        let dir = tempfile::tempdir().unwrap();
        let attempt = |b: u8| Attempt {
            tx: TxHash::repeat_byte(b),
            max_fee_per_gas: 2_000_000_000,
            max_priority_fee_per_gas: 1,
        };
        {
            let mut j = Journal::open(dir.path()).unwrap();
            j.append(Entry::Submit(sub(0, 5, 1))).unwrap();
            assert_eq!(j.next_id(), 1);
            let call = OwnCall {
                id: j.next_id(),
                what: OwnKind::Redeem,
                market: Address::repeat_byte(3),
                nonce: 6,
                input: Bytes::from_static(&[0x95, 0xa2, 0x25, 0x1f]),
                gas: 200_000,
                first: attempt(0xa1),
            };
            j.append(Entry::Own(call)).unwrap();
            j.append(Entry::Resend { id: 1, attempt: attempt(0xa2) }).unwrap();
            j.append(Entry::Done { id: 0, outcome: Outcome::Confirmed, tx: None }).unwrap();
        }
        let j = Journal::open(dir.path()).unwrap();
        // The own call took id 1, so the next of either kind is 2.
        assert_eq!(j.next_id(), 2);
        let own: Vec<_> = j.own_pending().collect();
        assert_eq!(own.len(), 1);
        assert_eq!(own[0].call.what, OwnKind::Redeem);
        assert_eq!(
            own[0].attempts.len(),
            2,
            "the re-send applied to the own call, not a submission"
        );
        assert_eq!(own[0].latest().tx, TxHash::repeat_byte(0xa2));
        // Submission 0 is done; the own call at nonce 6 is pending: new nonces start at 7.
        assert_eq!(j.pending_nonce_floor(), 7);
        assert_eq!(j.pending().count(), 0);
        let line = serde_json::to_string(&Entry::Own(own[0].call.clone())).unwrap();
        assert!(line.contains(r#""kind":"own""#) && line.contains(r#""what":"redeem""#), "{line}");
    }

    #[test]
    fn a_journal_of_another_gate_is_refused_and_a_new_one_names_its_owner() {
        let dir = tempfile::tempdir().unwrap();
        let (gate1, gate2) = (Address::repeat_byte(0x11), Address::repeat_byte(0x22));
        {
            let mut j = Journal::open_for(dir.path(), 31_337, gate2).unwrap();
            j.append(Entry::Submit(sub(0, 5, 1))).unwrap();
        }
        let text = std::fs::read_to_string(dir.path().join(JOURNAL_FILE)).unwrap();
        assert!(text.starts_with(r#"{"kind":"owner","chain_id":31337,"gate":"#), "{text}");
        // Gate 1's keeper pointed at gate 2's folder: refused, naming both, nothing adopted.
        let e = Journal::open_for(dir.path(), 31_337, gate1).unwrap_err().to_string();
        assert!(
            e.contains(&gate2.to_checksum(None)) && e.contains(&gate1.to_checksum(None)),
            "{e}"
        );
        // So is another chain with the same gate address.
        assert!(Journal::open_for(dir.path(), 1, gate2).is_err());
        // Its own gate opens it, pending submission and all.
        let j = Journal::open_for(dir.path(), 31_337, gate2).unwrap();
        assert_eq!((j.owner(), j.pending().count()), (Some((31_337, gate2)), 1));
        // A journal from before owners were recorded is adopted once and then names its owner.
        let old = tempfile::tempdir().unwrap();
        Journal::open(old.path()).unwrap().append(Entry::Submit(sub(0, 5, 1))).unwrap();
        assert_eq!(Journal::open_for(old.path(), 31_337, gate1).unwrap().pending().count(), 1);
        assert!(Journal::open_for(old.path(), 31_337, gate2).is_err(), "adopted by gate 1 now");
    }

    #[test]
    fn a_batch_is_one_line_and_its_members_share_every_transaction_across_a_restart() {
        let dir = tempfile::tempdir().unwrap();
        let bumped = Attempt {
            tx: TxHash::repeat_byte(0xbb),
            max_fee_per_gas: 2_250_000_001,
            max_priority_fee_per_gas: 2,
        };
        {
            let mut j = Journal::open(dir.path()).unwrap();
            j.append(Entry::Submit(sub(0, 4, 9))).unwrap();
            // Three decisions in one transaction: the batch's nonce, gas and first attempt.
            let first = sub(1, 5, 1).first;
            let subs: Vec<Submission> =
                (1..=3).map(|id| Submission { first, ..sub(id, 5, id as u8) }).collect();
            j.append(Entry::SubmitBatch { subs }).unwrap();
            // Naming any member re-sends the batch's one transaction.
            j.append(Entry::Resend { id: 2, attempt: bumped }).unwrap();
            j.append_all(vec![
                Entry::Done { id: 0, outcome: Outcome::Confirmed, tx: None },
                Entry::Done { id: 1, outcome: Outcome::Confirmed, tx: Some(bumped.tx) },
            ])
            .unwrap();
        }
        let text = std::fs::read_to_string(dir.path().join(JOURNAL_FILE)).unwrap();
        assert_eq!(text.lines().count(), 5, "one line for the batch of three: {text}");
        assert!(text.lines().nth(1).unwrap().starts_with(r#"{"kind":"submit_batch","subs":[{"#));
        let j = Journal::open(dir.path()).unwrap();
        let pending: Vec<u64> = j.pending().map(|t| t.sub.id).collect();
        assert_eq!(pending, vec![2, 3], "0 and 1 are done; each member ends on its own");
        for id in 1..=3 {
            let t = j.get(id).unwrap();
            assert_eq!(t.batch, vec![1, 2, 3]);
            assert_eq!(t.tx_group(), 1);
            assert_eq!(t.attempts.len(), 2, "the re-send named 2 and applies to member {id}");
            assert_eq!(t.latest().tx, bumped.tx);
        }
        assert_eq!(j.get(0).unwrap().tx_group(), 0, "a single submission is its own group");
        // One transaction, one nonce: the next new one is 6; the next id 4.
        assert_eq!((j.pending_nonce_floor(), j.next_id()), (6, 4));
        // Each decision is matched to its submission by its order in the transaction (its log
        // index), and must name the same market: members 2 and 3 (markets 2 and 3) published
        // at log indexes 1 and 4 of the re-send, after member 1's at 0 (retired here or not).
        let decided = |tx, log_index, market: u8| Decided {
            id: DecisionId { tx, log_index },
            market: Address::repeat_byte(market),
            block: 9,
            time: 1_009,
            reason: 1,
            bought: false,
            settled: false,
            written_off: false,
        };
        let record = [decided(bumped.tx, 4, 3), decided(bumped.tx, 0, 1), decided(bumped.tx, 1, 2)];
        let behind = j.behind(&record);
        let id_of = |i: usize| behind.get(&record[i].id).map(|t| t.sub.id);
        assert_eq!((id_of(0), id_of(1), id_of(2)), (Some(3), Some(1), Some(2)));
        // A decision whose market is not the one at its place is matched to nothing.
        let swapped =
            [decided(bumped.tx, 0, 1), decided(bumped.tx, 1, 3), decided(bumped.tx, 2, 2)];
        assert_eq!(j.behind(&swapped).len(), 1, "only the first lines up");
    }

    #[test]
    fn a_reorg_reopens_a_confirmed_submission() {
        let mut j = Journal::in_memory();
        j.append(Entry::Submit(sub(0, 0, 1))).unwrap();
        j.append(Entry::Done { id: 0, outcome: Outcome::Confirmed, tx: None }).unwrap();
        assert_eq!(j.pending().count(), 0);
        j.append(Entry::Reopened { id: 0 }).unwrap();
        assert_eq!(j.pending().count(), 1);
    }
}
