//! The bundled language model: its latency and memory, and what it costs a keeper cycle
//! against the builtin rules.

use super::*;

/// Sequential asks of one market's prompt in the latency run (and as many again, each about a
/// different market).
pub(super) const LLM_ASKS: usize = 20;
/// Fresh markets of the keeper cycle run with the real model, and of the same cycle with the
/// builtin model it is compared with.
pub(super) const LLM_MARKETS: usize = 12;
/// The real model's inference timeout: far above the ~1 s an answer takes here, so only a dead
/// server fails an ask (as in the demo and the tests).
pub(super) const LLM_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(120);

/// The figures of the bundled language model (`real_model`).
pub(super) struct LlmFigures {
    pub(super) label: String,
    pub(super) server_version: String,
    pub(super) threads: u32,
    pub(super) ctx: u32,
    /// From spawn to the first 200 from `/health`.
    pub(super) ready_secs: f64,
    /// What `/props` said (total_slots), and the asks the keeper kept in flight with it.
    pub(super) slots: Option<usize>,
    pub(super) ask_limit: usize,
    /// Wall-clock seconds of each ask of one market's prompt, sorted.
    pub(super) same: Vec<f64>,
    /// Wall-clock seconds of each ask when every ask is about another market than the one
    /// before it, sorted.
    pub(super) varied: Vec<f64>,
    /// The latency runs' answers, counted.
    pub(super) answers: std::collections::BTreeMap<String, usize>,
    /// The server process's VmRSS and VmHWM (KiB) after the latency asks and after the cycle.
    pub(super) rss_after_asks: (u64, u64),
    pub(super) rss_after_cycle: (u64, u64),
    pub(super) real_secs: f64,
    pub(super) builtin_secs: f64,
    pub(super) real_reasons: std::collections::BTreeMap<u8, usize>,
    pub(super) builtin_reasons: std::collections::BTreeMap<u8, usize>,
    /// The machine's 1-minute load average before and after this part (other work on the
    /// machine slows the model most: it is the one CPU-bound step).
    pub(super) load: (Option<f64>, Option<f64>),
    /// The same cycle with a server of one slot per core: continuous batching on, then off
    /// (seconds, the asks kept in flight), or why it was not measured.
    pub(super) slot_runs: Vec<SlotRun>,
}

/// One cycle over [`LLM_MARKETS`] fresh markets with the bundled model served with `slots`
/// request slots.
pub(super) struct SlotRun {
    pub(super) slots: u32,
    pub(super) cont_batching: bool,
    pub(super) result: std::result::Result<(f64, usize), String>,
}

/// [`LLM_MARKETS`] fresh markets on a fresh anvil, one keeper cycle with the bundled model
/// served with `slots` slots (continuous batching `cont`): seconds and asks kept in flight.
async fn slot_cycle(
    anvil_bin: &Path,
    artifacts: &compile::Artifacts,
    root: &Path,
    tmp: &Path,
    slots: u32,
    cont: bool,
) -> Result<(f64, usize)> {
    use crate::domain::config::{InferenceOptions, ResponseFormat};
    use riskgate_kit::llm::{LlmOptions, LlmServer};
    let opts = LlmOptions { parallel: slots, cont_batching: cont, ..LlmOptions::bundled(root)? };
    let server = LlmServer::start(opts).await?;
    let options = InferenceOptions {
        max_tokens: 48,
        temperature: 0.0,
        response_format: ResponseFormat::Object,
        seed: Some(crate::domain::config::BUNDLED_SEED),
    };
    let prune = ["--prune-history".to_string()];
    let run = async {
        let client =
            crate::inference::openai::OpenAiClient::for_bundled(&server, LLM_TIMEOUT, options);
        let model = Model::OpenAi(client.await?);
        let anvil = crate::kit::anvil::Anvil::start(anvil_bin, None, &prune).await?;
        let w = World::deploy_on(anvil, artifacts.clone(), &bench_params()).await?;
        let cycle = async {
            seed_llm_markets(&w, LLM_MARKETS).await?;
            timed_cycle(&w, model, LLM_MARKETS, tmp, "slots cycle").await
        }
        .await;
        w.stop().await;
        let (secs, _, limit) = cycle?;
        Ok((secs, limit))
    }
    .await;
    server.stop().await;
    run
}

/// The 1-minute load average, from /proc/loadavg.
pub(super) fn load_avg() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg").ok()?.split_whitespace().next()?.parse().ok()
}

/// The `p` quantile (nearest rank) of sorted `xs`.
pub(super) fn quantile(xs: &[f64], p: f64) -> f64 {
    let rank = ((p * xs.len() as f64).ceil() as usize).clamp(1, xs.len().max(1));
    xs.get(rank - 1).copied().unwrap_or(f64::NAN)
}

/// VmRSS and VmHWM (KiB) of process `pid`, from /proc/<pid>/status.
pub(super) fn proc_rss(pid: u32) -> Result<(u64, u64)> {
    let path = format!("/proc/{pid}/status");
    let text = std::fs::read_to_string(&path).map_err(io_err(format!("read {path}")))?;
    let field = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .ok_or_else(|| check("server memory", format!("no {key} in {path}")))
    };
    Ok((field("VmRSS:")?, field("VmHWM:")?))
}

/// `n` fresh markets with a book on both sides at several prices (UP ask / UP bid): 0.30/0.25,
/// 0.45/0.40, 0.60/0.55, 0.75/0.70, in turn, and funds for every PASS.
pub(super) async fn seed_llm_markets(w: &World, n: usize) -> Result<Vec<Address>> {
    w.mint(w.deployment.gate, U256::from(1_000_000_000_000u64)).await?;
    let expiry = w.chain_time().await? + DAY_SECS;
    let mut out = Vec::with_capacity(n);
    for i in 0..n as u64 {
        let ask = 300_000 + 150_000 * (i % 4);
        let m = w.create_market(TICK, LOT, w.fillable_min_qty(LOT), expiry).await?;
        w.ask(m, ask, 20_000_000).await?;
        w.bid(m, ask - 50_000, 20_000_000).await?;
        out.push(m);
    }
    Ok(out)
}

/// One keeper cycle over the world's `n` fresh markets with `model`, timed; checks that every
/// market was asked and decided. Returns its seconds, the reasons the gate published, counted,
/// and the asks the keeper kept in flight (`Strategy::ask_limit`).
pub(super) async fn timed_cycle(
    w: &World,
    model: Model,
    n: usize,
    tmp: &Path,
    what: &str,
) -> Result<(f64, std::collections::BTreeMap<u8, usize>, usize)> {
    let mut k =
        w.keeper(Some(tmp.to_path_buf())).model(model).batch_window(super::BOT_WINDOW).build()?;
    let limit = k.strategy().ask_limit();
    let cancel = CancellationToken::new();
    let t = Instant::now();
    let report = k.cycle(None, &cancel).await?;
    let secs = t.elapsed().as_secs_f64();
    let got = (report.asked, report.submitted, report.offchain_failures, report.mined.len());
    if got != (n, n, 0, n) {
        return Err(check(
            what,
            format!("asked, submitted, off-chain, mined {got:?}; want ({n}, {n}, 0, {n})"),
        ));
    }
    let mut reasons = std::collections::BTreeMap::new();
    for s in &report.mined {
        *reasons.entry(s.reason).or_insert(0) += 1;
    }
    Ok((secs, reasons, limit))
}

/// One ask, wall-clocked: its seconds and the answer's text.
pub(super) async fn timed_ask(
    model: &Model,
    (prompt, state): &(crate::inference::Prompt, MarketState),
) -> Result<(f64, String)> {
    let t = Instant::now();
    let reply = model.ask(prompt, state).await?;
    Ok((t.elapsed().as_secs_f64(), reply.text))
}

/// The real model's part, against a running `server`: the latency of one answer (one market's
/// prompt asked [`LLM_ASKS`] times, then as many asks each about another market), the server's
/// memory, and one keeper cycle over [`LLM_MARKETS`] fresh markets on `w` with it. Fills in
/// everything but the builtin cycle.
pub(super) async fn real_model(
    w: &World,
    server: &riskgate_kit::llm::LlmServer,
    opts: &riskgate_kit::llm::LlmOptions,
    tmp: &Path,
) -> Result<LlmFigures> {
    use crate::{
        domain::config::{InferenceOptions, ResponseFormat},
        inference::{
            openai::{OpenAiClient, VERDICTS},
            prompt::{Prompt, ReadAt},
        },
    };
    // As the demo asks it: the JSON-schema constraint, temperature 0, the bundled seed.
    let options = InferenceOptions {
        max_tokens: 48,
        temperature: 0.0,
        response_format: ResponseFormat::Object,
        seed: Some(crate::domain::config::BUNDLED_SEED),
    };
    let model = Model::OpenAi(OpenAiClient::for_bundled(server, LLM_TIMEOUT, options).await?);
    seed_llm_markets(w, LLM_MARKETS).await?;

    // The prompts the keeper would send about these markets now, rendered as the cycle
    // renders them (its follower, its strategy text, the books at the head).
    let mut probe = w.keeper(None).build()?;
    let h = probe.stages().0.follow().await?.head;
    let at = ReadAt { block: h.number, time: h.time };
    let infos = probe.collector().markets();
    if infos.len() != LLM_MARKETS {
        return Err(check("llm prompts", format!("{} markets, want {LLM_MARKETS}", infos.len())));
    }
    let mut asks = Vec::with_capacity(infos.len());
    for info in &infos {
        let state =
            crate::chain::reads::read_market(&w.keeper_rpc, info, h.number).await.map_err(|e| {
                BenchError::Collect {
                    what: format!("book of {}", info.address),
                    source: Box::new(e),
                }
            })?;
        let prompt = Prompt::render(probe.strategy().text(), &state, at)
            .map_err(|e| check("llm prompts", e.to_string()))?;
        asks.push((prompt, state));
    }

    let mut answers = std::collections::BTreeMap::new();
    eprintln!("bench:   {LLM_ASKS} asks of one market's prompt, one at a time");
    let mut same = Vec::with_capacity(LLM_ASKS);
    for _ in 0..LLM_ASKS {
        let (secs, text) = timed_ask(&model, &asks[0]).await?;
        same.push(secs);
        *answers.entry(text).or_insert(0) += 1;
    }
    eprintln!("bench:   {LLM_ASKS} asks, each about another market than the one before");
    let mut varied = Vec::with_capacity(LLM_ASKS);
    for i in 1..=LLM_ASKS {
        let (secs, text) = timed_ask(&model, &asks[i % asks.len()]).await?;
        varied.push(secs);
        *answers.entry(text).or_insert(0) += 1;
    }
    let stray: Vec<&String> = answers.keys().filter(|a| !VERDICTS.contains(&a.as_str())).collect();
    if !stray.is_empty() {
        return Err(check(
            "llm latency",
            format!("answers not one of the three tokens: {stray:?}"),
        ));
    }
    same.sort_by(f64::total_cmp);
    varied.sort_by(f64::total_cmp);
    let rss_after_asks = proc_rss(server.pid())?;

    eprintln!("bench:   keeper cycle over {LLM_MARKETS} markets, the bundled model");
    let slots = model.slots();
    let (real_secs, real_reasons, ask_limit) =
        timed_cycle(w, model, LLM_MARKETS, tmp, "real-model cycle").await?;
    let rss_after_cycle = proc_rss(server.pid())?;
    let pinned = riskgate_kit::llm::bundled_model()?;
    Ok(LlmFigures {
        label: pinned.label,
        server_version: pinned.server_version,
        threads: opts.threads,
        ctx: opts.ctx,
        ready_secs: server.ready_in().as_secs_f64(),
        slots,
        ask_limit,
        same,
        varied,
        answers,
        rss_after_asks,
        rss_after_cycle,
        real_secs,
        builtin_secs: 0.0,
        real_reasons,
        builtin_reasons: Default::default(),
        load: (None, None),
        slot_runs: Vec::new(),
    })
}

/// "0 ×3, 1 ×9": reasons and how many decisions got each.
pub(super) fn reason_counts(r: &std::collections::BTreeMap<u8, usize>) -> String {
    r.iter().map(|(k, v)| format!("{k} ×{v}")).collect::<Vec<_>>().join(", ")
}

/// The bundled language model's figures: the server started from `root`'s toolchain (its
/// default options, as the demo and `--model bundled` start it), [`real_model`] on a fresh
/// world, the server stopped, then the same cycle with the builtin model on another fresh world
/// with the same markets and books.
pub(super) async fn llm_figures(
    anvil_bin: &Path,
    artifacts: &compile::Artifacts,
    root: &Path,
    tmp: &Path,
) -> Result<LlmFigures> {
    use riskgate_kit::llm::{LlmOptions, LlmServer};
    let prune = ["--prune-history".to_string()];
    let load_before = load_avg();
    let opts = LlmOptions::bundled(root)?;
    eprintln!("bench:   starting the bundled model's server (llama.cpp on 127.0.0.1)");
    let server = LlmServer::start(opts.clone()).await?;
    let anvil = crate::kit::anvil::Anvil::start(anvil_bin, None, &prune).await?;
    let w = World::deploy_on(anvil, artifacts.clone(), &bench_params()).await?;
    let real = real_model(&w, &server, &opts, &tmp.join("real")).await;
    w.stop().await;
    server.stop().await;
    let mut f = real?;

    eprintln!("bench:   keeper cycle over {LLM_MARKETS} markets, the builtin model");
    let anvil = crate::kit::anvil::Anvil::start(anvil_bin, None, &prune).await?;
    let w = World::deploy_on(anvil, artifacts.clone(), &bench_params()).await?;
    let builtin = async {
        seed_llm_markets(&w, LLM_MARKETS).await?;
        timed_cycle(&w, Model::Builtin, LLM_MARKETS, &tmp.join("builtin"), "builtin cycle").await
    }
    .await;
    w.stop().await;
    let (secs, reasons, _) = builtin?;
    f.builtin_secs = secs;
    f.builtin_reasons = reasons;
    let cores = crate::inference::openai::core_slots();
    for cont in [true, false] {
        let on = if cont { "on" } else { "off" };
        eprintln!("bench:   keeper cycle over {LLM_MARKETS} markets, {cores} slots, continuous batching {on}");
        let dir = tmp.join(format!("slots-{cores}-{on}"));
        let result = slot_cycle(anvil_bin, artifacts, root, &dir, cores, cont).await;
        let result = result.map_err(|e| crate::error_chain(&e));
        f.slot_runs.push(SlotRun { slots: cores, cont_batching: cont, result });
    }
    f.load = (load_before, load_avg());
    Ok(f)
}

/// The section "The bundled language model" of the report.
pub(super) fn write_llm(md: &mut String, f: &LlmFigures) {
    let mb = |kib: u64| kib as f64 / 1024.0;
    let answers: Vec<String> = f.answers.iter().map(|(a, n)| format!("`{a}` ×{n}")).collect();
    let slots = f.slots.map_or("not reported".to_string(), |s| s.to_string());
    let load = |l: Option<f64>| l.map_or("unknown".to_string(), |l| format!("{l:.2}"));
    let _ = writeln!(md, "## The bundled language model\n");
    let _ = writeln!(md, "{} served by llama.cpp (xllamacpp {}) on 127.0.0.1, started as the demo starts it: {} threads, context {} tokens a slot, `/props` total_slots {slots} (asks the keeper kept in flight, `Strategy::ask_limit`: {}); ready {:.1} s after spawn. Every ask is the prompt the keeper renders for a fresh market (books from 0.30/0.25 to 0.75/0.70, UP ask / UP bid), answered with `--response-format object` (the JSON-schema constraint), temperature 0, seed {}, wall-clocked one at a time. The server's prompt cache keeps the last prompt it processed, so a prompt asked again costs little more than the answer's tokens; a cycle's prompts are each new to it but for the shared system prompt, as in the second series.\n", f.label, f.server_version, f.threads, f.ctx, f.ask_limit, f.ready_secs, crate::domain::config::BUNDLED_SEED);
    let _ = writeln!(md, "| measurement | value |\n| --- | ---: |");
    let _ = writeln!(
        md,
        "| one answer, one market's prompt asked {} times in a row: median / p95 | {:.3} s / {:.3} s |",
        f.same.len(),
        quantile(&f.same, 0.5),
        quantile(&f.same, 0.95)
    );
    let _ = writeln!(
        md,
        "| one answer, {} asks each about another market than the one before: median / p95 | {:.3} s / {:.3} s |",
        f.varied.len(),
        quantile(&f.varied, 0.5),
        quantile(&f.varied, 0.95)
    );
    let _ = writeln!(
        md,
        "| asks answered (all one of the three tokens: {}) | {} |",
        answers.join(", "),
        f.same.len() + f.varied.len()
    );
    let _ = writeln!(
        md,
        "| server RSS after the asks, current (VmRSS) / peak (VmHWM) | {:.1} MB / {:.1} MB |",
        mb(f.rss_after_asks.0),
        mb(f.rss_after_asks.1)
    );
    let _ = writeln!(
        md,
        "| server RSS after the cycle, current (VmRSS) / peak (VmHWM) | {:.1} MB / {:.1} MB |",
        mb(f.rss_after_cycle.0),
        mb(f.rss_after_cycle.1)
    );
    let _ = writeln!(
        md,
        "| keeper cycle over {LLM_MARKETS} fresh markets, the bundled model (reasons {}) | {:.3} s |",
        reason_counts(&f.real_reasons),
        f.real_secs
    );
    let _ = writeln!(
        md,
        "| the same cycle over the same markets and books on a fresh anvil, the builtin model (reasons {}) | {:.3} s |",
        reason_counts(&f.builtin_reasons),
        f.builtin_secs
    );
    let _ = writeln!(
        md,
        "| ratio bundled/builtin: what inference costs the cycle | {:.1}× |",
        f.real_secs / f.builtin_secs
    );
    let per_sec = |secs: f64| LLM_MARKETS as f64 / secs;
    let _ = writeln!(md, "\nParallel asks: the same cycle over {LLM_MARKETS} fresh markets with the server started with one request slot per core (`keeper run --model bundled --model-slots N`; it starts one slot unless told otherwise, the faster here, and the demo keeps one, for a record that does not depend on timing), continuous batching (llama.cpp decoding the slots' requests together) on and off:\n");
    let _ = writeln!(md, "| server | asks in flight | cycle s | answers/s | ÷ one slot |\n| --- | ---: | ---: | ---: | ---: |");
    let _ = writeln!(
        md,
        "| 1 slot | {} | {:.3} | {:.2} | 1.00 |",
        f.ask_limit,
        f.real_secs,
        per_sec(f.real_secs)
    );
    let mut best = (1u32, true, f.real_secs);
    for r in &f.slot_runs {
        let on = if r.cont_batching { "on" } else { "off" };
        match &r.result {
            Ok((secs, limit)) => {
                if *secs < best.2 {
                    best = (r.slots, r.cont_batching, *secs);
                }
                let _ = writeln!(
                    md,
                    "| {} slots, continuous batching {on} | {limit} | {secs:.3} | {:.2} | {:.2} |",
                    r.slots,
                    per_sec(*secs),
                    f.real_secs / secs
                );
            }
            Err(e) => {
                let _ = writeln!(
                    md,
                    "| {} slots, continuous batching {on} | | not measured: {e} | | |",
                    r.slots
                );
            }
        }
    }
    let _ = writeln!(
        md,
        "\nFastest here: {} slot(s), continuous batching {} ({:.2} answers/s).",
        best.0,
        if best.1 { "on" } else { "off" },
        per_sec(best.2)
    );
    let _ = writeln!(md, "\nRSS is the server process's (Python running llama.cpp in-process), from /proc/<pid>/status. The machine's 1-minute load average was {} before this part and {} after it ({} cores): other work on the machine slows the model, the one CPU-bound step, most. The 135M-parameter, 4-bit model is bundled to prove the path end to end (a real model's answer, constrained to the three tokens, reaching the gate offline on any machine), not to trade well: these figures are what that path costs here, and a model worth trading with would answer slower and hold more memory.\n", load(f.load.0), load(f.load.1), std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1));
}
