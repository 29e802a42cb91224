//! `keeper report`: rebuilds the published record from chain logs alone and, with `--check`,
//! compares it with the files on disk (chain rows exactly; each whole answer against the length,
//! head and keccak256 its event logged; off-chain rows, which the chain cannot know, only in
//! count and kind). Also checks the gate's runtime code against the code
//! compiled from this repository (immutables masked).

use crate::{
    anvil::Anvil,
    chain::{self, short},
    cli::{ChainConfig, ReportArgs},
    collectors, compile,
    recorder::{
        feed::{self, FeedRow},
        markdown, RESULTS_FILE,
    },
    runner,
};
use alloy::{
    primitives::Address,
    providers::{DynProvider, Provider},
};
use std::path::Path;

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error(transparent)]
    Config(#[from] crate::cli::ConfigError),
    #[error(transparent)]
    Chain(#[from] chain::ChainError),
    #[error(transparent)]
    Collect(#[from] collectors::CollectError),
    #[error(transparent)]
    Record(#[from] crate::recorder::RecordError),
    #[error(transparent)]
    Run(#[from] runner::RunError),
    #[error(transparent)]
    Anvil(#[from] crate::anvil::AnvilError),
    #[error("saved state {path} has no companion {companion}: re-run `make demo`")]
    NoCompanion { path: String, companion: String },
    #[error("record differs from chain: {0}")]
    Mismatch(String),
    #[error("gate code on chain does not match the compiled source ({0})")]
    CodeMismatch(String),
}

pub type Result<T> = std::result::Result<T, ReportError>;

/// The outcome of a report.
#[derive(Debug, Clone)]
pub struct ReportOutcome {
    pub decisions: usize,
    pub offchain: usize,
    pub code_check: String,
}

/// Companion file the demo writes beside its saved anvil state.
pub const STATE_FILE: &str = "anvil-state.json";
pub const STATE_META_FILE: &str = "anvil-state.meta.json";

/// `keeper report`.
pub async fn run(args: &ReportArgs, root: &Path, anvil_bin: &Path) -> Result<ReportOutcome> {
    let results = root.join(&args.results);
    if let Some(state) = &args.load_state {
        let meta_path = state.with_file_name(STATE_META_FILE);
        let meta: crate::deploy::Deployment = std::fs::read_to_string(&meta_path)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .ok_or_else(|| ReportError::NoCompanion {
                path: state.display().to_string(),
                companion: meta_path.display().to_string(),
            })?;
        let anvil = Anvil::start(
            anvil_bin,
            None,
            &["--load-state".to_string(), state.display().to_string()],
        )
        .await?;
        let cfg =
            ChainConfig { rpc_url: anvil.url.clone(), expected_chain_id: Some(meta.chain_id) };
        let gate = args.gate.unwrap_or(meta.gate);
        let out = report_at(
            &cfg,
            gate,
            Some(args.from_block.unwrap_or(meta.deploy_block)),
            args,
            root,
            &results,
        )
        .await;
        anvil.stop().await;
        return out;
    }
    let cfg = args.chain.to_config()?;
    let gate = args.gate.ok_or(crate::cli::ConfigError::MissingGate)?;
    report_at(&cfg, gate, args.from_block, args, root, &results).await
}

async fn report_at(
    cfg: &ChainConfig,
    gate: Address,
    from_block: Option<u64>,
    args: &ReportArgs,
    root: &Path,
    results: &Path,
) -> Result<ReportOutcome> {
    let (provider, chain_id) = chain::connect_checked(cfg).await?;
    chain::check_gate(&provider, gate, chain_id).await?;
    let from = from_block.or_else(|| runner::saved_deploy_block(root, chain_id, gate)).unwrap_or(0);
    let head =
        provider.get_block_number().await.map_err(|e| chain::ChainError::Rpc(Box::new(e)))?;
    let facts = feed::gate_facts(&provider, gate, chain_id, from, head, args.log_range).await?;
    let record = feed::read_chain_record(
        &provider,
        gate,
        chain_id,
        &facts.labels,
        from,
        head,
        args.log_range,
    )
    .await?;
    let disk_rows = feed::read_feed(&results.join(crate::recorder::FEED_FILE))?;
    let (notes, offchain) = feed::split_feed(&disk_rows);
    let rows = feed::merge(&record, &notes, &offchain);
    let code_check = code_check(&provider, gate, root).await;

    if args.check {
        check_answers(&disk_rows, &record)?;
        compare(&disk_rows, &rows)?;
        let md = markdown::render(&facts, &rows, &record);
        let disk_md = std::fs::read_to_string(results.join(RESULTS_FILE)).unwrap_or_default();
        if md != disk_md {
            let line = md
                .lines()
                .zip(disk_md.lines())
                .position(|(a, b)| a != b)
                .map(|i| format!("first difference at line {}", i + 1))
                .unwrap_or_else(|| "lengths differ".into());
            return Err(ReportError::Mismatch(format!("{RESULTS_FILE}: {line}")));
        }
        match &code_check {
            Ok(_) => {}
            Err(e) => return Err(ReportError::CodeMismatch(e.clone())),
        }
    } else {
        runner::write_record(results, &facts, &record, &rows)?;
    }
    Ok(ReportOutcome {
        decisions: record.decisions.len(),
        offchain: offchain.len(),
        code_check: match code_check {
            Ok(s) => s,
            Err(e) => format!("NOT verified: {e}"),
        },
    })
}

/// Every whole answer the feed publishes must be the one its `Decision` logged: the same length,
/// starting with the logged head, hashing to the logged keccak256. (The chain keeps only the
/// first 64 bytes, so this is what makes a published long answer checkable.)
fn check_answers(disk: &[FeedRow], record: &feed::ChainRecord) -> Result<()> {
    let on_disk = disk.iter().filter_map(|r| match r {
        FeedRow::Decision(d) => Some(d),
        FeedRow::Offchain(_) => None,
    });
    for (i, (d, (c, head))) in
        on_disk.zip(record.decisions.iter().zip(&record.raw_heads)).enumerate()
    {
        let Some(raw) = &d.raw else { continue };
        if !feed::raw_matches(raw, head, c.raw_length, &c.raw_hash) {
            return Err(ReportError::Mismatch(format!(
                "decision row {} (tx {}): the published answer ({} bytes) is not the one its \
                 event logged ({} bytes, keccak256 {})",
                i + 1,
                c.tx,
                raw.len(),
                c.raw_length,
                c.raw_hash
            )));
        }
    }
    Ok(())
}

fn compare(disk: &[FeedRow], chain: &[FeedRow]) -> Result<()> {
    let count = |rows: &[FeedRow], off: bool| {
        rows.iter().filter(|r| matches!(r, FeedRow::Offchain(_)) == off).count()
    };
    if count(disk, false) != count(chain, false) {
        return Err(ReportError::Mismatch(format!(
            "feed has {} decision rows, chain has {}",
            count(disk, false),
            count(chain, false)
        )));
    }
    if count(disk, true) != count(chain, true) {
        return Err(ReportError::Mismatch("off-chain row count differs".into()));
    }
    let on_disk: Vec<&FeedRow> =
        disk.iter().filter(|r| matches!(r, FeedRow::Decision(_))).collect();
    let on_chain: Vec<&FeedRow> =
        chain.iter().filter(|r| matches!(r, FeedRow::Decision(_))).collect();
    for (i, (a, b)) in on_disk.iter().zip(on_chain.iter()).enumerate() {
        if a != b {
            let tx = match b {
                FeedRow::Decision(d) => d.tx.clone(),
                FeedRow::Offchain(_) => String::new(),
            };
            return Err(ReportError::Mismatch(format!("decision row {} (tx {tx}) differs", i + 1)));
        }
    }
    Ok(())
}

async fn code_check(
    provider: &DynProvider,
    gate: Address,
    root: &Path,
) -> std::result::Result<String, String> {
    let artifacts = compile::compile(root).map_err(|e| e.to_string())?;
    let code = provider.get_code_at(gate).await.map_err(|e| short(&e.to_string()))?;
    if compile::code_matches(&artifacts.gate, &code) {
        Ok(format!(
            "gate runtime code ({} bytes) matches contracts/src/RiskGate.sol compiled with tools/solc ({} immutable ranges masked)",
            code.len(),
            artifacts.gate.immutables.len()
        ))
    } else {
        Err(format!(
            "on-chain code is {} bytes, compiled is {} bytes",
            code.len(),
            artifacts.gate.deployed.len()
        ))
    }
}
