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

#[derive(Debug, Clone, Default)]
pub struct FloorFigures {
    pub decisions: u64,
    pub start_secs: f64,
    /// Median and slowest, milliseconds.
    pub api_ms: (f64, f64),
    pub page_ms: (f64, f64),
    pub page_bytes: usize,
    /// In the browser: navigation start to the load event (median, slowest), and to the first
    /// response byte (median).
    pub browser_ms: Option<((f64, f64), f64)>,
    pub browser_error: Option<String>,
    /// Block to page (median, slowest), ms; None with the browser error.
    pub block_to_page_ms: Option<(f64, f64)>,
    pub rss_kib: u64,
    pub hwm_kib: u64,
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

/// Serves `results` of `w`'s gate and measures it; `decide` mines one block holding one new
/// decision.
pub async fn floor_figures<F, Fut>(
    w: &World,
    root: &Path,
    results: &Path,
    mut decide: F,
) -> Result<FloorFigures, String>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<(), String>>,
{
    let exe = std::env::current_exe().map_err(|e| format!("the keeper's own executable: {e}"))?;
    let log = std::fs::File::create(results.with_extension("serve.log"))
        .map_err(|e| format!("the floor's log: {e}"))?;
    let t0 = Instant::now();
    let mut child = std::process::Command::new(&exe)
        .arg("--root")
        .arg(root)
        .arg("serve")
        .args(["--rpc-url", w.anvil.url.as_str()])
        .args(["--gate", &w.deployment.gate.to_string()])
        .args(["--from-block", &w.deployment.deploy_block.to_string()])
        .arg("--results")
        .arg(results)
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
    .ok_or("keeper serve printed no address (see its .serve.log)")?;
    let start_secs = t0.elapsed().as_secs_f64();
    let out = measure(&url, pid, start_secs, &mut decide).await;
    let _ = child.kill();
    let _ = child.wait();
    out
}

async fn measure<F, Fut>(
    url: &str,
    pid: u32,
    start_secs: f64,
    decide: &mut F,
) -> Result<FloorFigures, String>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<(), String>>,
{
    let http = reqwest::Client::builder().timeout(HANG).build().map_err(|e| e.to_string())?;
    let status: serde_json::Value = http
        .get(format!("{url}/api/status"))
        .send()
        .await
        .map_err(|e| e.to_string())?
        .json()
        .await
        .map_err(|e| e.to_string())?;
    let decisions = status["decisions"].as_u64().unwrap_or(0);
    let mut api = Vec::new();
    let mut page = Vec::new();
    let mut page_bytes = 0;
    for _ in 0..SAMPLES {
        for (path, into) in [("/api/decisions", &mut api), ("/", &mut page)] {
            let t = Instant::now();
            let body = http
                .get(format!("{url}{path}"))
                .send()
                .await
                .map_err(|e| format!("GET {path}: {e}"))?
                .bytes()
                .await
                .map_err(|e| format!("GET {path}: {e}"))?;
            into.push(t.elapsed().as_secs_f64() * 1e3);
            if path == "/" {
                page_bytes = body.len();
            }
        }
    }
    let mut f = FloorFigures {
        decisions,
        start_secs,
        api_ms: median_max(api),
        page_ms: median_max(page),
        page_bytes,
        ..Default::default()
    };
    match browser(url, decide).await {
        Ok((load, ttfb, live)) => {
            f.browser_ms = Some((load, ttfb));
            f.block_to_page_ms = Some(live);
        }
        Err(e) => f.browser_error = Some(e),
    }
    f.rss_kib = vm(pid, "VmRSS:");
    f.hwm_kib = vm(pid, "VmHWM:");
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

/// The floor's section of results/bench/keeper.md.
pub fn write_floor(md: &mut String, f: &FloorFigures) {
    use std::fmt::Write;
    let _ = writeln!(md, "## The floor at {} decisions\n", f.decisions);
    let _ = writeln!(md, "A `keeper serve` child process following the record above (the same generated decisions; how they were made is said there), polling for a new head every {POLL_MS} ms. Timings are the median of {SAMPLES} (slowest in brackets), taken one after another on this machine.\n");
    let _ = writeln!(md, "| figure | value |\n| --- | ---: |");
    let _ = writeln!(md, "| start: checks, fixed facts, code check, every log read and decoded, until it listens | {:.2} s |", f.start_secs);
    let _ = writeln!(md, "| the feed's first page on the server, `GET /api/decisions` (50 rows, JSON), request to last byte | {:.1} ms ({:.1}) |", f.api_ms.0, f.api_ms.1);
    let _ = writeln!(md, "| the feed's first page on the server, `GET /` (the whole HTML page, {} KB) | {:.1} ms ({:.1}) |", f.page_bytes / 1024, f.page_ms.0, f.page_ms.1);
    match (&f.browser_ms, &f.block_to_page_ms) {
        (Some((load, ttfb)), Some(live)) => {
            let _ = writeln!(md, "| in headless Chromium: navigation start to the load event (first response byte at {ttfb:.1} ms) | {:.1} ms ({:.1}) |", load.0, load.1);
            let _ = writeln!(md, "| block to page: `evm_mine` of a block with one new decision returns, to the row counted on the open page (server-sent event) | {:.0} ms ({:.0}) |", live.0, live.1);
        }
        _ => {
            let _ = writeln!(
                md,
                "| in the browser, and block to page | not measured: {} |",
                f.browser_error.as_deref().unwrap_or("?")
            );
        }
    }
    let _ = writeln!(
        md,
        "| memory of `keeper serve` at the end: VmRSS (VmHWM, its peak) | {} MB ({} MB) |\n",
        f.rss_kib / 1024,
        f.hwm_kib / 1024
    );
    let ok = f.block_to_page_ms.is_some_and(|l| l.1 <= 2000.0);
    let _ = writeln!(md, "- A new decision shows on an open page within 2 s of its block (issue 18, on a local chain): {}.", if ok { "meets (slowest of the samples)" } else { "MISSES" });
    let _ = writeln!(md, "- Each new head makes the floor read the new blocks' logs and decode the whole record again in memory, and the snapshot holds every row: its memory grows with the record, and so does the work per new block.\n");
}
