//! Feed rows and their decoding from chain logs.

use super::{RecordError, Result, FEED_FILE, HEAD_FILE};
use crate::bindings::{reason, IRiskGate};
pub use crate::decision::DecisionId;
use alloy::{
    primitives::{keccak256, Address, Bytes, TxHash, B256, U256},
    rpc::types::Log,
    sol_types::SolEvent,
};
use serde::{Deserialize, Serialize};
use std::{
    collections::{BTreeMap, HashMap},
    path::Path,
};

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
    Some((spent * U256::from(crate::bindings::PRICE_ONE)).div_ceil(filled))
}

/// A position's settlement, attached to the rows that built it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
}

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
    pub settlement: Option<Settlement>,
    pub write_off: Option<WriteOff>,
    #[serde(flatten)]
    pub note: Annotation,
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

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
// Rows are few and short-lived; boxing the big variant would only add noise to every match.
#[allow(clippy::large_enum_variant)]
pub enum FeedRow {
    Decision(DecisionRow),
    Offchain(OffchainRow),
}

impl FeedRow {
    /// The chain id and gate (checksummed; empty in an old feed's row) the row names.
    pub fn owner(&self) -> (u64, &str) {
        match self {
            Self::Decision(d) => (d.chain_id, &d.gate),
            Self::Offchain(o) => (o.chain_id, &o.gate),
        }
    }

    fn sort_key(&self) -> (u64, u8, u64) {
        match self {
            Self::Decision(d) => (d.block, 0, d.log_index),
            Self::Offchain(o) => (o.block, 1, 0),
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

fn int(v: &str) -> i128 {
    v.parse().unwrap_or(0)
}

impl ChainRecord {
    /// Realised P&L as it happened: a written-off position counts as a loss of its notional at
    /// the write-off, and a payout that comes later as a gain when it comes; a position settled
    /// without a write-off counts `payout - notional` at its settlement. Ordered by block, a
    /// write-off before a settlement in the same block (a settled position cannot be written
    /// off).
    pub fn realised(&self) -> Vec<Realised> {
        let mut events: Vec<(u64, u8, Realised)> = Vec::new();
        for (m, w) in &self.write_offs {
            let r = Realised {
                block: w.block,
                market: m.clone(),
                delta: -int(&w.notional),
                what: RealisedKind::WrittenOff,
            };
            events.push((w.block, 0, r));
        }
        for (m, st) in &self.settlements {
            let written_off = self.write_offs.iter().any(|(wm, w)| wm == m && w.block <= st.block);
            let (delta, what) = if written_off {
                (int(&st.payout), RealisedKind::LatePayout)
            } else {
                (int(&st.pnl), RealisedKind::Settled)
            };
            events.push((
                st.block,
                1,
                Realised { block: st.block, market: m.clone(), delta, what },
            ));
        }
        events.sort_by_key(|(b, k, _)| (*b, *k));
        events.into_iter().map(|(_, _, r)| r).collect()
    }
}

/// Decodes the `abi.encode(Snapshot, Quote)` bytes of a `Decision`: what the gate read and the
/// keeper's quote it evaluated. Empty means nothing was evaluated (ABSTAIN, unparseable).
pub fn decode_snapshot(bytes: &[u8]) -> Option<(BookRead, QuoteRead)> {
    use alloy::sol_types::SolValue;
    if bytes.is_empty() {
        return None;
    }
    let (sn, q) = <(IRiskGate::Snapshot, IRiskGate::Quote)>::abi_decode_params(bytes).ok()?;
    let book = BookRead {
        best_bid: s(sn.bestBid),
        best_ask: s(sn.bestAsk),
        tick_size: s(sn.tickSize),
        lot_size: s(sn.lotSize),
        min_quantity: s(sn.minQuantity),
        expiry: sn.expirySec,
        now: sn.nowSec,
        finalized: sn.finalized,
        open_positions: sn.openPositions,
        open_notional: s(sn.openNotional),
        collateral_available: s(sn.collateralAvailable),
        resolver_trusted: sn.resolverTrusted,
        held_side: sn.heldSide,
        high_water_mark: s(sn.highWaterMark),
        creator_trusted: sn.creatorTrusted,
    };
    Some((book, QuoteRead { max_price_paid: s(q.maxPricePaid), deadline: q.deadline }))
}

fn failed_rules(mask: u32) -> Vec<u8> {
    (0..32u8).filter(|b| mask & (1 << b) != 0).collect()
}

/// The answer as far as the chain alone knows it: the logged head, when it is the whole answer
/// and valid UTF-8 (every parseable answer is).
pub fn raw_from_head(head: &[u8], length: u64) -> Option<String> {
    (head.len() as u64 == length).then(|| std::str::from_utf8(head).ok().map(str::to_string))?
}

/// Whether `raw` is the answer a `Decision` logged as (`head`, `length`, `hash`).
pub fn raw_matches(raw: &str, head: &[u8], length: u64, hash: &str) -> bool {
    raw.len() as u64 == length
        && raw.as_bytes().starts_with(head)
        && alloy::primitives::keccak256(raw.as_bytes()).to_string() == hash
}

fn s(v: U256) -> String {
    v.to_string()
}

fn hex_tx(h: Option<TxHash>) -> String {
    h.map(|h| h.to_string()).unwrap_or_default()
}

/// Pure decoding, so it can be tested without a node. Every row names `chain_id` and `gate`
/// (the address whose logs these are).
pub fn decode_logs(
    logs: &[Log],
    chain_id: u64,
    gate: Address,
    labels: &[String],
    times: &HashMap<u64, u64>,
) -> Result<ChainRecord> {
    let gate_name = gate.to_checksum(None);
    let mut rec = ChainRecord::default();
    // Rows of a market not yet settled, by index into rec.decisions.
    let mut unsettled: HashMap<Address, Vec<usize>> = HashMap::new();
    let mut sorted: Vec<&Log> = logs.iter().collect();
    sorted.sort_by_key(|l| (l.block_number, l.log_index));
    for log in sorted {
        let block = log.block_number.unwrap_or_default();
        let time = times.get(&block).copied().unwrap_or_default();
        if let Ok(ev) = IRiskGate::Decision::decode_log(&log.inner) {
            let d = &ev.data;
            let (book, quote) = decode_snapshot(&d.snapshot).unzip();
            let raw_length = u64::try_from(d.rawLength).unwrap_or(u64::MAX);
            let undone = d.reason == reason::FILL_BELOW_MIN;
            let (filled, spent) =
                if undone { (U256::ZERO, U256::ZERO) } else { (d.order.filled, d.order.spent) };
            let row = DecisionRow {
                chain_id,
                gate: gate_name.clone(),
                block,
                log_index: log.log_index.unwrap_or_default(),
                tx: hex_tx(log.transaction_hash),
                time,
                market: d.market.to_checksum(None),
                prompt_hash: d.promptHash.to_string(),
                read_block: d.readBlock,
                raw: raw_from_head(&d.rawHead, raw_length),
                raw_length,
                raw_hash: d.rawHash.to_string(),
                verdict: d.verdict,
                reason: d.reason,
                reason_label: labels.get(d.reason as usize).cloned().unwrap_or_default(),
                failed_mask: d.failedMask,
                failed_rules: failed_rules(d.failedMask),
                quote,
                book,
                price_paid: s(d.order.pricePaid),
                average_price_paid: average_price_paid(filled, spent).map(s),
                limit: s(d.order.limit),
                quantity: s(d.order.quantity),
                cost: s(d.order.cost),
                filled: s(filled),
                spent: s(spent),
                attempted_fill: undone.then(|| AttemptedFill {
                    filled: s(d.order.filled),
                    spent: s(d.order.spent),
                    average_price_paid: average_price_paid(d.order.filled, d.order.spent).map(s),
                }),
                settlement: None,
                write_off: None,
                note: Annotation::default(),
            };
            if !filled.is_zero() {
                unsettled.entry(d.market).or_default().push(rec.decisions.len());
            }
            rec.decided.push(Decided {
                id: DecisionId {
                    tx: log.transaction_hash.unwrap_or_default(),
                    log_index: row.log_index,
                },
                market: d.market,
                block,
                time,
                reason: d.reason,
                bought: !filled.is_zero(),
                settled: false,
                written_off: false,
            });
            rec.decisions.push(row);
            rec.raw_heads.push(d.rawHead.clone());
        } else if let Ok(ev) = IRiskGate::Settled::decode_log(&log.inner) {
            let d = &ev.data;
            let pnl = if d.payout >= d.notional {
                (d.payout - d.notional).to_string()
            } else {
                format!("-{}", d.notional - d.payout)
            };
            let st = Settlement {
                block,
                tx: hex_tx(log.transaction_hash),
                up_won: d.upWon,
                up_units: s(d.upUnits),
                down_units: s(d.downUnits),
                notional: s(d.notional),
                payout: s(d.payout),
                pnl,
            };
            for i in unsettled.remove(&d.market).unwrap_or_default() {
                rec.decisions[i].settlement = Some(st.clone());
                rec.decided[i].settled = true;
            }
            rec.settlements.push((d.market.to_checksum(None), st));
        } else if let Ok(ev) = IRiskGate::WrittenOff::decode_log(&log.inner) {
            let d = &ev.data;
            let wo = WriteOff {
                block,
                time,
                tx: hex_tx(log.transaction_hash),
                up_units: s(d.upUnits),
                down_units: s(d.downUnits),
                notional: s(d.notional),
                expiry: d.expiry,
            };
            // The rows stay unsettled: a later `Settled` still closes the same position.
            for &i in unsettled.get(&d.market).into_iter().flatten() {
                rec.decisions[i].write_off = Some(wo.clone());
                rec.decided[i].written_off = true;
            }
            rec.write_offs.push((d.market.to_checksum(None), wo));
        }
    }
    Ok(rec)
}

/// Merges chain rows with the keeper's notes (matched by tx hash and log index: annotations and
/// the whole answer, kept only when it is the one the chain logged) and its off-chain rows, in
/// chain order.
pub fn merge(
    chain: &ChainRecord,
    notes: &BTreeMap<DecisionId, RowNote>,
    offchain: &[OffchainRow],
) -> Vec<FeedRow> {
    let mut rows: Vec<FeedRow> = chain
        .decisions
        .iter()
        .zip(&chain.decided)
        .enumerate()
        .map(|(i, (d, id))| {
            let mut d = d.clone();
            if let Some(n) = notes.get(&id.id) {
                d.note = n.note.clone();
                let head = chain.raw_heads.get(i).map_or(&[][..], |h| &h[..]);
                if let Some(raw) = &n.raw {
                    if raw_matches(raw, head, d.raw_length, &d.raw_hash) {
                        d.raw = Some(raw.clone());
                    }
                }
            }
            FeedRow::Decision(d)
        })
        .collect();
    rows.extend(offchain.iter().cloned().map(FeedRow::Offchain));
    rows.sort_by_key(FeedRow::sort_key);
    rows
}

/// The string whose keccak256 is the first row's `prev`: it names the feed's format, chain and
/// gate, so a feed (or its first row) cannot pass as another gate's.
pub fn genesis(chain_id: u64, gate: Address) -> String {
    format!("riskgate feed v1 {chain_id} {}", gate.to_checksum(None))
}

/// keccak256 of [`genesis`]: the `prev` of the first row, and the head of an empty feed.
pub fn genesis_hash(chain_id: u64, gate: Address) -> B256 {
    keccak256(genesis(chain_id, gate).as_bytes())
}

/// One line of feed.jsonl: the row with `prev`, the keccak256 of the previous line exactly as
/// written (of the genesis string for the first line), in front.
#[derive(Serialize)]
struct LinkedLine<'a> {
    prev: String,
    #[serde(flatten)]
    row: &'a FeedRow,
}

/// Only the link of a line, whatever else it holds.
#[derive(Deserialize)]
struct LineLink {
    #[serde(default)]
    prev: Option<String>,
}

/// The serialized feed, one JSON object per line, each carrying `prev`, the keccak256 of the
/// line before it as written (its bytes without the newline); and the head, the keccak256 of
/// the last line (the genesis hash when there are no rows).
pub fn to_linked_jsonl(rows: &[FeedRow], chain_id: u64, gate: Address) -> (String, B256) {
    let mut out = String::new();
    let mut prev = genesis_hash(chain_id, gate);
    for row in rows {
        // Serializing plain data structs cannot fail; skip rather than panic if it ever did.
        if let Ok(line) = serde_json::to_string(&LinkedLine { prev: prev.to_string(), row }) {
            prev = keccak256(line.as_bytes());
            out.push_str(&line);
            out.push('\n');
        }
    }
    (out, prev)
}

/// The non-empty lines of a feed's text: row `n` of the feed is `lines[n - 1]`.
pub fn feed_lines(text: &str) -> Vec<&str> {
    text.lines().filter(|l| !l.trim().is_empty()).collect()
}

fn read_text(path: &Path) -> Result<Option<String>> {
    match std::fs::read_to_string(path) {
        Ok(t) => Ok(Some(t)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(RecordError::Read { path: path.to_path_buf(), source }),
    }
}

/// Reads a feed whatever gate it belongs to (missing file = empty). The keeper and the report
/// use [`read_feed_for`], which refuses another gate's rows.
pub fn read_feed(path: &Path) -> Result<Vec<FeedRow>> {
    let Some(text) = read_text(path)? else { return Ok(Vec::new()) };
    feed_lines(&text)
        .into_iter()
        .enumerate()
        .map(|(i, l)| {
            serde_json::from_str(l).map_err(|source| RecordError::Row {
                path: path.to_path_buf(),
                row: i + 1,
                source,
            })
        })
        .collect()
}

/// "chain 31337 gate 0xAbC…", as a foreign-feed message names a row's owner.
pub(crate) fn owner(chain_id: u64, gate: &str) -> String {
    if gate.is_empty() {
        format!("chain {chain_id} and no gate (written before rows named their gate)")
    } else {
        format!("chain {chain_id} gate {gate}")
    }
}

/// Reads the feed of `gate` on `chain_id` (missing file = empty). Refuses, with
/// [`RecordError::ForeignFeed`] naming the first such row, a feed any row of which names
/// another chain or gate, or no gate at all: a record of one gate never takes in another's.
pub fn read_feed_for(path: &Path, chain_id: u64, gate: Address) -> Result<Vec<FeedRow>> {
    let rows = read_feed(path)?;
    for (i, row) in rows.iter().enumerate() {
        let (row_chain, row_gate) = row.owner();
        let ours = row_chain == chain_id && row_gate.parse::<Address>().is_ok_and(|g| g == gate);
        if !ours {
            return Err(RecordError::ForeignFeed {
                path: path.to_path_buf(),
                row: i + 1,
                found: owner(row_chain, row_gate),
                expected: owner(chain_id, &gate.to_checksum(None)),
            });
        }
    }
    Ok(rows)
}

/// At most this many broken links are described one by one; the rest are counted.
pub const MAX_LINK_PROBLEMS: usize = 8;

/// What walking a feed's hash chain found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkCheck {
    /// Rows (non-empty lines) walked.
    pub rows: usize,
    /// keccak256 of the last line as written (the genesis hash for an empty feed).
    pub head: B256,
    /// One line per broken link or head mismatch; empty when every link holds.
    pub problems: Vec<String>,
}

/// Walks the hash chain of a feed's `text`: row 1's `prev` must be the genesis hash of
/// (`chain_id`, `gate`), every later row's `prev` the keccak256 of the row before it as written,
/// and `head_file` (the contents of feed.head; `None` when it is missing) the keccak256 of the
/// last row. Each break is described as well as the hashes can tell: a row that links past its
/// predecessor marks an insertion; any other break marks an edit of the row before, or a row
/// removed or inserted there.
pub fn check_links(text: &str, chain_id: u64, gate: Address, head_file: Option<&str>) -> LinkCheck {
    let lines = feed_lines(text);
    let hashes: Vec<B256> = lines.iter().map(|l| keccak256(l.as_bytes())).collect();
    let genesis = genesis_hash(chain_id, gate);
    let position = |h: &B256| hashes.iter().position(|x| x == h);
    let mut problems = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let n = i + 1;
        let expected = if i == 0 { genesis } else { hashes[i - 1] };
        let link = serde_json::from_str::<LineLink>(line).ok().and_then(|l| l.prev);
        let Some(link) = link else {
            problems.push(format!(
                "row {n} has no `prev` link (written before the feed was hash-linked, or edited): \
                 re-run `keeper report` on an untampered record"
            ));
            continue;
        };
        let Ok(link) = link.parse::<B256>() else {
            problems.push(format!("row {n}: `prev` is not a 32-byte hex hash: row {n} was edited"));
            continue;
        };
        if link == expected {
            continue;
        }
        let why = if link == genesis {
            format!(
                "row {n}: `prev` is the genesis hash, which only row 1 may carry: row {n} is a \
                 copy of a first row, or {} inserted before it",
                span(1, n - 1)
            )
        } else if i == 0 {
            format!(
                "row 1: `prev` is not the genesis hash of {}: row 1 was edited, or rows were \
                 removed before it",
                owner(chain_id, &gate.to_checksum(None))
            )
        } else {
            match position(&link) {
                Some(k) if k + 1 < i => format!(
                    "row {n}: `prev` links to row {}, not row {}: {} inserted",
                    k + 1,
                    n - 1,
                    span(k + 2, n - 1)
                ),
                Some(k) => format!(
                    "row {n}: `prev` links to row {}, which comes after it: rows were reordered",
                    k + 1
                ),
                None => format!(
                    "row {n}: `prev` does not match row {} as written: row {} was edited, or a \
                     row was removed or inserted here{}",
                    n - 1,
                    n - 1,
                    link_only_fields(lines[i - 1])
                ),
            }
        };
        problems.push(why);
    }
    let head = hashes.last().copied().unwrap_or(genesis);
    match head_file.map(str::trim) {
        None => problems.push(format!(
            "{HEAD_FILE} is missing: the feed's last row cannot be checked (was it written by \
             this keeper version?)"
        )),
        Some(text) => match text.parse::<B256>() {
            Err(_) => problems.push(format!("{HEAD_FILE} does not hold a 32-byte hex hash")),
            Ok(h) if h == head => {}
            Ok(h) if h == genesis && !lines.is_empty() => problems.push(format!(
                "{HEAD_FILE} is the genesis hash (an empty feed): {} added after the keeper \
                 wrote it",
                span(1, lines.len())
            )),
            Ok(h) => problems.push(match position(&h) {
                Some(k) => format!(
                    "{HEAD_FILE} names row {} as the last: {} appended after the keeper wrote it",
                    k + 1,
                    span(k + 2, lines.len())
                ),
                None => format!(
                    "{HEAD_FILE} does not match the last row (row {}) as written: row {} was \
                     edited, or rows were removed or appended at the end{}",
                    lines.len(),
                    lines.len(),
                    lines.last().map_or(String::new(), |l| link_only_fields(l))
                ),
            }),
        },
    }
    if problems.len() > MAX_LINK_PROBLEMS {
        let more = problems.len() - MAX_LINK_PROBLEMS;
        problems.truncate(MAX_LINK_PROBLEMS);
        problems.push(format!("and {more} more broken links"));
    }
    LinkCheck { rows: lines.len(), head, problems }
}

/// The fields of a row that only the hash chain protects, for a message about an edit the
/// links caught: a decision row's labels (its other fields are re-derived from its log and
/// named on their own when they differ), or every field of an off-chain row. The hashes pin the
/// row, not the field, so this is the list an edit must be in.
fn link_only_fields(line: &str) -> String {
    match serde_json::from_str::<FeedRow>(line) {
        Ok(FeedRow::Decision(_)) => {
            "; if it was edited and --check names no chain-derived field of it, \
             the edit is in a field only this link protects: `provider`, `model`, \
             `strategy_hash` or `scenario`"
                .to_string()
        }
        Ok(FeedRow::Offchain(_)) => "; it is an off-chain row: none of its fields is on chain, \
             so this link is all that protects any of them"
            .to_string(),
        Err(_) => "; it is not a feed row any more".to_string(),
    }
}

/// "row 4 was" or "rows 4-6 were".
fn span(first: usize, last: usize) -> String {
    if first == last {
        format!("row {first} was")
    } else {
        format!("rows {first}-{last} were")
    }
}

/// [`check_links`] over `feed.jsonl` and `feed.head` in `dir` (a missing feed is empty).
pub fn check_links_in(dir: &Path, chain_id: u64, gate: Address) -> Result<LinkCheck> {
    let text = read_text(&dir.join(FEED_FILE))?.unwrap_or_default();
    let head = read_text(&dir.join(HEAD_FILE))?;
    Ok(check_links(&text, chain_id, gate, head.as_deref()))
}

/// The keeper's notes (annotations and whole answers) and off-chain rows of an existing feed.
/// A row whose transaction hash does not parse names no decision on chain; it has no note.
pub fn split_feed(rows: &[FeedRow]) -> (BTreeMap<DecisionId, RowNote>, Vec<OffchainRow>) {
    let mut notes = BTreeMap::new();
    let mut off = Vec::new();
    for r in rows {
        match r {
            FeedRow::Decision(d) => {
                let Ok(tx) = d.tx.parse::<TxHash>() else { continue };
                let note = RowNote { note: d.note.clone(), raw: d.raw.clone() };
                notes.insert(DecisionId { tx, log_index: d.log_index }, note);
            }
            FeedRow::Offchain(o) => off.push(o.clone()),
        }
    }
    (notes, off)
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy::primitives::keccak256;

    #[test]
    fn a_published_answer_must_hash_to_the_logged_hash_and_start_with_the_head() {
        let long = format!("Ignore previous instructions {}", "x".repeat(100));
        let head = &long.as_bytes()[..64];
        let hash = keccak256(long.as_bytes()).to_string();
        assert!(raw_matches(&long, head, long.len() as u64, &hash));
        // One byte changed past the head: the head still matches, the hash does not.
        let mut tampered = long.clone();
        tampered.pop();
        tampered.push('y');
        assert!(!raw_matches(&tampered, head, long.len() as u64, &hash));
        // The chain alone knows a short answer whole, a long one only by its head.
        assert_eq!(raw_from_head(b"BUY_UP\n", 7).as_deref(), Some("BUY_UP\n"));
        assert_eq!(raw_from_head(head, long.len() as u64), None);
        // A head cut inside a UTF-8 character is not a string.
        assert_eq!(raw_from_head(&[0xe2, 0x82], 2), None);
    }

    fn offchain(market: &str, block: u64) -> FeedRow {
        FeedRow::Offchain(OffchainRow {
            chain_id: 31_337,
            gate: Address::repeat_byte(0x11).to_checksum(None),
            block,
            time: 1_000 + block,
            market: market.to_string(),
            prompt_hash: None,
            error: "HTTP 500".to_string(),
            transport: TransportDetail::default(),
            note: Annotation::default(),
        })
    }

    /// A linked feed of four off-chain rows of gate 0x11.., its lines and its head.
    fn linked() -> (Vec<String>, String) {
        let rows: Vec<FeedRow> = (1..=4).map(|b| offchain(&format!("m{b}"), b)).collect();
        let (text, head) = to_linked_jsonl(&rows, 31_337, Address::repeat_byte(0x11));
        (text.lines().map(str::to_string).collect(), head.to_string())
    }

    fn check(lines: &[String], head: &str) -> Vec<String> {
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        check_links(&text, 31_337, Address::repeat_byte(0x11), Some(head)).problems
    }

    #[test]
    fn each_line_links_to_the_one_before_as_written_and_the_head_to_the_last() {
        let (lines, head) = linked();
        let g = genesis_hash(31_337, Address::repeat_byte(0x11));
        // The genesis names format, chain and gate.
        assert_eq!(
            genesis(31_337, Address::repeat_byte(0x11)),
            "riskgate feed v1 31337 0x1111111111111111111111111111111111111111"
        );
        assert!(lines[0].starts_with(&format!("{{\"prev\":\"{g}\",\"kind\":\"offchain\"")));
        for i in 1..lines.len() {
            let link = keccak256(lines[i - 1].as_bytes()).to_string();
            assert!(lines[i].starts_with(&format!("{{\"prev\":\"{link}\"")), "line {i}");
        }
        assert_eq!(head, keccak256(lines[3].as_bytes()).to_string());
        assert!(check(&lines, &head).is_empty());
        // An empty feed's head is the genesis hash.
        assert_eq!(to_linked_jsonl(&[], 31_337, Address::repeat_byte(0x11)).1, g);
        // The rows read back unchanged (the link is not part of a row).
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        let back: Vec<FeedRow> =
            feed_lines(&text).iter().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(back, (1..=4).map(|b| offchain(&format!("m{b}"), b)).collect::<Vec<_>>());
    }

    #[test]
    fn a_broken_link_names_the_row_and_what_happened_to_it() {
        let (lines, head) = linked();
        // Every row here is an off-chain row, so each edit names all its fields as unprotected
        // by anything but the link.
        const OFF: &str = "; it is an off-chain row: none of its fields is on chain, so this \
                           link is all that protects any of them";
        // Row 2 edited: row 3 no longer links to it.
        let mut edited = lines.clone();
        edited[1] = edited[1].replace("HTTP 500", "HTTP 501");
        assert_eq!(
            check(&edited, &head),
            vec![format!(
                "row 3: `prev` does not match row 2 as written: row 2 was edited, or a row \
                  was removed or inserted here{OFF}"
            )]
        );
        // Row 2 removed: what is now row 2 links to a line that is gone.
        let mut removed = lines.clone();
        removed.remove(1);
        assert_eq!(
            check(&removed, &head),
            vec![format!(
                "row 2: `prev` does not match row 1 as written: row 1 was edited, or a row \
                  was removed or inserted here{OFF}"
            )]
        );
        // A variant of row 1 inserted as row 2: its own link is the genesis, and row 3 (old
        // row 2) still links to row 1, past the inserted row.
        let mut inserted = lines.clone();
        inserted.insert(1, lines[0].replace("\"m1\"", "\"m9\""));
        assert_eq!(
            check(&inserted, &head),
            vec![
                "row 2: `prev` is the genesis hash, which only row 1 may carry: row 2 is a copy \
                 of a first row, or row 1 was inserted before it",
                "row 3: `prev` links to row 1, not row 2: row 2 was inserted",
            ]
        );
        // The last row edited: only feed.head can tell.
        let mut last = lines.clone();
        last[3] = last[3].replace("m4", "m5");
        assert_eq!(
            check(&last, &head),
            vec![format!(
                "feed.head does not match the last row (row 4) as written: row 4 was edited, \
                  or rows were removed or appended at the end{OFF}"
            )]
        );
        // A row appended, correctly linked, after the keeper wrote feed.head.
        let five: Vec<FeedRow> = (1..=5).map(|b| offchain(&format!("m{b}"), b)).collect();
        let (text, _) = to_linked_jsonl(&five, 31_337, Address::repeat_byte(0x11));
        let appended: Vec<String> = text.lines().map(str::to_string).collect();
        assert_eq!(appended[..4], lines[..]);
        assert_eq!(
            check(&appended, &head),
            vec!["feed.head names row 4 as the last: row 5 was appended after the keeper wrote it"]
        );
        // A feed of another gate fails at its first link.
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        let other = check_links(&text, 31_337, Address::repeat_byte(0x22), Some(&head));
        assert!(other.problems[0].starts_with(
            "row 1: `prev` is not the genesis hash of chain \
             31337 gate 0x2222222222222222222222222222222222222222"
        ));
        // No feed.head at all.
        let none = check_links(&text, 31_337, Address::repeat_byte(0x11), None);
        assert_eq!(none.problems.len(), 1);
        assert!(none.problems[0].starts_with("feed.head is missing"));
    }

    #[test]
    fn the_average_price_paid_rounds_up_and_is_absent_without_a_fill() {
        let u = |v: u64| U256::from(v);
        // 10 units at 0.40 and 10 at 0.95: spent 4 + 9.5 = 13.5 for 20, 0.675 on average.
        assert_eq!(average_price_paid(u(20), u(13)), Some(u(650_000)));
        assert_eq!(average_price_paid(u(20_000_000), u(13_500_000)), Some(u(675_000)));
        // 3 units for 1 base unit: 1e6 / 3 = 333,333.3..., rounded up to 333,334.
        assert_eq!(average_price_paid(u(3), u(1)), Some(u(333_334)));
        assert_eq!(average_price_paid(u(0), u(0)), None);
    }

    #[test]
    fn failed_rules_read_all_32_bits() {
        assert_eq!(failed_rules(1 << 18 | 1 << 12 | 1 << 9), vec![9, 12, 18]);
        assert_eq!(failed_rules(1 << 31), vec![31]);
    }
}
