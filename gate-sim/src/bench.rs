//! Speed figures, printed as one markdown section: reference evaluations per second on one
//! core, and differential cases per second in-process (revm) and on anvil, from one run.

use crate::{
    artifact::GateArtifact,
    diff,
    evm::{self, AnvilChain, RevmChain},
    model::{self, Bounds, Quote, Snapshot},
    strategies,
};
use alloy::primitives::U256;
use proptest::{
    strategy::{Strategy, ValueTree},
    test_runner::TestRunner,
};
use std::{
    hint::black_box,
    path::Path,
    time::{Duration, Instant},
};

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Diff(#[from] diff::Error),
    #[error(transparent)]
    Evm(#[from] evm::Error),
    #[error("the differential disagreed during the benchmark: {0}")]
    Mismatch(String),
}

pub type Result<T> = std::result::Result<T, Error>;

pub struct BenchConfig {
    pub reference_secs: f64,
    pub revm_cases: u64,
    pub anvil_cases: u64,
    pub seed: u64,
}

pub struct BenchReport {
    pub reference_evals: u64,
    pub reference_elapsed: Duration,
    pub revm: diff::Report,
    pub anvil: Option<diff::Report>,
}

/// Evaluations of the reference model per second, single thread, over a fixed mix of rows
/// drawn from the differential's strategies (passes and every kind of refusal).
fn reference_speed(secs: f64) -> (u64, Duration) {
    let mut runner = TestRunner::deterministic();
    let mut rows: Vec<(Bounds, Snapshot, Quote, u8)> = Vec::new();
    let strategy = strategies::gate_case();
    while rows.len() < 4_096 {
        let Ok(tree) = strategy.new_tree(&mut runner) else { continue };
        let case = tree.current();
        rows.extend(case.rows.iter().map(|r| (case.config.bounds, r.snapshot, r.quote, r.verdict)));
    }
    let started = Instant::now();
    let mut evals = 0u64;
    let mut sink = U256::ZERO;
    while started.elapsed().as_secs_f64() < secs {
        for (b, s, q, v) in &rows {
            let d = model::evaluate(black_box(b), black_box(s), black_box(q), black_box(*v));
            sink ^= d.cost;
        }
        evals += rows.len() as u64;
    }
    black_box(sink);
    (evals, started.elapsed())
}

pub fn run(
    config: &BenchConfig,
    artifact: &GateArtifact,
    anvil: Option<&Path>,
) -> Result<BenchReport> {
    let (reference_evals, reference_elapsed) = reference_speed(config.reference_secs);
    let mut revm_chain = RevmChain::new();
    let revm =
        diff::run(&mut revm_chain, artifact, config.revm_cases, config.seed, &mut |_, _| {})?;
    if let Some(m) = &revm.mismatch {
        return Err(Error::Mismatch(m.describe()));
    }
    let anvil = match anvil {
        None => None,
        Some(path) => {
            let mut chain = AnvilChain::spawn(path)?;
            let r =
                diff::run(&mut chain, artifact, config.anvil_cases, config.seed, &mut |_, _| {})?;
            if let Some(m) = &r.mismatch {
                return Err(Error::Mismatch(m.describe()));
            }
            Some(r)
        }
    };
    Ok(BenchReport { reference_evals, reference_elapsed, revm, anvil })
}

fn verdict(value: f64, target: f64) -> &'static str {
    if value >= target {
        "met"
    } else {
        "NOT met"
    }
}

pub fn markdown(r: &BenchReport) -> String {
    let reference_rate = r.reference_evals as f64 / r.reference_elapsed.as_secs_f64().max(1e-9);
    let revm_rate = r.revm.rows_per_sec();
    let mut out = String::new();
    out.push_str("## gate-sim: reference model and differential\n\n");
    out.push_str("Measured by `gate-sim bench` (release build, one thread). A differential case is one `parseVerdict` and one `evaluate` on the compiled RiskGate, compared byte for byte with the reference model; one gate is deployed per configuration (bounds, trusted resolvers, factory; up to 32 cases each), against a real `MarketFactory`, and its configuration views are checked too.\n\n");
    out.push_str("| figure | measured | target |\n| --- | --- | --- |\n");
    out.push_str(&format!(
        "| reference `evaluate`, one core | {:.0} evaluations/s ({} in {:.2} s) | >= 1,000,000 ({}) |\n",
        reference_rate,
        r.reference_evals,
        r.reference_elapsed.as_secs_f64(),
        verdict(reference_rate, 1_000_000.0)
    ));
    out.push_str(&format!(
        "| differential, in-process (revm) | {:.0} cases/s ({} cases, {} gates, {:.2} s) | >= 5,000 ({}) |\n",
        revm_rate,
        r.revm.rows,
        r.revm.gates,
        r.revm.elapsed.as_secs_f64(),
        verdict(revm_rate, 5_000.0)
    ));
    match &r.anvil {
        Some(a) => out.push_str(&format!(
            "| differential, anvil (alloy, HTTP on 127.0.0.1) | {:.0} cases/s ({} cases, {} gates deployed by transaction, {:.2} s) | reported |\n",
            a.rows_per_sec(),
            a.rows,
            a.gates,
            a.elapsed.as_secs_f64()
        )),
        None => out.push_str("| differential, anvil | not run (`--no-anvil`) | reported |\n"),
    }
    out.push_str(&format!("\nSeed {}; disagreements found: 0.\n", r.revm.seed));
    out
}
