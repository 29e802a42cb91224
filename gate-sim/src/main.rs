//! `gate-sim`: the command line over the reference model, the differential, the hostile
//! corpus, the simulator and the benchmark. Every subcommand exits non-zero when the property it
//! checks does not hold.

use clap::{Parser, Subcommand, ValueEnum};
use eyre::{bail, WrapErr};
use gate_sim::{
    adversary::{self, Adversary, AdversaryConfig},
    artifact::{self, GateArtifact},
    bench, corpus, diff,
    evm::{self, AnvilChain, Chain, RevmChain},
    sim::{self, ModelKind, SimConfig},
};
use std::{io::Write, path::PathBuf, process::ExitCode};

/// Reference model, differential fuzzing and adversarial simulation for RiskGate.
#[derive(Parser, Debug)]
#[command(name = "gate-sim", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum Backend {
    /// In-process EVM (fast).
    Revm,
    /// A real anvil node on 127.0.0.1, through alloy.
    Anvil,
}

#[derive(clap::Args, Debug, Clone)]
struct ContractArgs {
    /// forge's artifact of the gate (bytecode and ABI).
    #[arg(long, default_value_os_t = artifact::default_artifact_path())]
    artifact: PathBuf,
    /// The anvil binary.
    #[arg(long, default_value_os_t = evm::default_anvil_path())]
    anvil: PathBuf,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run cases on the compiled RiskGate and on the reference model; any difference fails with
    /// the shrunk case printed as a forge test.
    Diff {
        /// Cases to run (one parseVerdict and one evaluate each); a quarter as many `tally`
        /// calls on attested gates follow.
        #[arg(long, default_value_t = 10_000)]
        cases: u64,
        #[arg(long, value_enum, default_value_t = Backend::Revm)]
        backend: Backend,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Also write the forge test of a disagreement to this file.
        #[arg(long)]
        forge_out: Option<PathBuf>,
        #[command(flatten)]
        contract: ContractArgs,
    },
    /// Run the hostile corpus against the reference model and the compiled contract.
    Corpus {
        #[arg(long, default_value_os_t = corpus::default_corpus_path())]
        corpus: PathBuf,
        /// Also run it on a real anvil node.
        #[arg(long)]
        with_anvil: bool,
        #[command(flatten)]
        contract: ContractArgs,
    },
    /// Simulate markets, models and settlement through the gate, then the attacks of issues 7 and 14;
    /// write results/SIMULATION.md.
    Simulate {
        #[arg(long, default_value_t = 100)]
        markets: usize,
        #[arg(long, default_value_t = 1_000)]
        steps: usize,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// One model or several, comma separated.
        #[arg(long, value_enum, value_delimiter = ',', default_value = "builtin")]
        model: Vec<ModelKind>,
        /// Decide with the compiled contract (in revm) instead of the reference model: its
        /// `evaluate` for the models, and the whole compiled gate, factory, markets and
        /// collateral for the adversaries.
        #[arg(long)]
        evm: bool,
        /// The attacks to run after the models, comma separated.
        #[arg(
            long,
            value_enum,
            value_delimiter = ',',
            default_value = "untrusted-drain,trusted-drain,sandwich,dust,never-resolve,both-sides,top-up,hostile-creator"
        )]
        adversary: Vec<Adversary>,
        /// Rounds of each attack (0 skips them).
        #[arg(long, default_value_t = 24)]
        adversary_rounds: usize,
        #[arg(long, default_value_os_t = artifact::workspace_root().join("results/SIMULATION.md"))]
        out: PathBuf,
        #[arg(long, default_value_os_t = artifact::default_artifact_path())]
        artifact: PathBuf,
    },
    /// Speed figures as a markdown section (stdout, or --out).
    Bench {
        /// Write the section here (the lead assembles results/BENCH.md from sections).
        #[arg(long)]
        out: Option<PathBuf>,
        #[arg(long, default_value_t = 20_000)]
        cases: u64,
        #[arg(long, default_value_t = 500)]
        anvil_cases: u64,
        /// Skip the anvil figure.
        #[arg(long)]
        no_anvil: bool,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        #[command(flatten)]
        contract: ContractArgs,
    },
}

/// Runs the command; `Ok(false)` when the property it checks does not hold (already reported).
fn main() -> eyre::Result<ExitCode> {
    let cli = Cli::parse();
    let holds = dispatch(cli.command)?;
    Ok(if holds { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

fn dispatch(command: Command) -> eyre::Result<bool> {
    match command {
        Command::Diff { cases, backend, seed, forge_out, contract } => {
            run_diff(cases, backend, seed, forge_out, &contract)
        }
        Command::Corpus { corpus, with_anvil, contract } => {
            run_corpus(&corpus, with_anvil, &contract)
        }
        Command::Simulate {
            markets,
            steps,
            seed,
            model,
            evm,
            adversary,
            adversary_rounds,
            out,
            artifact,
        } => {
            let plan = SimPlan {
                markets,
                steps,
                seed,
                models: model,
                use_evm: evm,
                adversaries: adversary,
                adversary_rounds,
            };
            run_simulate(&plan, &out, &artifact)
        }
        Command::Bench { out, cases, anvil_cases, no_anvil, seed, contract } => {
            let artifact = GateArtifact::load(&contract.artifact)?;
            let config =
                bench::BenchConfig { reference_secs: 2.0, revm_cases: cases, anvil_cases, seed };
            let anvil = (!no_anvil).then_some(contract.anvil.as_path());
            let report = bench::run(&config, &artifact, anvil)?;
            let section = bench::markdown(&report);
            match out {
                Some(path) => {
                    write_file(&path, &section)?;
                    eprintln!("wrote {}", path.display());
                }
                None => print!("{section}"),
            }
            Ok(true)
        }
    }
}

fn write_file(path: &std::path::Path, text: &str) -> eyre::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).wrap_err_with(|| format!("creating {}", dir.display()))?;
    }
    std::fs::write(path, text).wrap_err_with(|| format!("writing {}", path.display()))
}

fn open_chain(backend: Backend, contract: &ContractArgs) -> eyre::Result<Box<dyn Chain>> {
    Ok(match backend {
        Backend::Revm => Box::new(RevmChain::new()),
        Backend::Anvil => Box::new(AnvilChain::spawn(&contract.anvil)?),
    })
}

fn run_diff(
    cases: u64,
    backend: Backend,
    seed: u64,
    forge_out: Option<PathBuf>,
    contract: &ContractArgs,
) -> eyre::Result<bool> {
    let artifact = GateArtifact::load(&contract.artifact)?;
    let mut chain = open_chain(backend, contract)?;
    let name = chain.name();
    eprintln!(
        "gate-sim diff: {cases} cases on {name}, seed {seed}, gate {}",
        artifact.path.display()
    );
    let mut progress = |done: u64, total: u64| {
        eprint!("\r[{name}] {done}/{total} cases");
        let _ = std::io::stderr().flush();
    };
    let report = diff::run(chain.as_mut(), &artifact, cases, seed, &mut progress)?;
    eprintln!();
    match &report.mismatch {
        None => {
            println!(
                "diff: {} cases on {} agree with the reference model ({} gates, {} refused by the constructor as expected), {:.0} cases/s, seed {}",
                report.rows,
                report.backend,
                report.gates,
                report.refused_constructors,
                report.rows_per_sec(),
                report.seed
            );
            println!(
                "diff: {} attested tally calls on {} agree with the reference model ({} attested gates, {} settings refused by the constructor as expected), {:.2} s",
                report.attested_calls,
                report.backend,
                report.attested_gates,
                report.attested_refused,
                report.attested_elapsed.as_secs_f64()
            );
            Ok(true)
        }
        Some(m) => {
            let test = gate_sim::forge::render(m, &format!("test_gateSim_diffSeed{seed}"));
            println!("DISAGREEMENT after {} cases (seed {seed}): {}", report.rows, m.describe());
            println!("\nMinimized case as a forge test:\n\n{test}");
            if let Some(path) = forge_out {
                write_file(&path, &test)?;
            }
            eprintln!("gate-sim diff: the contract and the reference model disagree");
            Ok(false)
        }
    }
}

fn run_corpus(
    path: &std::path::Path,
    with_anvil: bool,
    contract: &ContractArgs,
) -> eyre::Result<bool> {
    let entries = corpus::load(path)?;
    let artifact = GateArtifact::load(&contract.artifact)?;
    let mut tallies = vec![("reference model", corpus::run_reference(&entries))];
    let mut revm = RevmChain::new();
    tallies.push(("RiskGate in revm", corpus::run_contract(&mut revm, &artifact, &entries)?));
    if with_anvil {
        let mut anvil = AnvilChain::spawn(&contract.anvil)?;
        tallies.push(("RiskGate on anvil", corpus::run_contract(&mut anvil, &artifact, &entries)?));
    }
    println!("corpus {}: {} answers", path.display(), entries.len());
    let mut ok = true;
    for (who, t) in &tallies {
        println!("  {}", t.summary(who));
        for (line, got) in t.wrong.iter().take(20) {
            println!("    line {line}: got {got}");
        }
        ok &= t.all_right();
    }
    if !ok {
        eprintln!("gate-sim corpus: not 100 % refused / 100 % accepted by every implementation");
    }
    Ok(ok)
}

/// What `simulate` runs.
struct SimPlan {
    markets: usize,
    steps: usize,
    seed: u64,
    models: Vec<ModelKind>,
    use_evm: bool,
    adversaries: Vec<Adversary>,
    adversary_rounds: usize,
}

fn run_simulate(
    plan: &SimPlan,
    out: &std::path::Path,
    artifact_path: &std::path::Path,
) -> eyre::Result<bool> {
    let SimPlan { markets, steps, seed, use_evm, .. } = *plan;
    if markets == 0 || steps == 0 {
        bail!("--markets and --steps must be at least 1");
    }
    let artifact = if use_evm { Some(GateArtifact::load(artifact_path)?) } else { None };
    let evm_flag = if use_evm { " --evm" } else { "" };
    let mut doc = String::from("# Simulation\n\n");
    doc.push_str("Written by `gate-sim simulate`. First the market models: synthetic binary markets drift around a hidden probability; a model answers each step; every decision goes through the gate; positions settle when markets resolve or are written off when they never do. Then the adversaries of issues 7 and 14, each its own scenario against a fresh gate.\n\n");
    doc.push_str(sim::CHECKS);
    doc.push_str("\n\n");
    let mut total_violations = 0;
    let mut total_disagreements = 0;
    for &model in &plan.models {
        let config = SimConfig {
            markets,
            steps,
            seed,
            model,
            bounds: sim::default_bounds(),
            initial_collateral: alloy::primitives::U256::from(1_000_000_000u64),
            step_secs: 60,
        };
        let report = sim::run(&config, artifact.as_ref())?;
        let command = format!(
            "gate-sim simulate --markets {markets} --steps {steps} --seed {seed} --model {}{evm_flag}",
            model.name()
        );
        println!(
            "{}: {} decisions, {} accepted, {} violations, {} disagreements, {:.0} decisions/s",
            model.name(),
            report.decisions,
            report.accepted(),
            report.violations,
            report.disagreements,
            report.decisions_per_sec()
        );
        total_violations += report.violations;
        total_disagreements += report.disagreements;
        doc.push_str(&sim::markdown(&report, &command));
    }
    if plan.adversary_rounds > 0 && !plan.adversaries.is_empty() {
        let config = AdversaryConfig {
            rounds: plan.adversary_rounds,
            seed,
            bounds: adversary::default_bounds(),
            initial_collateral: adversary::default_initial_collateral(),
        };
        let mut reports = Vec::new();
        for &a in &plan.adversaries {
            let r = adversary::run(a, &config, artifact.as_ref())
                .wrap_err_with(|| format!("adversary {}", a.name()))?;
            println!(
                "adversary {}: {} decisions, loss {} of bound {} ({}), {} violations, {} disagreements, {:.2} s",
                a.name(),
                r.decisions,
                r.loss,
                r.bound,
                r.bound_label,
                r.violations,
                r.disagreements,
                r.elapsed.as_secs_f64()
            );
            total_violations += r.violations;
            total_disagreements += r.disagreements;
            reports.push(r);
        }
        let names: Vec<&str> = plan.adversaries.iter().map(|a| a.name()).collect();
        let command = format!(
            "gate-sim simulate --seed {seed} --adversary {} --adversary-rounds {}{evm_flag}",
            names.join(","),
            plan.adversary_rounds
        );
        doc.push_str(&adversary::markdown(&reports, &command));
    }
    write_file(out, &doc)?;
    println!("wrote {}", out.display());
    let holds = total_violations == 0 && total_disagreements == 0;
    if !holds {
        eprintln!(
            "gate-sim simulate: {total_violations} violations and {total_disagreements} disagreements found"
        );
    }
    Ok(holds)
}
