//! `keeper demo` (`make demo`): spawns anvil from the pinned toolchain, deploys, plays labelled
//! scenarios, runs a stretch of ordinary markets decided by the builtin model, then replays
//! issue 7's attacks against the gate (last, so they never starve the ordinary stretch). Every
//! reason code 0-18 is reached through real transactions, or the demo fails. It resolves,
//! redeems, writes off, writes results/, saves the chain state for
//! `keeper report --check --load-state`, and always stops anvil.

mod attacks;
mod k_of_n;
mod somnia;

use crate::{
    chain::follower::BlockRef,
    chain::reads,
    chain::sender::CallFailed,
    commands::report::{STATE_FILE, STATE_META_FILE},
    dev::steps,
    dev::world::{Actor, World, WorldError},
    domain::decision::Answer,
    engine::Engine,
    inference::{replay::Replay, Model, Prompt},
    kit::anvil::Anvil,
    kit::bindings::{reason, IRiskGate, REASON_COUNT},
    kit::compile,
};
use alloy::primitives::{Address, U256};
use indicatif::{ProgressBar, ProgressStyle};
use std::{
    collections::BTreeSet,
    io::IsTerminal,
    path::{Path, PathBuf},
    time::Instant,
};
use tokio_util::sync::CancellationToken;

#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    #[error(transparent)]
    World(#[from] WorldError),
    #[error(transparent)]
    Run(#[from] crate::engine::RunError),
    #[error(transparent)]
    Record(#[from] crate::record::RecordError),
    #[error(transparent)]
    Inference(#[from] crate::inference::InferenceError),
    /// A checked condition that did not hold (a reason code never reached, a published reason
    /// other than the one expected).
    #[error("demo step {step}: {what}")]
    Check { step: String, what: String },
    #[error("reading the demo's gate back from chain")]
    ReadGate(#[source] CallFailed),
    #[error("cannot {action} {}", .path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot encode the deployment saved beside the chain state")]
    Encode(#[source] serde_json::Error),
    #[error("demo interrupted by a signal; anvil stopped")]
    Cancelled,
}

impl crate::domain::exit::Classify for DemoError {
    fn fault(&self) -> crate::domain::exit::Fault {
        use crate::domain::exit::Fault::Runtime;
        match self {
            Self::Run(e) => e.fault(),
            Self::Record(e) => e.fault(),
            Self::Inference(e) => e.fault(),
            Self::World(_)
            | Self::Check { .. }
            | Self::ReadGate(_)
            | Self::Io { .. }
            | Self::Encode(_)
            | Self::Cancelled => Runtime,
        }
    }
}

pub type Result<T> = std::result::Result<T, DemoError>;

/// The demo's bounds: band [0.05, 0.95], 10 units per order, 10 minutes of headroom, at most
/// 3 open positions and 15 units of collateral at risk, markets at most a day out, a minimum
/// fill of 25 %, write-offs an hour after expiry (the floor), and a drawdown bound of 40 units
/// (the README's default is 500) so that the hostile-resolver attack reaches it in a few rounds.
pub fn demo_params() -> IRiskGate::Params {
    IRiskGate::Params {
        minPrice: U256::from(50_000u64),
        maxPrice: U256::from(950_000u64),
        maxSize: U256::from(10_000_000u64),
        minHeadroom: 600,
        maxConcurrent: 3,
        maxNotional: U256::from(15_000_000u64),
        maxHorizon: 86_400,
        maxDrawdown: U256::from(40_000_000u64),
        writeOffGrace: 3_600,
        minFillBps: 2_500,
    }
}

/// The demo chain's genesis time: 2026-12-01 00:00:00 UTC. Every later block is 1 s after the
/// one before it, or where the demo moves time explicitly.
pub const DEMO_GENESIS: u64 = 1_796_083_200;

/// The resolvers the demo's gate trusts: the maker, and the resolver that later turns hostile.
pub const DEMO_TRUSTED: [Actor; 2] = [Actor::Maker, Actor::Hostile];
/// The market creators the demo's gate trusts: the same two (the hostile resolver lists its
/// own markets). The keeper is neither: the gate refuses a keeper holding a trusted role.
pub const DEMO_CREATORS: [Actor; 2] = [Actor::Maker, Actor::Hostile];

/// Progress on a terminal (a bar), plain lines otherwise.
struct Progress {
    bar: Option<ProgressBar>,
    start: Instant,
}

impl Progress {
    fn new(steps: u64) -> Self {
        let bar = std::io::stderr().is_terminal().then(|| {
            let b = ProgressBar::new(steps);
            if let Ok(style) =
                ProgressStyle::with_template("{elapsed:>4} [{bar:30}] {pos}/{len} {msg}")
            {
                b.set_style(style);
            }
            b
        });
        Self { bar, start: Instant::now() }
    }

    fn step(&self, msg: &str) {
        match &self.bar {
            Some(b) => {
                b.inc(1);
                b.set_message(msg.to_string());
            }
            None => eprintln!("demo [{:>5.1}s] {msg}", self.start.elapsed().as_secs_f64()),
        }
    }

    fn done(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

/// Reads `markets` now and asks `provider` about them (the strategy's model from now on),
/// labelled `scenario`; returns the answers (quoted against the book read) and the head they
/// were read at, not yet submitted.
async fn think(
    keeper: &mut Engine,
    markets: &[Address],
    provider: Model,
    scenario: &str,
    cancel: &CancellationToken,
) -> Result<(Vec<Answer>, BlockRef)> {
    if cancel.is_cancelled() {
        return Err(DemoError::Cancelled);
    }
    let (states, head) = steps::read(keeper, markets).await?;
    keeper.set_model(provider);
    let answers = steps::ask_all(keeper, states, head, Some(scenario), cancel).await?;
    Ok((answers, head))
}

/// Asks `provider` about `markets` (as read now) and submits, labelled `scenario`; returns the
/// reasons published, in submission order.
async fn play(
    keeper: &mut Engine,
    markets: &[Address],
    provider: Model,
    scenario: &str,
    cancel: &CancellationToken,
) -> Result<Vec<u8>> {
    let (answers, _) = think(keeper, markets, provider, scenario, cancel).await?;
    Ok(steps::submit(keeper, answers).await?.iter().map(|d| d.reason).collect())
}

/// Prints the gate's address and its bounds as read back from the chain (not from the values
/// the demo passed to the constructor), so what is shown is what the contract enforces.
async fn announce_gate(world: &World, progress: &Progress) -> Result<()> {
    let gate = IRiskGate::new(world.deployment.gate, &world.keeper_rpc);
    let read_err = |call: &'static str| move |e| DemoError::ReadGate(CallFailed::new(call, e));
    let b = gate.bounds().call().await.map_err(read_err("bounds"))?;
    let hash = gate.paramsHash().call().await.map_err(read_err("paramsHash"))?;
    let trusted = gate.trustedResolvers().call().await.map_err(read_err("trustedResolvers"))?;
    let trusted: Vec<String> = trusted.iter().map(|a| a.to_string()).collect();
    progress.step(&format!(
        "gate {} deployed; bounds read back from chain: minPrice {} maxPrice {} maxSize {} \
         minHeadroom {} s maxConcurrent {} maxNotional {} maxHorizon {} s maxDrawdown {} \
         (the demo's; README default 500000000) writeOffGrace {} s minFillBps {}; trusted \
         resolvers [{}] (maker {}, hostile {}; outsider {} untrusted); paramsHash {hash}",
        world.deployment.gate,
        b.minPrice,
        b.maxPrice,
        b.maxSize,
        b.minHeadroom,
        b.maxConcurrent,
        b.maxNotional,
        b.maxHorizon,
        b.maxDrawdown,
        b.writeOffGrace,
        b.minFillBps,
        trusted.join(", "),
        world.addr(Actor::Maker),
        world.addr(Actor::Hostile),
        world.addr(Actor::Outsider),
    ));
    Ok(())
}

fn replay(label: &str, answers: &[&str]) -> Model {
    Model::Replay(Replay::from_answers(label, answers.iter().map(|s| s.to_string()).collect()))
}

/// `keeper demo`: the anvil binary and the results folder, both relative to the project root.
#[derive(Debug, Clone)]
pub struct DemoConfig {
    pub anvil: PathBuf,
    pub results: PathBuf,
    /// Only the attested gate's chain and record.
    pub attested_only: bool,
    /// Only the consensus gate's chain and record.
    pub consensus_only: bool,
}

/// The command line's `keeper demo` arguments, resolved.
impl From<&crate::commands::cli::DemoArgs> for DemoConfig {
    fn from(a: &crate::commands::cli::DemoArgs) -> Self {
        Self {
            anvil: a.anvil.anvil.clone(),
            results: a.results.clone(),
            attested_only: a.attested_only,
            consensus_only: a.consensus_only,
        }
    }
}

pub async fn run(args: &DemoConfig, root: &Path, cancel: CancellationToken) -> Result<()> {
    let results = root.join(&args.results);
    std::fs::create_dir_all(&results).map_err(|source| DemoError::Io {
        action: "create",
        path: results.clone(),
        source,
    })?;
    let state_path = results.join(STATE_FILE);
    let anvil_bin = root.join(&args.anvil);
    let started = Instant::now();
    let progress = Progress::new(66);
    let summary = if args.attested_only || args.consensus_only {
        None
    } else {
        progress.step("starting anvil, compiling contracts/ with tools/solc, deploying");
        let (anvil, artifacts) = fresh_chain(&anvil_bin, root, &state_path).await?;
        let world =
            World::deploy_trusting(anvil, artifacts, &demo_params(), &DEMO_TRUSTED, &DEMO_CREATORS)
                .await?;
        announce_gate(&world, &progress).await?;
        let outcome = scenarios(&world, root, &results, &progress, &cancel).await;
        Some(save_chain(world, &state_path, &results, outcome).await?)
    };

    // The attested gate, on a chain of its own with its own record.
    let attested_codes = if args.consensus_only {
        None
    } else {
        let attested_results = results.join(k_of_n::ATTESTED_DIR);
        let attested_state = attested_results.join(STATE_FILE);
        progress
            .step("attested gate: a second anvil, the gate deployed with three attestors, k = 2");
        let (anvil, artifacts) = fresh_chain(&anvil_bin, root, &attested_state).await?;
        let setting = k_of_n::setting(&anvil)?;
        let world = World::deploy_with(
            anvil,
            artifacts,
            &k_of_n::params(),
            &[Actor::Maker],
            &[Actor::Maker],
            setting,
        )
        .await?;
        let outcome = k_of_n::scenarios(&world, root, &attested_results, &progress, &cancel).await;
        Some(save_chain(world, &attested_state, &attested_results, outcome).await?)
    };

    // The consensus gate, on a third chain: its verdicts come from the stand-in platform's
    // validators through its source, and its record from the chain alone.
    let consensus_codes = if args.attested_only {
        None
    } else {
        let consensus_results = results.join(somnia::CONSENSUS_DIR);
        let consensus_state = consensus_results.join(STATE_FILE);
        progress.step(
            "consensus gate: a third anvil, the stand-in platform, a verdict source with three \
             validators (3 of 3) and the gate",
        );
        let (anvil, artifacts) = fresh_chain(&anvil_bin, root, &consensus_state).await?;
        let plan = somnia::plan(&anvil)?;
        let world = World::deploy_consensus(
            anvil,
            artifacts,
            &somnia::params(),
            &[Actor::Maker],
            &[Actor::Maker],
            &plan,
        )
        .await?;
        let outcome = somnia::scenarios(&world, root, &consensus_results, &progress, &cancel).await;
        Some(save_chain(world, &consensus_state, &consensus_results, outcome).await?)
    };
    progress.done();
    let mut written = Vec::new();
    if let Some(summary) = summary {
        eprintln!(
            "demo: {} decisions on chain, {} off-chain rows; reason codes reached: {:?}",
            summary.decisions, summary.offchain, summary.codes,
        );
        eprintln!("{}", summary.attacks);
        written.push(args.results.clone());
    }
    for (codes, dir, mode) in [
        (attested_codes, k_of_n::ATTESTED_DIR, "attested"),
        (consensus_codes, somnia::CONSENSUS_DIR, "consensus"),
    ] {
        if let Some(codes) = codes {
            let at = args.results.join(dir);
            eprintln!(
                "demo: the {mode} gate's record ({}/) reached reason codes {codes:?}",
                at.display()
            );
            written.push(at);
        }
    }
    eprintln!("demo: {:.1}s", started.elapsed().as_secs_f64());
    for dir in &written {
        eprintln!(
            "demo: wrote {}/RESULTS.md, feed.jsonl, decisions.svg and the chain state \
             {STATE_FILE}; verify with: keeper report --check --check-prompts --load-state {} \
             (make test-record checks all three)",
            dir.display(),
            dir.join(STATE_FILE).display()
        );
    }
    Ok(())
}

/// A new anvil for one demo gate's chain, dumping its state to `state_path` when stopped, its
/// clock pinned, and the contracts compiled. Old states are never read back (the record needs
/// blocks, receipts and the final state, which a pruned dump still holds), so anvil keeps none
/// in memory. The chain's clock is pinned (genesis at DEMO_GENESIS, then 1 s per block and
/// explicit jumps), so two runs of one commit write the same record.
async fn fresh_chain(
    anvil_bin: &Path,
    root: &Path,
    state_path: &Path,
) -> Result<(Anvil, crate::kit::compile::Artifacts)> {
    if let Some(dir) = state_path.parent() {
        std::fs::create_dir_all(dir).map_err(|source| DemoError::Io {
            action: "create",
            path: dir.to_path_buf(),
            source,
        })?;
    }
    let _ = std::fs::remove_file(state_path);
    let anvil_args = [
        "--dump-state".to_string(),
        state_path.display().to_string(),
        "--prune-history".into(),
        "--timestamp".into(),
        DEMO_GENESIS.to_string(),
    ];
    let anvil = Anvil::start(anvil_bin, None, &anvil_args).await.map_err(WorldError::from)?;
    crate::dev::world::pin_clock(&anvil).await?;
    let artifacts = compile::compile(root).map_err(WorldError::from)?;
    Ok((anvil, artifacts))
}

/// Stops `world`'s anvil whatever `outcome` was (SIGTERM writes the state dump), rewrites the
/// dump canonically, and on success saves the deployment beside it.
async fn save_chain<T>(
    world: World,
    state_path: &Path,
    results: &Path,
    outcome: Result<T>,
) -> Result<T> {
    let meta = world.deployment.clone();
    world.stop().await;
    canonical_state(state_path)?;
    let value = outcome?;
    let meta_text = serde_json::to_string_pretty(&meta).map_err(DemoError::Encode)?;
    crate::record::write_atomic(&results.join(STATE_META_FILE), meta_text.as_bytes())?;
    Ok(value)
}

struct Summary {
    decisions: usize,
    offchain: usize,
    codes: BTreeSet<u8>,
    /// The Adversaries section as written to RESULTS.md.
    attacks: String,
}

/// The demo's model server answers one ask at a time: with several slots, which answer is
/// decoded beside which would depend on timing, and the record must not.
pub(crate) const ONE_SLOT: Option<u32> = Some(1);

async fn scenarios(
    w: &World,
    root: &Path,
    results: &Path,
    p: &Progress,
    cancel: &CancellationToken,
) -> Result<Summary> {
    // One transaction at a time: each lands in its own block whatever the machine's load. A
    // cycle's answers go out together at its end, in one `submitVerdicts` batch (halved only
    // by gas), so which answers share a transaction does not depend on timing either.
    let mut k = w
        .keeper(Some(results.to_path_buf()))
        .reask_secs(900)
        .one_at_a_time(true)
        .batch_window(std::time::Duration::MAX)
        .build()?;
    // Start from an empty record: this is a new chain.
    let gate = w.deployment.gate;
    let t0 = w.chain_time().await?;
    let long = t0 + 7_200;

    p.step("seeding scenario markets (grids 0.01/0.05/1e-6, minimum sizes, thin and empty books)");
    // Grids: tick * lot is a multiple of 1e6 (the factory's rule), each with the smallest
    // minimum size that lets one IOC reach the minimum fill within the match cap (rule 20).
    let q100 = w.fillable_min_qty(100);
    let q20 = w.fillable_min_qty(20);
    let m_collateral = w.create_market(10_000, 100, q100, long).await?;
    w.ask(m_collateral, 400_000, 20_000_000).await?;
    let m_abstain = w.create_market(10_000, 100, q100, long).await?;
    w.ask(m_abstain, 480_000, 10_000_000).await?;
    w.bid(m_abstain, 460_000, 10_000_000).await?;
    let m_down = w.create_market(50_000, 20, q20, long).await?;
    w.bid(m_down, 550_000, 20_000_000).await?;
    let m_notional = w.create_market(10_000, 100, q100, long).await?;
    w.ask(m_notional, 700_000, 10_000_000).await?;
    let m_thin = w.create_market(10_000, 100, q100, long).await?;
    w.ask(m_thin, 250_000, 5_000_000).await?;
    let m_band = w.create_market(10_000, 100, q100, long).await?;
    w.ask(m_band, 970_000, 10_000_000).await?;
    let m_empty = w.create_market(10_000, 100, q100, long).await?;
    let m_lot = w.create_market(1, 20_000_000, 0, long).await?;
    w.ask(m_lot, 400_000, 20_000_000).await?;
    let m_min = w.create_market(10_000, 100, 50_000_000, long).await?;
    w.ask(m_min, 400_000, 50_000_000).await?;
    let m_short = w.create_market(10_000, 100, q100, t0 + 400).await?;
    w.ask(m_short, 400_000, 10_000_000).await?;
    let m_final = w.create_market(10_000, 100, q100, t0 + 900).await?;
    w.ask(m_final, 400_000, 10_000_000).await?;
    let m_expired = w.create_market(10_000, 100, q100, long).await?;
    w.ask(m_expired, 400_000, 10_000_000).await?;

    // Collateral runs out: the gate holds 2 units, a BUY_UP at 0.40 x 10 costs 4 (rule 10).
    w.mint(gate, U256::from(2_000_000u64)).await?;
    p.step("scenario: collateral runs out (gate holds 2.0, order costs 4.0)");
    play(&mut k, &[m_collateral], replay("scripted", &["BUY_UP"]), "collateral runs out", cancel)
        .await?;
    // 100 units in all: the drawdown bound (40) is what limits the attacks, not the balance.
    w.mint(gate, U256::from(98_000_000u64)).await?;
    p.step("scenario: model abstains");
    play(&mut k, &[m_abstain], replay("scripted", &["ABSTAIN"]), "model abstains", cancel).await?;
    // Before any position is open: otherwise rule 8 would be the lowest failing code.
    p.step("scenario: an outsider's market naming the trusted resolver (creator not trusted)");
    let m_creator =
        w.create_market_as(Actor::Outsider, 10_000, 100, q100, long, w.maker_addr).await?;
    w.approve_as(Actor::Outsider, m_creator).await?;
    w.ask_as(Actor::Outsider, m_creator, 400_000, 10_000_000).await?;
    play(
        &mut k,
        &[m_creator],
        replay("scripted", &["BUY_UP"]),
        "market creator not trusted",
        cancel,
    )
    .await?;
    p.step("scenario: a grid too fine for the match cap (lot 100, minimum 100: 64 x 100 < 2.5)");
    let m_fine = w.create_market(10_000, 100, 100, long).await?;
    w.ask(m_fine, 400_000, 10_000_000).await?;
    play(
        &mut k,
        &[m_fine],
        replay("scripted", &["BUY_UP"]),
        "minimum fill beyond the match cap",
        cancel,
    )
    .await?;

    p.step("scenario: PASS, BUY_UP at 0.40 (cost 4.0)");
    play(&mut k, &[m_collateral], replay("scripted", &["BUY_UP"]), "pass: buy up", cancel).await?;
    p.step("scenario: PASS, BUY_DOWN against a 0.55 bid (DOWN costs 0.45)");
    play(&mut k, &[m_down], replay("scripted", &["BUY_DOWN\n"]), "pass: buy down", cancel).await?;
    p.step("scenario: the verdict expires while the model is thinking (61 s > 60 s TTL)");
    expire_while_thinking(w, &mut k, m_expired, cancel).await?;
    p.step("scenario: max notional (8.5 at risk + 7.0 > 15.0)");
    play(&mut k, &[m_notional], replay("scripted", &["BUY_UP"]), "max notional at risk", cancel)
        .await?;
    p.step("scenario: PASS against a thin book (partial fill, refund)");
    play(
        &mut k,
        &[m_thin],
        replay("scripted", &["BUY_UP"]),
        "pass: thin book, partial fill",
        cancel,
    )
    .await?;
    p.step("scenario: max concurrent positions (3 open)");
    play(
        &mut k,
        &[m_notional],
        replay("scripted", &["BUY_UP"]),
        "max concurrent positions",
        cancel,
    )
    .await?;
    p.step("scenario: book outside the band (ask 0.97 > 0.95)");
    play(&mut k, &[m_band], replay("scripted", &["BUY_UP"]), "price outside band", cancel).await?;
    p.step("scenario: empty book");
    play(&mut k, &[m_empty], replay("scripted", &["BUY_UP"]), "empty book", cancel).await?;
    p.step("scenario: lot larger than the size (snaps to zero)");
    play(&mut k, &[m_lot], replay("scripted", &["BUY_UP"]), "size snaps to zero", cancel).await?;
    p.step("scenario: venue minimum 50 units > size 10");
    play(&mut k, &[m_min], replay("scripted", &["BUY_UP"]), "below venue minimum", cancel).await?;
    p.step("scenario: 400 s to expiry < 600 s headroom");
    play(&mut k, &[m_short], replay("scripted", &["BUY_UP"]), "expiry headroom too short", cancel)
        .await?;

    p.step("scenario: market finalizes while the model is thinking");
    finalize_while_thinking(w, &mut k, m_final, cancel).await?;

    p.step("hostile segment: injection attempts replayed from keeper/demo/hostile.jsonl");
    let hostile = Model::Replay(Replay::from_lines(
        "hostile.jsonl",
        include_str!("../../demo/hostile.jsonl"),
    )?);
    k.set_model(hostile);
    let (collector, strategy, _) = k.stages();
    let head = collector.follow().await?.head;
    if let Some(info) = collector.markets().into_iter().find(|m| m.address == m_abstain) {
        let state = reads::read_market(collector.provider(), &info, head.number)
            .await
            .map_err(crate::engine::RunError::from)?;
        let at = crate::inference::prompt::ReadAt { block: head.number, time: head.time };
        let prompt = Prompt::render(strategy.text(), &state, at).map_err(|e| DemoError::Check {
            step: "hostile segment".into(),
            what: e.to_string(),
        })?;
        let mut answers = Vec::new();
        let hostile = strategy.model();
        while let Ok(reply) = hostile.ask(&prompt, &state).await {
            let mut note = strategy.note(Some("hostile model segment"));
            hostile.annotate(&mut note, &reply);
            note.prompt = Some(prompt.user.clone());
            let raw = reply.text;
            answers.push(Answer {
                market: m_abstain,
                quote: strategy.policy().quote(&raw, &state, head.time),
                raw,
                prompt_hash: prompt.hash(),
                note,
                read: head,
                attested: None,
            });
        }
        steps::submit(&mut k, answers).await?;
    }

    p.step("inference that never answers: an off-chain row, nothing submitted");
    // A loopback listener that is never accepted: the kernel completes the connection, the
    // request goes out and no answer ever comes, so the ask times out. (A refused port would
    // do too, but its error names the port, which differs between runs.)
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|source| DemoError::Io { action: "bind", path: "127.0.0.1:0".into(), source })?;
    let silent_port = silent
        .local_addr()
        .map_err(|source| DemoError::Io { action: "bind", path: "127.0.0.1:0".into(), source })?
        .port();
    let unanswered = Model::OpenAi(crate::inference::openai::OpenAiClient::new(
        &format!("http://127.0.0.1:{silent_port}"),
        "a-server-that-never-answers",
        std::time::Duration::from_secs(1),
        crate::domain::config::InferenceOptions::default(),
    )?);
    play(&mut k, &[m_abstain], unanswered, "inference that never answers", cancel).await?;
    drop(silent);

    p.step("settling the scenario positions (time past expiry, resolve, redeem)");
    w.advance(7_300).await?;
    w.resolve(m_collateral, true).await?; // gate holds UP: wins
    w.resolve(m_down, false).await?; // gate holds DOWN: wins
    w.resolve(m_thin, false).await?; // gate holds UP: loses
    for m in [
        m_abstain, m_notional, m_band, m_empty, m_lot, m_min, m_short, m_expired, m_creator, m_fine,
    ] {
        w.resolve(m, true).await?;
    }
    k.set_model(Model::Builtin);
    k.cycle(Some("ordinary markets, builtin model"), cancel).await?;

    p.step("ordinary markets: seeding twelve books");
    let t1 = w.chain_time().await?;
    let books: [(u64, u64, u64, u64); 12] = [
        // (tick, lot, best bid, best ask); bid 0 = no bids
        (10_000, 100, 300_000, 350_000),
        (10_000, 100, 560_000, 620_000),
        (10_000, 100, 480_000, 520_000),
        (50_000, 20, 600_000, 700_000),
        (10_000, 100, 0, 420_000),
        (1_000, 1_000, 200_000, 260_000),
        (10_000, 100, 700_000, 740_000),
        (1_000, 1_000, 150_000, 190_000),
        (10_000, 100, 400_000, 450_000),
        (50_000, 20, 250_000, 350_000),
        (10_000, 100, 820_000, 860_000),
        (1_000, 1_000, 520_000, 545_000),
    ];
    // Staggered expiries, one every 20 minutes from 1.5 h out, so that markets settle while the
    // bot keeps running and the position cap frees up again, as it would in a long-lived run.
    let mut ordinary = Vec::new();
    for (i, (tick, lot, bid, ask)) in books.iter().enumerate() {
        let expiry = t1 + 5_400 + 1_200 * i as u64;
        let m = w.create_market(*tick, *lot, w.fillable_min_qty(*lot), expiry).await?;
        if *bid > 0 {
            w.bid(m, *bid, 20_000_000).await?;
        }
        w.ask(m, *ask, 20_000_000).await?;
        // The outcome is fixed up front from the mid price and a fixed draw, so a market the
        // book prices at 0.7 resolves UP about 70% of the time: a fair test of the model.
        let mid = if *bid > 0 { (bid + ask) / 2 } else { *ask };
        let draw = (i as u64 * 611_953 + 187_123) % 1_000_000;
        ordinary.push((m, expiry, draw < mid, false));
    }
    for round in 0..10u64 {
        p.step(&format!(
            "ordinary markets: cycle {} of 10 with the builtin rule-based model",
            round + 1
        ));
        k.set_model(Model::Builtin);
        k.cycle(Some("ordinary markets, builtin model"), cancel).await?;
        w.advance(1_500).await?;
        let now = w.chain_time().await?;
        for entry in ordinary.iter_mut() {
            let (m, expiry, up_wins, resolved) = *entry;
            if !resolved && now >= expiry {
                w.resolve(m, up_wins).await?;
                entry.3 = true;
            }
        }
        if cancel.is_cancelled() {
            return Err(DemoError::Cancelled);
        }
    }
    p.step("resolving the remaining ordinary markets, redeeming");
    w.advance(20_000).await?;
    for (m, _, up_wins, resolved) in &ordinary {
        if !resolved {
            w.resolve(*m, *up_wins).await?;
        }
    }

    // The cycle ends with a sync to the head after its redeems and writes the record.
    k.set_model(Model::Builtin);
    k.cycle(Some("ordinary markets, builtin model"), cancel).await?;

    real_model(w, &mut k, p, root, cancel).await?;

    attacks::run_all(w, &mut k, p, cancel).await?;

    p.step("results written; checking that every reason code was reached");
    let codes: BTreeSet<u8> = k.record()?.decided.iter().map(|d| d.reason).collect();
    // This gate is relayed: 21 and 22 are an attested gate's codes, which it never publishes;
    // the attested gate's record reaches them (k_of_n.rs). 23 is a consensus gate's: the
    // consensus gate's record reaches it (demo/somnia.rs). 24 is a batch element's whose market
    // failed the order: the venue's own markets do not, so only the contract's tests reach it
    // (RiskGate.batch.t.sol, with a stand-in market).
    let other_modes = [
        reason::NOT_ATTESTED,
        reason::ATTESTORS_DISAGREE,
        reason::NO_CONSENSUS_IN_TIME,
        reason::ORDER_FAILED,
    ];
    let missing: Vec<u8> =
        (0..REASON_COUNT).filter(|c| !codes.contains(c) && !other_modes.contains(c)).collect();
    if !missing.is_empty() {
        return Err(DemoError::Check {
            step: "coverage".into(),
            what: format!("reason codes never reached: {missing:?} (reached: {codes:?})"),
        });
    }
    let page_path = results.join(crate::record::RESULTS_FILE);
    let page = std::fs::read_to_string(&page_path).map_err(|source| DemoError::Io {
        action: "read",
        path: page_path,
        source,
    })?;
    let attacks = page
        .split("## Adversaries")
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .map(|section| format!("demo: adversaries (from RESULTS.md){section}"))
        .unwrap_or_default();
    Ok(Summary {
        decisions: k.record()?.decided.len(),
        offchain: k.executor().journal().offchain().len(),
        codes,
        attacks,
    })
}

/// Rewrites anvil's state dump in one canonical order (blocks by number, transactions by block
/// and index, every object's keys sorted: anvil writes them in hash-map order, so two dumps of
/// the same chain differ byte for byte) and without call traces, which keeps the committed file
/// under 10 MB; loading it gives the same chain, blocks, receipts and logs.
fn canonical_state(path: &Path) -> Result<()> {
    use serde_json::Value;
    fn sorted(v: Value) -> Value {
        match v {
            Value::Object(m) => {
                let mut items: Vec<(String, Value)> = m.into_iter().collect();
                items.sort_by(|a, b| a.0.cmp(&b.0));
                Value::Object(items.into_iter().map(|(k, v)| (k, sorted(v))).collect())
            }
            Value::Array(a) => Value::Array(a.into_iter().map(sorted).collect()),
            other => other,
        }
    }
    fn num(v: &Value) -> u64 {
        match v {
            Value::Number(n) => n.as_u64().unwrap_or(0),
            Value::String(s) => u64::from_str_radix(s.trim_start_matches("0x"), 16).unwrap_or(0),
            _ => 0,
        }
    }
    let io = |action| move |source| DemoError::Io { action, path: path.to_path_buf(), source };
    let text = std::fs::read(path).map_err(io("read"))?;
    let mut state: Value = serde_json::from_slice(&text).map_err(DemoError::Encode)?;
    if let Some(Value::Array(blocks)) = state.get_mut("blocks") {
        blocks.sort_by_key(|b| num(&b["header"]["number"]));
    }
    if let Some(Value::Array(txs)) = state.get_mut("transactions") {
        txs.sort_by_key(|t| (num(&t["block_number"]), num(&t["info"]["transaction_index"])));
        // Each transaction's call trace (for debug_trace* on the loaded node) is over half the
        // dump; the record is re-derived from blocks, receipts, logs and state, never traces.
        for t in txs.iter_mut() {
            if let Some(traces) = t.get_mut("info").and_then(|i| i.get_mut("traces")) {
                *traces = Value::Array(Vec::new());
            }
        }
    }
    let out = serde_json::to_vec(&sorted(state)).map_err(DemoError::Encode)?;
    crate::record::write_atomic(path, &out)?;
    Ok(())
}

/// How the demo asks the bundled model: 48 tokens at most, the JSON-schema constraint,
/// temperature 0 and the bundled seed, so its answers are a function of the prompts.
fn bundled_options() -> crate::domain::config::InferenceOptions {
    crate::domain::config::InferenceOptions {
        max_tokens: 48,
        temperature: 0.0,
        response_format: crate::domain::config::ResponseFormat::Object,
        seed: Some(crate::domain::config::BUNDLED_SEED),
    }
}

const REAL_OBJECT: &str = "the bundled language model, response format object";
const REAL_NONE: &str = "the bundled language model, no response format";
/// Ordinary markets the real model is asked about with the JSON-schema constraint, and how
/// many more without it.
const REAL_MARKETS: usize = 12;
const REAL_UNCONSTRAINED: usize = 3;

/// The real language model: the bundled SmolLM2-135M-Instruct, served by llama.cpp on
/// loopback, asked about [`REAL_MARKETS`] fresh markets with the `object` constraint (every
/// answer must be one of the three tokens; the gate decides on each), then about
/// [`REAL_UNCONSTRAINED`] more with no constraint (whatever it writes is published verbatim and
/// refused as reason 11). The positions it opens are settled before the attacks, which need
/// the gate's slots free. Temperature 0, seed 1, one server slot: the answers are a function
/// of the prompts, which the pinned chain clock makes the same on every run.
async fn real_model(
    w: &World,
    k: &mut Engine,
    p: &Progress,
    root: &Path,
    cancel: &CancellationToken,
) -> Result<()> {
    use crate::{
        domain::config::ResponseFormat,
        inference::openai::{OpenAiClient, VERDICTS},
        kit::bindings::reason,
    };
    p.step("real model: starting the bundled SmolLM2-135M-Instruct (llama.cpp on 127.0.0.1)");
    let (client, server) = OpenAiClient::bundled(
        root,
        std::time::Duration::from_secs(120),
        bundled_options(),
        None,
        ONE_SLOT,
    )
    .await?;
    let constrained = Model::OpenAi(client.clone());
    let free = Model::OpenAi(client.with_format(ResponseFormat::None));
    let now = w.chain_time().await?;
    let q = w.fillable_min_qty(100);
    let mut markets = Vec::new();
    for i in 0..(REAL_MARKETS + REAL_UNCONSTRAINED) as u64 {
        // Books from 0.15/0.10 to 0.85/0.80 in steps of 0.05 (UP ask / UP bid).
        let ask = 150_000 + 50_000 * (i % 15);
        let m = w.create_market(10_000, 100, q, now + 3_600).await?;
        w.ask(m, ask, 20_000_000).await?;
        w.bid(m, ask - 50_000, 20_000_000).await?;
        markets.push(m);
    }
    let (object_markets, free_markets) = markets.split_at(REAL_MARKETS);
    p.step(&format!("real model: {REAL_MARKETS} markets, response format object"));
    let (answers, _) = think(k, object_markets, constrained, REAL_OBJECT, cancel).await?;
    let stray: Vec<&str> =
        answers.iter().map(|a| a.raw.as_str()).filter(|raw| !VERDICTS.contains(raw)).collect();
    if answers.len() != REAL_MARKETS || !stray.is_empty() {
        return Err(DemoError::Check {
            step: REAL_OBJECT.into(),
            what: format!(
                "{} answers for {REAL_MARKETS} markets; not one of the three tokens: {stray:?}",
                answers.len()
            ),
        });
    }
    steps::submit(k, answers).await?;

    p.step(&format!("real model: {REAL_UNCONSTRAINED} markets, no response format"));
    let (answers, _) = think(k, free_markets, free, REAL_NONE, cancel).await?;
    let raws: Vec<String> = answers.iter().map(|a| a.raw.clone()).collect();
    let got: Vec<u8> = steps::submit(k, answers).await?.iter().map(|d| d.reason).collect();
    if got.len() != REAL_UNCONSTRAINED || got.iter().any(|r| *r != reason::INVALID_VERDICT) {
        return Err(DemoError::Check {
            step: REAL_NONE.into(),
            what: format!("answers {raws:?} were published as reasons {got:?}, not 11 each"),
        });
    }
    server.stop().await;
    p.step("real model: settling its positions before the attacks");
    w.advance(3_700).await?;
    for (i, m) in markets.iter().enumerate() {
        w.resolve(*m, i % 2 == 0).await?;
    }
    k.set_model(Model::Builtin);
    k.cycle(Some(REAL_OBJECT), cancel).await?;
    Ok(())
}

/// Reads the market and asks the model; while it "thinks", more chain time passes than the
/// quote's TTL. The keeper sees that the next block would be past the deadline and does not
/// send the answer: an off-chain row says why. Then the same market again, an answer sent in
/// time whose block comes late (the node mines it only after the deadline, as a congested chain
/// might): the gate refuses it (reason 16).
async fn expire_while_thinking(
    w: &World,
    k: &mut Engine,
    market: Address,
    cancel: &CancellationToken,
) -> Result<()> {
    let scenario = "verdict expired while the model was thinking";
    let (answers, _) =
        think(k, &[market], replay("scripted", &["BUY_UP"]), scenario, cancel).await?;
    w.advance(k.strategy().policy().ttl_secs + 1).await?;
    let sent = steps::submit(k, answers).await?;
    if !sent.is_empty() {
        return Err(DemoError::Check {
            step: scenario.into(),
            what: format!("{} expired answers were sent", sent.len()),
        });
    }

    let scenario = "verdict sent in time, mined after its deadline";
    let (answers, _) =
        think(k, &[market], replay("scripted", &["BUY_UP"]), scenario, cancel).await?;
    let deadline = answers.first().map_or(0, |a| a.quote.deadline);
    w.automine(false).await?;
    let keeper = w.keeper_addr;
    let late = async {
        // Once the keeper's transaction is in the pool, one block after the deadline takes it.
        loop {
            let pending = w.pending_nonce(keeper).await?;
            let latest = w.nonce(keeper).await?;
            if pending > latest {
                return w.mine_at(deadline + 1).await;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    };
    let (sent, mined) = tokio::join!(steps::submit(k, answers), late);
    w.automine(true).await?;
    mined?;
    let got: Vec<u8> = sent?.iter().map(|d| d.reason).collect();
    if got != [crate::kit::bindings::reason::EXPIRED] {
        return Err(DemoError::Check {
            step: scenario.into(),
            what: format!("published reasons {got:?}, expected [16]"),
        });
    }
    Ok(())
}

/// Reads the market and asks the model; while it "thinks", time passes its expiry and the
/// resolver finalizes it; the answer then reaches a final market (reason 2).
async fn finalize_while_thinking(
    w: &World,
    k: &mut Engine,
    market: Address,
    cancel: &CancellationToken,
) -> Result<()> {
    let provider = replay("scripted", &["BUY_UP"]);
    // The quote lives longer than the wait, so the answer is still live when it is sent (an
    // expired one is never sent) and the gate's refusal is the final market's.
    let policy = k.strategy().policy();
    k.stages().1.set_policy(crate::domain::config::QuotePolicy { ttl_secs: 1_200, ..policy });
    let thought = think(k, &[market], provider, "finalized while thinking", cancel).await;
    k.stages().1.set_policy(policy);
    let (answers, _) = thought?;
    w.advance(1_000).await?;
    w.resolve(market, true).await?;
    steps::submit(k, answers).await?;
    Ok(())
}
