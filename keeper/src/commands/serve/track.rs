//! The floor's follower: the record it shows is a keeper's state database
//! ([`crate::record::store`]), read through [`crate::record::query`], never held in memory.
//!
//! - **A keeper's folder** (`--results` holding a complete `state.sqlite` of this gate and
//!   schema): the floor opens it read-only; SQLite's WAL lets it read while the keeper writes,
//!   each read seeing one whole cycle's write. The keeper appends the rows.
//! - **Its own state** (`--load-state`, or `--rpc-url` without a keeper's state): the floor
//!   runs the keeper's own collector and recorder stages ([`crate::engine::Engine`] with no key:
//!   it sends nothing) into a cache folder, seeded with the results folder's feed for its labels
//!   and off-chain rows. The first start reads the whole record; a later one resumes from the
//!   state it left, reads only the blocks after it, and a reorg rewinds only the blocks it
//!   replaced (the follower's checkpoints, as in the keeper).
//!
//! On each new head the gate's live state is read at the confirmed block; the aggregates the
//! pages and charts draw (the summary, the model labels, the chart series) are read again only
//! when the state database changed (`PRAGMA data_version`), and no row is decoded otherwise.
//! It holds no key and sends nothing.

use super::{
    plots,
    view::{self, Live},
};
use crate::{
    chain,
    chain::follower::Known,
    chain::reads,
    commands::report::{self, ReportError},
    domain::decision::GateFacts,
    engine::{Engine, GateRef, RunError},
    kit::bindings::IRiskGate,
    record::{
        self,
        store::{Store, StoreError},
        summary::{Summary, SUMMARY_KEY},
        FEED_FILE, HEAD_FILE,
    },
};
use alloy::{
    eips::BlockId,
    primitives::Address,
    providers::{DynProvider, Provider},
    sol,
};
use std::{
    path::{Path, PathBuf},
    sync::{Arc, Mutex},
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

/// Points of the drawdown chart at most (past it, the highest of each run of rows).
pub const DRAWDOWN_POINTS: usize = 1_000;
/// Model labels offered by the feed's filter.
pub const MODEL_LABELS: u64 = 64;

#[derive(Debug, thiserror::Error)]
pub enum TrackError {
    #[error(transparent)]
    Report(#[from] ReportError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("following the gate into the floor's own state in {dir}")]
    Follow {
        dir: String,
        #[source]
        source: Box<RunError>,
    },
    #[error("seeding the floor's state folder {dir} with the results folder's feed")]
    Seed {
        dir: String,
        #[source]
        source: std::io::Error,
    },
}

impl crate::domain::exit::Classify for TrackError {
    fn fault(&self) -> crate::domain::exit::Fault {
        use crate::domain::exit::Fault::Runtime;
        match self {
            Self::Report(e) => e.fault(),
            Self::Store(e) => e.fault(),
            Self::Follow { source, .. } => source.fault(),
            Self::Seed { .. } => Runtime,
        }
    }
}

type Result<T> = std::result::Result<T, TrackError>;

/// A read-only connection to the state database the floor shows, shared by the requests (each
/// holds it for one query).
#[derive(Clone)]
pub struct Reader(Arc<Mutex<Store>>);

impl std::fmt::Debug for Reader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Reader")
    }
}

impl Reader {
    /// Runs `f` against the database.
    pub fn read<T>(
        &self,
        f: impl FnOnce(&Store) -> std::result::Result<T, StoreError>,
    ) -> std::result::Result<T, StoreError> {
        let store = self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        f(&store)
    }

    /// The checked question of `market` (checksummed), where its `MarketCreated` carried one.
    pub fn question(&self, market: &str) -> Option<String> {
        let known = self.market(market)?;
        known.info.question.text().map(str::to_string)
    }

    /// What the follower knows of `market` (checksummed).
    pub fn market(&self, market: &str) -> Option<Known> {
        let address: Address = market.parse().ok()?;
        self.read(|s| s.market::<Known>(address)).ok().flatten()
    }
}

/// The record as of one confirmed block: what every page and API route reads.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub status: view::Status,
    pub facts: GateFacts,
    pub card: view::GateCard,
    pub symbol: String,
    pub summary: Arc<Summary>,
    /// Model labels the decisions name (for the feed's filter).
    pub models: Arc<Vec<String>>,
    pub charts: Arc<plots::Series>,
    /// The newest decision's key when the snapshot was made.
    pub last_decision: Option<(u64, u64)>,
    pub db: Reader,
}

/// Whose state database the floor reads.
#[derive(Debug, Clone)]
pub enum StateDir {
    /// A keeper's results folder: read-only.
    Keeper(PathBuf),
    /// The floor's own, in `cache`, seeded from the feed in `seed` the first time.
    Own { cache: PathBuf, seed: PathBuf },
}

impl StateDir {
    /// The folder holding the state database read.
    pub fn dir(&self) -> &Path {
        match self {
            Self::Keeper(dir) => dir,
            Self::Own { cache, .. } => cache,
        }
    }
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
    pub state: StateDir,
    /// "live" or "saved state".
    pub mode: String,
}

/// Whether `dir` holds a keeper's complete state of this gate and schema, read-only; else why
/// not.
pub fn keeper_state(
    dir: &Path,
    chain_id: u64,
    gate: Address,
) -> std::result::Result<Store, String> {
    match Store::open_state(dir, chain_id, gate) {
        Ok(Some(store)) => Ok(store),
        Ok(None) => Err(format!("{} holds no state database", dir.display())),
        Err(e) => Err(crate::error_chain(&e)),
    }
}

/// A reader of the complete state database in `dir`, or why there is none.
fn open_reader(dir: &Path, chain_id: u64, gate: Address) -> Result<Reader> {
    let store = keeper_state(dir, chain_id, gate).map_err(|why| {
        TrackError::Store(StoreError::Unusable { path: dir.display().to_string(), why })
    })?;
    Ok(Reader(Arc::new(Mutex::new(store))))
}

/// The parts of a snapshot that change only when the state database does.
#[derive(Debug, Clone)]
struct Shared {
    summary: Arc<Summary>,
    models: Arc<Vec<String>>,
    charts: Arc<plots::Series>,
    decisions: u64,
    offchain: u64,
    last_decision: Option<((u64, u64), u64)>,
}

pub struct Tracker {
    src: Source,
    facts: GateFacts,
    code: (bool, String),
    /// The floor's own follower (None over a keeper's folder).
    own: Option<Box<Engine>>,
    reader: Option<Reader>,
    /// The head the last snapshot was made at, and the database's data version then.
    last_head: Option<u64>,
    data_version: Option<i64>,
    /// The feed's state as the database recorded it when the aggregates were last read.
    feed_mark: Option<Option<String>>,
    shared: Option<Shared>,
}

impl Tracker {
    /// Reads the gate's fixed facts, checks its code against `root`'s contracts/src, and opens
    /// the state the floor reads (its own follower, over its own state, is built here and
    /// catches up on the first [`Tracker::update`]).
    pub async fn start(src: Source, root: &Path) -> Result<Self> {
        chain::check_gate(&src.provider, src.gate, src.chain_id)
            .await
            .map_err(ReportError::from)?;
        let head = src
            .provider
            .get_block_number()
            .await
            .map_err(|e| ReportError::from(chain::ChainError::Rpc(Box::new(e))))?;
        let facts =
            reads::gate_facts(&src.provider, src.gate, src.chain_id, src.from, head, src.log_range)
                .await
                .map_err(ReportError::from)?;
        let code = match report::code_check(&src.provider, src.gate, root).await {
            Ok(line) => (true, line),
            Err(e) => (false, format!("NOT verified: {}", crate::error_chain(&e))),
        };
        let (own, reader) = match &src.state {
            StateDir::Keeper(dir) => (None, Some(open_reader(dir, src.chain_id, src.gate)?)),
            StateDir::Own { cache, seed } => {
                seed_feed(cache, seed)?;
                let gate = GateRef {
                    chain_id: src.chain_id,
                    gate: src.gate,
                    factory: facts.factory,
                    from_block: src.from,
                };
                let follow_err = |e: RunError| TrackError::Follow {
                    dir: cache.display().to_string(),
                    source: Box::new(e),
                };
                let engine = Engine::builder(src.provider.clone(), gate)
                    .results(Some(cache.clone()))
                    .resume()
                    .confirmations(src.confirmations)
                    .log_range(src.log_range)
                    .build()
                    .map_err(follow_err)?;
                (Some(Box::new(engine)), None)
            }
        };
        Ok(Self {
            src,
            facts,
            code,
            own,
            reader,
            last_head: None,
            data_version: None,
            feed_mark: None,
            shared: None,
        })
    }

    /// A new snapshot when the head or the state database moved since the last one; None when
    /// neither did. Over its own state the floor first follows the new blocks (their logs only).
    pub async fn update(&mut self) -> Result<Option<Snapshot>> {
        let rpc = |e| ReportError::Chain(chain::ChainError::Rpc(Box::new(e)));
        let p = self.src.provider.clone();
        let head = p.get_block_number().await.map_err(rpc)?;
        let to = head.saturating_sub(self.src.confirmations);
        if self.last_head != Some(head) || self.reader.is_none() {
            let dir = self.src.state.dir().to_path_buf();
            if let Some(engine) = self.own.as_mut() {
                let shown = dir.display().to_string();
                let follow_err =
                    |e: RunError| TrackError::Follow { dir: shown.clone(), source: Box::new(e) };
                let t = std::time::Instant::now();
                engine.follow().await.map_err(follow_err)?;
                let followed = t.elapsed().as_secs_f64();
                let written = engine.write_results().map_err(follow_err)?;
                if self.reader.is_none() {
                    tracing::info!(
                        follow_secs = format!("{followed:.2}"),
                        record_secs = format!("{:.2}", t.elapsed().as_secs_f64() - followed),
                        rows = written.map_or(0, |w| w.appended),
                        "the floor's first read of its own state: the gate's logs read and decoded (follow), then the rows appended to its state and record (record)"
                    );
                    self.reader = Some(open_reader(&dir, self.src.chain_id, self.src.gate)?);
                }
            }
        }
        let reader = self.reader.clone().expect("opened above");
        let version = reader.read(Store::data_version)?;
        if self.last_head == Some(head) && self.data_version == Some(version) {
            return Ok(None);
        }
        // A write that appended no row (a keeper's cycle saving its cursor) moves the data
        // version but not the feed's state: the aggregates are read again only when it moved.
        let moved = self.data_version != Some(version) && {
            let mark = reader.read(Store::feed_mark)?;
            let moved = self.feed_mark.as_ref() != Some(&mark);
            self.feed_mark = Some(mark);
            moved
        };
        self.data_version = Some(version);
        if moved || self.shared.is_none() {
            let t = std::time::Instant::now();
            let shared = self.aggregates(&reader)?;
            tracing::info!(
                decisions = shared.decisions,
                secs = format!("{:.3}", t.elapsed().as_secs_f64()),
                "the record moved: the floor read its aggregates again"
            );
            self.shared = Some(shared);
        }
        let shared = self.shared.clone().expect("read above");
        let live = self.live(to).await;
        let head_time = report::block_time(&p, head).await?;
        let status = view::Status {
            chain_id: self.src.chain_id,
            head,
            head_time,
            confirmed: to,
            confirmations: self.src.confirmations,
            gate: self.src.gate.to_checksum(None),
            mode: self.src.mode.clone(),
            decisions: shared.decisions as usize,
            offchain: shared.offchain as usize,
            open_positions: live.open_positions,
            last_decision_time: shared.last_decision.map(|(_, t)| t),
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
            summary: shared.summary,
            models: shared.models,
            charts: shared.charts,
            last_decision: shared.last_decision.map(|(k, _)| k),
            db: reader,
        }))
    }

    /// The aggregates as the state database holds them now: the summary the keeper folded, the
    /// model labels, the chart series, the counts.
    fn aggregates(&self, reader: &Reader) -> Result<Shared> {
        let summary = reader.read(|s| s.meta::<Summary>(SUMMARY_KEY))?.unwrap_or_default();
        let models = reader.read(|s| s.model_names(MODEL_LABELS))?;
        let (bucket_starts, span) =
            plots::buckets(summary.first.map(|f| f.1), summary.last.map(|l| l.1));
        let t0 = bucket_starts.first().copied().unwrap_or(0);
        let reasons = reader.read(|s| s.reason_buckets(t0, span, bucket_starts.len()))?;
        let drawdown = reader.read(|s| s.drawdown_line(DRAWDOWN_POINTS))?;
        let max = i128::try_from(self.facts.bounds.maxDrawdown).unwrap_or(i128::MAX);
        let charts = plots::series(&summary, max, bucket_starts, reasons, drawdown);
        let decisions = reader.read(Store::decision_count)?;
        let offchain = reader.read(Store::offchain_in_feed)?;
        let last_decision = reader.read(Store::last_decision)?;
        Ok(Shared {
            summary: Arc::new(summary),
            models: Arc::new(models),
            charts: Arc::new(charts),
            decisions,
            offchain,
            last_decision,
        })
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

/// Gives a new state folder `cache` the feed of `seed` (the results folder shown), once: the
/// first follow re-derives the record from chain and takes from that feed the labels and
/// off-chain rows the chain does not hold, as a keeper rebuilding its state does.
fn seed_feed(cache: &Path, seed: &Path) -> Result<()> {
    let err = |source| TrackError::Seed { dir: cache.display().to_string(), source };
    if cache.join(record::store::STATE_FILE).exists() || cache.join(FEED_FILE).exists() {
        return Ok(());
    }
    std::fs::create_dir_all(cache).map_err(err)?;
    for name in [FEED_FILE, HEAD_FILE] {
        let from = seed.join(name);
        if from.exists() {
            std::fs::copy(&from, cache.join(name)).map_err(err)?;
        }
    }
    Ok(())
}
