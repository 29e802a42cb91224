//! An attested gate's submissions in both worlds (issues 35 and 37): `submitAttestedVerdicts`,
//! a batch of `submitAttested` calls sent in one transaction.
//!
//! The reference reads docs/attested.md ("What decides") and docs/gate.md ("Batches"), never
//! the Solidity:
//! 1. the gate's own admission of each element: a `readBlock` not mined yet
//!    (`ReadBlockInFuture`), a market of the factory;
//! 2. the attestor set's judgment of the element as the single call it is
//!    ([`attested::tally`]): reasons 21 and 22, the verdict reached, its price limit, the
//!    answer shown and the packed vote; an element the set cannot read reverts;
//! 3. the replay rule: a `readBlock` not above the last attested one of its market is 21, and
//!    every decision that is not 21 makes its `readBlock` the market's last;
//! 4. on reason 0, the verdict decided exactly as `submitVerdict` decides it, under the quote's
//!    `maxPricePaid` tightened to the set's limit (the lower of the two).
//!
//! A batch is refused whole, publishing and changing nothing, when it is empty or when any
//! element fails 1 or 2's reverts (the first such element in order: the conditions depend on
//! no state an earlier element changes); otherwise each element is decided in order against
//! the state the earlier ones left.
//!
//! The compiled world sends the batch as the keeper and holds every `Decision` to its shadow
//! ledger as it holds a relayed one ([`EvmWorld::follow_decision`]); what the set judged
//! (reason, verdict, vote, answer shown, prompt hash, the tightened quote) is left to the test to
//! compare with the reference's rows.

use super::{
    refused_row, Before, Error, EvmWorld, Published, ReadBefore, ReferenceWorld, Result, Row,
    BATCH_GAS_LIMIT, KEEPER,
};
use crate::{
    abi::{self, IGateMode},
    attested::{self, AttestorSetting, Judgment, TallyCall, TallyEnv, TallyRevert},
    evm::{Chain, Outcome},
    model::{self, GateConfig, Quote, ReadBlockInFuture, Verdict},
};
use alloy::{
    primitives::{Address, Bytes, B256, U256},
    sol_types::SolCall,
};
use std::collections::{BTreeMap, BTreeSet};

/// One `submitAttested` call as the keeper sends it: the arguments (the same as `tally`'s), and
/// what follows them in the call data (the `AttestedRead`, or less).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttestedItem {
    pub call: TallyCall,
    pub appended: Vec<u8>,
}

impl AttestedItem {
    /// The call's data after its selector: one element of `submitAttestedVerdicts`.
    pub fn element(&self) -> Vec<u8> {
        abi::attested_element(&self.call, &self.appended)
    }
}

/// One published attested decision: the row, and what its `Decision` shows of the answers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttestedRow {
    /// Its quote is the one evaluated (tightened to the set's limit) when a snapshot was
    /// logged, else the one sent.
    pub row: Row,
    /// The read's prompt hash, which every attestor signed.
    pub prompt_hash: B256,
    /// The answer shown: its first 64 bytes, its length and its keccak256.
    pub head: Vec<u8>,
    pub length: U256,
    pub hash: B256,
    /// The packed vote ([`attested::pack_vote`]).
    pub vote: Vec<u8>,
}

/// What an attested batch the gate took published.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttestedRows {
    /// One per element, in order.
    pub rows: Vec<AttestedRow>,
    /// Gas of the one transaction (EVM only).
    pub gas_used: Option<u64>,
}

/// Why the reference refuses an attested batch whole.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AttestedRefusal {
    /// No element (`BatchEmpty`).
    Empty,
    /// Element `index` names a block not mined yet.
    ReadBlockInFuture { index: usize, error: ReadBlockInFuture },
    /// The set cannot read element `index`: every revert of [`attested::tally`] that applies.
    Unreadable { index: usize, reverts: Vec<TallyRevert> },
}

impl AttestedRefusal {
    /// Every revert data the gate may refuse with (the text does not order the set's reverts,
    /// so any that applies is right).
    pub fn data(&self) -> Vec<Bytes> {
        match self {
            Self::Empty => vec![abi::batch_empty_data()],
            Self::ReadBlockInFuture { error, .. } => vec![abi::read_block_in_future_data(error)],
            Self::Unreadable { reverts, .. } => {
                reverts.iter().map(abi::tally_revert_data).collect()
            }
        }
    }
}

/// An element's admission: the set's judgment, or why the batch is refused.
enum Admitted {
    Judged(Judgment),
    Future(ReadBlockInFuture),
    Unreadable(Vec<TallyRevert>),
}

// --- the reference

impl ReferenceWorld {
    /// A gate deployed with `setting` (attested when it has signers), its attestors signing for
    /// `chain_id` and this world's [`ReferenceWorld::gate`].
    pub fn attested(
        config: &GateConfig,
        setting: &AttestorSetting,
        initial_collateral: U256,
        now_sec: u64,
        chain_id: u64,
    ) -> Self {
        Self {
            attestors: setting.clone(),
            chain_id,
            ..Self::new(config, initial_collateral, now_sec)
        }
    }

    /// `submitAttestedVerdicts(items)`: the rows of every element decided in order, or the
    /// refusal of the whole batch (see the module's text).
    pub fn submit_attested_batch(
        &mut self,
        items: &[AttestedItem],
    ) -> Result<std::result::Result<AttestedRows, AttestedRefusal>> {
        if !self.attestors.is_attested() {
            return Err(Error::WrongMode("submitAttestedVerdicts on a relayed gate"));
        }
        if items.is_empty() {
            return Ok(Err(AttestedRefusal::Empty));
        }
        let mut judged = Vec::with_capacity(items.len());
        for (index, item) in items.iter().enumerate() {
            match self.admit_attested(item)? {
                Admitted::Judged(j) => judged.push(j),
                Admitted::Future(error) => {
                    return Ok(Err(AttestedRefusal::ReadBlockInFuture { index, error }))
                }
                Admitted::Unreadable(reverts) => {
                    return Ok(Err(AttestedRefusal::Unreadable { index, reverts }))
                }
            }
        }
        let mut rows = Vec::with_capacity(items.len());
        for (item, judgment) in items.iter().zip(judged) {
            rows.push(self.conclude_attested(item, judgment)?);
        }
        Ok(Ok(AttestedRows { rows, gas_used: None }))
    }

    /// Steps 1 and 2 of the module's text for one element.
    fn admit_attested(&self, item: &AttestedItem) -> Result<Admitted> {
        let call = &item.call;
        if let Err(e) = model::check_read_block(call.read_block, self.block) {
            return Ok(Admitted::Future(e));
        }
        if !self.markets.contains_key(&call.market) {
            return Err(Error::UnknownMarket(call.market));
        }
        let env = TallyEnv { chain_id: self.chain_id, gate: self.gate, block_number: self.block };
        Ok(match attested::tally(&self.attestors, &env, call, &item.appended) {
            Ok(j) => Admitted::Judged(j),
            Err(reverts) => Admitted::Unreadable(reverts),
        })
    }

    /// Steps 3 and 4 of the module's text: the replay rule, then the decision.
    ///
    /// Where the text leaves a choice open, the choice made here:
    /// - a market with no attested read yet takes any `readBlock` (the text compares with "the
    ///   last attested `readBlock`", which does not exist yet; block 0 is never drawn);
    /// - a replayed read publishes no verdict (255), the set's vote, and the answer the set
    ///   showed: the first giving the verdict the attestors reached, which the replay rule then
    ///   refused (docs/attested.md, "The vote in the log", decided after this differential
    ///   found the text open: "the first sent on 21" was written for the set's own 21).
    fn conclude_attested(&mut self, item: &AttestedItem, j: Judgment) -> Result<AttestedRow> {
        let call = &item.call;
        let (market, read_block) = (call.market, call.read_block);
        let mut reason = j.reason;
        let mut verdict = j.verdict;
        if reason != attested::REASON_NOT_ATTESTED {
            let replayed = self.last_attested.get(&market).is_some_and(|&last| read_block <= last);
            if replayed {
                reason = attested::REASON_NOT_ATTESTED;
                verdict = attested::VERDICT_INVALID;
            } else {
                self.last_attested.insert(market, read_block);
            }
        }
        let taken = Verdict::ALL.into_iter().find(|v| v.code() == verdict);
        let mut row = match (reason, taken) {
            (0, Some(v)) => {
                let tightened = Quote {
                    max_price_paid: call.quote.max_price_paid.min(j.limit),
                    deadline_sec: call.quote.deadline_sec,
                };
                self.decide(market, read_block, v, &tightened)?
            }
            _ => refused_row(market, read_block, reason, verdict, &call.quote),
        };
        if row.snapshot.is_none() {
            // Nothing evaluated: the Decision logs no quote, and the row carries the one sent.
            row.quote = call.quote;
        }
        Ok(AttestedRow {
            row,
            prompt_hash: j.prompt_hash,
            head: j.head,
            length: U256::from(j.length),
            hash: j.hash,
            vote: j.vote,
        })
    }
}

// --- the compiled contracts

impl EvmWorld {
    /// The chain's id (EIP-712's `chainId` for the gate's attestors).
    pub fn chain_id(&mut self) -> Result<u64> {
        Ok(self.chain.chain_id()?)
    }

    /// The keeper's `submitAttestedVerdicts(items)` in one transaction of
    /// [`BATCH_GAS_LIMIT`] gas: every published decision held to the shadow ledger as a
    /// relayed one is (its market and `readBlock` against the element's, the snapshot against
    /// the books and previews read before the batch, as in [`super::World::submit_batch`]), the
    /// returned reasons against the published ones, and the gate's state after; or the revert
    /// data of a batch refused whole, which may log and move nothing.
    pub fn submit_attested_batch(
        &mut self,
        items: &[AttestedItem],
    ) -> Result<std::result::Result<AttestedRows, Bytes>> {
        let what = "submitAttestedVerdicts";
        if let Some(unknown) = items.iter().find(|it| !self.markets.contains_key(&it.call.market)) {
            return Err(Error::UnknownMarket(unknown.call.market));
        }
        let reads = self.reads_before(items.iter().map(|it| it.call.market))?;
        let elements: Vec<Vec<u8>> = items.iter().map(AttestedItem::element).collect();
        let data = abi::submit_attested_verdicts_calldata(&elements);
        let gate = self.gate;
        let receipt = self.chain.send_with_gas_limit(KEEPER, gate, data, BATCH_GAS_LIMIT)?;
        let returned = match &receipt.outcome {
            Outcome::Returned(d) => d.clone(),
            Outcome::Reverted(d) => {
                if !receipt.logs.is_empty() {
                    self.disagree(format!("a refused {what} logged {:?}", receipt.logs));
                }
                self.compare_state(&format!("a refused {what}"))?;
                return Ok(Err(d.clone()));
            }
            Outcome::Halted(r) => {
                return Err(Error::Reverted { what: what.into(), revert: r.clone() })
            }
        };
        let reasons =
            IGateMode::submitAttestedVerdictsCall::abi_decode_returns(&returned).map_err(|e| {
                Error::Decode { what: format!("{what}' return"), reason: e.to_string() }
            })?;
        let published = self.batch_decisions(what, &receipt, items.len())?;
        let mut bought: BTreeSet<Address> = BTreeSet::new();
        let mut rows = Vec::with_capacity(items.len());
        for (i, (item, p)) in items.iter().zip(&published).enumerate() {
            let element = format!("{what} element {i}");
            let row = self.check_attested_decision(&element, item, p, &reads, &bought)?;
            if row.row.reason == 0 {
                bought.insert(item.call.market);
            }
            rows.push(row);
        }
        let published_reasons: Vec<u8> = rows.iter().map(|r| r.row.reason).collect();
        if reasons != published_reasons {
            self.disagree(format!(
                "{what} returned reasons {reasons:?}; its Decisions publish {published_reasons:?}"
            ));
        }
        self.compare_state(what)?;
        Ok(Ok(AttestedRows { rows, gas_used: Some(receipt.gas_used) }))
    }

    fn check_attested_decision(
        &mut self,
        what: &str,
        item: &AttestedItem,
        published: &Published,
        reads: &BTreeMap<Address, ReadBefore>,
        bought: &BTreeSet<Address>,
    ) -> Result<AttestedRow> {
        let e = &published.decision;
        let call = &item.call;
        let row = super::row_of(e, &call.quote, None)?;
        if row.market != call.market || e.readBlock != call.read_block {
            self.disagree(format!(
                "{what}: the Decision names {} at readBlock {}; the keeper sent {} at {}",
                row.market, e.readBlock, call.market, call.read_block
            ));
        }
        let before = Before::in_batch(reads, bought, call.market);
        self.follow_decision(what, &row, published, before);
        Ok(AttestedRow {
            row,
            prompt_hash: e.promptHash,
            head: e.rawHead.to_vec(),
            length: e.rawLength,
            hash: e.rawHash,
            vote: e.vote.to_vec(),
        })
    }
}
