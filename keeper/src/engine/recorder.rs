//! The recorder stage: where the record goes. It owns the results folder and the notes of
//! decisions made before the journal existed, and writes the feed, its head hash, the chart
//! and RESULTS.md from the collector's record and the executor's journal. Rendering and the
//! hash chain are [`crate::recorder`]'s.

use crate::{
    decision::{ChainRecord, DecisionId, FeedRow, GateFacts, RowNote},
    journal::{self, Entry, Journal},
    recorder::{self, feed, RecordError, FEED_FILE, HEAD_FILE},
};
use alloy::primitives::Address;
use std::{collections::BTreeMap, path::PathBuf};
use tracing::warn;

pub struct Recorder {
    dir: PathBuf,
    /// Notes of decisions made before the journal existed, from the feed on disk.
    legacy_notes: BTreeMap<DecisionId, RowNote>,
}

impl Recorder {
    pub fn new(dir: PathBuf) -> Self {
        Self { dir, legacy_notes: BTreeMap::new() }
    }

    /// Opens the folder's journal (creating it) and the feed already there, of `gate` on
    /// `chain_id`: notes and off-chain rows of a feed written before the journal existed are
    /// kept (the rows move into the new journal, once), and a feed of another chain or gate is
    /// refused.
    pub fn open(&mut self, chain_id: u64, gate: Address) -> Result<Journal, super::RunError> {
        let dir = &self.dir;
        let rows = feed::read_feed_for(&dir.join(FEED_FILE), chain_id, gate)?;
        // The keeper re-links the whole feed on every write: a feed edited since it was last
        // written would be sealed silently. Say so before that happens.
        // A folder with neither file is a first start: nothing to check.
        let nothing_yet = !dir.join(FEED_FILE).exists() && !dir.join(HEAD_FILE).exists();
        let problems = if nothing_yet {
            Vec::new()
        } else {
            feed::check_links_in(dir, chain_id, gate)?.problems
        };
        for problem in &problems {
            warn!(feed = %dir.join(FEED_FILE).display(), problem = %problem, "the feed on disk is not the one the keeper wrote last (edited, or a crash between feed.jsonl and feed.head); it is re-written from the chain and the journal");
        }
        let fresh = !dir.join(journal::JOURNAL_FILE).exists();
        let mut journal = Journal::open_for(dir, chain_id, gate)?;
        let (notes, off) = feed::split_feed(&rows);
        self.legacy_notes = notes;
        if fresh {
            // A feed from before the journal: its off-chain rows move into the journal, once.
            for row in off {
                journal.append(Entry::Offchain(row))?;
            }
        }
        Ok(journal)
    }

    /// All feed rows: `record`'s confirmed chain rows with their notes (from the journal's
    /// submission that published each, else from the feed before the journal), plus the
    /// journal's off-chain rows.
    pub fn rows(&self, record: &ChainRecord, journal: &Journal) -> Vec<FeedRow> {
        let mut notes = BTreeMap::new();
        for d in &record.decided {
            let from_journal = journal
                .by_tx(d.id.tx)
                .map(|t| RowNote { note: t.sub.note.clone(), raw: Some(t.sub.raw.clone()) });
            if let Some(n) = from_journal.or_else(|| self.legacy_notes.get(&d.id).cloned()) {
                notes.insert(d.id, n);
            }
        }
        feed::merge(record, &notes, journal.offchain())
    }

    /// Writes the record (strategy text, feed, head hash, chart, RESULTS.md) atomically.
    pub fn write(
        &self,
        facts: &GateFacts,
        record: &ChainRecord,
        journal: &Journal,
        strategy_text: &str,
    ) -> Result<(), RecordError> {
        recorder::publish_strategy(&self.dir, strategy_text)?;
        recorder::write_record(&self.dir, facts, record, &self.rows(record, journal))
    }
}
