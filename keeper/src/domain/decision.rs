//! The values a decision is made of, from read to row, in one module every stage imports
//! downward: the collector's reads and the gate's facts, the strategy's answers, the
//! executor's submissions and failures, the journal's annotations and off-chain rows, and the
//! record the follower rebuilds from logs. Nothing here talks to a node or a disk; the
//! recorder keeps only decoding, the hash chain and rendering.

use crate::kit::bindings::{
    verdict,
    IRiskGate::{self, Quote},
};
use alloy::primitives::{Address, Bytes, TxHash, B256, U256};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// The transaction that published a decision and the index of its `Decision` log in the block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DecisionId {
    pub tx: TxHash,
    pub log_index: u64,
}

/// A block as the keeper saw it: number, hash, and chain time (the clock the gate uses).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BlockRef {
    pub number: u64,
    pub hash: B256,
    pub time: u64,
}

/// The gate's fixed facts, read from chain for RESULTS.md.
#[derive(Debug, Clone)]
pub struct GateFacts {
    pub gate: Address,
    pub chain_id: u64,
    pub deploy_block: Option<u64>,
    pub params_hash: B256,
    pub bounds: IRiskGate::Params,
    pub trusted_resolvers: Vec<Address>,
    /// The gate's trusted market creators (v2.1), ascending.
    pub trusted_creators: Vec<Address>,
    pub keeper: Address,
    pub collateral: Address,
    pub factory: Address,
    /// reasonLabel(0..REASON_COUNT), verbatim from the gate.
    pub labels: Vec<String>,
    /// An attested gate's attestors (issue 35); None on a relayed gate.
    pub attestors: Option<AttestorFacts>,
    /// A consensus gate's verdict source (issue 36); None on the other modes.
    pub verdict_source: Option<Address>,
    /// The collateral token's symbol as the pages show it: [`crate::domain::format::token_symbol`] of
    /// what the token's `symbol()` returned.
    pub symbol: String,
}

/// An attested gate's attestor set, fixed at deploy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttestorFacts {
    /// The set's own contract.
    pub set: Address,
    /// Ascending.
    pub signers: Vec<Address>,
    /// `k`: agreeing answers a verdict needs.
    pub threshold: u8,
    /// Blocks a read may be behind the block that includes it.
    pub max_read_age: u32,
    /// Over the attested price of the side bought.
    pub max_slippage_bps: u16,
}

impl AttestorFacts {
    /// The mode in one line, for the pages: who decides, and what a reader need not trust.
    pub fn mode_line(&self) -> String {
        format!(
            "attested: an answer counts only when {} of these {} attestors signed the same \
             verdict over the same read (EIP-712, checked on chain); reads at most {} blocks old; \
             price at most the attested price + {} bps",
            self.threshold,
            self.signers.len(),
            self.max_read_age,
            self.max_slippage_bps
        )
    }
}

/// A relayed gate's mode in one line, for the pages.
pub const RELAYED_MODE_LINE: &str = "relayed: the keeper submits each answer (`submitVerdict`); \
    nothing on chain ties it to a model, so the answers are the keeper's word";

impl GateFacts {
    /// The gate's mode in one line, for the pages: relayed, attested or consensus.
    pub fn mode_line(&self) -> String {
        if let Some(a) = &self.attestors {
            return a.mode_line();
        }
        match self.verdict_source {
            Some(source) => format!(
                "consensus: decisions come only from the verdict source {source}, which builds \
                 each prompt on chain and counts the validators' identical answers itself; the \
                 keeper submits nothing (docs/somnia.md)"
            ),
            None => RELAYED_MODE_LINE.to_string(),
        }
    }
}

/// Bytes the gate trims from both ends of an answer: tab, LF, CR, space, `"` and `'`.
const TRIM: [u8; 6] = [b'\t', b'\n', b'\r', b' ', b'"', b'\''];

/// Longest answer the gate looks at (`VerdictParser.MAX_RAW_LENGTH`, the same 64 bytes as
/// the head a `Decision` log carries).
const MAX_RAW_LENGTH: usize = crate::kit::bindings::RAW_HEAD_BYTES;

/// The verdict the gate will read from `raw`: `verdict::INVALID` when it will not parse.
pub fn gate_verdict(raw: &str) -> u8 {
    let bytes = raw.as_bytes();
    if bytes.len() > MAX_RAW_LENGTH {
        return verdict::INVALID;
    }
    let start = bytes.iter().position(|b| !TRIM.contains(b)).unwrap_or(bytes.len());
    let end = bytes.iter().rposition(|b| !TRIM.contains(b)).map_or(start, |i| i + 1);
    match &bytes[start..end.max(start)] {
        b"ABSTAIN" => verdict::ABSTAIN,
        b"BUY_UP" => verdict::BUY_UP,
        b"BUY_DOWN" => verdict::BUY_DOWN,
        _ => verdict::INVALID,
    }
}

/// A model answer ready to submit, with the keeper's quote for it and the read it came from.
#[derive(Debug, Clone)]
pub struct Answer {
    pub market: Address,
    pub raw: String,
    pub prompt_hash: B256,
    pub quote: Quote,
    pub note: Annotation,
    pub read: BlockRef,
    /// On an attested gate: the signed answers the call carries (`raw` is then the one the
    /// gate will show, `prompt_hash` the attested one, and the quote's deadline the signed one).
    pub attested: Option<Attestations>,
}

/// What an attested submission carries besides the pinned arguments (issue 35): each
/// attestor's answer and signature, in ascending signer order as the gate requires, and the
/// book every one of them signed (the best bid and ask at the read block; the prompt's hash is
/// the submission's own). Journalled with the submission, so a re-send rebuilds the same call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attestations {
    pub best_bid: U256,
    pub best_ask: U256,
    /// The signers, ascending; `raws[i]` and `sigs[i]` are `signers[i]`'s.
    pub signers: Vec<Address>,
    /// The answers verbatim (hostile text).
    pub raws: Vec<String>,
    /// 65 bytes each.
    pub sigs: Vec<Bytes>,
    /// The model each attestor named, in the same order (shown, never trusted).
    #[serde(default)]
    pub models: Vec<String>,
}

/// A market the model gave no answer about: the ask (or the read before it) failed.
#[derive(Debug, Clone)]
pub struct Unanswered {
    pub market: Address,
    /// None when no prompt was rendered (the book read before it failed).
    pub prompt_hash: Option<B256>,
    /// Whose failure it was: only the model's count toward its backoff and breaker.
    pub cause: WhyUnanswered,
    /// The failure with its whole cause chain, on one line.
    pub error: String,
    pub detail: TransportDetail,
}

/// Why a market got no answer, as far as the inference health is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WhyUnanswered {
    /// The model (or its server) did not answer: counts toward the backoff and the breaker.
    Model,
    /// The chain or the market failed before the ask: says nothing about the model.
    Read,
    /// The keeper was stopped while the model was asked: the answer is dropped, and its row
    /// says so, so a reader sees the ask; nothing about the model.
    Shutdown,
}

/// One submission that reached the chain: its `Decision`, decoded from the transaction's own
/// receipt, so the row keeps the identity it had from the read.
#[derive(Debug, Clone)]
pub struct Submitted {
    /// The submission's id in the journal.
    pub id: u64,
    /// The decision's identity on chain, as its row in the record carries it.
    pub decision: DecisionId,
    pub reason: u8,
}

/// A failure that never reached the chain, as a stage returns it: the executor journals it as
/// an off-chain row of its gate, at `at` (or at the newest head it has seen).
#[derive(Debug, Clone)]
pub struct Failure {
    pub market: Address,
    pub prompt_hash: Option<B256>,
    pub error: String,
    pub note: Annotation,
    pub transport: TransportDetail,
    /// The block the failure is of; None: the newest head the executor has seen.
    pub at: Option<BlockRef>,
}

impl Failure {
    pub fn new(market: Address, at: Option<BlockRef>, error: String) -> Self {
        Self {
            market,
            prompt_hash: None,
            error,
            note: Annotation::default(),
            transport: TransportDetail::default(),
            at,
        }
    }

    /// The same failure, about the prompt `hash` answered under `note`.
    pub fn about(mut self, hash: Option<B256>, note: Annotation) -> Self {
        self.prompt_hash = hash;
        self.note = note;
        self
    }

    /// Its row in the record of `gate` on `chain_id`, dated by `at` (or by `head`).
    pub fn into_row(self, chain_id: u64, gate: Address, head: BlockRef) -> OffchainRow {
        let at = self.at.unwrap_or(head);
        OffchainRow {
            chain_id,
            gate: gate.to_checksum(None),
            block: at.number,
            time: at.time,
            market: self.market.to_checksum(None),
            prompt_hash: self.prompt_hash.map(|h| h.to_string()),
            error: self.error,
            transport: self.transport,
            note: self.note,
        }
    }
}

/// What the keeper itself says about a row (not on chain): who answered, under which strategy,
/// in which labelled scenario.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Annotation {
    pub provider: Option<String>,
    /// Who answered: for a server, the `model` its response named (never only what the keeper
    /// asked for); for the built-in rules and replays, their label.
    pub model: Option<String>,
    pub strategy_hash: Option<String>,
    pub scenario: Option<String>,
    /// What answered: "rules", "replay", or "language model: ..." with its size and
    /// quantisation where known. Absent in rows written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_kind: Option<String>,
    /// The model file's sha256, where the keeper knows it (the bundled model, whose file
    /// `make bootstrap` checked against tools/llm.lock and whose server the keeper started).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_sha256: Option<String>,
    /// How the answer arrived: content, tool_call, refusal, rules or replay.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arrival: Option<String>,
    /// The user part of the prompt as sent (the system part is the fixed text and the
    /// strategy): `report --check-prompts` re-renders it from chain data and, when the hash
    /// differs, names the first line that does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
}

/// What the gate read, as published in the `Decision` event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BookRead {
    pub best_bid: String,
    pub best_ask: String,
    pub tick_size: String,
    pub lot_size: String,
    pub min_quantity: String,
    pub expiry: u64,
    pub now: u64,
    pub finalized: bool,
    pub open_positions: u8,
    pub open_notional: String,
    pub collateral_available: String,
    /// The market's `resolver()` is one of the gate's trusted resolvers.
    pub resolver_trusted: bool,
    /// The gate's position in this market before the decision: 0 none, 1 UP, 2 DOWN.
    pub held_side: u8,
    /// The high-water mark H the rules read (already raised to the equity seen).
    pub high_water_mark: String,
    /// The factory's `creatorOf(market)` is one of the gate's trusted creators (v2.1; a row
    /// from a v2 gate, which had no such rule, reads back `true`).
    #[serde(default = "yes")]
    pub creator_trusted: bool,
}

fn yes() -> bool {
    true
}

/// The keeper's quote as the gate evaluated it (BUY_UP and BUY_DOWN only).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct QuoteRead {
    /// Worst price accepted for the token bought, 1e6 units.
    pub max_price_paid: String,
    /// Chain time after which the answer is stale.
    pub deadline: u64,
}

/// Reason 18: what the market offered and the gate undid; nothing moved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AttemptedFill {
    pub filled: String,
    pub spent: String,
    /// What that fill would have cost per unit on average, `ceil(spent × 1e6 / filled)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub average_price_paid: Option<String>,
}

/// The average price paid per unit of a fill, in 1e6 units: `ceil(spent × 1e6 / filled)`,
/// rounded up like every cost the gate counts; `None` for no fill. It differs from the order's
/// `pricePaid` (the best level's price) when the IOC swept more than one level.
pub fn average_price_paid(filled: U256, spent: U256) -> Option<U256> {
    if filled.is_zero() {
        return None;
    }
    Some((spent * U256::from(crate::kit::bindings::PRICE_ONE)).div_ceil(filled))
}

/// A position's settlement, attached to the rows that built it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Settlement {
    pub block: u64,
    pub tx: String,
    pub up_won: bool,
    pub up_units: String,
    pub down_units: String,
    pub notional: String,
    pub payout: String,
    /// payout - notional, in collateral base units (signed).
    pub pnl: String,
    /// Chain time of its block: where the P&L line puts the settlement, and whether a
    /// written-off row is published with it ([`crate::record::feed::as_published`]). A row
    /// from a feed written before it was published reads 0.
    #[serde(default)]
    pub time: u64,
}

/// Equal whatever `time` says: a row from a feed written before the time was published
/// (0) is still the same settlement (`report --check` compares the published time itself).
impl PartialEq for Settlement {
    fn eq(&self, o: &Self) -> bool {
        (&self.block, &self.tx, self.up_won, &self.up_units, &self.down_units)
            == (&o.block, &o.tx, o.up_won, &o.up_units, &o.down_units)
            && (&self.notional, &self.payout, &self.pnl) == (&o.notional, &o.payout, &o.pnl)
    }
}

impl Eq for Settlement {}

/// A position counted as lost because its market did not finalize by `expiry + writeOffGrace`;
/// its slot and notional were released. A later settlement still collects.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WriteOff {
    pub block: u64,
    pub time: u64,
    pub tx: String,
    pub up_units: String,
    pub down_units: String,
    pub notional: String,
    pub expiry: u64,
}

/// One published decision, rebuilt from its `Decision` event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DecisionRow {
    pub chain_id: u64,
    /// The gate that published it, checksummed. Empty only in a row read from a feed written
    /// before rows named their gate, which `read_feed_for` refuses.
    #[serde(default)]
    pub gate: String,
    pub block: u64,
    pub log_index: u64,
    pub tx: String,
    pub time: u64,
    pub market: String,
    pub prompt_hash: String,
    /// The block whose book and timestamp the prompt was rendered from (the `Decision`'s
    /// `readBlock`): with the strategy text and the market's logs it re-derives `prompt_hash`.
    pub read_block: u64,
    /// The model's whole answer exactly as submitted (JSON-escaped by serialization). The chain
    /// logs only its first 64 bytes, its length and its keccak256, so this comes from the
    /// keeper's record and is checked against them; `None` when rebuilt from chain alone and the
    /// logged head is not the whole answer.
    pub raw: Option<String>,
    /// Length of the answer in bytes, from the chain.
    pub raw_length: u64,
    /// keccak256 of the answer, from the chain.
    pub raw_hash: String,
    /// 0 ABSTAIN, 1 BUY_UP, 2 BUY_DOWN, 255 unparseable.
    pub verdict: u8,
    pub reason: u8,
    pub reason_label: String,
    pub failed_mask: u32,
    pub failed_rules: Vec<u8>,
    /// What the gate read; None when it evaluated nothing (ABSTAIN, unparseable).
    pub book: Option<BookRead>,
    /// The keeper's quote as the gate evaluated it; None when it evaluated nothing.
    pub quote: Option<QuoteRead>,
    /// The BEST LEVEL's price for the token bought (`Order.pricePaid`), 1e6 units: not what
    /// the fill cost on average when it swept several levels (see `average_price_paid`).
    pub price_paid: String,
    /// The average price paid per unit filled, `ceil(spent × 1e6 / filled)`, 1e6 units; present
    /// exactly when something was bought (`filled` > 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub average_price_paid: Option<String>,
    /// The order's limit for the token bought: min(maxPrice, maxPricePaid) on the tick grid.
    pub limit: String,
    pub quantity: String,
    pub cost: String,
    /// Units bought and collateral spent (0 on reason 18, where the fill was undone).
    pub filled: String,
    pub spent: String,
    /// Reason 18 only: the fill the market offered, undone by the gate.
    pub attempted_fill: Option<AttemptedFill>,
    /// The settlement that closed the position this row bought into, attached for a view
    /// (the pages, the floor): the feed never carries it in the row, since a decision enters
    /// the feed when it is confirmed and its settlement later, as a row of its own
    /// ([`FeedRow::Settlement`]) naming it. A row of a v1 feed read back may carry one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settlement: Option<Settlement>,
    /// The write-off of its position, attached for a view as `settlement` is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_off: Option<WriteOff>,
    /// The publishing transaction's gas, from its receipt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gas: Option<TxGas>,
    /// An attested gate's vote (issue 35), from the `Decision` log: absent on a relayed gate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vote: Option<VoteRow>,
    #[serde(flatten)]
    pub note: Annotation,
}

/// An attested decision's vote as its `Decision` published it: how many answers gave each
/// verdict, and each answer in the order sent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VoteRow {
    pub counts: VoteCounts,
    pub answers: Vec<VoteAnswer>,
}

/// Answers per verdict, as the gate's parser read them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct VoteCounts {
    pub abstain: u8,
    pub buy_up: u8,
    pub buy_down: u8,
    pub unparseable: u8,
}

impl VoteCounts {
    /// The count of `verdict` (0 ABSTAIN, 1 BUY_UP, 2 BUY_DOWN, anything else unparseable).
    pub fn of(&self, verdict: u8) -> u8 {
        match verdict {
            verdict::ABSTAIN => self.abstain,
            verdict::BUY_UP => self.buy_up,
            verdict::BUY_DOWN => self.buy_down,
            _ => self.unparseable,
        }
    }

    pub fn total(&self) -> usize {
        [self.abstain, self.buy_up, self.buy_down, self.unparseable]
            .iter()
            .map(|&c| usize::from(c))
            .sum()
    }
}

impl VoteRow {
    /// The counts in words, e.g. "BUY_UP 2, BUY_DOWN 1" (verdicts with no answer left out).
    pub fn counts_line(&self) -> String {
        let c = &self.counts;
        [
            ("ABSTAIN", c.abstain),
            ("BUY_UP", c.buy_up),
            ("BUY_DOWN", c.buy_down),
            ("unparseable", c.unparseable),
        ]
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(name, n)| format!("{name} {n}"))
        .collect::<Vec<_>>()
        .join(", ")
    }
}

impl VoteAnswer {
    /// The verdict this answer gave, read from its head as the gate's parser reads the whole
    /// answer (an answer longer than the head is unparseable to the gate too).
    pub fn verdict(&self) -> u8 {
        if self.length as usize > crate::kit::bindings::RAW_HEAD_BYTES {
            return verdict::INVALID;
        }
        gate_verdict(&self.head)
    }
}

/// One attestor's answer in a published vote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VoteAnswer {
    /// Checksummed; the zero address when its signature did not recover.
    pub signer: String,
    /// The answer's length in bytes, and its keccak256.
    pub length: u32,
    pub hash: String,
    /// Its first min(length, 64) bytes (invalid UTF-8 replaced: the hash is of the bytes).
    pub head: String,
}

/// What the transaction that published a decision cost its sender, from its receipt: the gas
/// it used and the price it paid per gas, in wei of the chain's native coin. A transaction may
/// publish several decisions (a batch): each of its rows carries the same figures, and a total
/// counts the transaction once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TxGas {
    pub gas_used: u64,
    pub gas_price: String,
}

impl TxGas {
    /// gas used × price, in wei.
    pub fn fee(&self) -> u128 {
        u128::from(self.gas_used).saturating_mul(self.gas_price.parse().unwrap_or(0))
    }
}

/// What the keeper knows about one of its decisions that the chain does not: who answered and
/// in which scenario, and the whole answer (the chain has its head, length and hash).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RowNote {
    pub note: Annotation,
    pub raw: Option<String>,
}

/// A failure that never reached the chain (inference error, send error, revert).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OffchainRow {
    pub chain_id: u64,
    /// The gate the keeper was working for, checksummed (empty only in an old feed's row,
    /// which `read_feed_for` refuses).
    #[serde(default)]
    pub gate: String,
    /// Head block when the failure was observed.
    pub block: u64,
    pub time: u64,
    pub market: String,
    pub prompt_hash: Option<String>,
    pub error: String,
    /// What the failed inference exchange returned, when it was one.
    #[serde(flatten)]
    pub transport: TransportDetail,
    #[serde(flatten)]
    pub note: Annotation,
}

/// The facts of a failed inference exchange an off-chain row keeps: the HTTP status and body
/// (truncated) when a response came back, its `finish_reason`, and which attempt failed. Rows
/// written before these fields existed read back with them absent.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TransportDetail {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_status: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt: Option<u32>,
}

/// The decision a closing row names: its transaction and the index of its `Decision` log.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct DecisionRef {
    pub tx: String,
    pub log_index: u64,
}

/// A gate event that closes a position (`Settled` or `WrittenOff`), as a feed row of its own:
/// where it was logged, and the decisions whose fills made the position it closes, in chain
/// order. `event` holds its block, transaction and chain time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Closing<E> {
    pub chain_id: u64,
    pub gate: String,
    pub log_index: u64,
    pub market: String,
    pub closes: Vec<DecisionRef>,
    #[serde(flatten)]
    pub event: E,
}

/// One row of the feed. The feed is an event log in chain order: a decision enters once it is
/// confirmed, and what later happens to its position enters as rows of their own that name it
/// (a settlement; a write-off; a late payout, the settlement of a position already written
/// off). Nothing once written changes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
// Rows are few and short-lived; boxing the big variant would only add noise to every match.
#[allow(clippy::large_enum_variant)]
pub enum FeedRow {
    Decision(DecisionRow),
    Offchain(OffchainRow),
    Settlement(Closing<Settlement>),
    WriteOff(Closing<WriteOff>),
    LatePayout(Closing<Settlement>),
}

impl FeedRow {
    /// The chain id and gate (checksummed; empty in an old feed's row) the row names.
    pub fn owner(&self) -> (u64, &str) {
        match self {
            Self::Decision(d) => (d.chain_id, &d.gate),
            Self::Offchain(o) => (o.chain_id, &o.gate),
            Self::Settlement(c) | Self::LatePayout(c) => (c.chain_id, &c.gate),
            Self::WriteOff(c) => (c.chain_id, &c.gate),
        }
    }

    /// Where the row sits in the feed: (block, 0 for a chain event or 1 for an off-chain row,
    /// log index).
    pub(crate) fn sort_key(&self) -> (u64, u8, u64) {
        match self {
            Self::Decision(d) => (d.block, 0, d.log_index),
            Self::Offchain(o) => (o.block, 1, 0),
            Self::Settlement(c) | Self::LatePayout(c) => (c.event.block, 0, c.log_index),
            Self::WriteOff(c) => (c.event.block, 0, c.log_index),
        }
    }

    /// The decisions a closing row names (none for a decision or an off-chain row).
    pub fn closes(&self) -> &[DecisionRef] {
        match self {
            Self::Settlement(c) | Self::LatePayout(c) => &c.closes,
            Self::WriteOff(c) => &c.closes,
            _ => &[],
        }
    }

    /// Attaches this closing row to `d`, one of the decisions it names, as a view shows it
    /// (a no-op for any other row).
    pub fn attach_to(&self, d: &mut DecisionRow) {
        match self {
            Self::Settlement(c) | Self::LatePayout(c) => d.settlement = Some(c.event.clone()),
            Self::WriteOff(c) => d.write_off = Some(c.event.clone()),
            _ => {}
        }
    }
}

impl DecisionRow {
    /// How closing rows name this decision.
    pub fn reference(&self) -> DecisionRef {
        DecisionRef { tx: self.tx.clone(), log_index: self.log_index }
    }

    /// A row of `market` at `block` with every other field empty or zero, for unit tests to
    /// fill in the fields they are about.
    #[cfg(test)]
    pub fn blank(block: u64, market: &str) -> Self {
        Self {
            chain_id: 1,
            gate: String::new(),
            block,
            log_index: 0,
            tx: format!("0x{block:064x}"),
            time: 0,
            market: market.into(),
            prompt_hash: String::new(),
            read_block: block,
            raw: None,
            raw_length: 0,
            raw_hash: String::new(),
            verdict: 0,
            reason: 0,
            reason_label: String::new(),
            failed_mask: 0,
            failed_rules: vec![],
            book: None,
            quote: None,
            price_paid: "0".into(),
            average_price_paid: None,
            limit: "0".into(),
            quantity: "0".into(),
            cost: "0".into(),
            filled: "0".into(),
            spent: "0".into(),
            attempted_fill: None,
            settlement: None,
            write_off: None,
            gas: None,
            vote: None,
            note: Annotation::default(),
        }
    }
}

/// A decision as the stages act on it, typed; its row's strings stay in the recorder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decided {
    pub id: DecisionId,
    pub market: Address,
    pub block: u64,
    /// Chain time of its block.
    pub time: u64,
    pub reason: u8,
    /// The gate holds what it bought (a fill the gate undid, reason 18, bought nothing).
    pub bought: bool,
    /// A `Settled` of its market came after it.
    pub settled: bool,
    /// A `WrittenOff` of its market came after it (a later `Settled` still closes it).
    pub written_off: bool,
}

/// The gate's record as the chain holds it. `decided[i]`, `decisions[i]` and `raw_heads[i]`
/// are the same decision: typed for the stages, as a row for the files.
#[derive(Debug, Clone, Default)]
pub struct ChainRecord {
    pub decided: Vec<Decided>,
    pub decisions: Vec<DecisionRow>,
    /// `raw_heads[i]` is the head of the answer as logged by `decisions[i]`'s event: what a full
    /// answer from the keeper's record must start with.
    pub raw_heads: Vec<Bytes>,
    pub settlements: Vec<(String, Settlement)>,
    pub write_offs: Vec<(String, WriteOff)>,
    /// The `Settled` and `WrittenOff` events as feed rows, each naming the decisions it
    /// closes, in chain order.
    pub closings: Vec<FeedRow>,
}

/// Typed views of the record for the stages that act on it, so the strings of a row stay inside
/// the recorder.
impl ChainRecord {
    /// Chain time of the latest decision per market.
    pub fn last_decision_times(&self) -> HashMap<Address, u64> {
        let mut out = HashMap::new();
        for d in &self.decided {
            let e = out.entry(d.market).or_insert(0);
            *e = (*e).max(d.time);
        }
        out
    }

    /// Transactions whose `Decision` is in the record.
    pub fn txs(&self) -> std::collections::HashSet<TxHash> {
        self.decided.iter().map(|d| d.id.tx).collect()
    }

    /// Markets where the gate bought something that no `Settled` has closed, in first-decision
    /// order; with `written_off` false, positions already written off are left out.
    pub fn open_positions(&self, written_off: bool) -> Vec<Address> {
        let mut out: Vec<Address> = Vec::new();
        for d in &self.decided {
            if !d.bought || d.settled || (!written_off && d.written_off) {
                continue;
            }
            if !out.contains(&d.market) {
                out.push(d.market);
            }
        }
        out
    }
}

/// One change of realised P&L, in collateral base units, in chain order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Realised {
    pub block: u64,
    pub market: String,
    /// Signed: a write-off is `-notional`; a settlement of a position not written off is
    /// `payout - notional`; the late settlement of a written-off one is `+payout` (its loss was
    /// already counted at the write-off).
    pub delta: i128,
    pub what: RealisedKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RealisedKind {
    Settled,
    WrittenOff,
    /// A payout that came after the position was written off: a gain when it comes.
    LatePayout,
}
