//! The differential: every case runs on the compiled RiskGate (revm or anvil) and on the
//! reference model, and the two must agree byte for byte on `parseVerdict` (returned value or
//! exact revert data) and `evaluate` (all five outputs), and on whether the constructor accepts
//! the bounds. A disagreement is shrunk by proptest and printed as a ready-to-paste forge test.

use crate::{
    abi,
    artifact::GateArtifact,
    evm::{self, Chain, Deployed, Outcome},
    forge,
    model::{self, Bounds, Snapshot},
    strategies::{self, GateCase},
};
use alloy::primitives::{Address, Bytes};
use proptest::{
    strategy::{Strategy, ValueTree},
    test_runner::{Config, RngAlgorithm, TestRng, TestRunner},
};
use std::time::{Duration, Instant};

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Evm(#[from] evm::Error),
    #[error("proptest could not generate a case: {0}")]
    Generate(String),
}

pub type Result<T> = std::result::Result<T, Error>;

/// What the contract and the reference disagreed on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mismatch {
    Deploy {
        bounds: Bounds,
        expected: Vec<Bytes>,
        got: Deployed,
    },
    Parse {
        bounds: Bounds,
        answer: Vec<u8>,
        calldata: Bytes,
        expected: Outcome,
        got: Outcome,
    },
    Evaluate {
        bounds: Bounds,
        snapshot: Box<Snapshot>,
        verdict: u8,
        expected: Outcome,
        got: Outcome,
    },
}

impl Mismatch {
    /// A one-paragraph account for people, with reverts decoded.
    pub fn describe(&self) -> String {
        let show = |o: &Outcome| match o {
            Outcome::Returned(d) => {
                format!("returned 0x{}", alloy::primitives::hex::encode(d))
            }
            Outcome::Reverted(d) => format!("reverted {}", abi::describe_revert(d)),
            Outcome::Halted(r) => format!("halted {r}"),
        };
        match self {
            Self::Deploy { bounds, expected, got } => format!(
                "constructor with {bounds:?}: reference expects {}, contract {}",
                if expected.is_empty() {
                    "a deployment".to_string()
                } else {
                    expected
                        .iter()
                        .map(|d| abi::describe_revert(d))
                        .collect::<Vec<_>>()
                        .join(" or ")
                },
                match got {
                    Deployed::At(a) => format!("deployed at {a}"),
                    Deployed::Failed(o) => show(o),
                }
            ),
            Self::Parse { answer, expected, got, .. } => format!(
                "parseVerdict({:?}): reference {}, contract {}",
                String::from_utf8_lossy(answer),
                show(expected),
                show(got)
            ),
            Self::Evaluate { snapshot, verdict, expected, got, .. } => {
                let decoded = |o: &Outcome| match o {
                    Outcome::Returned(d) => {
                        abi::decode_decision(d).map_or_else(|| show(o), |d| format!("{d:?}"))
                    }
                    other => show(other),
                };
                format!(
                    "evaluate({snapshot:?}, {verdict}): reference {}, contract {}",
                    decoded(expected),
                    decoded(got)
                )
            }
        }
    }

    pub fn forge_test(&self, name: &str) -> String {
        forge::render(self, name)
    }
}

/// Deploys one gate for `case.bounds` and runs every row; returns the first disagreement.
/// `rows_run` counts the rows (one parse and one evaluate each) actually executed.
pub fn check_case(
    chain: &mut dyn Chain,
    artifact: &GateArtifact,
    case: &GateCase,
    rows_run: &mut u64,
) -> Result<Option<Mismatch>> {
    let expected_errors: Vec<Bytes> =
        model::bounds_errors(&case.bounds).iter().map(abi::bounds_error_data).collect();
    let deployed = chain.deploy(artifact.initcode(&case.bounds))?;
    let gate = match (&deployed, expected_errors.is_empty()) {
        (Deployed::At(address), true) => *address,
        (Deployed::Failed(Outcome::Reverted(data)), false) if expected_errors.contains(data) => {
            return Ok(None);
        }
        _ => {
            return Ok(Some(Mismatch::Deploy {
                bounds: case.bounds,
                expected: expected_errors,
                got: deployed,
            }))
        }
    };
    for row in &case.rows {
        *rows_run += 1;
        let calldata = if row.dirty_calldata {
            abi::parse_verdict_calldata_dirty(&row.answer)
        } else {
            abi::parse_verdict_calldata(&row.answer)
        };
        if let Some(m) = check_parse(chain, gate, &case.bounds, &row.answer, calldata)? {
            return Ok(Some(m));
        }
        if let Some(m) = check_evaluate(chain, gate, &case.bounds, &row.snapshot, row.verdict)? {
            return Ok(Some(m));
        }
    }
    Ok(None)
}

pub fn expected_parse(answer: &[u8]) -> Outcome {
    match model::parse_verdict(answer) {
        Ok(v) => Outcome::Returned(abi::verdict_return_data(v.code())),
        Err(e) => Outcome::Reverted(abi::unknown_verdict_data(&e)),
    }
}

pub fn check_parse(
    chain: &mut dyn Chain,
    gate: Address,
    bounds: &Bounds,
    answer: &[u8],
    calldata: Bytes,
) -> Result<Option<Mismatch>> {
    let expected = expected_parse(answer);
    let got = chain.call(gate, calldata.clone())?;
    Ok((got != expected).then(|| Mismatch::Parse {
        bounds: *bounds,
        answer: answer.to_vec(),
        calldata,
        expected,
        got,
    }))
}

pub fn check_evaluate(
    chain: &mut dyn Chain,
    gate: Address,
    bounds: &Bounds,
    snapshot: &Snapshot,
    verdict: u8,
) -> Result<Option<Mismatch>> {
    let expected =
        Outcome::Returned(abi::decision_return_data(&model::evaluate(bounds, snapshot, verdict)));
    let got = chain.call(gate, abi::evaluate_calldata(snapshot, verdict))?;
    Ok((got != expected).then(|| Mismatch::Evaluate {
        bounds: *bounds,
        snapshot: Box::new(*snapshot),
        verdict,
        expected,
        got,
    }))
}

/// How a run ended.
#[derive(Clone, Debug)]
pub struct Report {
    pub backend: &'static str,
    pub seed: u64,
    pub rows: u64,
    pub gates: u64,
    pub refused_constructors: u64,
    pub elapsed: Duration,
    /// The shrunk disagreement, if any.
    pub mismatch: Option<Mismatch>,
}

impl Report {
    pub fn rows_per_sec(&self) -> f64 {
        self.rows as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// A proptest runner that replays from `seed`: ChaCha keyed by the seed's little-endian bytes
/// followed by `tag` (its first 24 bytes), so that two users of one seed draw different streams.
pub(crate) fn seeded_runner(seed: u64, tag: &[u8]) -> TestRunner {
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    let n = tag.len().min(24);
    bytes[8..8 + n].copy_from_slice(&tag[..n]);
    TestRunner::new_with_rng(
        Config { failure_persistence: None, ..Config::default() },
        TestRng::from_seed(RngAlgorithm::ChaCha, &bytes),
    )
}

/// Shrink attempts before giving up and reporting the smallest case found so far.
const MAX_SHRINK_STEPS: u32 = 4_000;

/// Runs at least `cases` rows (parse + evaluate pairs) from `seed`. `progress` is called now
/// and then with the rows done so far.
pub fn run(
    chain: &mut dyn Chain,
    artifact: &GateArtifact,
    cases: u64,
    seed: u64,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Report> {
    let mut runner = seeded_runner(seed, b"gate-sim");
    let strategy = strategies::gate_case();
    let started = Instant::now();
    let mut report = Report {
        backend: chain.name(),
        seed,
        rows: 0,
        gates: 0,
        refused_constructors: 0,
        elapsed: Duration::ZERO,
        mismatch: None,
    };
    let mut last_progress = Instant::now();
    while report.rows < cases {
        let mut tree =
            strategy.new_tree(&mut runner).map_err(|e| Error::Generate(e.to_string()))?;
        let case = tree.current();
        report.gates += 1;
        if !model::bounds_errors(&case.bounds).is_empty() {
            report.refused_constructors += 1;
        }
        let found = check_case(chain, artifact, &case, &mut report.rows)?;
        if let Some(first) = found {
            report.mismatch = Some(shrink(chain, artifact, &mut tree, first)?);
            break;
        }
        if last_progress.elapsed() > Duration::from_millis(500) {
            progress(report.rows, cases);
            last_progress = Instant::now();
        }
    }
    report.elapsed = started.elapsed();
    progress(report.rows, cases);
    Ok(report)
}

/// proptest's shrinking by hand: simplify while the case still fails, step back when it passes.
fn shrink(
    chain: &mut dyn Chain,
    artifact: &GateArtifact,
    tree: &mut dyn ValueTree<Value = GateCase>,
    first: Mismatch,
) -> Result<Mismatch> {
    let mut smallest = first;
    let mut ignored_rows = 0;
    let mut steps = 0;
    if !tree.simplify() {
        return Ok(smallest);
    }
    while steps < MAX_SHRINK_STEPS {
        steps += 1;
        let candidate = tree.current();
        let still_fails = check_case(chain, artifact, &candidate, &mut ignored_rows)?;
        let more = match still_fails {
            Some(m) => {
                smallest = m;
                tree.simplify()
            }
            None => tree.complicate(),
        };
        if !more {
            break;
        }
    }
    Ok(smallest)
}
