//! The record at 1k and at 100k decisions: what a keeper costs as its record grows.

use super::*;

// --- the record at 1k and at 100k decisions (issue 17)
// `keeper bench`, the record at 1k and at 100k decisions (issue 17): what a keeper costs as
// its record grows, measured on `keeper run --once` child processes against one anvil.
//
// How the record is made: the decisions are real `Decision` events of a real gate, sent as
// pre-signed `submitVerdict(ABSTAIN)` transactions from the keeper's own key over
// [`MARKETS`] markets, [`PER_BLOCK`] to a block (automine off, then `evm_mine`), so 100k
// decisions take minutes rather than the hours a model would. After every [`BATCH`] of them
// a `keeper run --once` catches up, as a keeper running along would. They carry no prompt and
// no model label (no journal holds them), so each row is smaller than one the keeper asked
// itself; the keeper's own rows in the measured runs are full ones.
//
// Measured at each size, each a fresh `keeper run --once` process: wall time from spawn to
// exit, peak RSS as the keeper logs it on exit (its VmHWM), bytes written from wait4(2):
// - restart: [`NEW_BLOCKS`] new blocks (one decision each) since the last run, nothing due;
// - cycle: every market due (`--reask-secs 1`), so the run asks and decides all of them;
// - disk: the results folder's files after the cycle.

/// Markets the generated decisions cycle through (the keeper asks each of them in a cycle run).
pub const RECORD_MARKETS: usize = 100;
/// Generated decisions mined per block (ABSTAIN costs ~40k gas: 500 fit a 30M block).
pub const PER_BLOCK: usize = 500;
/// Generated decisions between two catch-up runs of the keeper.
pub const BATCH: usize = 10_000;
/// Blocks (one generated decision each) the restart run finds new.
pub const NEW_BLOCKS: usize = 10;
/// Raw transactions in flight while a batch is sent.
pub(super) const SEND_CONCURRENCY: usize = 32;

/// One `keeper run --once` child: wall seconds, peak RSS (KiB), bytes it wrote (ru_oublock).
#[derive(Debug, Clone, Copy, Default)]
pub struct ChildRun {
    pub secs: f64,
    pub rss_kib: u64,
    pub wrote: u64,
}

/// The results folder's files, in bytes.
#[derive(Debug, Clone, Default)]
pub struct Disk {
    pub files: Vec<(String, u64)>,
}

impl Disk {
    fn read(dir: &Path) -> Self {
        let mut files: Vec<(String, u64)> = std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| {
                let m = e.metadata().ok()?;
                m.is_file().then(|| (e.file_name().to_string_lossy().into_owned(), m.len()))
            })
            .collect();
        files.sort();
        Self { files }
    }

    fn get(&self, name: &str) -> u64 {
        self.files.iter().find(|(n, _)| n == name).map_or(0, |(_, b)| *b)
    }

    fn total(&self) -> u64 {
        self.files.iter().map(|(_, b)| b).sum()
    }
}

/// The figures at one record size.
#[derive(Debug, Clone)]
pub struct AtSize {
    /// Decisions in the feed before the measured runs.
    pub decisions: usize,
    pub restart: ChildRun,
    pub cycle: ChildRun,
    /// Decisions the cycle run submitted.
    pub cycle_decisions: usize,
    pub disk: Disk,
    /// The feed before the cycle run is a byte prefix of the feed after it.
    pub feed_appended: bool,
    /// Bytes the cycle run added to feed.jsonl.
    pub feed_growth: u64,
}

#[derive(Debug, Clone)]
pub struct LongRun {
    pub sizes: Vec<AtSize>,
    /// The slowest and the largest catch-up run (BATCH new decisions each).
    pub catch_up_secs: f64,
    pub catch_up_rss_kib: u64,
    pub catch_ups: usize,
    /// Seconds spent generating the decisions.
    pub generate_secs: f64,
    /// `keeper serve` over the record at each size (issues 18 and 34), or why not measured.
    pub floor: std::result::Result<Vec<floor::FloorFigures>, String>,
    /// The market of the position bought in the keeper's first run and never settled, and the
    /// UP units the gate held there at the end (issue 32: every figure is with it open).
    pub open: (Address, U256),
}

/// The gate's UP units in `market`, if its position there is open (held and not written off).
async fn open_units(w: &World, market: Address) -> Result<U256> {
    let g = IRiskGate::new(w.deployment.gate, &w.keeper_rpc);
    let p = g
        .positionOf(market)
        .call()
        .await
        .map_err(|e| check("positionOf", crate::error_chain(&e)))?;
    Ok(if p.writtenOff { U256::ZERO } else { p.upUnits })
}

/// `keeper run` (the `exe` given) on `w`'s gate with its results in `results`, signing with the
/// dev key the anvil this bench spawned published (only against that anvil).
fn keeper_run(exe: &Path, w: &World, root: &Path, results: &Path) -> Result<std::process::Command> {
    let mut cmd = std::process::Command::new(exe);
    cmd.arg("--root")
        .arg(root)
        .arg("run")
        .args(["--rpc-url", w.anvil.url.as_str()])
        .args(["--gate", &w.deployment.gate.to_string()])
        .args(["--from-block", &w.deployment.deploy_block.to_string()])
        .arg("--results")
        .arg(results)
        .env("KEEPER_PRIVATE_KEY", w.anvil.dev_key(0)?);
    Ok(cmd)
}

/// `keeper run --once` on `w`'s gate with its results in `results`, plus `extra` flags.
pub async fn run_once(w: &World, root: &Path, results: &Path, extra: &[&str]) -> Result<ChildRun> {
    let exe = std::env::current_exe().map_err(io_err("find the keeper's own executable"))?;
    let log_path = results.with_extension("run.log");
    let log = std::fs::File::create(&log_path).map_err(io_err("create the run's log"))?;
    let mut cmd = keeper_run(&exe, w, root, results)?;
    cmd.arg("--once")
        .args(extra)
        .arg("--log-format")
        .arg("json")
        .stdout(std::process::Stdio::null())
        .stderr(log.try_clone().map_err(io_err("open the run's log"))?);
    let t = Instant::now();
    let child = cmd.spawn().map_err(io_err(format!("start {}", exe.display())))?;
    let pid = child.id() as libc::pid_t;
    let (status, usage) = tokio::task::spawn_blocking(move || {
        let mut status: libc::c_int = 0;
        // SAFETY: zeroed rusage is a valid value; wait4 fills it for our own child `pid`.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        (if r == pid { status } else { -1 }, usage.ru_oublock as u64 * 512)
    })
    .await
    .map_err(BenchError::Join)?;
    let secs = t.elapsed().as_secs_f64();
    drop(child);
    if status != 0 {
        return Err(check("keeper run --once", format!("exit status {status}")));
    }
    // Peak RSS as the keeper logs it on exit (its own VmHWM): wait4's ru_maxrss would start at
    // this bench's own high-water mark, which the child inherits through vfork.
    let text = std::fs::read_to_string(&log_path).map_err(io_err("read the run's log"))?;
    let rss_kib = text
        .lines()
        .filter_map(|l| l.split("\"peak_rss_kib\":").nth(1))
        .filter_map(|v| v.split(|c: char| !c.is_ascii_digit()).next()?.parse::<u64>().ok())
        .next_back()
        .ok_or_else(|| check("keeper run --once", "logged no peak_rss_kib".into()))?;
    // ru_oublock counts 512-byte blocks written through the filesystem (the child's own).
    Ok(ChildRun { secs, rss_kib, wrote: usage })
}

/// Sends `n` pre-signed ABSTAIN submissions over `markets`, `per_block` to a block, and mines
/// them. Every one is checked mined (the keeper's nonce moved by `n`).
pub(super) async fn generate(
    w: &World,
    markets: &[Address],
    n: usize,
    per_block: usize,
) -> Result<()> {
    let signer = crate::chain::dev_signer(w.anvil.dev_key(0)?)?;
    let wallet = EthereumWallet::from(signer);
    let p = &w.keeper_rpc;
    let fees = sender::current_fees(p).await.map_err(|e| BenchError::Fees(Box::new(e)))?;
    let mut left = n;
    w.automine(false).await?;
    while left > 0 {
        let k = left.min(per_block);
        let nonce = w.pending_nonce(w.keeper_addr).await?;
        let read_block = p.get_block_number().await.map_err(rpc_err("reading the block number"))?;
        let mut raws = Vec::with_capacity(k);
        for i in 0..k {
            let market = markets[(nonce as usize + i) % markets.len()];
            let data = IRiskGate::submitVerdictCall {
                market,
                raw: "ABSTAIN".into(),
                promptHash: B256::ZERO,
                readBlock: read_block,
                quote: Quote { maxPricePaid: Default::default(), deadline: 0 },
            }
            .abi_encode();
            let tx = TransactionRequest::default()
                .with_to(w.deployment.gate)
                .with_input(Bytes::from(data))
                .with_nonce(nonce + i as u64)
                .with_chain_id(w.deployment.chain_id)
                .with_gas_limit(sender::submit_gas_cap("ABSTAIN"))
                .with_max_fee_per_gas(fees.max_fee_per_gas)
                .with_max_priority_fee_per_gas(fees.max_priority_fee_per_gas);
            let env = tx.build(&wallet).await.map_err(|e| BenchError::Sign(Box::new(e)))?;
            raws.push(alloy::eips::eip2718::Encodable2718::encoded_2718(&env));
        }
        let sent: Vec<_> = futures::stream::iter(raws)
            .map(|raw| async move { p.send_raw_transaction(&raw).await.map(|_| ()) })
            .buffer_unordered(SEND_CONCURRENCY)
            .collect()
            .await;
        for s in sent {
            s.map_err(rpc_err("sending a generated decision"))?;
        }
        let _: serde_json::Value =
            p.raw_request("evm_mine".into(), ()).await.map_err(rpc_err("evm_mine"))?;
        let mined = w.nonce(w.keeper_addr).await?;
        if mined != nonce + k as u64 {
            w.automine(true).await?;
            return Err(check(
                "generate",
                format!("{} of {k} generated decisions mined in one block", mined - nonce),
            ));
        }
        left -= k;
    }
    w.automine(true).await?;
    Ok(())
}

/// Lines of feed.jsonl, counted in chunks (the feed is 83 MB at 100k rows: reading it whole
/// would only add to the bench's own memory).
pub(super) fn feed_rows(dir: &Path) -> usize {
    use std::io::Read as _;
    let Ok(mut f) = std::fs::File::open(dir.join(crate::record::FEED_FILE)) else { return 0 };
    let (mut buf, mut lines) = (vec![0u8; 1 << 16], 0);
    while let Ok(n @ 1..) = f.read(&mut buf) {
        lines += buf[..n].iter().filter(|&&c| c == b'\n').count();
    }
    lines
}

/// Measures the keeper at each record size in `sizes` (ascending), growing one record.
pub async fn record_figures(
    w: &World,
    root: &Path,
    dir: &Path,
    sizes: &[usize],
) -> Result<LongRun> {
    if sizes.is_empty() || sizes.windows(2).any(|p| p[0] >= p[1]) || sizes[0] == 0 {
        return Err(check(
            "record sizes",
            format!("--record-sizes {sizes:?}: give ascending positive counts, e.g. 1000,100000"),
        ));
    }
    let markets = seed_abstain_markets(w, RECORD_MARKETS).await?;
    // One market whose ask (0.40) the builtin rules buy (UP at or below 0.45): bought in the
    // keeper's first run and never resolved, so every figure below is taken with a position
    // open (issue 32: the v1 feed held every later row back behind one).
    let open = w
        .create_market(TICK, LOT, w.fillable_min_qty(LOT), w.chain_time().await? + DAY_SECS)
        .await?;
    w.ask(open, 400_000, 20_000_000).await?;
    // ABSTAIN needs no collateral; the buy does (else reason 10): 100 tUSD, as the tests' world.
    w.mint(w.deployment.gate, U256::from(100_000_000u64)).await?;
    std::fs::create_dir_all(dir).map_err(io_err("create the results folder"))?;
    // The keeper's first run: every market asked once (the rows it writes are full ones).
    run_once(w, root, dir, &["--reask-secs", "1"]).await?;
    if open_units(w, open).await?.is_zero() {
        return Err(check(
            "the open position",
            format!("the keeper's first run bought nothing in {open}"),
        ));
    }
    let mut made = feed_rows(dir);
    let (mut gen_secs, mut catch_secs, mut catch_rss, mut catch_ups) = (0.0, 0.0f64, 0, 0);
    let mut out = Vec::new();
    let (mut floors, mut floor_error) = (Vec::new(), None);
    for &size in sizes {
        while made < size {
            let k = (size - made).min(BATCH);
            let t = Instant::now();
            generate(w, &markets, k, PER_BLOCK).await?;
            gen_secs += t.elapsed().as_secs_f64();
            let r = run_once(w, root, dir, &["--reask-secs", "3600"]).await?;
            (catch_secs, catch_rss) = (catch_secs.max(r.secs), catch_rss.max(r.rss_kib));
            catch_ups += 1;
            let before = made;
            made = feed_rows(dir);
            if made <= before {
                return Err(check(
                    "a catch-up run",
                    format!("appended nothing to feed.jsonl ({made} rows) with a position open"),
                ));
            }
            eprintln!("bench:   record at {made} rows (caught up in {:.1} s)", r.secs);
        }
        // Restart: a few new blocks since the last run, nothing due.
        generate(w, &markets, NEW_BLOCKS, 1).await?;
        let restart = run_once(w, root, dir, &["--reask-secs", "3600"]).await?;
        let decisions = feed_rows(dir);
        // A cycle: every market due (a block 5 s on, past the 1 s re-ask interval).
        w.advance(5).await?;
        let feed = dir.join(crate::record::FEED_FILE);
        let before = std::fs::read(&feed).map_err(io_err("read feed.jsonl"))?;
        let (before_len, before_hash) = (before.len(), alloy::primitives::keccak256(&before));
        drop(before);
        let cycle = run_once(w, root, dir, &["--reask-secs", "1"]).await?;
        let after = std::fs::read(&feed).map_err(io_err("read feed.jsonl"))?;
        let feed_appended = after.len() >= before_len
            && alloy::primitives::keccak256(&after[..before_len]) == before_hash;
        let feed_growth = (after.len() - before_len.min(after.len())) as u64;
        drop(after);
        let cycle_decisions = feed_rows(dir) - decisions;
        made = feed_rows(dir);
        eprintln!(
            "bench:   at {decisions} rows: restart {:.2} s, cycle {:.2} s ({cycle_decisions} decisions)",
            restart.secs, cycle.secs
        );
        out.push(AtSize {
            decisions,
            restart,
            cycle,
            cycle_decisions,
            disk: Disk::read(dir),
            feed_appended,
            feed_growth,
        });
        eprintln!("bench:   the floor (keeper serve) over the record at {made} rows");
        let cache = dir.with_extension("floor-state");
        let f = floor::floor_figures(w, root, dir, &cache, || async {
            generate(w, &markets, 1, 1).await.map_err(|e| crate::error_chain(&e))
        })
        .await;
        let _ = std::fs::remove_dir_all(&cache);
        match f {
            Ok(f) => floors.push(f),
            Err(e) => floor_error = Some(e),
        }
        // The floor's block-to-page decisions are on chain: the next size's catch-up takes
        // them in.
        made = feed_rows(dir);
    }
    let floor = match floor_error {
        Some(e) => Err(e),
        None => Ok(floors),
    };
    let units = open_units(w, open).await?;
    if units.is_zero() {
        return Err(check(
            "the open position",
            format!("{open} was settled or written off during the run"),
        ));
    }
    Ok(LongRun {
        open: (open, units),
        sizes: out,
        catch_up_secs: catch_secs,
        catch_up_rss_kib: catch_rss,
        catch_ups,
        generate_secs: gen_secs,
        floor,
    })
}

pub(super) fn mb(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1_048_576.0)
}

/// Within `pct` per cent of `base`.
pub(super) fn within(v: f64, base: f64, pct: f64) -> bool {
    v <= base * (1.0 + pct / 100.0)
}

/// The section of results/bench/keeper.md.
pub fn write_record(md: &mut String, f: &LongRun) {
    let _ = writeln!(md, "## The record at {} decisions\n", sizes_text(f));
    let _ = writeln!(md, "How the record was made: real `Decision` events of a real gate on anvil, sent as pre-signed `submitVerdict(ABSTAIN)` transactions from the keeper's key over {RECORD_MARKETS} markets, {PER_BLOCK} to a block ({:.0} s for all of them); after every {BATCH} of them a `keeper run --once` caught up, as a keeper running along would ({} catch-ups, the slowest {:.1} s, peak RSS at most {}). These rows carry no prompt and no model label (no journal holds them), so each is smaller than one the keeper asks itself; the rows of the keeper's own runs below are full ones. Every figure is one `keeper run --once` process, from spawn to exit (process start, startup checks, reading the state, following the new blocks, the cycle, writing the record), with its peak RSS as it logs it on exit (VmHWM from /proc/self/status: wait4's ru_maxrss would start at the bench's own high-water mark, which a vfork-spawned child inherits) and the bytes it wrote from wait4(2) (ru_oublock × 512).\n", f.generate_secs, f.catch_ups, f.catch_up_secs, mb(f.catch_up_rss_kib * 1024));
    let _ = writeln!(md, "| record | restart: {NEW_BLOCKS} new blocks, nothing due | peak RSS | written | cycle: {RECORD_MARKETS} markets due | peak RSS | written | feed.jsonl | state.sqlite (+ WAL) | journal.jsonl | RESULTS.md | decisions.svg |\n| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    for s in &f.sizes {
        let d = &s.disk;
        let state = d.get("state.sqlite") + d.get("state.sqlite-wal") + d.get("state.sqlite-shm");
        let _ = writeln!(
            md,
            "| {} decisions | {:.2} s | {} | {} | {:.2} s ({} decisions) | {} | {} | {} | {} | {} | {} KB | {} KB |",
            s.decisions,
            s.restart.secs,
            mb(s.restart.rss_kib * 1024),
            mb(s.restart.wrote),
            s.cycle.secs,
            s.cycle_decisions,
            mb(s.cycle.rss_kib * 1024),
            mb(s.cycle.wrote),
            mb(d.get("feed.jsonl")),
            mb(state),
            mb(d.get("journal.jsonl")),
            d.get("RESULTS.md") / 1024,
            d.get("decisions.svg") / 1024,
        );
    }
    let _ = writeln!(md, "\nOne bought position stayed open the whole run: market {} (bought in the keeper's first run, {} UP tokens held at the end, expiring a day of chain time on, never resolved). Every figure above was taken with it open, and every catch-up appended its rows to feed.jsonl (the run stops if one appends nothing): the v1 feed held every later row back behind such a position (issue 32).", f.open.0, crate::domain::format::units(&f.open.1.to_string()));
    let (Some(small), Some(big)) = (f.sizes.first(), f.sizes.last()) else { return };
    let rss = |s: &AtSize| s.cycle.rss_kib.max(s.restart.rss_kib) as f64;
    let rss_ok = within(rss(big), rss(small), 20.0);
    let restart_ok = big.restart.secs < 2.0;
    let appended = f.sizes.iter().all(|s| s.feed_appended);
    let _ =
        writeln!(md, "\nTotal on disk at {} decisions: {}.\n", big.decisions, mb(big.disk.total()));
    let _ = writeln!(
        md,
        "- RSS at {} decisions within 20 % of RSS at {} (the higher of the two runs at each): {} against {} ({:+.1} %): {}.",
        big.decisions,
        small.decisions,
        mb(rss(big) as u64 * 1024),
        mb(rss(small) as u64 * 1024),
        (rss(big) / rss(small) - 1.0) * 100.0,
        verdict(rss_ok)
    );
    let _ = writeln!(
        md,
        "- A restart at {} decisions under 2 s plus the new blocks ({NEW_BLOCKS} of them, and the process's own start): {:.2} s, against {:.2} s at {}: {}.",
        big.decisions,
        big.restart.secs,
        small.restart.secs,
        small.decisions,
        verdict(restart_ok)
    );
    let _ = writeln!(
        md,
        "- No file rewritten whole per cycle: feed.jsonl before each cycle run is a byte prefix of it after ({}; the cycle appended {} and {} bytes); a cycle run wrote {} at {} decisions and {} at {}, against a feed of {} and {}. `state.sqlite` is written by pages. RESULTS.md, decisions.svg and feed.head are rewritten whole when they change, each bounded in size whatever the record's length ({} KB and {} KB at {} decisions, {} KB and {} KB at {}): {}.\n",
        if appended { "checked" } else { "NOT so" },
        small.feed_growth,
        big.feed_growth,
        mb(small.cycle.wrote),
        small.decisions,
        mb(big.cycle.wrote),
        big.decisions,
        mb(small.disk.get("feed.jsonl")),
        mb(big.disk.get("feed.jsonl")),
        small.disk.get("RESULTS.md") / 1024,
        small.disk.get("decisions.svg") / 1024,
        small.decisions,
        big.disk.get("RESULTS.md") / 1024,
        big.disk.get("decisions.svg") / 1024,
        big.decisions,
        verdict(appended && within(big.cycle.wrote as f64, small.cycle.wrote as f64, 100.0))
    );
}

pub(super) fn sizes_text(f: &LongRun) -> String {
    let v: Vec<String> = f.sizes.iter().map(|s| s.decisions.to_string()).collect();
    v.join(" and ")
}

/// The floor beside a live keeper (issue 34): `keeper run` (the builtin rules, every market
/// re-asked each cycle, a cycle every second, anvil mining a block a second) writing its record into `dir` for `secs` seconds
/// over `markets` fresh markets, and `keeper serve` reading that folder's state database
/// read-only, as an operator runs them. The floor's memory is read every `every` seconds.
pub async fn floor_live(
    w: &World,
    root: &Path,
    dir: &Path,
    markets: usize,
    secs: u64,
    every: u64,
) -> Result<floor::FloorLive> {
    let io = |what: &'static str| move |e: std::io::Error| check(what, e.to_string());
    seed_abstain_markets(w, markets).await?;
    std::fs::create_dir_all(dir).map_err(io_err("create the results folder"))?;
    // A first cycle, so the folder holds a complete state for the floor to open.
    run_once(w, root, dir, &["--reask-secs", "1"]).await?;
    // A block a second, as a live chain: the keeper's re-ask timer runs on chain time.
    w.interval_mining(1).await?;
    let exe = std::env::current_exe().map_err(io_err("find the keeper's own executable"))?;
    let log = std::fs::File::create(dir.with_extension("live-run.log"))
        .map_err(io_err("create the run's log"))?;
    let mut keeper = keeper_run(&exe, w, root, dir)?
        .args(["--reask-secs", "1", "--interval-secs", "1"])
        .stdout(std::process::Stdio::null())
        .stderr(log)
        .spawn()
        .map_err(io("start keeper run"))?;
    let out = floor::follow_live(w, root, dir, secs, every).await;
    let _ = keeper.kill();
    let _ = keeper.wait();
    w.interval_mining(0).await?;
    out.map_err(|e| check("the floor beside a live keeper", e))
}
