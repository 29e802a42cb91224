//! The floor's follower: reads one gate's record from a node, through the same code that
//! `keeper report` builds it with ([`crate::record::assemble::assemble`] over the chain record decoded
//! by the recorder), and hands out a new [`Snapshot`] whenever the confirmed block or the
//! keeper's files move.
//!
//! It reads the gate's logs once, then only the blocks after the last one read; when the block
//! it last read is no longer on the chain (a reorg) it reads the record again from the deploy
//! block. It holds no key and sends nothing.

use super::view::{self, Live};
use crate::{
    chain,
    chain::reads,
    chain::reads::MarketInfo,
    commands::report::{self, ReportError},
    domain::decision::{DecisionRow, FeedRow, GateFacts, OffchainRow, TxGas},
    kit::bindings::IRiskGate,
    record::assemble,
    record::{feed, summary::Summary, FEED_FILE},
};
use alloy::{
    eips::BlockId,
    primitives::{Address, B256},
    providers::{DynProvider, Provider},
    rpc::types::Log,
    sol,
};
use std::{
    collections::{HashMap, HashSet},
    path::PathBuf,
    sync::Arc,
    time::SystemTime,
};

sol! {
    /// What the floor reads of the gate beyond `IRiskGate`: its owner (OpenZeppelin's
    /// `Ownable`), and of its collateral token the gate's balance.
    #[sol(rpc)]
    interface IFloorReads {
        function owner() external view returns (address);
        function balanceOf(address holder) external view returns (uint256);
    }
}

type Result<T> = std::result::Result<T, ReportError>;

/// The record as of one confirmed block: what every page and API route reads.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub status: view::Status,
    pub facts: GateFacts,
    pub card: view::GateCard,
    pub symbol: String,
    /// Every decision row as published (the feed's, then those still waiting), oldest first.
    pub decisions: Arc<Vec<DecisionRow>>,
    pub offchain: Arc<Vec<OffchainRow>>,
    pub summary: Arc<Summary>,
    /// Checked questions by market (checksummed).
    pub questions: Arc<HashMap<String, String>>,
    pub markets: Arc<HashMap<String, MarketInfo>>,
}

/// Where the record is read from.
#[derive(Debug, Clone)]
pub struct Source {
    pub provider: DynProvider,
    pub chain_id: u64,
    pub gate: Address,
    /// First block of the gate's logs.
    pub from: u64,
    pub confirmations: u64,
    pub log_range: u64,
    pub results: PathBuf,
    /// "live" or "saved state".
    pub mode: String,
}

pub struct Tracker {
    src: Source,
    facts: GateFacts,
    code: (bool, String),
    logs: Vec<Log>,
    times: HashMap<u64, u64>,
    /// Gas of each transaction that published a decision read.
    gas: HashMap<B256, TxGas>,
    /// The last block read, and its hash.
    read_to: Option<(u64, B256)>,
    markets: HashMap<Address, MarketInfo>,
    /// The feed and journal as last read: their (length, modified time), and the feed's rows.
    files: Option<[(u64, Option<SystemTime>); 2]>,
    disk_rows: Vec<FeedRow>,
    /// The head the last snapshot was made at.
    last_head: Option<u64>,
    /// The last record decoded, shared by the snapshots made from it.
    shared: Option<Shared>,
}

/// The parts of a snapshot that only change when the record does.
#[derive(Debug, Clone)]
struct Shared {
    decisions: Arc<Vec<DecisionRow>>,
    offchain: Arc<Vec<OffchainRow>>,
    summary: Arc<Summary>,
    questions: Arc<HashMap<String, String>>,
    markets: Arc<HashMap<String, MarketInfo>>,
}

impl Tracker {
    /// Reads the gate's fixed facts and checks its code against `root`'s contracts/src.
    pub async fn start(src: Source, root: &std::path::Path) -> Result<Self> {
        chain::check_gate(&src.provider, src.gate, src.chain_id).await?;
        let head = src
            .provider
            .get_block_number()
            .await
            .map_err(|e| chain::ChainError::Rpc(Box::new(e)))?;
        let facts =
            reads::gate_facts(&src.provider, src.gate, src.chain_id, src.from, head, src.log_range)
                .await?;
        let code = match report::code_check(&src.provider, src.gate, root).await {
            Ok(line) => (true, line),
            Err(e) => (false, format!("NOT verified: {}", crate::error_chain(&e))),
        };
        Ok(Self {
            src,
            facts,
            code,
            logs: Vec::new(),
            times: HashMap::new(),
            gas: HashMap::new(),
            read_to: None,
            markets: HashMap::new(),
            files: None,
            disk_rows: Vec::new(),
            last_head: None,
            shared: None,
        })
    }

    /// A new snapshot when the head, the confirmed block's contents or the keeper's files have
    /// moved since the last one; None when nothing did. The record is decoded again only when
    /// new logs arrived, a reorg took some back, or the keeper's files moved: a new head alone
    /// reuses the rows of the last snapshot (they are shared, not copied).
    pub async fn update(&mut self) -> Result<Option<Snapshot>> {
        let rpc = |e| ReportError::Chain(chain::ChainError::Rpc(Box::new(e)));
        let p = self.src.provider.clone();
        let head = p.get_block_number().await.map_err(rpc)?;
        let to = head.saturating_sub(self.src.confirmations);
        let files = self.file_stamps();
        if self.last_head == Some(head) && self.files == Some(files) {
            return Ok(None);
        }
        let mut changed = self.shared.is_none();
        // A reorg under the last block read: read the whole record again.
        if let Some((n, hash)) = self.read_to {
            let now = p.get_block_by_number(n.into()).await.map_err(rpc)?.map(|b| b.header.hash);
            if now != Some(hash) || n > to {
                tracing::info!(
                    block = n,
                    "the block the floor last read is gone: reading the record again"
                );
                self.logs.clear();
                self.times.clear();
                self.gas.clear();
                self.read_to = None;
                changed = true;
            }
        }
        // Block `to` once: its hash marks what was read, its time dates the record.
        let to_block = p
            .get_block_by_number(to.into())
            .await
            .map_err(rpc)?
            .map(|b| (b.header.hash, b.header.timestamp))
            .unwrap_or_default();
        let start = self.read_to.map_or(self.src.from, |(n, _)| n + 1);
        if start <= to {
            let new = reads::gate_logs(&p, self.src.gate, start, to, self.src.log_range).await?;
            self.times = reads::block_times(&p, &new, std::mem::take(&mut self.times)).await?;
            reads::tx_gas(&p, &new, &mut self.gas).await?;
            changed |= !new.is_empty();
            self.logs.extend(new);
            self.read_to = Some((to, to_block.0));
        }
        if self.files != Some(files) {
            self.disk_rows = feed::read_feed_for(
                &self.src.results.join(FEED_FILE),
                self.src.chain_id,
                self.src.gate,
            )?;
            self.files = Some(files);
            changed = true;
        }
        if changed || self.shared.is_none() {
            self.shared = Some(self.decode(to).await?);
        }
        let shared = self.shared.clone().expect("decoded above");
        let live = self.live(to).await;
        let head_time = if head == to { to_block.1 } else { report::block_time(&p, head).await? };
        let status = view::Status {
            chain_id: self.src.chain_id,
            head,
            head_time,
            confirmed: to,
            confirmations: self.src.confirmations,
            gate: self.src.gate.to_checksum(None),
            mode: self.src.mode.clone(),
            decisions: shared.decisions.len(),
            offchain: shared.offchain.len(),
            open_positions: live.open_positions,
            last_decision_time: shared.decisions.last().map(|d| d.time),
        };
        let card = view::GateCard::new(
            &self.facts,
            &live,
            &self.facts.symbol,
            (self.code.0, &self.code.1),
            &shared.summary,
        );
        self.last_head = Some(head);
        Ok(Some(Snapshot {
            status,
            facts: self.facts.clone(),
            card,
            symbol: self.facts.symbol.clone(),
            decisions: shared.decisions,
            offchain: shared.offchain,
            summary: shared.summary,
            questions: shared.questions,
            markets: shared.markets,
        }))
    }

    /// The record to block `to`, decoded from every log read, with the labels and off-chain
    /// rows of the keeper's files, as `report` assembles it.
    async fn decode(&mut self, to: u64) -> Result<Shared> {
        let record = feed::decode_logs(
            &self.logs,
            self.src.chain_id,
            self.src.gate,
            &self.facts.labels,
            &self.times,
            &self.gas,
        )?;
        let assemble::Assembled { rebuilt, .. } = assemble::assemble(
            &record,
            &self.disk_rows,
            &self.src.results,
            self.src.chain_id,
            self.src.gate,
            to,
        )?;
        self.learn_markets(&record.decisions, to).await?;
        drop(record);
        let (decisions, offchain) = feed::joined(rebuilt.feed);
        let markets: HashMap<String, MarketInfo> =
            self.markets.iter().map(|(a, m)| (a.to_checksum(None), m.clone())).collect();
        let questions = markets
            .iter()
            .filter_map(|(a, m)| Some((a.clone(), m.question.text()?.to_string())))
            .collect();
        Ok(Shared {
            decisions: Arc::new(decisions),
            offchain: Arc::new(offchain),
            summary: Arc::new(rebuilt.summary),
            questions: Arc::new(questions),
            markets: Arc::new(markets),
        })
    }

    /// Length and modification time of feed.jsonl and journal.jsonl: a keeper writing beside
    /// the floor moves one of them.
    fn file_stamps(&self) -> [(u64, Option<SystemTime>); 2] {
        [FEED_FILE, crate::chain::journal::JOURNAL_FILE].map(|name| {
            std::fs::metadata(self.src.results.join(name))
                .map(|m| (m.len(), m.modified().ok()))
                .unwrap_or((0, None))
        })
    }

    /// The `MarketCreated` of every market a decision names that the floor has not seen yet.
    async fn learn_markets(&mut self, rows: &[DecisionRow], to: u64) -> Result<()> {
        let new: HashSet<Address> = rows
            .iter()
            .filter_map(|d| d.market.parse::<Address>().ok())
            .filter(|m| !self.markets.contains_key(m))
            .collect();
        if new.is_empty() {
            return Ok(());
        }
        let found = crate::record::rederive::created(
            &self.src.provider,
            self.facts.factory,
            &new,
            to,
            self.src.log_range,
        )
        .await?;
        for (market, (info, _)) in found {
            self.markets.insert(market, info);
        }
        Ok(())
    }

    /// The gate's state at block `at`; a read that fails is left empty (the card says so).
    async fn live(&self, at: u64) -> Live {
        let p = &self.src.provider;
        let id = BlockId::number(at);
        let g = IRiskGate::new(self.src.gate, p);
        let reads = IFloorReads::new(self.src.gate, p);
        let token = IFloorReads::new(self.facts.collateral, p);
        let owner = reads.owner().block(id).call().await.ok().map(|a| a.to_checksum(None));
        let paused = g.paused().block(id).call().await.ok();
        let held = token.balanceOf(self.src.gate).block(id).call().await.map(|v| v.to_string());
        let open = g.openPositions().block(id).call().await.unwrap_or_default();
        let notional = g.openNotional().block(id).call().await.map(|v| v.to_string());
        let hwm = g.highWaterMark().block(id).call().await.map(|v| v.to_string());
        Live {
            owner,
            paused,
            collateral_held: held.unwrap_or_else(|_| "0".into()),
            open_positions: open,
            open_notional: notional.unwrap_or_else(|_| "0".into()),
            high_water_mark: hwm.unwrap_or_else(|_| "0".into()),
        }
    }
}
