//! `keeper` binary entry point: parses the command line and reports errors in one line, with
//! their whole cause chain (eyre only here).

use clap::Parser;
use keeper::{
    cli::{Args, Command},
    deploy, report, runner,
};
use tokio_util::sync::CancellationToken;

fn main() {
    let args = Args::parse();
    let rt = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("keeper: cannot start the async runtime: {e}");
            std::process::exit(1);
        }
    };
    if let Err(e) = rt.block_on(real_main(args)) {
        // The whole cause chain on one line, so a transport error shows its real cause (a
        // certificate, a refused connection) and not only "error sending request".
        eprintln!("keeper: error: {}", keeper::error_chain(e.as_ref()));
        std::process::exit(1);
    }
}

async fn real_main(args: Args) -> eyre::Result<()> {
    let root = args.root.clone();
    match args.command {
        Command::Deploy(d) => {
            let dep = deploy::run(&d, &root).await?;
            println!("{}", serde_json::to_string_pretty(&dep)?);
            eprintln!("keeper: saved deployments/{}.json", dep.chain_id);
        }
        Command::Run(r) => {
            let cfg = r.to_config(&root)?;
            let cancel = CancellationToken::new();
            runner::spawn_signal_handler(cancel.clone());
            runner::run(cfg, &root, cancel).await?;
        }
        Command::Report(r) => {
            let anvil = root.join(".toolchain/bin/anvil");
            let out = report::run(&r, &root, &anvil).await?;
            println!(
                "keeper report: {} decisions, {} off-chain rows; code check: {}{}",
                out.decisions,
                out.offchain,
                out.code_check,
                if r.check { "; record matches chain" } else { "" }
            );
        }
        #[cfg(feature = "dev")]
        Command::Demo(d) => {
            let cancel = CancellationToken::new();
            runner::spawn_signal_handler(cancel.clone());
            keeper::dev::demo::run(&d, &root, cancel).await?;
        }
        #[cfg(feature = "dev")]
        Command::Bench(b) => {
            keeper::dev::bench::run(&b, &root).await?;
        }
    }
    Ok(())
}
