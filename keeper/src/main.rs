//! `keeper` binary entry point: parses the command line, installs the logger (`--log-format`),
//! and reports a fatal error as one log event with its whole cause chain (eyre only here).

use clap::Parser;
use keeper::{
    commands::cli::{Args, Command},
    commands::deploy,
    commands::fund,
    commands::market,
    commands::report,
    commands::run,
    domain::config::{existing_root, ConfigError},
    domain::log,
};
use tokio_util::sync::CancellationToken;

fn main() {
    let args = Args::parse();
    if let Err(e) = log::init(args.log_format.into()) {
        // No logger yet: the one plain line a malformed KEEPER_LOG / RUST_LOG can get.
        eprintln!("keeper: error: {}", keeper::error_chain(&e));
        std::process::exit(1);
    }
    let rt = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => fatal(&e),
    };
    if let Err(e) = rt.block_on(real_main(args)) {
        // A configuration error (a malformed URL, a missing root, a bad flag value) is the
        // operator's to fix before anything runs: one line and exit code 2, as for a usage error.
        if e.chain().any(|c| c.downcast_ref::<ConfigError>().is_some()) {
            tracing::error!("error: {}", keeper::error_chain(e.as_ref()));
            std::process::exit(2);
        }
        fatal(e.as_ref());
    }
}

/// Logs the error and its whole cause chain as one event (one line; one JSON object with
/// `--log-format json`), so a transport error shows its real cause (a certificate, a refused
/// connection) and not only "error sending request", then exits non-zero.
fn fatal(e: &(dyn std::error::Error + 'static)) -> ! {
    tracing::error!("error: {}", keeper::error_chain(e));
    std::process::exit(1);
}

async fn real_main(args: Args) -> eyre::Result<()> {
    // Resolved once, against the working directory: everything below joins onto it, and a
    // child process run in another directory still finds the same files.
    let root = std::path::absolute(&args.root)
        .map_err(|e| eyre::eyre!("cannot resolve --root {}: {e}", args.root.display()))?;
    existing_root(&root)?;
    match args.command {
        Command::Deploy(d) => {
            let cfg = d.to_config()?;
            let dep = deploy::run(&cfg, &root).await?;
            println!("{}", serde_json::to_string_pretty(&dep)?);
            tracing::info!(gate = %dep.gate, "saved deployments/{}.json", dep.chain_id);
        }
        Command::Fund(f) => {
            let cfg = f.to_config()?;
            let out = fund::run(&cfg, &root).await?;
            println!("{}", serde_json::to_string(&out)?);
        }
        Command::Market(m) => {
            let cfg = m.to_config()?;
            let out = market::run(&cfg, &root).await?;
            println!("{}", serde_json::to_string(&out)?);
        }
        Command::Run(r) => {
            let cfg = r.to_config()?;
            let cancel = CancellationToken::new();
            run::spawn_signal_handler(cancel.clone());
            let Some((reader, chain_id)) = run::connect_waiting(&cfg, &cancel).await? else {
                tracing::info!("stopping on a signal before the node answered");
                return Ok(());
            };
            // The saved deployment is read here, in the CLI layer, and handed in as config.
            let found = match cfg.gate {
                Some(g) => {
                    deploy::load_saved_gate(&reader, &root, chain_id, g, cfg.log_range).await?
                }
                None => deploy::load_saved(&reader, &root, chain_id, cfg.log_range).await?,
            };
            let saved = keeper::domain::config::SavedGate {
                found: found.map(|d| keeper::domain::config::GateAt {
                    gate: d.gate,
                    deploy_block: d.deploy_block,
                }),
                path: deploy::saved_path(&root, chain_id).display().to_string(),
            };
            run::run(cfg, (reader, chain_id), saved, &root, cancel).await?;
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
