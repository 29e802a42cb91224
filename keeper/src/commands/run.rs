//! `keeper run`: the long-lived bot around [`Engine::cycle`]. It connects (waiting for a node
//! that is not up yet, if `--max-outage` allows), builds the engine from [`RunConfig`] in one
//! place, runs cycles until a signal, and waits out node failures with a bounded backoff. The
//! stages themselves are [`crate::engine`]'s.

use crate::{
    chain,
    chain::reads,
    domain::config::{RunConfig, SavedGate},
    engine::{Engine, GateRef, Result, RunError},
    inference::{attestors::Panel, Model},
    record,
};
use alloy::providers::DynProvider;
use std::{
    path::Path,
    time::{Duration, Instant},
};
use tokio_util::sync::CancellationToken;
use tracing::{info, warn};

/// Backoff between failed cycles: doubling from the first, capped, so an outage of any length
/// is waited out without hammering the node.
pub const BACKOFF_FIRST: Duration = Duration::from_millis(500);
pub const BACKOFF_CAP: Duration = Duration::from_secs(15);

pub use crate::domain::config::{default_confirmations, DEFAULT_CONFIRMATIONS, DEV_CHAIN_ID};

/// The gate `keeper run` drives and who answers for it, checked before anything is written
/// ([`check`]).
pub struct Checked {
    gate: alloy::primitives::Address,
    /// Its attestors on an attested gate; None on a relayed one (the model answers).
    panel: Option<Panel>,
}

/// The gate to run (`--gate`, else `saved_gate`, the one the chain's saved deployment at
/// `saved_path` names), checked: it has code, answers like a RiskGate, and is in a mode a
/// keeper drives with these flags ([`panel`]). It only reads: a gate refused here (a consensus
/// gate, an attested one without `--attestor`) leaves deployments/ and results/ as they were.
pub async fn check(
    cfg: &RunConfig,
    reader: &DynProvider,
    chain_id: u64,
    saved_gate: Option<alloy::primitives::Address>,
    saved_path: &Path,
) -> Result<Checked> {
    let gate = match (cfg.gate, saved_gate) {
        (Some(g), _) | (None, Some(g)) => g,
        (None, None) => {
            let path = saved_path.display().to_string();
            return Err(chain::ChainError::NoSavedGate { chain_id, path }.into());
        }
    };
    chain::check_gate(reader, gate, chain_id).await?;
    let panel = panel(cfg, reader, gate, chain_id).await?;
    Ok(Checked { gate, panel })
}

/// `keeper run`: the long-lived bot. Node failures are retried with a bounded backoff for as
/// long as `--max-outage` allows (forever by default); a shutdown signal ends it cleanly (exit
/// 0); whatever ends it, the record is written first, and every off-chain row is already in the
/// journal.
///
/// `reader` is connected to chain `chain_id` ([`connect_waiting`]); `checked` is the gate
/// [`check`] passed; `saved` is what the CLI layer read from the saved deployment of that
/// chain, if anything.
pub async fn run(
    cfg: RunConfig,
    (reader, chain_id): (DynProvider, u64),
    Checked { gate, panel }: Checked,
    saved: SavedGate,
    root: &Path,
    cancel: CancellationToken,
) -> Result<()> {
    let factory = reads::gate_factory(&reader, gate).await?;
    let results =
        cfg.results.clone().unwrap_or_else(|| record::default_results_dir(root, chain_id, gate));
    let from_block = cfg
        .from_block
        .or_else(|| saved.found.as_ref().filter(|d| d.gate == gate).map(|d| d.deploy_block))
        .unwrap_or(0);
    let confirmations = cfg.confirmations.unwrap_or_else(|| default_confirmations(chain_id));
    // Who answers: the attestors on an attested gate (the keeper asks no model of its own
    // there, so none is started and the start line names them), else the model.
    let attested = panel.as_ref().map(|p| (p.urls().len(), p.threshold()));
    // The bundled model's server, if any, lives until this function returns.
    let (model, _model_server) = match attested {
        Some(_) => (Model::Builtin, None),
        None => Model::start(&cfg.model, cfg.inference_timeout, root).await?,
    };
    let builder = Engine::builder(reader.clone(), GateRef { chain_id, gate, factory, from_block })
        .results(Some(results.clone()))
        .resume()
        .confirmations(confirmations)
        .log_range(cfg.log_range)
        .concurrency(cfg.concurrency)
        .reask_secs(cfg.reask_secs)
        .quote(cfg.quote)
        .dry_run(cfg.dry_run)
        .strategy_text(cfg.strategy_text.clone())
        .model(model)
        .panel(panel)
        .resend_after(cfg.resend_after)
        .batch_max(cfg.batch_max)
        .batch_window(cfg.batch_window);
    let builder = if cfg.dry_run {
        let keeper = crate::kit::bindings::IRiskGate::new(gate, &reader)
            .keeper()
            .call()
            .await
            .map_err(|e| chain::ChainError::Call(Box::new(e)))?;
        builder.keeper(keeper)
    } else {
        let signer = chain::load_signer(cfg.keystore.as_deref())?;
        chain::check_keeper_ready(&reader, gate, signer.address()).await?;
        builder.signer(signer)
    };
    let mut keeper = builder.build()?;
    let keeper_addr = keeper.executor().keeper();
    let pending = keeper.executor().journal().pending().count();
    match attested {
        Some((attestors, k)) => info!(
            chain_id,
            %gate,
            keeper = %keeper_addr,
            attestors,
            k,
            confirmations,
            results = %results.display(),
            pending,
            dry_run = cfg.dry_run,
            "keeper starting: the gate's attestors answer, {k} of the {attestors} given must agree"
        ),
        None => info!(
            chain_id,
            %gate,
            keeper = %keeper_addr,
            provider = keeper.strategy().model().name(),
            model = %keeper.strategy().model().model(),
            confirmations,
            results = %results.display(),
            pending,
            dry_run = cfg.dry_run,
            "keeper starting"
        ),
    }
    let outcome = run_loop(&mut keeper, &cfg, &cancel).await;
    // Whatever ended the loop, the record on disk is brought up to date (the off-chain rows are
    // already in the journal; this only re-renders the feed from it).
    if let Err(e) = keeper.write_results() {
        warn!(error = %crate::error_chain(&e), "could not re-write the record on exit; the journal holds every row");
    }
    info!(peak_rss_kib = peak_rss_kib().unwrap_or(0), "keeper stopped");
    outcome
}

/// Who answers for `gate`: its attestors on an attested gate (each from `--attestor`), the
/// model on a relayed one. Refuses a consensus gate, an attested gate without attestors and a
/// relayed one with.
async fn panel(
    cfg: &RunConfig,
    reader: &DynProvider,
    gate: alloy::primitives::Address,
    chain_id: u64,
) -> Result<Option<Panel>> {
    let set = match chain::gate_mode(reader, gate).await? {
        chain::GateMode::Consensus { source } => {
            let source_addr = source;
            return Err(
                chain::ChainError::ConsensusGate { addr: gate, chain_id, source_addr }.into()
            );
        }
        chain::GateMode::Relayed if !cfg.attestors.is_empty() => {
            return Err(chain::ChainError::AttestorsOnRelayed { addr: gate, chain_id }.into());
        }
        chain::GateMode::Relayed => return Ok(None),
        chain::GateMode::Attested(set) => set,
    };
    if cfg.attestors.is_empty() {
        let (k, n) = (set.threshold, set.signers.len());
        return Err(chain::ChainError::NoAttestors { addr: gate, chain_id, k, n }.into());
    }
    let panel = Panel::new(
        cfg.attestors.clone(),
        chain_id,
        gate,
        set.signers,
        usize::from(set.threshold),
        cfg.attestor_timeout,
    )?
    .with_max_read_age(u64::from(set.max_read_age));
    let panel = if cfg.attestor_wait_all { panel.waiting_for_all() } else { panel };
    info!(
        attestors = panel.urls().len(),
        k = panel.threshold(),
        "an attested gate: its attestors answer"
    );
    Ok(Some(panel))
}

/// This process's peak resident set (VmHWM, KiB), from /proc (None where there is none). Its
/// own pages only: unlike a parent's wait4 ru_maxrss, it never counts the memory of the process
/// that spawned it (a vfork-spawned child's ru_maxrss starts at its parent's high-water mark).
pub fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Whether a failure to reach the node looks like a node that is not up yet (connection refused,
/// reset or timed out; a gateway's 502/503/504), not like a setting that can never work (a TLS
/// certificate the keeper does not trust, a host that does not resolve): only the first is
/// waited for at start.
fn not_up_yet(e: &chain::ChainError) -> bool {
    use alloy::transports::{RpcError, TransportErrorKind};
    use std::io::ErrorKind::*;
    let chain::ChainError::Unreachable { source, .. } = e else { return false };
    if let RpcError::Transport(TransportErrorKind::HttpError(h)) = source.as_ref() {
        return matches!(h.status, 502..=504);
    }
    let mut next: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = next {
        if let Some(io) = err.downcast_ref::<std::io::Error>() {
            if matches!(
                io.kind(),
                ConnectionRefused | ConnectionReset | ConnectionAborted | TimedOut
            ) {
                return true;
            }
        }
        next = err.source();
    }
    false
}

/// An outage being waited out, at start or mid-run: a backoff doubling from [`BACKOFF_FIRST`] to
/// [`BACKOFF_CAP`], given up once the node has been unreachable for `--max-outage`.
struct Outage {
    since: Option<Instant>,
    backoff: Duration,
    max: Option<Duration>,
}

impl Outage {
    fn new(max: Option<Duration>) -> Self {
        Self { since: None, backoff: BACKOFF_FIRST, max }
    }

    /// The node answered: the next failure starts a new outage.
    fn over(&mut self) {
        self.since = None;
        self.backoff = BACKOFF_FIRST;
    }

    /// Counts failure `e` against the budget: past it, the error to exit with; else waits out
    /// the backoff (cut so the last try lands at the budget, never under 50 ms), or until a
    /// signal, logging `what`.
    async fn wait_out(
        &mut self,
        e: RunError,
        what: &'static str,
        cancel: &CancellationToken,
    ) -> Result<()> {
        let down = self.since.get_or_insert_with(Instant::now).elapsed();
        if self.max.is_some_and(|max| down >= max) {
            warn!(error = %crate::error_chain(&e), down_secs = down.as_secs(), "giving up: past --max-outage");
            return Err(RunError::Outage { secs: down.as_secs(), last: Box::new(e) });
        }
        warn!(error = %crate::error_chain(&e), retry_in_ms = self.backoff.as_millis() as u64, down_secs = down.as_secs(), "{what}");
        let wait = match self.max {
            Some(max) => self.backoff.min(max.saturating_sub(down)).max(Duration::from_millis(50)),
            None => self.backoff,
        };
        tokio::select! {
            _ = cancel.cancelled() => {}
            _ = tokio::time::sleep(wait) => {}
        }
        self.backoff = (self.backoff * 2).min(BACKOFF_CAP);
        Ok(())
    }
}

/// Connects to the node. Without `--max-outage` an unreachable node fails at once, with the
/// fix-it (at start a wrong URL and a node not up yet look alike, and a typo must not hang
/// silently). With it, a node that is not up yet is waited for as the run loop waits out an
/// outage (the same backoff, for at most `--max-outage`), so a keeper started beside its node
/// comes up once the node does. Anything else (a wrong chain id, a TLS failure) fails at once.
/// `None` when a signal arrived first.
pub async fn connect_waiting(
    cfg: &RunConfig,
    cancel: &CancellationToken,
) -> Result<Option<(DynProvider, u64)>> {
    let mut outage = Outage::new(cfg.max_outage);
    loop {
        match chain::connect_checked(&cfg.chain).await {
            Ok(c) => return Ok(Some(c)),
            Err(e @ chain::ChainError::Unreachable { .. })
                if cfg.max_outage.is_some() && not_up_yet(&e) =>
            {
                outage
                    .wait_out(e.into(), "node unreachable at start; waiting for it", cancel)
                    .await?;
                if cancel.is_cancelled() {
                    return Ok(None);
                }
            }
            Err(e) => return Err(e.into()),
        }
    }
}

async fn run_loop(keeper: &mut Engine, cfg: &RunConfig, cancel: &CancellationToken) -> Result<()> {
    let mut outage = Outage::new(cfg.max_outage);
    loop {
        if cancel.is_cancelled() {
            info!(
                "stopping on a signal; pending submissions stay in the journal for the next start"
            );
            return Ok(());
        }
        match keeper.cycle(None, cancel).await {
            Ok(r) => {
                outage.over();
                info!(
                    head = r.head,
                    confirmed_to = r.safe,
                    markets = r.markets_known,
                    asked = r.asked,
                    submitted = r.submitted,
                    mined = r.mined.len(),
                    pending = r.pending,
                    confirmed = r.settled.confirmed,
                    resent = r.settled.resent,
                    replaced = r.settled.replaced,
                    reorged = r.settled.reorged,
                    offchain = r.offchain_failures,
                    redeemed = r.redeemed,
                    written_off = r.written_off,
                    steps = %r.steps.line(),
                    "cycle done"
                );
                if cfg.once {
                    return Ok(());
                }
                tokio::select! {
                    _ = cancel.cancelled() => {}
                    _ = tokio::time::sleep(cfg.interval) => {}
                }
            }
            Err(e) if e.is_local() => return Err(e),
            Err(e) => outage.wait_out(e, "cycle failed; retrying", cancel).await?,
        }
    }
}

/// Cancels `token` on SIGINT or SIGTERM.
pub fn spawn_signal_handler(token: CancellationToken) {
    tokio::spawn(async move {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            let Ok(mut term) = signal(SignalKind::terminate()) else { return };
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
        }
        token.cancel();
    });
}
