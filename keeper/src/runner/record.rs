//! Stage 6, record: off-chain rows journalled the moment they happen, and the record (feed,
//! head hash, chart, RESULTS.md) written from confirmed chain rows, the journal's notes and
//! the off-chain rows.

use super::*;

impl Keeper {
    pub(super) fn offchain_row(
        &self,
        head: BlockRef,
        market: Address,
        prompt_hash: Option<B256>,
        error: String,
        note: Annotation,
    ) -> OffchainRow {
        OffchainRow {
            chain_id: self.chain_id,
            gate: self.gate.to_checksum(None),
            block: head.number,
            time: head.time,
            market: market.to_checksum(None),
            prompt_hash: prompt_hash.map(|h| h.to_string()),
            error,
            transport: feed::TransportDetail::default(),
            note,
        }
    }

    /// Journals an off-chain row now, at the last head read.
    pub(super) fn offchain(
        &mut self,
        market: Address,
        prompt_hash: Option<B256>,
        error: String,
        note: Annotation,
    ) -> Result<()> {
        let head = self.last_step.head;
        self.offchain_at(head, market, prompt_hash, error, note)
    }

    pub(super) fn offchain_at(
        &mut self,
        head: BlockRef,
        market: Address,
        prompt_hash: Option<B256>,
        error: String,
        note: Annotation,
    ) -> Result<()> {
        let row = self.offchain_row(head, market, prompt_hash, error, note);
        self.journal.append(Entry::Offchain(row))?;
        Ok(())
    }

    /// Notes of the record's decisions: from the journal (the submission whose transaction
    /// published it), else from the feed written before the journal existed.
    pub(super) fn notes(&self) -> BTreeMap<DecisionId, RowNote> {
        let mut notes = BTreeMap::new();
        for d in &self.record.decided {
            let from_journal = self
                .journal
                .by_tx(d.id.tx)
                .map(|t| RowNote { note: t.sub.note.clone(), raw: Some(t.sub.raw.clone()) });
            if let Some(n) = from_journal.or_else(|| self.legacy_notes.get(&d.id).cloned()) {
                notes.insert(d.id, n);
            }
        }
        notes
    }

    /// Every off-chain row so far (each journalled when it happened).
    pub fn offchain_rows(&self) -> &[OffchainRow] {
        self.journal.offchain()
    }

    /// All feed rows: confirmed chain rows with their notes, plus off-chain rows.
    pub(super) fn rows(&self) -> Vec<feed::FeedRow> {
        feed::merge(&self.record, &self.notes(), self.journal.offchain())
    }

    /// Writes the record (feed, head hash, chart, RESULTS.md) atomically.
    pub fn write_results(&self) -> Result<()> {
        let (Some(dir), Some(facts)) = (&self.results, &self.facts) else { return Ok(()) };
        recorder::publish_strategy(dir, &self.strategy_text)?;
        recorder::write_record(dir, facts, &self.record, &self.rows())?;
        Ok(())
    }
}
