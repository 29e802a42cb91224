//! Recorder: decodes the gate's `Decision`, `Settled` and `WrittenOff` events into feed rows,
//! keeps the keeper's own notes (provider, model, scenario, the whole answer) and off-chain
//! failure rows beside them, and writes `feed.jsonl`, its head hash `feed.head`, the SVG chart
//! and `RESULTS.md`, each atomically. Everything that comes from chain can be rebuilt from chain
//! alone (`keeper report`); what cannot (off-chain rows, the keeper's labels) is hash-linked row
//! by row, so an edit shows.
//!
//! Every row names its chain and gate, and a feed naming another is refused
//! ([`feed::read_feed_for`]): one gate's record never takes in another's.
//!
//! The record layer: the feed codec and its hash chain ([`feed`]), the state database
//! ([`store`]), the pages ([`markdown`], [`summary`], [`adversary`], [`figures`]), the charts
//! ([`chart`], [`svg`]), the re-derivation of published prompts from chain ([`rederive`]), an
//! attested gate's votes re-checked from call data ([`votes`]) and the assembly that `keeper
//! report` and `keeper serve` share ([`assemble`]).
//!
//! May import: chain, inference, domain, kit.

pub mod adversary;
pub mod assemble;
pub mod chart;
pub mod consensus;
pub mod feed;
pub mod figures;
pub mod markdown;
pub mod query;
pub mod rederive;
pub mod store;
pub mod summary;
pub mod svg;
pub mod votes;

pub use crate::chain::reads::GateFacts;
use alloy::primitives::Address;
pub use feed::{
    Annotation, ChainRecord, Decided, DecisionId, DecisionRow, FeedRow, OffchainRow, RowNote,
};
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("writing {path}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("reading {path}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} row {row} is not a feed row")]
    Row {
        path: PathBuf,
        row: usize,
        #[source]
        source: serde_json::Error,
    },
    #[error(transparent)]
    State(#[from] crate::record::store::StoreError),
    #[error(
        "{} row {row} belongs to {found}, not {expected}: point --results at this gate's folder \
         (the default is results/<chain-id>/<gate>/)",
        path.display()
    )]
    ForeignFeed { path: PathBuf, row: usize, found: String, expected: String },
    #[error("the vote of the Decision in tx {tx} (log {log_index}) does not decode: {why}")]
    Vote { tx: String, log_index: u64, why: String },
}

impl crate::domain::exit::Classify for RecordError {
    fn fault(&self) -> crate::domain::exit::Fault {
        use crate::domain::exit::Fault::{Input, Runtime};
        match self {
            // --results names another gate's folder, or a feed that does not parse.
            Self::ForeignFeed { .. } | Self::Row { .. } => Input,
            Self::State(e) => e.fault(),
            Self::Write { .. } | Self::Read { .. } | Self::Vote { .. } => Runtime,
        }
    }
}

pub type Result<T> = std::result::Result<T, RecordError>;

/// Writes `bytes` to `path` whole or not at all ([`crate::domain::fs::write_atomic`]).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    crate::domain::fs::write_atomic(path, bytes)
        .map_err(|e| RecordError::Write { path: e.path, source: e.source })
}

/// Output file names inside the results directory.
pub const FEED_FILE: &str = "feed.jsonl";
/// The folder of published strategy texts, one `<strategyHash>.txt` each (the exact bytes
/// whose keccak256 rows carry as `strategy_hash`).
pub const STRATEGIES_DIR: &str = "strategies";

/// Where the strategy text of `hash` is published inside a results directory.
pub fn strategy_path(dir: &Path, hash: alloy::primitives::B256) -> PathBuf {
    dir.join(STRATEGIES_DIR).join(format!("{hash}.txt"))
}

/// Publishes `text` as `strategies/<keccak256(text)>.txt` (once: the name is its hash).
pub fn publish_strategy(dir: &Path, text: &str) -> Result<()> {
    let path = strategy_path(dir, alloy::primitives::keccak256(text.as_bytes()));
    if std::fs::read(&path).is_ok_and(|b| b == text.as_bytes()) {
        return Ok(());
    }
    write_atomic(&path, text.as_bytes())
}
/// The feed's head hash: keccak256 of the last line of feed.jsonl as written.
pub const HEAD_FILE: &str = "feed.head";
pub const RESULTS_FILE: &str = "RESULTS.md";
pub const CHART_FILE: &str = "decisions.svg";

/// The checked questions (`MarketCreated`'s text, whose keccak256 is the market's
/// `questionHash()`) of the markets the pages name, by checksummed address. A market whose
/// question could not be read or checked is absent, and the page says so.
pub type Questions = std::collections::BTreeMap<String, String>;

/// The markets whose questions RESULTS.md shows: those of the positions it lists (a bounded
/// number, whatever the record's length).
pub fn page_markets(summary: &summary::Summary) -> Vec<alloy::primitives::Address> {
    summary.positions.iter().filter_map(|p| p.market.parse().ok()).collect()
}

/// The two pages of a record, rendered from its aggregates and the `questions` of the markets
/// of [`page_markets`]: (RESULTS.md, the chart).
pub fn render_pages(
    facts: &GateFacts,
    summary: &summary::Summary,
    questions: &Questions,
) -> Result<(String, String)> {
    let max_drawdown = i128::try_from(facts.bounds.maxDrawdown).unwrap_or(i128::MAX);
    let svg = chart::render_svg(summary, &facts.labels, &facts.symbol, max_drawdown);
    Ok((markdown::render(facts, summary, questions), svg))
}

/// Refuses a row naming another chain or gate than `facts'`.
pub fn check_owner(dir: &Path, facts: &GateFacts, rows: &[FeedRow]) -> Result<()> {
    for (i, row) in rows.iter().enumerate() {
        let (chain_id, gate) = row.owner();
        if chain_id != facts.chain_id || gate.parse::<Address>().ok() != Some(facts.gate) {
            return Err(RecordError::ForeignFeed {
                path: dir.join(FEED_FILE),
                row: i + 1,
                found: feed::owner(chain_id, gate),
                expected: feed::owner(facts.chain_id, &facts.gate.to_checksum(None)),
            });
        }
    }
    Ok(())
}

/// A gate's record from all its rows in feed order (every one confirmed): the feed, and the
/// aggregates the pages are rendered from, as the keeper renders them.
#[derive(Debug, Clone)]
pub struct Rebuilt {
    pub feed: Vec<FeedRow>,
    pub summary: summary::Summary,
}

pub fn rebuild(rows: &[FeedRow]) -> Rebuilt {
    let mut summary = summary::Summary::default();
    for row in rows {
        summary.add(row);
    }
    Rebuilt { feed: rows.to_vec(), summary }
}

/// Writes a gate's rebuilt record into `dir` whole: feed.jsonl (hash-linked), feed.head, the
/// chart, then RESULTS.md, in that order, each atomically. Refuses a row naming another chain
/// or gate than `facts`' (nothing is written then).
pub fn write_record(
    dir: &Path,
    facts: &GateFacts,
    record: &Rebuilt,
    questions: &Questions,
) -> Result<()> {
    check_owner(dir, facts, &record.feed)?;
    let (text, head) = feed::to_linked_jsonl(&record.feed, facts.chain_id, facts.gate);
    write_atomic(&dir.join(FEED_FILE), text.as_bytes())?;
    write_atomic(&dir.join(HEAD_FILE), format!("{head}\n").as_bytes())?;
    let (md, svg) = render_pages(facts, &record.summary, questions)?;
    write_atomic(&dir.join(CHART_FILE), svg.as_bytes())?;
    write_atomic(&dir.join(RESULTS_FILE), md.as_bytes())?;
    Ok(())
}

/// The default results folder of a gate: `results/<chain-id>/<gate>/` under the project root,
/// so two gates or two chains never share a record (`results/` itself is the demo's).
pub fn default_results_dir(root: &Path, chain_id: u64, gate: Address) -> PathBuf {
    root.join("results").join(chain_id.to_string()).join(gate.to_checksum(None))
}
