//! `keeper bench`, the floor over a large record (issue 18): a `keeper serve` child process
//! following the bench's gate once its record holds 100k decisions, measured from outside:
//! - its start (checks, the fixed facts, the code check, reading and decoding every log);
//! - the time to the feed's first page on the server (`GET /api/decisions` and `GET /`, from
//!   request to the last byte) and in headless Chromium (navigation start to the load event);
//! - its memory (VmHWM and VmRSS of the child, from /proc/<pid>/status);
//! - block to page: a new decision mined while the page is open, from `evm_mine` returning to
//!   the row on the page (the floor polls every 100 ms here).
//!
//! It takes what makes a decision block as a callback, so it needs nothing from the bench
//! module above it.

use crate::dev::{browser::Browser, world::World};
use alloy::providers::Provider;
use std::{
    future::Future,
    io::BufRead,
    path::Path,
    time::{Duration, Instant},
};

/// Samples of each timing; the median is reported, and the slowest.
pub const SAMPLES: usize = 5;
/// How often the measured floor asks for a new head.
pub const POLL_MS: u64 = 100;
/// Bounds a hang; decides nothing.
const HANG: Duration = Duration::from_secs(600);

/// Page requests made before the floor's memory is read (the timed ones included).
pub const REQUESTS: usize = 100;
/// Empty blocks mined to measure the work of a new head with no new decision.
pub const EMPTY_HEADS: usize = 10;

#[derive(Debug, Clone, Default)]
pub struct FloorFigures {
    pub decisions: u64,
    /// A first start on a record it has never read (building its own state), until it
    /// listens; its peak memory then; and the floor's own log line of where the time went.
    pub build_secs: f64,
    pub build_hwm_kib: u64,
    pub build_where: String,
    /// A start with its state already built, until it listens.
    pub start_secs: f64,
    /// Median and slowest, milliseconds.
    pub api_ms: (f64, f64),
    pub page_ms: (f64, f64),
    pub page_bytes: usize,
    /// Filtered pages (`GET /api/decisions?…`): by reason, model and market.
    pub filtered_ms: Vec<(String, (f64, f64))>,
    /// In the browser: navigation start to the load event (median, slowest), and to the first
    /// response byte (median).
    pub browser_ms: Option<((f64, f64), f64)>,
    pub browser_error: Option<String>,
    /// Block to page (median, slowest), ms; None with the browser error.
    pub block_to_page_ms: Option<(f64, f64)>,
    /// After the start and [`REQUESTS`] page requests (before the browser).
    pub rss_kib: u64,
    pub hwm_kib: u64,
    /// [`EMPTY_HEADS`] blocks with no decision: the floor's CPU time per head (ms), and how
    /// many times it read the record again for them (0: no row read or decoded).
    pub empty_head_cpu_ms: f64,
    pub empty_head_rereads: usize,
}

fn median_max(mut xs: Vec<f64>) -> (f64, f64) {
    xs.sort_by(f64::total_cmp);
    (xs[xs.len() / 2], xs[xs.len() - 1])
}

fn vm(pid: u32, key: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix(key))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        })
        .unwrap_or(0)
}

/// The CPU time a process has used (user and system), in ms.
fn cpu_ms(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
    let rest = stat.rsplit(')').next().unwrap_or("");
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    // SAFETY: sysconf only reads a constant of the system.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    (ticks(11) + ticks(12)) * 1000.0 / hz
}

/// A running `keeper serve` child.
struct Child {
    child: std::process::Child,
    url: String,
    pid: u32,
    log: std::path::PathBuf,
}

impl Child {
    /// Starts `keeper serve` over `results` of `w`'s gate, with its own state in `cache` if
    /// given (else reading the keeper's in `results`), logging to `log_path`, and waits until it
    /// listens.
    async fn start(
        w: &World,
        root: &Path,
        results: &Path,
        cache: Option<&Path>,
        log_path: &Path,
    ) -> Result<(Self, f64), String> {
        let exe =
            std::env::current_exe().map_err(|e| format!("the keeper's own executable: {e}"))?;
        let log = std::fs::File::create(log_path).map_err(|e| format!("the floor's log: {e}"))?;
        let t0 = Instant::now();
        let mut cmd = std::process::Command::new(&exe);
        cmd.arg("--root")
            .arg(root)
            .arg("serve")
            .args(["--rpc-url", w.anvil.url.as_str()])
            .args(["--gate", &w.deployment.gate.to_string()])
            .args(["--from-block", &w.deployment.deploy_block.to_string()])
            .arg("--results")
            .arg(results);
        if let Some(cache) = cache {
            cmd.arg("--cache").arg(cache).arg("--own-state");
        }
        let mut child = cmd
            .args(["--listen", "127.0.0.1:0", "--poll-ms", &POLL_MS.to_string()])
            .stdout(std::process::Stdio::piped())
            .stderr(log)
            .spawn()
            .map_err(|e| format!("start keeper serve: {e}"))?;
        let pid = child.id();
        let stdout = child.stdout.take().ok_or("keeper serve's stdout")?;
        let url = tokio::task::spawn_blocking(move || {
            let mut lines = std::io::BufReader::new(stdout).lines();
            let url = lines.by_ref().map_while(|l| l.ok()).find_map(|l| {
                l.strip_prefix("keeper serve: ").map(|u| u.trim_end_matches('/').to_string())
            });
            // Keep reading so the child never blocks on a full pipe.
            std::thread::spawn(move || for _ in lines {});
            url
        })
        .await
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("keeper serve printed no address (see {})", log_path.display()))?;
        Ok((Self { child, url, pid, log: log_path.to_path_buf() }, t0.elapsed().as_secs_f64()))
    }

    /// Lines of its log containing `what`.
    fn log_lines(&self, what: &str) -> Vec<String> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .filter(|l| l.contains(what))
            .map(str::to_string)
            .collect()
    }

    fn stop(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Serves `results` of `w`'s gate twice, with its own state in a fresh `cache`: first on a
/// record it has never read (building its state), then again with the state built, and
/// measures the second; `decide` mines one block holding one new decision.
pub async fn floor_figures<F, Fut>(
    w: &World,
    root: &Path,
    results: &Path,
    cache: &Path,
    mut decide: F,
) -> Result<FloorFigures, String>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<(), String>>,
{
    let _ = std::fs::remove_dir_all(cache);
    let log = cache.with_extension("serve.log");
    let (first, build_secs) = Child::start(w, root, results, Some(cache), &log).await?;
    let build_hwm_kib = vm(first.pid, "VmHWM:");
    let build_where = first
        .log_lines("first read of its own state")
        .into_iter()
        .next()
        .map(|l| {
            let field = |k: &str| {
                l.split(&format!("{k}="))
                    .nth(1)
                    .and_then(|v| v.split_whitespace().next())
                    .unwrap_or("?")
                    .trim_matches('"')
                    .to_string()
            };
            format!(
                "logs read and decoded {} s, rows appended to its state {} s ({} rows)",
                field("follow_secs"),
                field("record_secs"),
                field("rows")
            )
        })
        .unwrap_or_else(|| "the floor logged no split".into());
    first.stop();
    let (floor, start_secs) = Child::start(w, root, results, Some(cache), &log).await?;
    let out = measure(w, &floor, &mut decide).await.map(|mut f| {
        (f.build_secs, f.build_hwm_kib, f.build_where, f.start_secs) =
            (build_secs, build_hwm_kib, build_where, start_secs);
        f
    });
    floor.stop();
    out
}

async fn get_timed(http: &reqwest::Client, url: &str) -> Result<(f64, usize), String> {
    let t = Instant::now();
    let body = http
        .get(url)
        .send()
        .await
        .map_err(|e| format!("GET {url}: {e}"))?
        .error_for_status()
        .map_err(|e| format!("GET {url}: {e}"))?
        .bytes()
        .await
        .map_err(|e| format!("GET {url}: {e}"))?;
    Ok((t.elapsed().as_secs_f64() * 1e3, body.len()))
}

async fn measure<F, Fut>(w: &World, floor: &Child, decide: &mut F) -> Result<FloorFigures, String>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<(), String>>,
{
    let url = &floor.url;
    let http = reqwest::Client::builder().timeout(HANG).build().map_err(|e| e.to_string())?;
    let get_json = |path: String| {
        let http = http.clone();
        async move {
            http.get(path)
                .send()
                .await
                .map_err(|e| e.to_string())?
                .json::<serde_json::Value>()
                .await
                .map_err(|e| e.to_string())
        }
    };
    let status = get_json(format!("{url}/api/status")).await?;
    let decisions = status["decisions"].as_u64().unwrap_or(0);
    // A model, a market and a reason the record holds, for the filtered pages.
    let newest = get_json(format!("{url}/api/decisions?per_page=1")).await?;
    let d = &newest["decisions"][0];
    let market = d["market"].as_str().unwrap_or_default().to_string();
    let reason = d["reason"].as_u64().unwrap_or(0);
    let models = get_json(format!("{url}/api/models")).await?;
    let model = models["models"][0]["model"].as_str().unwrap_or_default().to_string();
    let filtered_paths = [
        ("reason", format!("/api/decisions?reason={reason}")),
        (
            "model",
            format!("/api/decisions?model={}", crate::commands::serve::view::urlencode(&model)),
        ),
        ("market", format!("/api/decisions?market={market}")),
    ];
    let mut requests = 4;
    let mut api = Vec::new();
    let mut page = Vec::new();
    let mut page_bytes = 0;
    let mut filtered: Vec<(String, Vec<f64>)> =
        filtered_paths.iter().map(|(k, _)| (k.to_string(), Vec::new())).collect();
    for _ in 0..SAMPLES {
        api.push(get_timed(&http, &format!("{url}/api/decisions")).await?.0);
        let (ms, bytes) = get_timed(&http, &format!("{url}/")).await?;
        page.push(ms);
        page_bytes = bytes;
        for (i, (_, path)) in filtered_paths.iter().enumerate() {
            filtered[i].1.push(get_timed(&http, &format!("{url}{path}")).await?.0);
        }
        requests += 2 + filtered_paths.len();
    }
    // The rest of the requests: deep pages, decision pages, the models and charts pages.
    let pages = (decisions / 50).max(1);
    let mut i = 0u64;
    while requests < REQUESTS {
        let path = match i % 4 {
            0 => format!("/?page={}", 1 + (i * 7919) % pages),
            1 => "/models".to_string(),
            2 => "/chart/pnl.svg".to_string(),
            _ => format!(
                "/api/decisions?page={}&per_page=200",
                1 + (i * 104_729) % (pages / 4).max(1)
            ),
        };
        get_timed(&http, &format!("{url}{path}")).await?;
        requests += 1;
        i += 1;
    }
    let (rss_kib, hwm_kib) = (vm(floor.pid, "VmRSS:"), vm(floor.pid, "VmHWM:"));
    // Empty heads: blocks with no decision. The floor re-reads its aggregates only when its
    // state database moved, and says so in its log.
    let rereads = |f: &Child| f.log_lines("read its aggregates again").len();
    let before = (rereads(floor), cpu_ms(floor.pid));
    for _ in 0..EMPTY_HEADS {
        let _: serde_json::Value = w
            .keeper_rpc
            .raw_request("evm_mine".into(), ())
            .await
            .map_err(|e| format!("evm_mine: {e}"))?;
        tokio::time::sleep(Duration::from_millis(3 * POLL_MS)).await;
    }
    let empty_head_cpu_ms = (cpu_ms(floor.pid) - before.1) / EMPTY_HEADS as f64;
    let empty_head_rereads = rereads(floor) - before.0;
    let mut f = FloorFigures {
        decisions,
        api_ms: median_max(api),
        page_ms: median_max(page),
        page_bytes,
        filtered_ms: filtered.into_iter().map(|(k, v)| (k, median_max(v))).collect(),
        rss_kib,
        hwm_kib,
        empty_head_cpu_ms,
        empty_head_rereads,
        ..Default::default()
    };
    match browser(url, decide).await {
        Ok((load, ttfb, live)) => {
            f.browser_ms = Some((load, ttfb));
            f.block_to_page_ms = Some(live);
        }
        Err(e) => f.browser_error = Some(e),
    }
    Ok(f)
}

/// The page's load in the browser, then block-to-page latency over [`SAMPLES`] new decisions.
async fn browser<F, Fut>(url: &str, decide: &mut F) -> Result<((f64, f64), f64, (f64, f64)), String>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<(), String>>,
{
    let b = Browser::start(1400, 1000).await.map_err(|e| crate::error_chain(&e))?;
    let run = async {
        let mut loads = Vec::new();
        let mut ttfb = Vec::new();
        for _ in 0..SAMPLES {
            b.goto(&format!("{url}/")).await.map_err(|e| crate::error_chain(&e))?;
            let t = b
                .eval(
                    "const n = performance.getEntriesByType('navigation')[0]; return [n.loadEventEnd, n.responseStart];",
                    vec![],
                )
                .await
                .map_err(|e| crate::error_chain(&e))?;
            loads.push(t[0].as_f64().unwrap_or(f64::NAN));
            ttfb.push(t[1].as_f64().unwrap_or(f64::NAN));
        }
        let t0 = Instant::now();
        while b.eval("return document.getElementById('live').textContent;", vec![]).await.ok()
            != Some(serde_json::json!("on"))
        {
            if t0.elapsed() > HANG {
                return Err("the page's live updates never came on".to_string());
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let mut live = Vec::new();
        for _ in 0..SAMPLES {
            let before = b
                .eval("return Number(document.getElementById('total').textContent);", vec![])
                .await
                .map_err(|e| crate::error_chain(&e))?;
            decide().await?;
            let t = Instant::now();
            loop {
                let now = b
                    .eval("return Number(document.getElementById('total').textContent);", vec![])
                    .await
                    .map_err(|e| crate::error_chain(&e))?;
                if now.as_f64() > before.as_f64() {
                    break;
                }
                if t.elapsed() > HANG {
                    return Err("a new decision never showed on the page".to_string());
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            live.push(t.elapsed().as_secs_f64() * 1e3);
        }
        let (ttfb, _) = median_max(ttfb);
        Ok((median_max(loads), ttfb, median_max(live)))
    }
    .await;
    b.stop().await;
    run
}

/// The floor's section of results/bench/keeper.md: one column per record size.
pub fn write_floor(md: &mut String, all: &[FloorFigures]) {
    use std::fmt::Write;
    if all.is_empty() {
        return;
    }
    let sizes: Vec<String> = all
        .iter()
        .map(|f| format!("{} decisions", crate::domain::format::grouped(u128::from(f.decisions))))
        .collect();
    let _ = writeln!(md, "## The floor\n");
    let _ = writeln!(md, "A `keeper serve` child process over the record above at each size (the same generated decisions; how they were made is said there), with `--own-state`: it follows the gate into its own state folder with the keeper's collector and recorder, seeded with the keeper's feed for its labels. It is started twice: first on a state folder it has never filled, then again on the state it built, which is the one measured. It polls for a new head every {POLL_MS} ms. Timings are the median of {SAMPLES} (slowest in brackets), taken one after another on this machine.\n");
    let _ = writeln!(md, "| figure | {} | target at 100,000 |", sizes.join(" | "));
    let _ = writeln!(md, "| --- |{} --- |", " ---: |".repeat(all.len()));
    let row = |md: &mut String, name: &str, cells: Vec<String>, target: &str| {
        let _ = writeln!(md, "| {name} | {} | {target} |", cells.join(" | "));
    };
    let ms = |v: (f64, f64)| format!("{:.1} ms ({:.1})", v.0, v.1);
    row(
        md,
        "start on a record it has never read, until it listens (where the time went)",
        all.iter()
            .map(|f| {
                format!(
                    "{:.2} s ({}; peak {} MB)",
                    f.build_secs,
                    f.build_where,
                    f.build_hwm_kib / 1024
                )
            })
            .collect(),
        "reported",
    );
    row(
        md,
        "start with its state already built, until it listens",
        all.iter().map(|f| format!("{:.2} s", f.start_secs)).collect(),
        "≤ 2 s",
    );
    row(
        md,
        "the feed's first page, `GET /api/decisions` (50 rows, JSON), request to last byte",
        all.iter().map(|f| ms(f.api_ms)).collect(),
        "≤ 20 ms",
    );
    row(
        md,
        "the feed's first page, `GET /` (the whole HTML page)",
        all.iter().map(|f| format!("{} ({} KB)", ms(f.page_ms), f.page_bytes / 1024)).collect(),
        "≤ 20 ms",
    );
    for (k, name) in [("reason", "by reason"), ("model", "by model"), ("market", "by market")] {
        row(
            md,
            &format!("a filtered page, `GET /api/decisions?{k}=…` ({name})"),
            all.iter()
                .map(|f| {
                    f.filtered_ms.iter().find(|(n, _)| n == k).map_or("-".into(), |(_, v)| ms(*v))
                })
                .collect(),
            "≤ 50 ms",
        );
    }
    row(
        md,
        &format!("memory after the start and {REQUESTS} page requests: VmRSS (VmHWM, its peak)"),
        all.iter().map(|f| format!("{} MB ({} MB)", f.rss_kib / 1024, f.hwm_kib / 1024)).collect(),
        "≤ 150 MB, within 20 % of 1,000",
    );
    row(md, &format!("a new head with no new decision ({EMPTY_HEADS} empty blocks): CPU per head, and reads of the record"), all.iter().map(|f| format!("{:.1} ms, {} reads", f.empty_head_cpu_ms, f.empty_head_rereads)).collect(), "reported: no row decoded");
    row(
        md,
        "in headless Chromium: navigation start to the load event",
        all.iter()
            .map(|f| {
                f.browser_ms.map_or_else(
                    || format!("not measured: {}", f.browser_error.as_deref().unwrap_or("?")),
                    |(l, t)| format!("{} (first byte {t:.1} ms)", ms(l)),
                )
            })
            .collect(),
        "",
    );
    row(md, "block to page: `evm_mine` of a block with one new decision returns, to the row counted on the open page (server-sent event)", all.iter().map(|f| f.block_to_page_ms.map_or("-".into(), |l| format!("{:.0} ms ({:.0})", l.0, l.1))).collect(), "≤ 1 s");
    let _ = writeln!(md);
    let (small, large) = (&all[0], &all[all.len() - 1]);
    let verdict = |ok: bool| if ok { "meets" } else { "MISSES" };
    let rss_ok =
        large.hwm_kib <= 150 * 1024 && (large.rss_kib as f64) <= small.rss_kib as f64 * 1.2;
    let _ = writeln!(md, "- Memory at {} decisions: {} MB RSS, {} MB peak; {} MB at {}: {} (≤ 150 MB and within 20 %).", large.decisions, large.rss_kib / 1024, large.hwm_kib / 1024, small.rss_kib / 1024, small.decisions, verdict(rss_ok));
    let _ = writeln!(
        md,
        "- Start with its state built: {:.2} s: {} (≤ 2 s).",
        large.start_secs,
        verdict(large.start_secs <= 2.0)
    );
    let pages_ok = large.api_ms.0 <= 20.0 && large.page_ms.0 <= 20.0;
    let _ = writeln!(
        md,
        "- First page on the server (median): JSON {:.1} ms, HTML {:.1} ms: {} (≤ 20 ms).",
        large.api_ms.0,
        large.page_ms.0,
        verdict(pages_ok)
    );
    let filt_ok = large.filtered_ms.iter().all(|(_, v)| v.0 <= 50.0);
    let _ = writeln!(
        md,
        "- Filtered pages (median): {}: {} (≤ 50 ms each).",
        large
            .filtered_ms
            .iter()
            .map(|(k, v)| format!("{k} {:.1} ms", v.0))
            .collect::<Vec<_>>()
            .join(", "),
        verdict(filt_ok)
    );
    let live_ok = large.block_to_page_ms.is_some_and(|l| l.1 <= 1000.0);
    let _ = writeln!(
        md,
        "- Block to page (slowest sample): {}: {} (≤ 1 s).",
        large.block_to_page_ms.map_or("not measured".into(), |l| format!("{:.0} ms", l.1)),
        verdict(live_ok)
    );
    let _ = writeln!(md, "- A new head with no new decision: its follower found no log in the block and the feed's state in the database did not move, so the floor read no row and decoded none ({} reads of the record over {EMPTY_HEADS} empty blocks); what a head costs is the head, the gate's live state for the card, and the block's logs (none).\n", large.empty_head_rereads);
}

/// The floor beside a live keeper: its memory and the record's length, read every interval.
#[derive(Debug, Clone, Default)]
pub struct FloorLive {
    pub secs: u64,
    /// (seconds since the floor listened, decisions it showed, VmRSS KiB).
    pub samples: Vec<(u64, u64, u64)>,
    pub hwm_kib: u64,
}

/// Serves the keeper's folder `results` (its state database, read-only) for `secs` seconds
/// while a keeper writes it, reading the floor's memory and the decisions it shows every
/// `every` seconds.
pub async fn follow_live(
    w: &World,
    root: &Path,
    results: &Path,
    secs: u64,
    every: u64,
) -> Result<FloorLive, String> {
    let log = results.with_extension("live-serve.log");
    let (floor, _) = Child::start(w, root, results, None, &log).await?;
    let (url, pid) = (floor.url.clone(), floor.pid);
    let http = reqwest::Client::builder().timeout(HANG).build().map_err(|e| e.to_string())?;
    let t0 = Instant::now();
    let mut out = FloorLive { secs, ..Default::default() };
    let run = async {
        for k in 0..=secs / every.max(1) {
            let due = Duration::from_secs(k * every);
            if let Some(wait) = due.checked_sub(t0.elapsed()) {
                tokio::time::sleep(wait).await;
            }
            // A page as a reader would ask for it, then the status.
            get_timed(&http, &format!("{url}/")).await?;
            let status: serde_json::Value = http
                .get(format!("{url}/api/status"))
                .send()
                .await
                .map_err(|e| e.to_string())?
                .json()
                .await
                .map_err(|e| e.to_string())?;
            let n = status["decisions"].as_u64().unwrap_or(0);
            out.samples.push((t0.elapsed().as_secs(), n, vm(pid, "VmRSS:")));
            eprintln!(
                "bench:   floor beside a live keeper: {} s, {n} decisions, {} MB",
                t0.elapsed().as_secs(),
                vm(pid, "VmRSS:") / 1024
            );
        }
        Ok::<_, String>(())
    }
    .await;
    out.hwm_kib = vm(pid, "VmHWM:");
    floor.stop();
    run.map(|()| out)
}

/// The live run's part of the floor's section.
pub fn write_live(md: &mut String, live: &Result<FloorLive, String>) {
    use std::fmt::Write;
    let l = match live {
        Ok(l) => l,
        Err(e) => {
            let _ = writeln!(md, "### Beside a live keeper\n\nNot measured: {e}.\n");
            return;
        }
    };
    let _ = writeln!(md, "### Beside a live keeper\n\n`keeper run` (builtin rules, every market re-asked every cycle, a cycle a second) writing its record for {} s, and `keeper serve` reading that folder's state database read-only beside it, as an operator runs them. Each sample asks for the floor's first page, then reads its status and VmRSS.\n", l.secs);
    let _ = writeln!(md, "| seconds | decisions shown | floor VmRSS |\n| ---: | ---: | ---: |");
    for (t, n, rss) in &l.samples {
        let _ = writeln!(
            md,
            "| {t} | {} | {:.1} MB |",
            crate::domain::format::grouped(u128::from(*n)),
            *rss as f64 / 1024.0
        );
    }
    if let (Some(a), Some(b)) = (l.samples.get(1), l.samples.last()) {
        let growth = b.2 as f64 / a.2.max(1) as f64 - 1.0;
        let _ = writeln!(md, "\nFrom the second sample to the last the record grew by {} decisions and the floor's RSS by {:+.1} % (peak {} MB): {}.\n", grouped_diff(b.1, a.1), growth * 100.0, l.hwm_kib / 1024, if growth <= 0.2 { "it does not grow with the record" } else { "it GROWS with the record" });
    }
}

fn grouped_diff(a: u64, b: u64) -> String {
    crate::domain::format::grouped(u128::from(a.saturating_sub(b)))
}
