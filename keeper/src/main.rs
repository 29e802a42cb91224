//! `keeper` binary entry point: parses the command line, installs the logger (`--log-format`),
//! and reports a fatal error as one log event with its whole cause chain, exiting 2 when it
//! refused the operator's input or configuration and 1 when something failed while running
//! (each error type says which, [`Classify`]).

use clap::Parser;
use keeper::{
    commands::cli::{Args, Command},
    commands::deploy,
    commands::fund,
    commands::market,
    commands::report,
    commands::run,
    domain::config::{existing_root, ConfigError},
    domain::exit::{Classify, Fault},
    domain::log,
};
use tokio_util::sync::CancellationToken;

fn main() {
    let args = Args::parse();
    if let Err(e) = log::init(args.log_format.into()) {
        // No logger yet: the one plain line a malformed KEEPER_LOG / RUST_LOG can get.
        eprintln!("keeper: error: {}", keeper::error_chain(&e));
        std::process::exit(e.fault().exit_code());
    }
    let rt = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => fatal(Failed::runtime(e)),
    };
    if let Err(e) = rt.block_on(real_main(args)) {
        fatal(e);
    }
}

/// A command's error and whose fault it is, decided by the error's own type when it is
/// converted (`?`), before its type is erased.
struct Failed {
    fault: Fault,
    error: Box<dyn std::error::Error + Send + Sync + 'static>,
}

impl<E: Classify + std::error::Error + Send + Sync + 'static> From<E> for Failed {
    fn from(e: E) -> Self {
        Self { fault: e.fault(), error: Box::new(e) }
    }
}

impl Failed {
    /// An error of the binary's own plumbing (the runtime, printing a result): never the
    /// operator's input.
    fn runtime(e: impl std::error::Error + Send + Sync + 'static) -> Self {
        Self { fault: Fault::Runtime, error: Box::new(e) }
    }
}

/// Logs the error and its whole cause chain as one event (one line; one JSON object with
/// `--log-format json`), so a transport error shows its real cause (a certificate, a refused
/// connection) and not only "error sending request", then exits 2 for a refused input or
/// configuration (as for a usage error), 1 for a failure while running.
fn fatal(e: Failed) -> ! {
    tracing::error!("error: {}", keeper::error_chain(e.error.as_ref()));
    std::process::exit(e.fault.exit_code());
}

async fn real_main(args: Args) -> Result<(), Failed> {
    // Resolved once, against the working directory: everything below joins onto it, and a
    // child process run in another directory still finds the same files.
    let root =
        std::path::absolute(&args.root).map_err(|_| ConfigError::MissingRoot(args.root.clone()))?;
    existing_root(&root)?;
    match args.command {
        Command::Deploy(d) => {
            let cfg = d.to_config()?;
            let dep = deploy::run(&cfg, &root).await?;
            println!("{}", serde_json::to_string_pretty(&dep).map_err(Failed::runtime)?);
            tracing::info!(gate = %dep.gate, "saved deployments/{}.json", dep.chain_id);
        }
        Command::Fund(f) => {
            let cfg = f.to_config()?;
            let out = fund::run(&cfg, &root).await?;
            println!("{}", serde_json::to_string(&out).map_err(Failed::runtime)?);
        }
        Command::Market(m) => {
            let cfg = m.to_config()?;
            let out = market::run(&cfg, &root).await?;
            println!("{}", serde_json::to_string(&out).map_err(Failed::runtime)?);
        }
        Command::Run(r) => {
            let cfg = r.to_config()?;
            let cancel = CancellationToken::new();
            run::spawn_signal_handler(cancel.clone());
            let Some((reader, chain_id)) = run::connect_waiting(&cfg, &cancel).await? else {
                tracing::info!("stopping on a signal before the node answered");
                return Ok(());
            };
            // The saved deployment is read here, in the CLI layer, and handed in as config:
            // first only read, to name the gate; the gate is checked (its mode included); only
            // then may a script's deployment get its deploy block written into the file.
            let path = match cfg.gate {
                Some(g) => deploy::gate_path(&root, chain_id, g),
                None => deploy::saved_path(&root, chain_id),
            };
            let on_disk = match cfg.gate {
                Some(g) => deploy::read_saved_for(&root, chain_id, g)?,
                None => deploy::read_saved(&root, chain_id)?,
            };
            let saved_gate = on_disk.as_ref().map(|s| s.deployment.gate);
            let default_path = deploy::saved_path(&root, chain_id);
            let checked = run::check(&cfg, &reader, chain_id, saved_gate, &default_path).await?;
            let found = deploy::complete(&reader, &root, on_disk, path, cfg.log_range).await?;
            let saved = keeper::domain::config::SavedGate {
                found: found.map(|d| keeper::domain::config::GateAt {
                    gate: d.gate,
                    deploy_block: d.deploy_block,
                }),
            };
            run::run(cfg, (reader, chain_id), checked, saved, &root, cancel).await?;
        }
        Command::Report(r) => {
            let cfg = r.to_config()?;
            let anvil = root.join(".toolchain/bin/anvil");
            let out = report::run(&cfg, &root, &anvil).await?;
            println!(
                "keeper report: {} decisions, {} off-chain rows; code check: {}{}",
                out.decisions,
                out.offchain,
                out.code_check,
                if cfg.check { "; every check passed" } else { "" }
            );
            for line in &out.verified {
                println!("  {line}");
            }
        }
        Command::Attest(a) => {
            let cfg = a.to_config()?;
            let cancel = CancellationToken::new();
            run::spawn_signal_handler(cancel.clone());
            keeper::commands::attest::run(&cfg, &root, cancel).await?;
        }
        Command::Serve(a) => {
            let cfg = a.to_config()?;
            let cancel = CancellationToken::new();
            run::spawn_signal_handler(cancel.clone());
            let anvil = root.join(".toolchain/bin/anvil");
            keeper::commands::serve::run(&cfg, &root, &anvil, cancel).await?;
        }
        #[cfg(feature = "dev")]
        Command::Demo(d) => {
            let cancel = CancellationToken::new();
            run::spawn_signal_handler(cancel.clone());
            keeper::dev::demo::run(&(&d).into(), &root, cancel).await?;
        }
        #[cfg(feature = "dev")]
        Command::Bench(b) => {
            keeper::dev::bench::run(&(&b).into(), &root).await?;
        }
    }
    Ok(())
}
