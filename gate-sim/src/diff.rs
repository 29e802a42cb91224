//! The differential: every case runs on the compiled RiskGate (revm or anvil) and on the
//! reference model, and the two must agree byte for byte on `parseVerdict` (returned value or
//! exact revert data) and `evaluate` (all five outputs), on whether the constructor accepts its
//! bounds, trusted resolvers and creators, keeper and factory (and with which error), and on the
//! views that report the configuration back (`paramsHash`, `trustedResolvers`,
//! `isTrustedResolver`, `trustedCreators`, `isTrustedCreator`, `keeper`). A disagreement is
//! shrunk by proptest and printed as a ready-to-paste forge test.

use crate::{
    abi,
    artifact::GateArtifact,
    evm::{self, Chain, Deployed, Outcome},
    model::{self, GateConfig, Quote, Snapshot},
    strategies::{self, GateCase},
};
use alloy::{
    primitives::{Address, Bytes},
    sol_types::SolCall,
};
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
    #[error("the {what} the gates need did not deploy: {got:?}")]
    Fixture { what: &'static str, got: Deployed },
}

pub type Result<T> = std::result::Result<T, Error>;

/// What the contract and the reference disagreed on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mismatch {
    Deploy {
        config: GateConfig,
        expected: Vec<Bytes>,
        got: Deployed,
    },
    Parse {
        config: GateConfig,
        answer: Vec<u8>,
        calldata: Bytes,
        expected: Outcome,
        got: Outcome,
    },
    Evaluate {
        config: GateConfig,
        snapshot: Box<Snapshot>,
        quote: Quote,
        verdict: u8,
        expected: Outcome,
        got: Outcome,
    },
    /// A view of the deployed gate (`paramsHash`, `trustedResolvers`, ...).
    View {
        config: GateConfig,
        name: &'static str,
        calldata: Bytes,
        expected: Outcome,
        got: Outcome,
    },
}

impl Mismatch {
    pub fn config(&self) -> &GateConfig {
        match self {
            Self::Deploy { config, .. }
            | Self::Parse { config, .. }
            | Self::Evaluate { config, .. }
            | Self::View { config, .. } => config,
        }
    }

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
            Self::Deploy { config, expected, got } => format!(
                "constructor with {config:?}: reference expects {}, contract {}",
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
            Self::Evaluate { config, snapshot, quote, verdict, expected, got } => {
                let decoded = |o: &Outcome| match o {
                    Outcome::Returned(d) => {
                        abi::decode_decision(d).map_or_else(|| show(o), |d| format!("{d:?}"))
                    }
                    other => show(other),
                };
                format!(
                    "evaluate({snapshot:?}, {quote:?}, {verdict}) with {:?}: reference {}, contract {}",
                    config.bounds,
                    decoded(expected),
                    decoded(got)
                )
            }
            Self::View { config, name, expected, got, .. } => format!(
                "{name}() of a gate deployed with {config:?}: reference {}, contract {}",
                show(expected),
                show(got)
            ),
        }
    }
}

/// The contracts every gate of a run is deployed against: a real `MarketFactory` over the
/// gates' collateral (the constructor reads `collateral()` from it) and one over another
/// collateral, which the constructor must refuse.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fixture {
    pub factory: Address,
    pub wrong_factory: Address,
}

impl Fixture {
    pub fn deploy(chain: &mut dyn Chain, artifact: &GateArtifact) -> Result<Self> {
        let mut one = |collateral: Address, what: &'static str| -> Result<Address> {
            match chain.deploy(artifact.factory_initcode(collateral))? {
                Deployed::At(a) => Ok(a),
                got => Err(Error::Fixture { what, got }),
            }
        };
        Ok(Self {
            factory: one(abi::DUMMY_COLLATERAL, "market factory")?,
            wrong_factory: one(abi::OTHER_COLLATERAL, "second market factory")?,
        })
    }

    /// The factory whose `collateral()` is `config.factory_collateral`.
    pub fn factory_for(&self, config: &GateConfig) -> Address {
        if config.factory_collateral == abi::DUMMY_COLLATERAL {
            self.factory
        } else {
            self.wrong_factory
        }
    }
}

/// Deploys one gate for `case.config` and runs every row; returns the first disagreement.
/// `rows_run` counts the rows (one parse and one evaluate each) actually executed.
pub fn check_case(
    chain: &mut dyn Chain,
    artifact: &GateArtifact,
    fixture: &Fixture,
    case: &GateCase,
    rows_run: &mut u64,
) -> Result<Option<Mismatch>> {
    let config = &case.config;
    let expected_errors: Vec<Bytes> =
        model::constructor_errors(config).iter().map(abi::constructor_error_data).collect();
    let deployed = chain.deploy(artifact.initcode(config, fixture.factory_for(config)))?;
    let gate = match (&deployed, expected_errors.is_empty()) {
        (Deployed::At(address), true) => *address,
        (Deployed::Failed(Outcome::Reverted(data)), false) if expected_errors.contains(data) => {
            return Ok(None);
        }
        _ => {
            return Ok(Some(Mismatch::Deploy {
                config: config.clone(),
                expected: expected_errors,
                got: deployed,
            }))
        }
    };
    if let Some(m) = check_views(chain, gate, config)? {
        return Ok(Some(m));
    }
    for row in &case.rows {
        *rows_run += 1;
        let calldata = if row.dirty_calldata {
            abi::parse_verdict_calldata_dirty(&row.answer)
        } else {
            abi::parse_verdict_calldata(&row.answer)
        };
        if let Some(m) = check_parse(chain, gate, config, &row.answer, calldata)? {
            return Ok(Some(m));
        }
        if let Some(m) =
            check_evaluate(chain, gate, config, &row.snapshot, &row.quote, row.verdict)?
        {
            return Ok(Some(m));
        }
    }
    Ok(None)
}

/// What the deployed gate must report about its own configuration: `paramsHash`, both trusted
/// lists as given, `isTrustedResolver` and `isTrustedCreator` true for a listed address and false
/// for one next to it that is not listed, and the keeper.
pub fn check_views(
    chain: &mut dyn Chain,
    gate: Address,
    config: &GateConfig,
) -> Result<Option<Mismatch>> {
    use abi::IRiskGate as G;
    // The first listed address with its last byte plus one (wrapping): usually not listed, and
    // when it is, the expected answer says so.
    let next_to = |a: Address| {
        let mut b = a;
        b.0[19] = b.0[19].wrapping_add(1);
        b
    };
    let listed = config.trusted_resolvers.first().copied().unwrap_or_default();
    let unlisted = next_to(listed);
    let is_listed = |a: Address| config.trusted_resolvers.contains(&a);
    let creator = config.trusted_creators.first().copied().unwrap_or_default();
    let not_creator = next_to(creator);
    let is_creator = |a: Address| config.trusted_creators.contains(&a);
    let views: [(&'static str, Bytes, Bytes); 8] = [
        (
            "paramsHash",
            G::paramsHashCall {}.abi_encode().into(),
            G::paramsHashCall::abi_encode_returns(&abi::params_hash(config)).into(),
        ),
        (
            "trustedResolvers",
            G::trustedResolversCall {}.abi_encode().into(),
            G::trustedResolversCall::abi_encode_returns(&config.trusted_resolvers).into(),
        ),
        (
            "isTrustedResolver",
            G::isTrustedResolverCall { resolver: listed }.abi_encode().into(),
            G::isTrustedResolverCall::abi_encode_returns(&is_listed(listed)).into(),
        ),
        (
            "isTrustedResolver",
            G::isTrustedResolverCall { resolver: unlisted }.abi_encode().into(),
            G::isTrustedResolverCall::abi_encode_returns(&is_listed(unlisted)).into(),
        ),
        (
            "trustedCreators",
            G::trustedCreatorsCall {}.abi_encode().into(),
            G::trustedCreatorsCall::abi_encode_returns(&config.trusted_creators).into(),
        ),
        (
            "isTrustedCreator",
            G::isTrustedCreatorCall { creator }.abi_encode().into(),
            G::isTrustedCreatorCall::abi_encode_returns(&is_creator(creator)).into(),
        ),
        (
            "isTrustedCreator",
            G::isTrustedCreatorCall { creator: not_creator }.abi_encode().into(),
            G::isTrustedCreatorCall::abi_encode_returns(&is_creator(not_creator)).into(),
        ),
        (
            "keeper",
            G::keeperCall {}.abi_encode().into(),
            G::keeperCall::abi_encode_returns(&config.keeper).into(),
        ),
    ];
    for (name, calldata, want) in views {
        let expected = Outcome::Returned(want);
        let got = chain.call(gate, calldata.clone())?;
        if got != expected {
            return Ok(Some(Mismatch::View {
                config: config.clone(),
                name,
                calldata,
                expected,
                got,
            }));
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
    config: &GateConfig,
    answer: &[u8],
    calldata: Bytes,
) -> Result<Option<Mismatch>> {
    let expected = expected_parse(answer);
    let got = chain.call(gate, calldata.clone())?;
    Ok((got != expected).then(|| Mismatch::Parse {
        config: config.clone(),
        answer: answer.to_vec(),
        calldata,
        expected,
        got,
    }))
}

pub fn check_evaluate(
    chain: &mut dyn Chain,
    gate: Address,
    config: &GateConfig,
    snapshot: &Snapshot,
    quote: &Quote,
    verdict: u8,
) -> Result<Option<Mismatch>> {
    let expected = Outcome::Returned(abi::decision_return_data(&model::evaluate(
        &config.bounds,
        snapshot,
        quote,
        verdict,
    )));
    let got = chain.call(gate, abi::evaluate_calldata(snapshot, quote, verdict))?;
    Ok((got != expected).then(|| Mismatch::Evaluate {
        config: config.clone(),
        snapshot: Box::new(*snapshot),
        quote: *quote,
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
    let fixture = Fixture::deploy(chain, artifact)?;
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
        if !model::constructor_errors(&case.config).is_empty() {
            report.refused_constructors += 1;
        }
        let found = check_case(chain, artifact, &fixture, &case, &mut report.rows)?;
        if let Some(first) = found {
            report.mismatch = Some(shrink(chain, artifact, &fixture, &mut tree, first)?);
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
    fixture: &Fixture,
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
        let still_fails = check_case(chain, artifact, fixture, &candidate, &mut ignored_rows)?;
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
