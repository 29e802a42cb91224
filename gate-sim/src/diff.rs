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
    attested::{self, AttestorSetting},
    evm::{self, Chain, Deployed, Outcome},
    model::{self, GateConfig, Quote, Snapshot},
    strategies::{
        self,
        attested::{AttestedCase, CallPlan},
        GateCase,
    },
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
    /// An attested gate (issue 35): its constructor, its views and its set's, or a `tally`.
    Attested(Box<AttestedMismatch>),
}

/// A disagreement about an attested gate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttestedMismatch {
    pub config: GateConfig,
    pub setting: AttestorSetting,
    pub what: AttestedWhat,
}

/// Which part of an attested gate disagreed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AttestedWhat {
    /// The constructor: `expected` lists every acceptable revert (empty: it must deploy).
    Deploy { expected: Vec<Bytes>, got: Deployed },
    /// A view of the gate (`to` is the gate) or of its set (`to` is the set).
    View {
        gate: Address,
        chain_id: u64,
        name: &'static str,
        to: Address,
        calldata: Bytes,
        expected: Outcome,
        got: Outcome,
    },
    /// `tally` on the set, at `block_number`, signed for `gate` on `chain_id`. `expected` lists
    /// every acceptable outcome (one judgment, or every revert that applies).
    Tally {
        gate: Address,
        set: Address,
        chain_id: u64,
        block_number: u64,
        plan: Box<CallPlan>,
        notes: Vec<String>,
        calldata: Bytes,
        expected: Vec<Outcome>,
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
            Self::Attested(m) => &m.config,
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
            Self::Attested(m) => m.describe(),
        }
    }
}

/// An outcome for people: a judgment or a revert decoded.
pub fn show_outcome(o: &Outcome) -> String {
    match o {
        Outcome::Returned(d) => match abi::decode_judgment(d) {
            Some(j) => format!(
                "judgment {{ reason: {}, verdict: {}, limit: {}, promptHash: {}, head: {:?}, length: {}, hash: {}, vote: 0x{} }}",
                j.reason,
                j.verdict,
                j.limit,
                j.promptHash,
                String::from_utf8_lossy(&j.head),
                j.length,
                j.hash,
                alloy::primitives::hex::encode(&j.vote)
            ),
            None => format!("returned 0x{}", alloy::primitives::hex::encode(d)),
        },
        Outcome::Reverted(d) => format!("reverted {}", abi::describe_revert(d)),
        Outcome::Halted(r) => format!("halted {r}"),
    }
}

impl AttestedMismatch {
    pub fn describe(&self) -> String {
        let Self { config, setting, what } = self;
        match what {
            AttestedWhat::Deploy { expected, got } => format!(
                "attested constructor with {setting:?} and {config:?}: reference expects {}, contract {}",
                if expected.is_empty() {
                    "a deployment".to_string()
                } else {
                    expected.iter().map(|d| abi::describe_revert(d)).collect::<Vec<_>>().join(" or ")
                },
                match got {
                    Deployed::At(a) => format!("deployed at {a}"),
                    Deployed::Failed(o) => show_outcome(o),
                }
            ),
            AttestedWhat::View { name, expected, got, .. } => format!(
                "{name}() of an attested gate with {setting:?}: reference {}, contract {}",
                show_outcome(expected),
                show_outcome(got)
            ),
            AttestedWhat::Tally {
                gate, chain_id, block_number, plan, notes, expected, got, ..
            } => format!(
                "tally at block {block_number} (readBlock {}, signed for gate {gate} on chain {chain_id}) with {setting:?}; answers in the order sent: [{}]; read {:?}, quote {:?}, {:?}/{:?}: reference {}, contract {}",
                plan.read_block(),
                notes.join("; "),
                plan.read,
                plan.quote,
                plan.shape,
                plan.appended,
                expected.iter().map(show_outcome).collect::<Vec<_>>().join(" or "),
                show_outcome(got)
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
    let views: [(&'static str, Bytes, Bytes); 10] = [
        (
            "gateMode",
            abi::IGateMode::gateModeCall {}.abi_encode().into(),
            abi::IGateMode::gateModeCall::abi_encode_returns(&0u8).into(),
        ),
        (
            "attestorSet",
            abi::IGateMode::attestorSetCall {}.abi_encode().into(),
            abi::IGateMode::attestorSetCall::abi_encode_returns(&Address::ZERO).into(),
        ),
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
    /// The relayed rows' time.
    pub elapsed: Duration,
    /// `tally` calls run against attested gates (issue 35), on how many gates, how many
    /// attested settings the constructor refused as expected, and their time.
    pub attested_calls: u64,
    pub attested_gates: u64,
    pub attested_refused: u64,
    pub attested_elapsed: Duration,
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

/// How much a run does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Plan {
    /// Relayed rows (one `parseVerdict` and one `evaluate` each), at least.
    pub cases: u64,
    /// `tally` calls on attested gates, at least (0: none).
    pub attested_calls: u64,
    pub seed: u64,
}

/// The attested calls a run of `cases` rows adds by default: a quarter as many (each is up to
/// nine signatures made, recovered by the model and by the contract).
pub fn default_attested_calls(cases: u64) -> u64 {
    cases / 4
}

/// Runs at least `cases` rows (parse + evaluate pairs) from `seed`, then
/// [`default_attested_calls`] attested calls. `progress` is called now and then with the rows
/// done so far.
pub fn run(
    chain: &mut dyn Chain,
    artifact: &GateArtifact,
    cases: u64,
    seed: u64,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Report> {
    let plan = Plan { cases, attested_calls: default_attested_calls(cases), seed };
    run_plan(chain, artifact, &plan, progress)
}

/// Runs `plan`: the relayed rows, then (if they all agreed) the attested calls.
pub fn run_plan(
    chain: &mut dyn Chain,
    artifact: &GateArtifact,
    plan: &Plan,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Report> {
    let (cases, seed) = (plan.cases, plan.seed);
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
        attested_calls: 0,
        attested_gates: 0,
        attested_refused: 0,
        attested_elapsed: Duration::ZERO,
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
            let mut ignored = 0;
            report.mismatch = Some(shrink(&mut tree, first, |c| {
                check_case(chain, artifact, &fixture, c, &mut ignored)
            })?);
            break;
        }
        if last_progress.elapsed() > Duration::from_millis(500) {
            progress(report.rows, cases);
            last_progress = Instant::now();
        }
    }
    report.elapsed = started.elapsed();
    progress(report.rows, cases);
    if report.mismatch.is_none() && plan.attested_calls > 0 {
        run_attested(chain, artifact, &fixture, plan, &mut report)?;
    }
    Ok(report)
}

/// The attested half of a run: deploys attested gates (and settings the constructor must
/// refuse) and runs `tally` on each set until `plan.attested_calls` calls are done.
fn run_attested(
    chain: &mut dyn Chain,
    artifact: &GateArtifact,
    fixture: &Fixture,
    plan: &Plan,
    report: &mut Report,
) -> Result<()> {
    let started = Instant::now();
    let chain_id = chain.chain_id()?;
    let mut runner = seeded_runner(plan.seed, b"gate-sim attested");
    let strategy = strategies::attested::attested_case();
    while report.attested_calls < plan.attested_calls {
        let mut tree =
            strategy.new_tree(&mut runner).map_err(|e| Error::Generate(e.to_string()))?;
        let case = tree.current();
        report.attested_gates += 1;
        if !attested::constructor_errors(&case.config, &case.setting).is_empty() {
            report.attested_refused += 1;
        }
        let found = check_attested_case(
            chain,
            artifact,
            fixture,
            chain_id,
            &case,
            &mut report.attested_calls,
        )?;
        if let Some(first) = found {
            let mut ignored = 0;
            report.mismatch = Some(shrink(&mut tree, first, |c| {
                check_attested_case(chain, artifact, fixture, chain_id, c, &mut ignored)
            })?);
            break;
        }
    }
    report.attested_elapsed = started.elapsed();
    Ok(())
}

/// Deploys one attested gate for `case` (or sees its constructor refuse the setting), checks
/// the gate's and its set's views, then runs every call, signed for this gate on `chain_id`,
/// at the call's own block number. `calls_run` counts the `tally` calls executed.
pub fn check_attested_case(
    chain: &mut dyn Chain,
    artifact: &GateArtifact,
    fixture: &Fixture,
    chain_id: u64,
    case: &AttestedCase,
    calls_run: &mut u64,
) -> Result<Option<Mismatch>> {
    let (config, setting) = (&case.config, &case.setting);
    let mismatch = |what: AttestedWhat| {
        Some(Mismatch::Attested(Box::new(AttestedMismatch {
            config: config.clone(),
            setting: setting.clone(),
            what,
        })))
    };
    let expected_errors: Vec<Bytes> = attested::constructor_errors(config, setting)
        .iter()
        .map(abi::constructor_error_data)
        .collect();
    let deployed =
        chain.deploy(artifact.initcode_with(config, fixture.factory_for(config), setting))?;
    let gate = match (&deployed, expected_errors.is_empty()) {
        (Deployed::At(address), true) => *address,
        (Deployed::Failed(Outcome::Reverted(data)), false) if expected_errors.contains(data) => {
            return Ok(None);
        }
        _ => {
            return Ok(mismatch(AttestedWhat::Deploy { expected: expected_errors, got: deployed }))
        }
    };
    let set = match check_attested_views(chain, gate, chain_id, config, setting)? {
        Ok(Some(set)) => set,
        // A relayed gate: no set to call.
        Ok(None) => return Ok(None),
        Err(what) => return Ok(mismatch(*what)),
    };
    for plan in &case.calls {
        *calls_run += 1;
        let m = strategies::attested::materialize(&case.keys, plan, chain_id, gate);
        let env = attested::TallyEnv { chain_id, gate, block_number: plan.block_number };
        let expected: Vec<Outcome> = match attested::tally(setting, &env, &m.call, &m.appended) {
            Ok(j) => vec![Outcome::Returned(abi::judgment_return_data(&j))],
            Err(reverts) => {
                reverts.iter().map(|e| Outcome::Reverted(abi::tally_revert_data(e))).collect()
            }
        };
        let calldata = abi::tally_calldata(&m.call, &m.appended);
        let got = chain.call_at_block(set, calldata.clone(), plan.block_number)?;
        if expected.contains(&got) {
            continue;
        }
        return Ok(mismatch(AttestedWhat::Tally {
            gate,
            set,
            chain_id,
            block_number: plan.block_number,
            plan: Box::new(plan.clone()),
            notes: m.notes,
            calldata,
            expected,
            got,
        }));
    }
    Ok(None)
}

/// The views of an attested gate and of its set: `paramsHash` (with the setting), `gateMode()`
/// 1, `attestorSet()` some non-zero address; the set's `gate()`, `attestors()` as deployed,
/// `isAttestor` of the first signer, of an address next to it and of the keeper, and
/// `domainSeparator()` for this chain and gate. Returns the set's address (`None` for a relayed
/// gate, whose `attestorSet()` must be 0).
fn check_attested_views(
    chain: &mut dyn Chain,
    gate: Address,
    chain_id: u64,
    config: &GateConfig,
    setting: &AttestorSetting,
) -> Result<std::result::Result<Option<Address>, Box<AttestedWhat>>> {
    use abi::{IAttestorSet as S, IGateMode as M, IRiskGate as G};
    let view = |name: &'static str, to: Address, calldata: Bytes, expected: Outcome, got| {
        Box::new(AttestedWhat::View { gate, chain_id, name, to, calldata, expected, got })
    };
    let gate_views: [(&'static str, Bytes, Bytes); 2] = [
        (
            "paramsHash",
            G::paramsHashCall {}.abi_encode().into(),
            G::paramsHashCall::abi_encode_returns(&abi::params_hash_with(config, setting)).into(),
        ),
        (
            "gateMode",
            M::gateModeCall {}.abi_encode().into(),
            M::gateModeCall::abi_encode_returns(&setting.mode()).into(),
        ),
    ];
    for (name, calldata, want) in gate_views {
        let expected = Outcome::Returned(want);
        let got = chain.call(gate, calldata.clone())?;
        if got != expected {
            return Ok(Err(view(name, gate, calldata, expected, got)));
        }
    }
    // The set's address is the contract's to choose: any non-zero address, as one ABI word. A
    // relayed gate (a broken setting's breakers can undo each other down to none) has none.
    let calldata: Bytes = M::attestorSetCall {}.abi_encode().into();
    let got = chain.call(gate, calldata.clone())?;
    if !setting.is_attested() {
        let expected =
            Outcome::Returned(M::attestorSetCall::abi_encode_returns(&Address::ZERO).into());
        if got != expected {
            return Ok(Err(view("attestorSet", gate, calldata, expected, got)));
        }
        return Ok(Ok(None));
    }
    let set = match &got {
        Outcome::Returned(d) => M::attestorSetCall::abi_decode_returns_validate(d).ok(),
        _ => None,
    };
    let Some(set) = set.filter(|a| !a.is_zero()) else {
        let expected = Outcome::Returned(Bytes::from_static(b"(a non-zero address)"));
        return Ok(Err(view("attestorSet", gate, calldata, expected, got)));
    };
    let first = setting.signers.first().copied().unwrap_or_default();
    let mut next = first;
    next.0[19] = next.0[19].wrapping_add(1);
    let listed = |a: Address| setting.signers.contains(&a);
    let set_views: [(&'static str, Bytes, Bytes); 6] = [
        ("gate", S::gateCall {}.abi_encode().into(), S::gateCall::abi_encode_returns(&gate).into()),
        (
            "attestors",
            S::attestorsCall {}.abi_encode().into(),
            S::attestorsCall::abi_encode_returns(&S::Setting {
                signers: setting.signers.clone(),
                threshold: setting.threshold,
                maxReadAge: setting.max_read_age,
                maxSlippageBps: setting.max_slippage_bps,
            })
            .into(),
        ),
        (
            "isAttestor",
            S::isAttestorCall { who: first }.abi_encode().into(),
            S::isAttestorCall::abi_encode_returns(&listed(first)).into(),
        ),
        (
            "isAttestor",
            S::isAttestorCall { who: next }.abi_encode().into(),
            S::isAttestorCall::abi_encode_returns(&listed(next)).into(),
        ),
        (
            "isAttestor",
            S::isAttestorCall { who: config.keeper }.abi_encode().into(),
            S::isAttestorCall::abi_encode_returns(&listed(config.keeper)).into(),
        ),
        (
            "domainSeparator",
            S::domainSeparatorCall {}.abi_encode().into(),
            S::domainSeparatorCall::abi_encode_returns(&attested::domain_separator(chain_id, gate))
                .into(),
        ),
    ];
    for (name, calldata, want) in set_views {
        let expected = Outcome::Returned(want);
        let got = chain.call(set, calldata.clone())?;
        if got != expected {
            return Ok(Err(view(name, set, calldata, expected, got)));
        }
    }
    Ok(Ok(Some(set)))
}

/// proptest's shrinking by hand: simplify while the case still fails (`check` finds a
/// disagreement), step back when it passes.
fn shrink<T: std::fmt::Debug>(
    tree: &mut dyn ValueTree<Value = T>,
    first: Mismatch,
    mut check: impl FnMut(&T) -> Result<Option<Mismatch>>,
) -> Result<Mismatch> {
    let mut smallest = first;
    let mut steps = 0;
    if !tree.simplify() {
        return Ok(smallest);
    }
    while steps < MAX_SHRINK_STEPS {
        steps += 1;
        let candidate = tree.current();
        let more = match check(&candidate)? {
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
