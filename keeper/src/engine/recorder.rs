//! The recorder stage: where the record goes. It owns the results folder, the keeper's state
//! database beside it ([`crate::record::store`]), the feed's state and the aggregates the pages are
//! rendered from.
//!
//! `feed.jsonl` only grows: each write appends the rows confirmed since the last one, in
//! chain order, each hash-linked to the line before, then rewrites the 67-byte `feed.head`. The
//! feed is an event log ([`feed::FEED_VERSION`]): a decision enters once its block is
//! confirmed, whatever its position does later, and the settlement, write-off or late payout of
//! that position enters later as a row of its own naming it. Nothing written is held back,
//! held in memory or written again, however long a position stays open. RESULTS.md and the
//! chart are rendered from the aggregates of the feed's rows, and written only when they
//! change. The state database is written last, in one transaction; a crash before it leaves a
//! feed longer than the state says, cut back on the next start (the same rows are appended
//! again, byte for byte).
//!
//! The feed is rewritten whole only to repair it: when the state database was lost (or is of
//! another gate's, or older), after a reorg deeper than the rows already appended, or once to
//! migrate a v1 feed (it is said in the log).

use crate::{
    chain::follower::Known,
    chain::journal::{self, Checkpoint, Entry, Journal},
    domain::decision::{BlockRef, ChainRecord, DecisionId, FeedRow, GateFacts, RowNote},
    engine::collector::{Found, Resume},
    engine::health::HealthState,
    record::store::{Opened, Store, StoreError},
    record::{
        self,
        feed::{self, FeedKey},
        summary::{Summary, SUMMARY_KEY},
        RecordError, CHART_FILE, FEED_FILE, HEAD_FILE, RESULTS_FILE,
    },
};
use alloy::{
    primitives::{keccak256, Address, B256},
    rpc::types::Log,
};
use serde::{Deserialize, Serialize};
use std::{
    collections::{BTreeMap, HashSet},
    io::{Seek, SeekFrom, Write},
    path::{Path, PathBuf},
};
use tracing::{info, warn};

/// Where the feed on disk stands, as the state database last recorded it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
struct FeedState {
    /// Length of feed.jsonl in bytes.
    bytes: u64,
    lines: u64,
    /// The last row's key; None for an empty feed.
    last: Option<FeedKey>,
    /// keccak256 of the last line (the genesis hash for an empty feed).
    head: B256,
}

/// What one write did, for the engine to act on and for the long-run figures.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Written {
    /// Rows appended to the feed.
    pub appended: usize,
    /// Bytes written to the results folder's files (the state database not counted).
    pub bytes: u64,
    /// The feed was rewritten whole (a repair: the state was rebuilt, or a deep reorg).
    pub rewrote: bool,
}

/// What [`Recorder::open`] hands back: the journal, and what the collector and the strategy
/// resume from (none when the state was rebuilt).
pub struct Reopened {
    pub journal: Journal,
    pub resume: Option<Resume>,
    pub health: Option<HealthState>,
}

/// What the record keeps of the strategy stage: its text, published beside the feed, and its
/// inference health, saved in the state database.
pub struct StrategyKept<'a> {
    pub text: &'a str,
    pub health: HealthState,
}

/// The state database's key for the strategy's inference health.
const HEALTH_KEY: &str = "health";

pub struct Recorder {
    dir: PathBuf,
    /// None until [`Recorder::open`] or the first write (a keeper that does not resume starts a
    /// new record).
    store: Option<Store>,
    feed: FeedState,
    /// Aggregates of the rows in the feed.
    summary: Summary,
    /// Notes of decisions from a feed the state was rebuilt from (labels the journal may not
    /// hold: a feed written before the journal existed), until the rebuild appended them.
    legacy_notes: BTreeMap<DecisionId, RowNote>,
    /// The next write rewrites the feed whole (see the module docs).
    rewrite: bool,
    /// keccak256 of the RESULTS.md and chart last written, to skip writing them unchanged.
    rendered: Option<B256>,
}

impl Recorder {
    pub fn new(dir: PathBuf) -> Self {
        Self {
            dir,
            store: None,
            feed: FeedState::default(),
            summary: Summary::default(),
            legacy_notes: BTreeMap::new(),
            rewrite: true,
            rendered: None,
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Opens the folder's state for `gate` on `chain_id`: the journal (from its checkpoint),
    /// and what the collector resumes from. Without a usable state database (first start, lost,
    /// another version) the state is rebuilt: the journal is read whole, the collector rescans
    /// from the deploy block, and the first write re-derives the feed (byte-identical to the
    /// one there when nothing new happened). Another chain's or gate's journal, feed or state
    /// is refused.
    pub fn open(&mut self, chain_id: u64, gate: Address) -> Result<Reopened, super::RunError> {
        let dir = self.dir.clone();
        let (store, how) = Store::open(&dir, chain_id, gate).map_err(RecordError::from)?;
        self.store = Some(store);
        if how == Opened::Resumed {
            match self.resume(chain_id, gate)? {
                Some(opened) => return Ok(opened),
                None => {
                    self.store_mut().atomically(|s| s.clear_all()).map_err(RecordError::from)?
                }
            }
        }
        // Rebuild: from the feed on disk (its labels and off-chain rows) and the whole journal.
        let rows = feed::read_feed_for(&dir.join(FEED_FILE), chain_id, gate)?;
        let nothing_yet = !dir.join(FEED_FILE).exists() && !dir.join(HEAD_FILE).exists();
        if !nothing_yet {
            let text = std::fs::read_to_string(dir.join(FEED_FILE)).unwrap_or_default();
            if feed::is_v1(&text, chain_id, gate) {
                warn!(feed = %dir.join(FEED_FILE).display(), rows = rows.len(), "the feed is in the v1 shape (bought decisions held back until settled, the settlement inside the row): it is rewritten once as a v2 event log, from the chain and the labels it holds");
            } else {
                for problem in feed::check_links_in(&dir, chain_id, gate)?.problems {
                    warn!(feed = %dir.join(FEED_FILE).display(), problem = %problem, "the feed on disk is not the one the keeper wrote last (edited, or a crash between feed.jsonl and feed.head); it is re-written from the chain and the journal");
                }
            }
            info!(results = %dir.display(), rows = rows.len(), "no usable state database: rebuilding it from the chain, the journal and the feed");
        }
        let fresh = !dir.join(journal::JOURNAL_FILE).exists();
        let mut journal = Journal::open_for(&dir, chain_id, gate)?;
        let (notes, off) = feed::split_feed(&rows);
        self.legacy_notes = notes;
        if fresh {
            // A feed from before the journal: its off-chain rows move into the journal, once.
            for row in off {
                journal.append(Entry::Offchain(row))?;
            }
        }
        self.feed = FeedState::default();
        self.summary = Summary::default();
        self.rewrite = true;
        Ok(Reopened { journal, resume: None, health: None })
    }

    /// Resumes from a complete state database, if the feed on disk is the one it describes
    /// (else None: the state is rebuilt).
    fn resume(
        &mut self,
        chain_id: u64,
        gate: Address,
    ) -> Result<Option<Reopened>, super::RunError> {
        let store = self.store.as_ref().expect("opened above");
        let state: FeedState = store.meta("feed").map_err(RecordError::from)?.unwrap_or_default();
        let path = self.dir.join(FEED_FILE);
        match cut_to(&path, &state) {
            Ok(cut) if cut > 0 => {
                warn!(feed = %path.display(), bytes = cut, "the feed held rows the state database does not (a crash between the two): cut back; they are appended again")
            }
            Ok(_) => {}
            Err(why) => {
                warn!(feed = %path.display(), problem = %why, "the feed on disk is not the one the state database describes: the state is rebuilt and the feed re-derived");
                return Ok(None);
            }
        }
        let Some(summary) = store.meta::<Summary>(SUMMARY_KEY).map_err(RecordError::from)? else {
            warn!(results = %self.dir.display(), "the state database holds no summary of this version (one from an older keeper, or none): the state is rebuilt and the feed re-derived");
            return Ok(None);
        };
        let checkpoint: Checkpoint =
            store.meta("journal").map_err(RecordError::from)?.unwrap_or_default();
        let cursor = store.meta("cursor").map_err(RecordError::from)?.unwrap_or_default();
        let markets: Vec<Known> = store
            .markets::<Known>()
            .map_err(RecordError::from)?
            .into_iter()
            .map(|(_, k)| k)
            .collect();
        let hot: Vec<Log> = store.hot_logs().map_err(RecordError::from)?;
        let asked = store.last_asked().map_err(RecordError::from)?;
        let health = store.meta::<HealthState>(HEALTH_KEY).map_err(RecordError::from)?;
        self.legacy_notes.clear();
        let journal = Journal::open_for_at(&self.dir, chain_id, gate, checkpoint)?;
        info!(results = %self.dir.display(), rows = state.lines, hot_logs = hot.len(), journal_from = checkpoint.offset, "resumed from the state database");
        self.feed = state;
        self.summary = summary;
        self.rewrite = false;
        let resume = Some(Resume { cursor, markets, hot, asked });
        Ok(Some(Reopened { journal, resume, health }))
    }

    /// The checked questions of the markets the pages name ([`record::page_markets`]): from
    /// the markets `found` this cycle (not yet in the state database), else from it.
    fn questions(&self, found: &[Known]) -> Result<record::Questions, RecordError> {
        let store = self.store.as_ref().expect("the store is opened before it is used");
        let mut out = record::Questions::new();
        for m in record::page_markets(&self.summary) {
            let known = match found.iter().find(|k| k.info.address == m) {
                Some(k) => Some(k.clone()),
                None => store.market::<Known>(m)?,
            };
            if let Some(q) = known.as_ref().and_then(|k| k.info.question.text()) {
                out.insert(m.to_checksum(None), q.to_string());
            }
        }
        Ok(out)
    }

    fn store_mut(&mut self) -> &mut Store {
        self.store.as_mut().expect("the store is opened before it is used")
    }

    /// The key of the feed's last row, if it has any.
    pub fn in_feed(&self) -> Option<FeedKey> {
        self.feed.last
    }

    /// Rows in the feed.
    pub fn feed_rows(&self) -> u64 {
        self.feed.lines
    }

    /// The rows to append, in feed order: `record`'s rows (all confirmed) after the feed's last
    /// row, and the off-chain rows up to the confirmed block.
    fn candidates(
        &self,
        record: &ChainRecord,
        journal: &Journal,
        offchain: Vec<crate::domain::decision::OffchainRow>,
    ) -> Vec<FeedRow> {
        let by_tx = journal.behind(&record.decided);
        let mut notes = BTreeMap::new();
        for d in &record.decided {
            let from_journal = by_tx
                .get(&d.id)
                .map(|t| RowNote { note: t.sub.note.clone(), raw: Some(t.sub.raw.clone()) });
            if let Some(n) = from_journal.or_else(|| self.legacy_notes.get(&d.id).cloned()) {
                notes.insert(d.id, n);
            }
        }
        let last = self.feed.last;
        feed::merge(record, &notes, &offchain)
            .into_iter()
            .filter(|r| last.is_none_or(|k| r.sort_key() > k))
            .collect()
    }

    /// Writes the record: appends the rows confirmed up to `safe` (the confirmed block),
    /// re-renders the pages if they changed, and saves the state with what the collector
    /// `found`, what the `strategy` keeps and the journal's checkpoint. Refuses a row of
    /// another chain or gate.
    pub fn write(
        &mut self,
        facts: &GateFacts,
        record: &ChainRecord,
        journal: &Journal,
        strategy: &StrategyKept<'_>,
        found: Found,
        safe: BlockRef,
    ) -> Result<Written, RecordError> {
        let StrategyKept { text: strategy_text, health } = strategy;
        if self.store.is_none() {
            // A keeper that does not resume starts a new record (and a new state) here.
            let _ = std::fs::remove_file(self.dir.join(crate::record::store::STATE_FILE));
            let (store, _) = Store::open(&self.dir, facts.chain_id, facts.gate)?;
            self.store = Some(store);
        }
        let mut out = Written::default();
        record::publish_strategy(&self.dir, strategy_text)?;
        if let Some(fork) = found.rewound_to {
            if self.feed.last.is_some_and(|(b, _, _)| b > fork) {
                self.cut_back(facts, fork)?;
            }
        }
        // Off-chain rows: stored the moment the journal hands them over (its offset is their
        // identity), appended once the confirmed block reaches theirs.
        let stored_up_to = journal.offchain_entries().last().map(|(at, _)| *at);
        {
            let store = self.store.as_ref().expect("opened");
            for (at, row) in journal.offchain_entries() {
                store.add_offchain(
                    *at,
                    row.block,
                    &serde_json::to_string(row).expect("rows serialize"),
                )?;
            }
        }
        let waiting_off = self.store.as_ref().expect("opened").waiting_offchain()?;
        let mut ready_off = Vec::new();
        for (seq, text) in &waiting_off {
            let row: crate::domain::decision::OffchainRow =
                serde_json::from_str(text).map_err(|e| StoreError::decode("off-chain row", e))?;
            // One above the confirmed block waits (the pages too show rows up to it only).
            if row.block <= safe.number {
                ready_off.push((*seq, row));
            }
        }
        let off_rows: Vec<_> = ready_off.iter().map(|(_, r)| r.clone()).collect();
        let ready = self.candidates(record, journal, off_rows);
        record::check_owner(&self.dir, facts, &ready)?;
        // Append (or, to repair, rewrite whole), then the head.
        let mut head = if self.feed.lines == 0 {
            feed::genesis_hash(facts.chain_id, facts.gate)
        } else {
            self.feed.head
        };
        let mut text = String::new();
        for row in &ready {
            let line = feed::linked_line(row, head);
            head = keccak256(line.as_bytes());
            text.push_str(&line);
            text.push('\n');
        }
        let feed_path = self.dir.join(FEED_FILE);
        if self.rewrite {
            record::write_atomic(&feed_path, text.as_bytes())?;
            out.rewrote = true;
            self.rewrite = false;
        } else if !text.is_empty() {
            append(&feed_path, text.as_bytes())?;
        }
        if out.rewrote || !text.is_empty() {
            let head_text = format!("{head}\n");
            record::write_atomic(&self.dir.join(HEAD_FILE), head_text.as_bytes())?;
            out.bytes += (text.len() + head_text.len()) as u64;
        }
        let before = self.feed.clone();
        self.feed.bytes =
            if out.rewrote { text.len() as u64 } else { before.bytes + text.len() as u64 };
        self.feed.lines += ready.len() as u64;
        self.feed.head = head;
        if let Some(last) = ready.last() {
            self.feed.last = Some(last.sort_key());
        }
        for row in &ready {
            self.summary.add(row);
        }
        // Pages: the feed's aggregates.
        let questions = self.questions(&found.markets)?;
        let (md, svg) = record::render_pages(facts, &self.summary, &questions)?;
        let rendered = keccak256([md.as_bytes(), svg.as_bytes()].concat());
        if self.rendered != Some(rendered)
            || !self.dir.join(RESULTS_FILE).exists()
            || !self.dir.join(CHART_FILE).exists()
        {
            record::write_atomic(&self.dir.join(CHART_FILE), svg.as_bytes())?;
            record::write_atomic(&self.dir.join(RESULTS_FILE), md.as_bytes())?;
            out.bytes += (md.len() + svg.len()) as u64;
            self.rendered = Some(rendered);
        }
        // The state, in one transaction.
        // The off-chain rows appended: each matched once, in order, to a stored one.
        let mut appended_off: Vec<&crate::domain::decision::OffchainRow> = ready
            .iter()
            .filter_map(|r| if let FeedRow::Offchain(o) = r { Some(o) } else { None })
            .collect();
        let mut released_off = HashSet::new();
        for (i, (_, row)) in ready_off.iter().enumerate() {
            if let Some(k) = appended_off.iter().position(|o| *o == row) {
                appended_off.remove(k);
                released_off.insert(i);
            }
        }
        // Off-chain rows stored here are retired from the journal after this write: a restart
        // need not read their lines again.
        let checkpoint = journal.checkpoint_stored(stored_up_to);
        let (feed_state, summary) = (self.feed.clone(), self.summary.clone());
        let result = self.store_mut().atomically(|s| {
            if let Some(fork) = found.rewound_to {
                // The replaced blocks' logs and markets; the rescanned ones follow.
                s.forget_logs_after(fork)?;
                s.forget_markets_after(fork)?;
            }
            for log in &found.logs {
                s.add_log(log)?;
            }
            for k in &found.markets {
                s.add_market(k.info.address, k.seen_at, k)?;
            }
            for &(m, t) in &found.unasked {
                s.reset_last_asked(m, t)?;
            }
            for &(m, t) in &found.asked {
                s.set_last_asked(m, t)?;
            }
            for row in &ready {
                match row {
                    FeedRow::Decision(d) => {
                        s.add_decision(d, &serde_json::to_string(d).expect("rows serialize"))?
                    }
                    FeedRow::Offchain(_) => {}
                    closing => s.add_closing(
                        closing,
                        &serde_json::to_string(closing).expect("rows serialize"),
                    )?,
                }
            }
            for (i, (seq, _)) in ready_off.iter().enumerate() {
                if released_off.contains(&i) {
                    s.release_offchain(*seq)?;
                }
            }
            s.set_meta("cursor", &found.cursor)?;
            s.set_meta("feed", &feed_state)?;
            s.set_meta(SUMMARY_KEY, &summary)?;
            s.set_meta("journal", &checkpoint)?;
            s.set_meta(HEALTH_KEY, health)?;
            s.mark_complete()
        });
        if let Err(e) = result {
            // The feed is ahead of the state: the next start cuts it back.
            self.feed = before;
            return Err(e.into());
        }
        // The labels a rebuild took from the old feed are in the new one once appended.
        for row in &ready {
            if let (FeedRow::Decision(d), Ok(tx)) = (row, row_tx(row)) {
                self.legacy_notes.remove(&DecisionId { tx, log_index: d.log_index });
            }
        }
        out.appended = ready.len();
        Ok(out)
    }

    /// A reorg replaced blocks after `fork` whose rows are already in the feed: the feed is cut
    /// back to its last row at or before `fork` (the rows after it are appended again as the
    /// chain now has them), and the aggregates re-derived from the rows kept.
    fn cut_back(&mut self, facts: &GateFacts, fork: u64) -> Result<(), RecordError> {
        let path = self.dir.join(FEED_FILE);
        let text = std::fs::read_to_string(&path)
            .map_err(|source| RecordError::Read { path: path.clone(), source })?;
        let mut state = FeedState {
            head: feed::genesis_hash(facts.chain_id, facts.gate),
            ..FeedState::default()
        };
        let mut summary = Summary::default();
        for line in feed::feed_lines(&text) {
            let row: FeedRow = serde_json::from_str(line).map_err(|source| RecordError::Row {
                path: path.clone(),
                row: state.lines as usize + 1,
                source,
            })?;
            if row.sort_key().0 > fork {
                break;
            }
            state.bytes += line.len() as u64 + 1;
            state.lines += 1;
            state.last = Some(row.sort_key());
            state.head = keccak256(line.as_bytes());
            summary.add(&row);
        }
        warn!(feed = %path.display(), fork_block = fork, kept = state.lines, "a reorg replaced blocks whose rows were in the feed: cut back to block {fork}; the rows after it are appended again as the chain now has them");
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .map_err(|source| RecordError::Write { path: path.clone(), source })?;
        f.set_len(state.bytes)
            .map_err(|source| RecordError::Write { path: path.clone(), source })?;
        f.sync_all().map_err(|source| RecordError::Write { path: path.clone(), source })?;
        let store = self.store_mut();
        store.atomically(|s| {
            s.forget_decisions_after(fork)?;
            s.unrelease_offchain_after(fork)
        })?;
        self.feed = state;
        self.summary = summary;
        Ok(())
    }

    /// Marks `logs` (block, log index) cold in the store: their rows are in the feed and no
    /// open position needs them, so a restart does not load them.
    pub fn cool(&mut self, logs: &[(u64, u64)]) -> Result<(), RecordError> {
        if logs.is_empty() || self.store.is_none() {
            return Ok(());
        }
        self.store_mut().atomically(|s| {
            for &(b, i) in logs {
                s.cool_log(b, i)?;
            }
            Ok(())
        })?;
        Ok(())
    }

    /// Every log the store holds up to `fork` (after a reorg deeper than the feed, for the
    /// collector to take as its whole history).
    pub fn logs_up_to(&self, fork: u64) -> Result<Vec<Log>, RecordError> {
        Ok(self.store.as_ref().map(|s| s.all_logs(fork)).transpose()?.unwrap_or_default())
    }

    /// Whether the decision published by `tx` is in the feed (for the journal to retire it).
    pub fn published(&self, tx: &str) -> bool {
        self.store.as_ref().is_some_and(|s| s.has_decision_tx(tx).unwrap_or(false))
    }

    /// Rows in the record in all (for the figures): the feed's and the waiting ones.
    pub fn store(&self) -> Option<&Store> {
        self.store.as_ref()
    }
}

/// The transaction of a decision row, parsed.
fn row_tx(row: &FeedRow) -> Result<alloy::primitives::TxHash, ()> {
    match row {
        FeedRow::Decision(d) => d.tx.parse().map_err(|_| ()),
        _ => Err(()),
    }
}

/// Appends `bytes` to `path` and syncs it.
fn append(path: &Path, bytes: &[u8]) -> Result<(), RecordError> {
    let err = |source| RecordError::Write { path: path.to_path_buf(), source };
    let mut f = std::fs::OpenOptions::new().create(true).append(true).open(path).map_err(err)?;
    f.write_all(bytes).map_err(err)?;
    f.sync_data().map_err(err)
}

/// Checks the feed at `path` against `state`: the same length with its last line hashing to
/// the head, or longer (a crash after an append, before the state was saved: cut back to
/// `state.bytes`, returning the bytes cut). Anything else is an error saying why.
fn cut_to(path: &Path, state: &FeedState) -> Result<u64, String> {
    let len = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    if len < state.bytes {
        return Err(format!("it has {len} bytes, the state says {}", state.bytes));
    }
    if state.bytes > 0 {
        let mut f = std::fs::File::open(path).map_err(|e| e.to_string())?;
        // The last line ends at state.bytes; read back far enough to find its start.
        let mut back = 4096u64;
        let last = loop {
            let from = state.bytes.saturating_sub(back);
            f.seek(SeekFrom::Start(from)).map_err(|e| e.to_string())?;
            let mut buf = vec![0; (state.bytes - from) as usize];
            std::io::Read::read_exact(&mut f, &mut buf).map_err(|e| e.to_string())?;
            let body =
                buf.strip_suffix(b"\n").ok_or("its last line does not end where the state says")?;
            match body.iter().rposition(|&b| b == b'\n') {
                Some(i) => break body[i + 1..].to_vec(),
                None if from == 0 => break body.to_vec(),
                None => back *= 4,
            }
        };
        if keccak256(&last) != state.head {
            return Err("its last row does not hash to the head the state recorded".into());
        }
    }
    if len > state.bytes {
        let f = std::fs::OpenOptions::new().write(true).open(path).map_err(|e| e.to_string())?;
        f.set_len(state.bytes).map_err(|e| e.to_string())?;
        f.sync_all().map_err(|e| e.to_string())?;
    }
    Ok(len - state.bytes)
}
