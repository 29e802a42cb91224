//! `keeper report`: rebuilds the published record from chain logs alone (keeping the off-chain
//! rows and the keeper's labels of the existing feed) and, with `--check`, verifies every file
//! of the record instead of writing:
//! - each decision row is re-derived from its `Decision` log and compared field by field;
//! - each published whole answer against the length, head and keccak256 its event logged;
//! - RESULTS.md is re-rendered and compared line by line, the chart byte for byte;
//! - what the chain cannot know (off-chain rows, labels) is checked through the feed's hash
//!   chain, row by row up to feed.head;
//! - the gate's runtime code against the code compiled from this repository (immutables masked).
//!
//! Every difference found is reported (not only the first), naming the row and field, or the
//! line. The report never reads the runner: it stands on the recorder and the chain alone.

use crate::{
    chain,
    chain::reads,
    domain::config::{ChainConfig, ReportConfig, ReportSource},
    kit::anvil::Anvil,
    kit::compile,
    record::{
        self,
        assemble::{assemble, read_chain_record, Assembled},
        feed::{self, ChainRecord, DecisionRow, FeedRow, LinkCheck},
        CHART_FILE, FEED_FILE, HEAD_FILE, RESULTS_FILE,
    },
};
use alloy::{
    primitives::Address,
    providers::{DynProvider, Provider},
};
use std::{
    collections::HashMap,
    path::{Path, PathBuf},
};

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error(transparent)]
    Config(#[from] crate::domain::config::ConfigError),
    #[error(transparent)]
    Chain(#[from] chain::ChainError),
    #[error(transparent)]
    Collect(#[from] reads::CollectError),
    #[error(transparent)]
    Record(#[from] record::RecordError),
    #[error(transparent)]
    Anvil(#[from] crate::kit::anvil::AnvilError),
    #[error(transparent)]
    Deploy(#[from] crate::commands::deploy::DeployError),
    #[error("--load-state {path} has no companion {companion} beside it: pass a state `keeper demo` saved (re-run `make demo`)")]
    NoCompanion { path: String, companion: String },
    #[error("reading {path}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "the feed holds rows up to block {feed_block}, past the block this report reads to \
         ({read_to}: head {head} − {confirmations} confirmations); pass the --confirmations the \
         keeper runs with"
    )]
    FeedAhead { feed_block: u64, read_to: u64, head: u64, confirmations: u64 },
    #[error(transparent)]
    Assemble(#[from] record::assemble::AssembleError),
    #[error("{path} is not a deployment file")]
    BadDeployment {
        path: String,
        #[source]
        source: serde_json::Error,
    },
    /// Every difference `--check` found, one entry each.
    #[error("record does not check ({} problems): {}", .0.len(), .0.join("; "))]
    Mismatch(Vec<String>),
    #[error(
        "gate code on chain does not match the compiled source (on-chain code is {on_chain} \
         bytes, compiled is {compiled} bytes)"
    )]
    CodeMismatch { on_chain: usize, compiled: usize },
    #[error("compiling contracts/src to check the gate's code")]
    Compile(#[from] compile::CompileError),
    #[error("reading the gate's code")]
    Code(#[source] Box<alloy::transports::TransportError>),
}

impl crate::domain::exit::Classify for ReportError {
    fn fault(&self) -> crate::domain::exit::Fault {
        use crate::domain::exit::Fault::{Input, Runtime};
        match self {
            Self::Config(e) => e.fault(),
            Self::Chain(e) => e.fault(),
            Self::Collect(e) => e.fault(),
            Self::Record(e) => e.fault(),
            Self::Anvil(e) => e.fault(),
            Self::Deploy(e) => e.fault(),
            Self::Assemble(e) => e.fault(),
            Self::Compile(e) => e.fault(),
            // --load-state without its companion, a file that is not a deployment, a
            // --confirmations below the keeper's.
            Self::NoCompanion { .. } | Self::BadDeployment { .. } | Self::FeedAhead { .. } => Input,
            // A check that found a difference is the record's failure, not the flags'.
            Self::Io { .. } | Self::Mismatch(_) | Self::CodeMismatch { .. } | Self::Code(_) => {
                Runtime
            }
        }
    }
}

pub type Result<T> = std::result::Result<T, ReportError>;

/// The outcome of a report.
#[derive(Debug, Clone)]
pub struct ReportOutcome {
    pub decisions: usize,
    pub offchain: usize,
    pub code_check: String,
    /// Plain lines for the binary to print: with `--check`, what was verified from chain, what
    /// only by the hash chain, and what could not be verified; without, what was written.
    pub verified: Vec<String>,
}

/// Companion file the demo writes beside its saved anvil state.
pub const STATE_FILE: &str = "anvil-state.json";
pub const STATE_META_FILE: &str = "anvil-state.meta.json";

/// A value shown in a difference is cut to this many characters (the feed holds model output).
const SHOWN_CHARS: usize = 120;

/// `keeper report`.
pub async fn run(cfg: &ReportConfig, root: &Path, anvil_bin: &Path) -> Result<ReportOutcome> {
    let (state, gate) = match &cfg.source {
        ReportSource::Chain { chain, gate } => {
            return report_at(chain, *gate, cfg.from_block, cfg, root, cfg.results.clone()).await
        }
        ReportSource::LoadState { state, gate } => (state, *gate),
    };
    let saved = start_saved(state, cfg.results.clone(), anvil_bin).await?;
    let chain = saved.chain.clone();
    let gate = gate.unwrap_or(saved.meta.gate);
    let from = Some(cfg.from_block.unwrap_or(saved.meta.deploy_block));
    let (anvil, results) = (saved.anvil, saved.results);
    let out = report_at(&chain, Some(gate), from, cfg, root, Some(results)).await;
    anvil.stop().await;
    out
}

/// A saved chain state (`keeper demo`'s) reloaded into a fresh local anvil.
pub struct Saved {
    pub anvil: Anvil,
    /// The reloaded chain, with the chain id the companion file names.
    pub chain: ChainConfig,
    /// The companion deployment file: the gate and its deploy block.
    pub meta: crate::commands::deploy::Deployment,
    /// `results`, or the folder of the saved state (the demo keeps its record beside it).
    pub results: PathBuf,
}

/// Starts a local anvil on the saved state `state` (with its companion
/// `anvil-state.meta.json`, or an error naming it).
pub async fn start_saved(
    state: &Path,
    results: Option<PathBuf>,
    anvil_bin: &Path,
) -> Result<Saved> {
    let meta_path = state.with_file_name(STATE_META_FILE);
    let meta = read_deployment(&meta_path)?.ok_or_else(|| ReportError::NoCompanion {
        path: state.display().to_string(),
        companion: meta_path.display().to_string(),
    })?;
    let results = results.unwrap_or_else(|| {
        state.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new(".")).into()
    });
    let anvil = Anvil::start(
        anvil_bin,
        None,
        &["--load-state".to_string(), state.display().to_string(), "--prune-history".to_string()],
    )
    .await?;
    let chain = ChainConfig { rpc_url: anvil.url.clone(), expected_chain_id: Some(meta.chain_id) };
    Ok(Saved { anvil, chain, meta, results })
}

/// Deploy block saved by `keeper deploy` for `gate` (its own entry, else the chain's default
/// when that names it).
/// The file is read as `keeper run` reads it: a missing file is `None`; an unreadable or
/// malformed one, or one for another chain, is an error naming it (never taken for "no file").
pub(crate) fn saved_deploy_block(root: &Path, chain_id: u64, gate: Address) -> Result<Option<u64>> {
    Ok(crate::commands::deploy::read_saved_for(root, chain_id, gate)?
        .and_then(|saved| saved.deployment.deploy_block.or(saved.deploy_block_not_before)))
}

/// `gate`, or (None) the gate saved for this chain in deployments/<chain-id>.json, read as
/// `keeper run` reads it; no saved gate is an error naming the file.
pub(crate) fn saved_gate(root: &Path, chain_id: u64, gate: Option<Address>) -> Result<Address> {
    if let Some(g) = gate {
        return Ok(g);
    }
    match crate::commands::deploy::read_saved(root, chain_id)? {
        Some(saved) => Ok(saved.deployment.gate),
        None => {
            let path = crate::commands::deploy::saved_path(root, chain_id).display().to_string();
            Err(chain::ChainError::NoSavedGate { chain_id, path }.into())
        }
    }
}

/// Reads the demo's companion deployment file: `None` when there is none.
fn read_deployment(path: &Path) -> Result<Option<crate::commands::deploy::Deployment>> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(ReportError::Io { path: path.display().to_string(), source }),
    };
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|source| ReportError::BadDeployment { path: path.display().to_string(), source })
}

async fn report_at(
    chain_cfg: &ChainConfig,
    gate: Option<Address>,
    from_block: Option<u64>,
    args: &ReportConfig,
    root: &Path,
    results: Option<PathBuf>,
) -> Result<ReportOutcome> {
    let (provider, chain_id) = chain::connect_checked(chain_cfg).await?;
    // No --gate: the gate saved for this chain, read as `keeper run` reads it.
    let gate = saved_gate(root, chain_id, gate)?;
    chain::check_gate(&provider, gate, chain_id).await?;
    let results = results.unwrap_or_else(|| record::default_results_dir(root, chain_id, gate));
    let from = match from_block {
        Some(b) => b,
        None => saved_deploy_block(root, chain_id, gate)?.unwrap_or(0),
    };
    // The record is read to the depth `keeper run` writes it at, so a decision still awaiting
    // its confirmations is neither reported missing nor written without its labels.
    let head =
        provider.get_block_number().await.map_err(|e| chain::ChainError::Rpc(Box::new(e)))?;
    let confirmations = args
        .confirmations
        .unwrap_or_else(|| crate::domain::config::default_confirmations(chain_id));
    let to = head.saturating_sub(confirmations);
    let facts = reads::gate_facts(&provider, gate, chain_id, from, to, args.log_range).await?;
    let record =
        read_chain_record(&provider, chain_id, gate, &facts.labels, from, to, args.log_range)
            .await?;
    // Another gate's (or an old, gate-less) feed is refused here, before anything is compared.
    let disk_rows = feed::read_feed_for(&results.join(FEED_FILE), chain_id, gate)?;
    if let Some(last) = disk_rows.last().filter(|r| r.sort_key().0 > to) {
        return Err(ReportError::FeedAhead {
            feed_block: last.sort_key().0,
            read_to: to,
            head,
            confirmations,
        });
    }
    let links = feed::check_links_in(&results, chain_id, gate)?;
    let v1 = feed::is_v1(
        &std::fs::read_to_string(results.join(FEED_FILE)).unwrap_or_default(),
        chain_id,
        gate,
    );
    if v1 && args.check {
        return Err(ReportError::Mismatch(vec![format!(
            "{}: {}; or run `keeper report` without --check to rewrite it from chain now",
            results.join(FEED_FILE).display(),
            feed::V1_NOTE
        )]));
    }
    let Assembled { offchain, rows, rebuilt } =
        assemble(&record, &disk_rows, &results, chain_id, gate, to)?;
    let questions = page_questions(&provider, &facts, &rebuilt.summary, to, args.log_range).await?;
    let code_check = code_check(&provider, gate, root).await;
    let labelled = labelled_rows(&rows);

    // A consensus gate's source is read only for the checks: the record is the gate's logs.
    let source = match facts.verdict_source {
        Some(addr) if args.check || args.check_prompts => {
            Some(source_of(&provider, addr, from, to, args.log_range).await?)
        }
        _ => None,
    };
    let prompt_line = if args.check_prompts {
        let prompts = source.as_ref().map(|(_, _, p)| p);
        let p = crate::record::rederive::check(
            &provider,
            facts.factory,
            &record,
            &rows,
            &disk_rows,
            &results,
            prompts,
            to,
            args.log_range,
        )
        .await?;
        let texts = match &source {
            Some((s, _, _)) => format!(
                "after the system text of verdict source {}, each equal, user part and hash, \
                 to the prompt the source built on chain and logged in Asked",
                s.source
            ),
            None => format!(
                "the strategy text in {}/; rows not yet in the feed with the labels the \
                 keeper's journal holds",
                record::STRATEGIES_DIR
            ),
        };
        let mut line = format!(
            "prompts re-derived from chain: {} of {} decisions' prompts re-render to their \
             published promptHash (question and grids from MarketCreated, the book at readBlock \
             rebuilt from the venue's logs to depth {}, that block's timestamp, {texts})",
            p.matched,
            p.checked,
            reads::BOOK_DEPTH,
        );
        if p.unpublished > 0 {
            line.push_str(&format!(
                "; {} decisions not yet published (no labels in the feed or the journal) not \
                 checked",
                p.unpublished
            ));
        }
        if !p.problems.is_empty() {
            let mut all = vec![line];
            all.extend(p.problems);
            return Err(ReportError::Mismatch(all));
        }
        if !args.check {
            return Ok(ReportOutcome {
                decisions: record.decisions.len(),
                offchain: offchain.len(),
                code_check: code_check
                    .unwrap_or_else(|e| format!("NOT verified: {}", crate::error_chain(&e))),
                verified: vec![line],
            });
        }
        Some(line)
    } else {
        None
    };

    if !args.check {
        record::write_record(&results, &facts, &rebuilt, &questions)?;
        let new_links = feed::check_links_in(&results, chain_id, gate)?;
        let mut verified = vec![format!(
            "rebuilt from chain to block {to} (head {head} − {confirmations} confirmations): {} \
             decision rows; kept from the existing feed and the journal: {} off-chain rows and \
             the labels of {labelled} rows; wrote {FEED_FILE} ({} rows: decisions, the rows \
             closing their positions and off-chain rows), {HEAD_FILE} (head {}), {CHART_FILE} \
             and {RESULTS_FILE} in {}",
            record.decisions.len(),
            offchain.len(),
            rebuilt.feed.len(),
            new_links.head,
            results.display()
        )];
        if v1 {
            verified.push(format!(
                "the existing feed was in the v1 shape: rewritten once as a v{} event log",
                feed::FEED_VERSION
            ));
        }
        if !disk_rows.is_empty() && !links.problems.is_empty() && !v1 {
            verified.push(format!(
                "note: the existing feed's hash chain was broken ({}); its off-chain rows and \
                 labels were kept as found and are now linked again",
                links.problems.join("; ")
            ));
        }
        return Ok(ReportOutcome {
            decisions: record.decisions.len(),
            offchain: offchain.len(),
            code_check: code_check
                .unwrap_or_else(|e| format!("NOT verified: {}", crate::error_chain(&e))),
            verified,
        });
    }

    let mut problems = Vec::new();
    let answers = check_answers(&disk_rows, &record, &mut problems);
    let mut vote_line = check_votes(&provider, &facts, &record, &mut problems).await?;
    if let Some((s, logs, _)) = &source {
        let c = record::consensus::check(
            &provider,
            facts.gate,
            s,
            logs,
            &record.decisions,
            from..=to,
            args.log_range,
        )
        .await?;
        problems.extend(c.problems);
        vote_line = Some(format!(
            "verified from chain (the gate's and the verdict source's logs): {} consensus \
             decisions, each the source's answer to a request it logged (market, read block and \
             prompt hash as asked); {} validator answers, each shown whole hashing to its \
             published keccak256; counts against the answers; each reason (PASS and the rules, \
             11, 22, 23) as the platform's status, the read's age (at most {} blocks) and {} \
             identical answers of {} give it; {} requests the gate refused outright. Not \
             verifiable from logs: results that differ only outside the answer they encode",
            c.checked, c.answers, s.max_read_age, s.threshold, s.subcommittee, c.refused
        ));
    }
    let RowsCompared { after: after_feed, older } =
        compare_rows(&disk_rows, &rebuilt.feed, &mut problems);
    problems.extend(links.problems.iter().cloned());
    let (md, svg) = record::render_pages(&facts, &rebuilt.summary, &questions)?;
    let md_lines = md.lines().count();
    compare_text(&results.join(RESULTS_FILE), RESULTS_FILE, &md, &mut problems)?;
    compare_chart(&results.join(CHART_FILE), &svg, &mut problems)?;
    let code = code_check?;
    if !problems.is_empty() {
        return Err(ReportError::Mismatch(problems));
    }
    let LinkCheck { rows: linked, head: head_hash, .. } = links;
    let fills = fill_prices(&record);
    let mut verified = vec![
        format!(
            "verified from chain: {} decision rows and {} rows closing their positions \
             (settlements, write-offs, late payouts; every field re-derived from its log), \
             {answers} published answers (length, head and keccak256 as logged), \
             {RESULTS_FILE} ({md_lines} lines re-rendered), {CHART_FILE} (re-rendered, byte \
             for byte)",
            record.decisions.len(),
            record.closings.len()
        ),
        format!("verified from chain: {code}"),
        format!(
            "verified by hash chain only (not re-derivable from chain): {} off-chain rows, the \
             labels (provider, model, strategy hash, scenario) of {labelled} decision rows; \
             {linked} rows linked up to {HEAD_FILE} {head_hash}",
            offchain.len()
        ),
        format!(
            "not verifiable here: that {HEAD_FILE} is the head the keeper published (whoever \
             rewrites the feed can rewrite it too): compare {head_hash} with a copy kept elsewhere"
        ),
    ];
    verified.extend(vote_line);
    verified.extend(prompt_line);
    if older > 0 {
        verified.push(format!(
            "not in {FEED_FILE}: the gas, or a settlement's time, of {older} rows written before \
             the feed published them (on chain, and read from there for {RESULTS_FILE})"
        ));
    }
    verified.push(format!(
        "read to block {to} (head {head} − {confirmations} confirmations, as `keeper run` \
         records){}",
        if after_feed > 0 {
            format!(
                "; {after_feed} confirmed rows after the feed's last are not in it yet (the \
                 keeper appends them on its next cycle)"
            )
        } else {
            String::new()
        }
    ));
    if !fills.is_empty() {
        verified.push(format!(
            "verified from chain: {} rows with a fill, each with its best level price and its \
             average price paid, ceil(spent × 1e6 / filled): {}",
            fills.len(),
            fills.join("; ")
        ));
    }
    Ok(ReportOutcome {
        decisions: record.decisions.len(),
        offchain: offchain.len(),
        code_check: code,
        verified,
    })
}

/// On an attested gate, every attested decision's vote re-checked from its transaction's call
/// data ([`record::votes`]); the line saying what was verified (None on a relayed gate).
async fn check_votes(
    provider: &DynProvider,
    facts: &crate::domain::decision::GateFacts,
    record: &ChainRecord,
    problems: &mut Vec<String>,
) -> Result<Option<String>> {
    let Some(set) = &facts.attestors else { return Ok(None) };
    let rows: Vec<&DecisionRow> = record.decisions.iter().collect();
    let v = record::votes::check(provider, facts.chain_id, facts.gate, set, &rows).await?;
    problems.extend(v.problems);
    Ok(Some(format!(
        "verified from chain (logs and call data): {} attested decisions' votes, {} signatures \
         recovered over this chain, gate, market, read and deadline to the signers each vote \
         names; each answer's length, hash and head as published; counts re-parsed; each \
         reason (PASS and the rules, 21, 22) as the {} of {} attestors' answers give it",
        v.checked,
        v.signatures,
        set.threshold,
        set.signers.len()
    )))
}

/// A consensus gate's verdict source: its settings, its logs over `[from, to]`, and the
/// prompts they hold for `--check-prompts`.
async fn source_of(
    provider: &DynProvider,
    source: Address,
    from: u64,
    to: u64,
    range: u64,
) -> Result<(
    record::consensus::SourceFacts,
    record::consensus::SourceLogs,
    record::rederive::SourcePrompts,
)> {
    let facts = record::consensus::source_facts(provider, source).await?;
    let logs = record::consensus::source_logs(provider, source, from, to, range).await?;
    let prompts =
        record::rederive::SourcePrompts { system: facts.system.clone(), asked: logs.prompts() };
    Ok((facts, logs, prompts))
}

/// The checked questions of the markets RESULTS.md names ([`record::page_markets`]), each from
/// its `MarketCreated` log checked against the market's `questionHash()`, as the keeper's
/// follower read them.
async fn page_questions(
    provider: &DynProvider,
    facts: &record::GateFacts,
    summary: &record::summary::Summary,
    to: u64,
    range: u64,
) -> Result<record::Questions> {
    let markets: std::collections::HashSet<Address> =
        record::page_markets(summary).into_iter().collect();
    if markets.is_empty() {
        return Ok(record::Questions::new());
    }
    let found = record::rederive::created(provider, facts.factory, &markets, to, range).await?;
    Ok(found
        .into_iter()
        .filter_map(|(m, (info, _))| Some((m.to_checksum(None), info.question.text()?.to_string())))
        .collect())
}

/// Chain time of block `number`.
pub(crate) async fn block_time(provider: &DynProvider, number: u64) -> Result<u64> {
    let block = provider
        .get_block_by_number(number.into())
        .await
        .map_err(|e| chain::ChainError::Rpc(Box::new(e)))?;
    Ok(block.map(|b| b.header.timestamp).unwrap_or_default())
}

/// `block 12 tx 0x…: best level price 0.300000, average price paid 0.331500` for every row of
/// the chain record with a fill (a fill the gate undid, reason 18, marked so).
fn fill_prices(record: &ChainRecord) -> Vec<String> {
    record
        .decisions
        .iter()
        .filter_map(|d| {
            let (avg, undone) = match (&d.average_price_paid, &d.attempted_fill) {
                (Some(a), _) => (a.clone(), ""),
                (None, Some(f)) => (f.average_price_paid.clone()?, " (fill undone, reason 18)"),
                _ => return None,
            };
            Some(format!(
                "block {} tx {}: best level price {}, average price paid {}{undone}",
                d.block,
                d.tx,
                crate::domain::format::units(&d.price_paid),
                crate::domain::format::units(&avg)
            ))
        })
        .collect()
}

/// Decision rows carrying any keeper label.
fn labelled_rows(rows: &[FeedRow]) -> usize {
    rows.iter()
        .filter(|r| matches!(r, FeedRow::Decision(d) if d.note != feed::Annotation::default()))
        .count()
}

/// A decision's identity: its transaction and log index.
/// What `report --check` finds for one decision row and the rows closing its position, read
/// again from the node (the floor's decision page shows it).
#[derive(Debug, Clone)]
pub struct RowCheck {
    /// The row and its closing rows against the `Decision`, `Settled` and `WrittenOff` logs of
    /// its market: every difference, field by field (empty: they match).
    pub event_problems: Vec<String>,
    /// Rows of this position the chain holds that the record has not appended yet.
    pub not_yet_appended: usize,
    /// The published answer against the logged length, head and keccak256: None when the
    /// record holds only the logged head.
    pub answer_matches: Option<bool>,
    /// The prompt re-rendered from chain: Ok when it hashes to the published prompt hash, Err
    /// with why not (or why it could not be re-rendered).
    pub prompt: std::result::Result<(), String>,
    /// The settlement against the market's own outcome (`finalized()`, `upWins()`), when the
    /// position settled.
    pub settlement: Option<std::result::Result<(), String>>,
    /// On a consensus gate, the row's vote and reason against its verdict source's logs
    /// ([`record::consensus`]); None on the other modes.
    pub consensus: Option<std::result::Result<(), String>>,
}

/// Checks `row` (a decision as the record appended it) and `closings` (the rows the record
/// appended closing its position) with the code `report --check` runs over a whole feed: the
/// rows re-derived from the node's logs of its market and compared field by field
/// ([`compare_rows`]), the whole answer against the log ([`check_answers`]), the prompt
/// re-rendered from chain ([`record::rederive::check`]) with the strategy texts published in
/// `results`; then the settlement against the market. Reads to block `to`.
#[allow(clippy::too_many_arguments)]
pub async fn check_row(
    provider: &DynProvider,
    facts: &crate::domain::decision::GateFacts,
    from: u64,
    to: u64,
    range: u64,
    row: &DecisionRow,
    closings: &[FeedRow],
    results: &Path,
) -> Result<RowCheck> {
    use crate::kit::bindings::IRiskGate;
    use alloy::sol_types::SolEvent;
    let market: Address = row.market.parse().map_err(|_| {
        ReportError::Mismatch(vec![format!("the row's market {:?} is not an address", row.market)])
    })?;
    let filter = alloy::rpc::types::Filter::new()
        .address(facts.gate)
        .event_signature(vec![
            IRiskGate::Decision::SIGNATURE_HASH,
            IRiskGate::Settled::SIGNATURE_HASH,
            IRiskGate::WrittenOff::SIGNATURE_HASH,
        ])
        .topic1(market.into_word());
    let logs = reads::filtered_logs(provider, &filter, from, to, range).await?;
    let times = reads::block_times(provider, &logs, HashMap::new()).await?;
    let mut gas = HashMap::new();
    reads::tx_gas(provider, &logs, &mut gas).await?;
    let chain = feed::decode_logs(&logs, facts.chain_id, facts.gate, &facts.labels, &times, &gas)?;
    let this = row.reference();
    // The labels the chain cannot know come from the row itself, as `report` takes them from
    // the feed: the check is of what the chain holds.
    let (notes, _) = feed::split_feed(&[FeedRow::Decision(row.clone())]);
    let derived = feed::merge(&chain, &notes, &[]);
    let ours = |r: &FeedRow| match r {
        FeedRow::Decision(d) => d.reference() == this,
        other => other.closes().contains(&this),
    };
    let derived: Vec<FeedRow> = derived.into_iter().filter(ours).collect();
    let mut disk: Vec<FeedRow> = vec![FeedRow::Decision(row.clone())];
    disk.extend(closings.iter().filter(|r| ours(r)).cloned());
    disk.sort_by_key(FeedRow::sort_key);
    let mut out = RowCheck {
        event_problems: Vec::new(),
        not_yet_appended: 0,
        answer_matches: None,
        prompt: Ok(()),
        settlement: None,
        consensus: None,
    };
    let compared = compare_rows(&disk, &derived, &mut out.event_problems);
    out.not_yet_appended = compared.after;
    if row.raw.is_some() {
        let mut problems = Vec::new();
        out.answer_matches =
            Some(check_answers(&disk, &chain, &mut problems) == 1 && problems.is_empty());
    }
    let one = ChainRecord {
        decisions: chain.decisions.iter().filter(|d| d.reference() == this).cloned().collect(),
        ..Default::default()
    };
    out.prompt = if one.decisions.is_empty() {
        Err("its Decision log is not on chain".into())
    } else {
        let labelled = [FeedRow::Decision(row.clone())];
        let source = match facts.verdict_source {
            Some(addr) => Some(source_of(provider, addr, from, to, range).await?),
            None => None,
        };
        if let Some((s, logs, _)) = &source {
            // Only this row's own answer: the others' rows are not checked here.
            let tx: alloy::primitives::B256 = row.tx.parse().unwrap_or_default();
            let mine = record::consensus::SourceLogs {
                answered: logs.answered.iter().filter(|a| a.tx == tx).cloned().collect(),
                ..logs.clone()
            };
            let c = record::consensus::check(
                provider,
                facts.gate,
                s,
                &mine,
                &one.decisions,
                from..=to,
                range,
            )
            .await?;
            out.consensus = Some(match c.problems.first() {
                None => Ok(()),
                Some(why) => Err(why.clone()),
            });
        }
        let source = source.map(|(_, _, prompts)| prompts);
        let check = record::rederive::check(
            provider,
            facts.factory,
            &one,
            &labelled,
            &labelled,
            results,
            source.as_ref(),
            to,
            range,
        )
        .await?;
        match (check.matched, check.problems.first()) {
            (1, None) => Ok(()),
            (_, Some(why)) => Err(why.clone()),
            _ => Err("it was not re-rendered".into()),
        }
    };
    let settled = disk.iter().find_map(|r| match r {
        FeedRow::Settlement(c) | FeedRow::LatePayout(c) => Some(c.event.up_won),
        _ => None,
    });
    if let Some(up_won) = settled {
        let m = crate::kit::bindings::IBinaryMarket::new(market, provider);
        let at = alloy::eips::BlockId::number(to);
        let finalized = m.finalized().block(at).call().await;
        let up_wins = m.upWins().block(at).call().await;
        out.settlement = Some(match (finalized, up_wins) {
            (Ok(true), Ok(u)) if u == up_won => Ok(()),
            (Ok(true), Ok(u)) => Err(format!(
                "the settlement says {} won; the market says {}",
                if up_won { "UP" } else { "DOWN" },
                if u { "UP" } else { "DOWN" }
            )),
            (Ok(false), _) => Err("the market is not final".into()),
            _ => Err("the market's outcome could not be read".into()),
        });
    }
    Ok(out)
}

fn identity(d: &DecisionRow) -> (String, u64) {
    (d.tx.clone(), d.log_index)
}

/// `row 12 (tx 0x…, log 3)`: a feed row as a difference names it (`row` is 1-based).
fn row_name(row: usize, d: &DecisionRow) -> String {
    format!("row {row} (tx {}, log {})", d.tx, d.log_index)
}

/// Every whole answer the feed publishes must be the one its `Decision` logged: the same length,
/// starting with the logged head, hashing to the logged keccak256. (The chain keeps only the
/// first 64 bytes, so this is what makes a published long answer checkable.) Returns how many
/// answers were checked.
fn check_answers(disk: &[FeedRow], record: &ChainRecord, problems: &mut Vec<String>) -> usize {
    let on_chain: HashMap<(String, u64), usize> =
        record.decisions.iter().enumerate().map(|(i, d)| (identity(d), i)).collect();
    let mut checked = 0;
    for (i, row) in disk.iter().enumerate() {
        let FeedRow::Decision(d) = row else { continue };
        let (Some(raw), Some(&k)) = (&d.raw, on_chain.get(&identity(d))) else { continue };
        let (c, head) = (&record.decisions[k], &record.raw_heads[k]);
        checked += 1;
        if !feed::raw_matches(raw, head, c.raw_length, &c.raw_hash) {
            problems.push(format!(
                "{}: the published answer ({} bytes) is not the one its event logged ({} bytes, \
                 keccak256 {})",
                row_name(i + 1, d),
                raw.len(),
                c.raw_length,
                c.raw_hash
            ));
        }
    }
    checked
}

/// Compares each chain row of the feed (a decision, or a settlement, write-off or late payout
/// closing one) with the row re-derived from chain (matched by block and log index), field by
/// field; names rows missing from either side. A derived row missing before the feed's last
/// row is a hole; those after it are counted and returned (the keeper has not appended them
/// yet).
fn compare_rows(disk: &[FeedRow], derived: &[FeedRow], problems: &mut Vec<String>) -> RowsCompared {
    let last = disk.last().map(FeedRow::sort_key);
    let mut older = 0;
    let chain_key = |r: &FeedRow| {
        let k = r.sort_key();
        (k.1 == 0).then_some((k.0, k.2))
    };
    let derived_by: HashMap<(u64, u64), &FeedRow> =
        derived.iter().filter_map(|r| Some((chain_key(r)?, r))).collect();
    let mut seen = HashMap::new();
    for (i, row) in disk.iter().enumerate() {
        let Some(id) = chain_key(row) else { continue };
        let name = feed_row_name(i + 1, row);
        if let Some(first) = seen.insert(id, i + 1) {
            problems.push(format!("{name}: a second copy of row {first}"));
            continue;
        }
        let Some(c) = derived_by.get(&id) else {
            problems.push(format!("{name}: no such {} on chain", kind_name(row)));
            continue;
        };
        let (mut file, mut chain) = (to_value(row), to_value(c));
        if predates(&mut file, &mut chain) {
            older += 1;
        }
        let mut diffs = Vec::new();
        field_diffs(&file, &chain, "", &mut diffs);
        for (field, f, c) in diffs {
            problems.push(format!("{name}: field `{field}`: file has {f}, chain has {c}"));
        }
    }
    let mut after = 0;
    for row in derived {
        let Some(id) = chain_key(row) else { continue };
        if seen.contains_key(&id) {
            continue;
        }
        if last.is_some_and(|k| row.sort_key() < k) {
            problems.push(format!(
                "{} at block {} (log {}) is on chain but missing from {FEED_FILE}",
                kind_name(row),
                id.0,
                id.1
            ));
        } else {
            after += 1;
        }
    }
    RowsCompared { after, older }
}

/// What a chain row records, as a message names it.
fn kind_name(row: &FeedRow) -> &'static str {
    match row {
        FeedRow::Decision(_) => "decision",
        FeedRow::Settlement(_) => "settlement",
        FeedRow::WriteOff(_) => "write-off",
        FeedRow::LatePayout(_) => "late payout",
        FeedRow::Offchain(_) => "off-chain row",
    }
}

/// `row 12 (tx 0x…, log 3)` for any chain row (`row` is 1-based).
fn feed_row_name(row: usize, r: &FeedRow) -> String {
    match r {
        FeedRow::Decision(d) => row_name(row, d),
        FeedRow::Settlement(c) | FeedRow::LatePayout(c) => {
            format!("row {row} ({} tx {}, log {})", kind_name(r), c.event.tx, c.log_index)
        }
        FeedRow::WriteOff(c) => {
            format!("row {row} ({} tx {}, log {})", kind_name(r), c.event.tx, c.log_index)
        }
        FeedRow::Offchain(_) => format!("row {row}"),
    }
}

/// What [`compare_rows`] found besides its problems.
struct RowsCompared {
    /// Final rows after the feed's last row (the keeper has not appended them yet).
    after: usize,
    /// Rows written before the feed published `gas` and a settlement's `time`.
    older: usize,
}

/// Fields a feed row did not publish when it was written (`gas` and a settlement's `time`,
/// first published by the keeper whose summary is `summary.v2`), dropped from the chain's row
/// so they are not reported as removed. They are on chain either way, and the pages are
/// re-rendered from the chain's values; a row's hash link still pins the row as written. True
/// if the row predates either.
fn predates(file: &mut serde_json::Value, chain: &mut serde_json::Value) -> bool {
    let mut older = false;
    if file.get("gas").is_none() {
        older |= chain.as_object_mut().and_then(|c| c.remove("gas")).is_some();
    }
    if let (Some(f), Some(c)) = (
        file.get_mut("settlement").and_then(|f| f.as_object_mut()),
        chain.get_mut("settlement").and_then(|c| c.as_object_mut()),
    ) {
        // Read into a row, a settlement without a time has time 0 (no block has that time).
        if f.get("time").is_none_or(|t| t.as_u64() == Some(0)) {
            f.remove("time");
            older |= c.remove("time").is_some();
        }
    }
    older
}

fn to_value(r: &FeedRow) -> serde_json::Value {
    serde_json::to_value(r).unwrap_or(serde_json::Value::Null)
}

/// The differing leaves of two JSON values, as (`a.b` path, file value, chain value).
fn field_diffs(
    file: &serde_json::Value,
    chain: &serde_json::Value,
    path: &str,
    out: &mut Vec<(String, String, String)>,
) {
    use serde_json::Value;
    match (file, chain) {
        (Value::Object(f), Value::Object(c)) => {
            let mut keys: Vec<&String> = f.keys().chain(c.keys()).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                let sub = if path.is_empty() { k.clone() } else { format!("{path}.{k}") };
                field_diffs(
                    f.get(k).unwrap_or(&Value::Null),
                    c.get(k).unwrap_or(&Value::Null),
                    &sub,
                    out,
                );
            }
        }
        (f, c) if f != c => {
            out.push((path.to_string(), shown(&f.to_string()), shown(&c.to_string())))
        }
        _ => {}
    }
}

/// A value as a difference shows it: JSON-escaped by the caller or here, cut to
/// [`SHOWN_CHARS`] (model output is hostile: no control character reaches the terminal).
fn shown(s: &str) -> String {
    let escaped: String = s.escape_debug().collect();
    if escaped.chars().count() <= SHOWN_CHARS {
        return escaped;
    }
    let cut: String = escaped.chars().take(SHOWN_CHARS).collect();
    format!("{cut}...")
}

fn read_or_empty(path: &Path) -> Result<Option<Vec<u8>>> {
    match std::fs::read(path) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(record::RecordError::Read { path: path.to_path_buf(), source: e }.into()),
    }
}

/// Compares a re-rendered text file with the one on disk, naming the first differing line.
fn compare_text(path: &Path, name: &str, derived: &str, problems: &mut Vec<String>) -> Result<()> {
    let Some(bytes) = read_or_empty(path)? else {
        problems.push(format!("{name} is missing"));
        return Ok(());
    };
    let disk = String::from_utf8_lossy(&bytes);
    if disk == derived {
        return Ok(());
    }
    let (mut file_lines, mut chain_lines) = (disk.lines(), derived.lines());
    let mut n = 0;
    loop {
        n += 1;
        match (file_lines.next(), chain_lines.next()) {
            (Some(a), Some(b)) if a == b => continue,
            (None, None) => {
                problems.push(format!("{name}: differs only in line endings or a final newline"));
            }
            (a, b) => {
                let show = |l: Option<&str>| {
                    l.map_or_else(|| "(end of file)".to_string(), |l| format!("`{}`", shown(l)))
                };
                problems.push(format!(
                    "{name} line {n}: file has {}, re-rendered has {}",
                    show(a),
                    show(b)
                ));
            }
        }
        return Ok(());
    }
}

/// Compares the re-rendered chart with the one on disk byte for byte.
fn compare_chart(path: &Path, derived: &str, problems: &mut Vec<String>) -> Result<()> {
    let Some(disk) = read_or_empty(path)? else {
        problems.push(format!("{CHART_FILE} is missing"));
        return Ok(());
    };
    let derived = derived.as_bytes();
    if disk == derived {
        return Ok(());
    }
    let at =
        disk.iter().zip(derived).position(|(a, b)| a != b).unwrap_or(disk.len().min(derived.len()));
    let line = derived[..at.min(derived.len())].iter().filter(|b| **b == b'\n').count() + 1;
    problems.push(format!(
        "{CHART_FILE} differs from the chart re-rendered from chain at byte {at} (line {line}; \
         file {} bytes, re-rendered {} bytes)",
        disk.len(),
        derived.len()
    ));
    Ok(())
}

pub(crate) async fn code_check(
    provider: &DynProvider,
    gate: Address,
    root: &Path,
) -> Result<String> {
    let artifacts = compile::compile(root)?;
    let code = provider.get_code_at(gate).await.map_err(|e| ReportError::Code(Box::new(e)))?;
    if compile::code_matches(&artifacts.gate, &code) {
        Ok(format!(
            "gate runtime code ({} bytes) matches contracts/src/RiskGate.sol compiled with tools/solc ({} immutable ranges masked)",
            code.len(),
            artifacts.gate.immutables.len()
        ))
    } else {
        Err(ReportError::CodeMismatch {
            on_chain: code.len(),
            compiled: artifacts.gate.deployed.len(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_differing_nested_field_is_named_by_its_path() {
        let file = json!({"reason": 4, "book": {"best_ask": "400000", "now": 7}, "tx": "0xab"});
        let chain = json!({"reason": 9, "book": {"best_ask": "400000", "now": 8}, "tx": "0xab"});
        let mut out = Vec::new();
        field_diffs(&file, &chain, "", &mut out);
        assert_eq!(
            out,
            vec![
                ("book.now".to_string(), "7".to_string(), "8".to_string()),
                ("reason".to_string(), "4".to_string(), "9".to_string()),
            ]
        );
    }

    #[test]
    fn a_row_written_before_gas_and_settlement_time_is_not_a_removal() {
        // An older row: no `gas`, a settlement whose time, read into a row, is 0. Both are
        // dropped (the time from both sides), and nothing else.
        let mut file = json!({"reason": 0, "settlement": {"pnl": "5", "time": 0}});
        let mut chain =
            json!({"reason": 0, "gas": {"gas_used": 9}, "settlement": {"pnl": "5", "time": 7}});
        assert!(predates(&mut file, &mut chain));
        assert_eq!(chain, json!({"reason": 0, "settlement": {"pnl": "5"}}));
        assert_eq!(file, chain);
        // As the file says it without the key at all, too.
        let mut chain = json!({"settlement": {"pnl": "5", "time": 7}});
        assert!(predates(&mut json!({"settlement": {"pnl": "5"}}), &mut chain));
        // A current row keeps both, so a changed value is still named.
        let mut file = json!({"gas": {"gas_used": 8}, "settlement": {"time": 6}});
        let mut chain = json!({"gas": {"gas_used": 9}, "settlement": {"time": 7}});
        assert!(!predates(&mut file, &mut chain));
        let mut out = Vec::new();
        field_diffs(&file, &chain, "", &mut out);
        assert_eq!(out.len(), 2, "{out:?}");
        // A row the chain has no gas for either is not counted as older.
        let mut chain = json!({"reason": 0});
        assert!(!predates(&mut json!({"reason": 0}), &mut chain));
    }

    #[test]
    fn a_shown_value_is_escaped_and_cut() {
        assert_eq!(shown("a\u{1b}[2Jb\n"), "a\\u{1b}[2Jb\\n");
        let long = "x".repeat(SHOWN_CHARS + 5);
        assert_eq!(shown(&long), format!("{}...", "x".repeat(SHOWN_CHARS)));
    }

    #[test]
    fn the_first_differing_line_is_named_with_both_texts() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("page.md");
        std::fs::write(&path, "a\nb\nc\n").unwrap();
        let mut problems = Vec::new();
        compare_text(&path, "page.md", "a\nB\nc\n", &mut problems).unwrap();
        assert_eq!(problems, vec!["page.md line 2: file has `b`, re-rendered has `B`"]);
        problems.clear();
        compare_text(&path, "page.md", "a\nb\n", &mut problems).unwrap();
        assert_eq!(problems, vec!["page.md line 3: file has `c`, re-rendered has (end of file)"]);
    }
}
