//! The floor's pages, rendered on the server from a [`Snapshot`]: every piece of text that came
//! from outside (a model's answer, a market's question, a label a server or an operator chose)
//! goes through [`text`], which escapes HTML and shows bidirectional-override, zero-width and
//! control characters as visible `⟨U+202E⟩` marks, and long text is cut with its length and
//! hash. The pages hold no inline script or style: the one script, `/assets/floor.js`, only
//! applies the live updates, building nodes with `textContent`.

use super::{
    track::Snapshot,
    view::{self, DecisionView, FeedQuery, Page},
};
use crate::{chain::reads::MarketState, domain::format::utc_date};
use std::fmt::Write;

/// The most characters of outside text shown in a table cell.
pub const CELL_CHARS: usize = 80;
/// The most characters of outside text shown on a decision's own page.
pub const PAGE_CHARS: usize = 2_000;

pub use crate::domain::format::markup as esc;

/// Outside text, escaped and cut at `max` characters; a cut one says how long it was and its
/// keccak256, so two answers that start alike still tell apart.
pub fn text(s: &str, max: usize) -> String {
    let count = s.chars().count();
    if count <= max {
        return esc(s);
    }
    let head: String = s.chars().take(max).collect();
    let hash = alloy::primitives::keccak256(s.as_bytes());
    format!(
        "{}<span class=\"cut\">… ({} bytes, keccak256 {})</span>",
        esc(&head),
        s.len(),
        esc(&hash.to_string()[..18])
    )
}

/// A model's answer as a JSON string without its quotes: a line break shows as `\n`, so the
/// answer reads exactly as submitted.
pub fn json_text(s: &str) -> String {
    let j = serde_json::to_string(s).unwrap_or_default();
    j[1..j.len() - 1].to_string()
}

/// Chain time as `YYYY-MM-DD HH:MM:SS UTC`.
pub fn time(t: u64) -> String {
    match utc_date(t) {
        Some(d) => format!("{d}:{:02} UTC", t % 60),
        None => format!("{t}"),
    }
}

fn short(a: &str) -> String {
    if a.len() > 12 {
        format!("{}…{}", &a[..6], &a[a.len() - 4..])
    } else {
        a.to_string()
    }
}

/// A whole page around `body`.
pub fn layout(title: &str, s: &Snapshot, body: &str) -> String {
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{} · riskgate floor</title><link rel=\"stylesheet\" href=\"/assets/floor.css\">\
         <script src=\"/assets/floor.js\" defer></script></head><body>\
         <header><a class=\"brand\" href=\"/\">riskgate floor</a><nav><a href=\"/\">feed</a>\
         <a href=\"/models\">models</a><a href=\"/charts\">charts</a>\
         <a href=\"/api/gate\">api</a></nav></header>{}<main>{body}</main></body></html>\n",
        esc(title),
        strip(s)
    )
}

/// The status strip; its cells carry `data-k` so the live script can update them.
pub fn strip(s: &Snapshot) -> String {
    let st = &s.status;
    let last = st.last_decision_time.map(time).unwrap_or_else(|| "none yet".into());
    let cell = |k: &str, label: &str, v: String| {
        format!("<div class=\"cell\"><span class=\"k\">{label}</span><span class=\"v\" data-k=\"{k}\">{}</span></div>", esc(&v))
    };
    [
        "<section class=\"strip\" id=\"status\" aria-label=\"status\">".to_string(),
        cell("chain_id", "chain", st.chain_id.to_string()),
        cell("head", "head block", st.head.to_string()),
        cell("confirmed", "record to", format!("{} ({} conf.)", st.confirmed, st.confirmations)),
        cell("gate", "gate", short(&st.gate)),
        cell("mode", "following", st.mode.clone()),
        cell("decisions", "decisions", st.decisions.to_string()),
        cell("open_positions", "open positions", st.open_positions.to_string()),
        cell("last_decision", "last decision", last),
        "<div class=\"cell\"><span class=\"k\">live</span><span class=\"v\" id=\"live\">off</span></div></section>".to_string(),
    ]
    .concat()
}

/// The gate card.
pub fn gate_card(s: &Snapshot) -> String {
    let c = &s.card;
    let b = &c.bounds;
    let mut h = String::from("<section class=\"card\" id=\"gate\"><h2>Gate</h2><dl>");
    let mut row = |k: &str, v: String| {
        let _ = write!(h, "<dt>{}</dt><dd>{v}</dd>", esc(k));
    };
    row("gate", format!("<code>{}</code> on chain {}", esc(&c.gate), c.chain_id));
    row(
        "code on chain",
        if c.code_matches {
            format!(
                "<span class=\"ok\">matches the source</span> <small>{}</small>",
                esc(&c.code_check)
            )
        } else {
            format!("<span class=\"bad\">{}</span>", esc(&c.code_check))
        },
    );
    row("owner", format!("<code>{}</code>", esc(c.owner.as_deref().unwrap_or("unreadable"))));
    row("keeper", format!("<code>{}</code>", esc(&c.keeper)));
    row("collateral", format!("<code>{}</code> ({})", esc(&c.collateral), esc(&c.symbol)));
    row("paramsHash", format!("<code>{}</code>", esc(&c.params_hash)));
    row("mode", esc(&c.mode));
    if !c.attestors.is_empty() {
        row("attestors", list(&c.attestors));
    }
    row(
        "price band",
        format!("{} to {} (probability of the side bought)", esc(&b.min_price), esc(&b.max_price)),
    );
    row("max size", format!("{} per order", esc(&b.max_size)));
    row(
        "positions",
        format!(
            "{} open of {} allowed; notional {} of {}",
            c.open_positions,
            b.max_concurrent,
            esc(&c.open_notional_shown),
            esc(&b.max_notional)
        ),
    );
    row("horizon", format!("expiry {}s to {}s ahead", b.min_headroom_s, b.max_horizon_s));
    row("write-off grace", format!("{}s after expiry", b.write_off_grace_s));
    row("min fill", format!("{} bps of the order", b.min_fill_bps));
    row("collateral held", esc(&c.collateral_held_shown));
    let pct = (c.drawdown_fraction * 100.0).clamp(0.0, 100.0);
    row(
        "drawdown",
        format!(
            "<div class=\"bar\" role=\"img\" aria-label=\"drawdown {pct:.1}% of its bound\"><div class=\"fill w{}\"></div></div>\
             {} used of {} ({pct:.1}%); H = {}",
            (pct / 5.0).round() as u32 * 5,
            esc(&c.drawdown_used_shown),
            esc(&b.max_drawdown),
            esc(&view::amount(&c.high_water_mark, &c.symbol)),
        ),
    );
    row("trusted resolvers", list(&c.trusted_resolvers));
    row("trusted creators", list(&c.trusted_creators));
    h.push_str("</dl></section>");
    h
}

fn list(items: &[String]) -> String {
    if items.is_empty() {
        return "none".into();
    }
    items.iter().map(|a| format!("<code>{}</code>", esc(a))).collect::<Vec<_>>().join(" ")
}

/// The reason cell: code, label, and the failing rules.
fn reason_cell(d: &DecisionView) -> String {
    let mut out =
        format!("<span class=\"reason r{}\">{} · {}</span>", d.reason, d.reason, esc(&d.label));
    if !d.failed_rules.is_empty() && d.failed_rules != [d.reason] {
        let rules: Vec<String> = d
            .failed_rules
            .iter()
            .zip(&d.failed_labels)
            .map(|(r, l)| format!("{r} {}", esc(l)))
            .collect();
        let _ = write!(out, "<br><small>fails: {}</small>", rules.join("; "));
    }
    out
}

fn pnl_cell(d: &DecisionView, symbol: &str) -> String {
    match (&d.settlement, &d.pnl) {
        (Some(s), Some(p)) => format!(
            "{} <small>({} won)</small>",
            esc(&view::amount(p, symbol)),
            if s.up_won { "UP" } else { "DOWN" }
        ),
        (None, Some(p)) => {
            format!("{} <small>(written off)</small>", esc(&view::amount(p, symbol)))
        }
        _ if d.filled != "0" => "open".into(),
        _ => String::new(),
    }
}

/// One feed row.
pub fn feed_row(d: &DecisionView, symbol: &str) -> String {
    let href = format!("/decision/{}/{}", d.block, d.log_index);
    let raw = match &d.raw {
        Some(r) => text(&json_text(r), CELL_CHARS),
        None => format!("<small>({} bytes, not in the record)</small>", d.raw_length),
    };
    let market = match &d.question {
        Some(q) => format!(
            "<a href=\"/market/{m}\"><code>{}</code></a><br><small>{}</small>",
            esc(&short(&d.market)),
            text(q, CELL_CHARS),
            m = esc(&d.market)
        ),
        None => format!(
            "<a href=\"/market/{m}\"><code>{}</code></a>",
            esc(&short(&d.market)),
            m = esc(&d.market)
        ),
    };
    let price = match (&d.limit, &d.average_price) {
        (Some(l), Some(a)) => format!("limit {} · paid {}", esc(l), esc(a)),
        (Some(l), None) => format!("limit {}", esc(l)),
        _ => String::new(),
    };
    let size = if d.side.is_some() && d.quantity != "0" {
        format!(
            "{} {} tokens · cost ≤ {} · filled {} for {}",
            esc(&view::tokens(&d.quantity)),
            d.side.unwrap_or(""),
            esc(&d.cost_shown),
            esc(&view::tokens(&d.filled)),
            esc(&d.spent_shown)
        )
    } else {
        String::new()
    };
    format!(
        "<tr data-block=\"{}\"><td><a href=\"{href}\">{}</a><br><small>block {}</small></td><td>{market}</td>\
         <td class=\"raw\"><code>{raw}</code></td><td><b>{}</b></td><td>{}</td><td>{price}</td><td>{size}</td>\
         <td>{}</td><td><small>{}</small></td></tr>",
        d.block,
        esc(&time(d.time)),
        d.block,
        d.verdict,
        reason_cell(d),
        pnl_cell(d, symbol),
        text(d.model.as_deref().unwrap_or(""), 60),
    )
}

/// The feed table with its filter form and pager.
pub fn feed(s: &Snapshot, q: &FeedQuery, page: &Page) -> String {
    let mut h = String::from(
        "<section id=\"feed\"><h2>Feed</h2><form method=\"get\" action=\"/\" class=\"filters\">",
    );
    let mut select = |name: &str,
                      any: &str,
                      options: Vec<(String, String)>,
                      chosen: Option<String>| {
        let _ =
            write!(h, "<label>{name} <select name=\"{name}\"><option value=\"\">{any}</option>");
        for (v, label) in options {
            let sel = if chosen.as_deref() == Some(v.as_str()) { " selected" } else { "" };
            let _ = write!(h, "<option value=\"{}\"{sel}>{}</option>", esc(&v), text(&label, 60));
        }
        h.push_str("</select></label>");
    };
    let reasons = s
        .facts
        .labels
        .iter()
        .enumerate()
        .filter(|(i, _)| s.summary.reasons.contains_key(&(*i as u8)))
        .map(|(i, l)| (i.to_string(), format!("{i} · {l}")))
        .collect();
    select("reason", "any reason", reasons, q.reason.map(|r| r.to_string()));
    let verdicts = ["BUY_UP", "BUY_DOWN", "ABSTAIN", "INVALID"]
        .map(|v| (v.to_string(), v.to_string()))
        .to_vec();
    select(
        "verdict",
        "any verdict",
        verdicts,
        q.verdict.map(|v| view::verdict_name(v).to_string()),
    );
    select(
        "model",
        "any model",
        s.models.iter().map(|m| (m.clone(), m.clone())).collect(),
        q.model.clone(),
    );
    let scenarios = s.summary.scenarios.keys().map(|k| (k.clone(), k.clone())).collect();
    select("scenario", "any scenario", scenarios, q.scenario.clone());
    let _ = write!(
        h,
        "<label>market <input name=\"market\" size=\"44\" value=\"{}\" placeholder=\"0x…\"></label>\
         <input type=\"hidden\" name=\"per_page\" value=\"{}\"><button type=\"submit\">filter</button> <a href=\"/\">clear</a></form>",
        esc(&q.market.map(|m| m.to_checksum(None)).unwrap_or_default()),
        q.per_page
    );
    let live = q.page == 1;
    let _ = write!(
        h,
        "<p class=\"count\"><span id=\"total\">{}</span> decisions match · page {} of {}</p>\
         <table class=\"feed\" id=\"rows\" data-live=\"{}\" data-reason=\"{}\" data-verdict=\"{}\" data-market=\"{}\" data-model=\"{}\" data-scenario=\"{}\" data-per-page=\"{}\">\
         <thead><tr><th>chain time</th><th>market</th><th>raw answer</th><th>verdict</th><th>reason</th><th>price</th><th>order</th><th>settled · P&amp;L</th><th>model</th></tr></thead><tbody>",
        page.total,
        page.page,
        page.pages.max(1),
        live,
        q.reason.map(|r| r.to_string()).unwrap_or_default(),
        q.verdict.map(view::verdict_name).unwrap_or(""),
        esc(&q.market.map(|m| m.to_checksum(None)).unwrap_or_default()),
        esc(q.model.as_deref().unwrap_or("")),
        esc(q.scenario.as_deref().unwrap_or("")),
        q.per_page,
    );
    for d in &page.decisions {
        h.push_str(&feed_row(d, &s.symbol));
    }
    h.push_str("</tbody></table><nav class=\"pager\">");
    if page.page > 1 {
        let _ = write!(h, "<a rel=\"prev\" href=\"/{}\">← newer</a>", esc(&q.link(page.page - 1)));
    }
    if page.page < page.pages {
        let _ = write!(h, "<a rel=\"next\" href=\"/{}\">older →</a>", esc(&q.link(page.page + 1)));
    }
    h.push_str("</nav></section>");
    h
}

/// The floor: status, gate card, feed.
pub fn floor(s: &Snapshot, q: &FeedQuery, page: &Page) -> String {
    let body = format!(
        "<div class=\"top\">{}<section class=\"card\"><h2>Record</h2>{}</section></div>{}",
        gate_card(s),
        record_card(s),
        feed(s, q, page)
    );
    layout("feed", s, &body)
}

/// Headline numbers of the record.
fn record_card(s: &Snapshot) -> String {
    let m = &s.summary;
    let realised = view::amount(&m.realised_total.to_string(), &s.symbol);
    let cal = s.summary.calibration.view();
    let won: u64 = cal.buckets.iter().map(|b| b.won).sum();
    format!(
        "<dl><dt>decisions</dt><dd>{} ({} passed, {} refused)</dd><dt>off-chain failures</dt><dd>{}</dd>\
         <dt>realised P&amp;L</dt><dd>{}</dd><dt>settled fills</dt><dd>{} ({} won{})</dd>\
         <dt>peak drawdown read</dt><dd>{}</dd></dl>\
         <a href=\"/charts\"><img class=\"chart small\" src=\"/chart/pnl.svg\" alt=\"realised and marked-to-market P&amp;L against chain time\"></a>\
         <p><a href=\"/charts\">charts</a> · <a href=\"/models\">models</a></p>",
        m.decisions,
        m.passes,
        m.decisions - m.passes,
        m.offchain,
        esc(&realised),
        cal.settled,
        won,
        cal.brier.map(|b| format!(", Brier {b:.3}")).unwrap_or_default(),
        esc(&view::amount(&m.peak_drawdown.to_string(), &s.symbol)),
    )
}

/// One decision, from read to settlement.
pub fn decision(
    s: &Snapshot,
    d: &crate::domain::decision::DecisionRow,
    question: Option<&str>,
    check: &Result<crate::commands::report::RowCheck, String>,
) -> String {
    let v = DecisionView::new(d, &s.facts.labels, question, &s.symbol);
    let mut h = format!(
        "<h1>Decision at block {} · log {}</h1><section class=\"card\"><dl>",
        d.block, d.log_index
    );
    let mut row = |k: &str, val: String| {
        let _ = write!(h, "<dt>{}</dt><dd>{val}</dd>", esc(k));
    };
    row("chain time", esc(&time(d.time)));
    let gas = match &d.gas {
        Some(g) => format!(
            " · gas {} at {} · fee {} (native coin)",
            g.gas_used,
            esc(&view::gas_price(g.gas_price.parse().unwrap_or(0))),
            esc(&view::native(g.fee()))
        ),
        None => " · gas not known".into(),
    };
    row("transaction", format!("<code>{}</code>{gas}", esc(&d.tx)));
    row("market", format!("<a href=\"/market/{m}\"><code>{m}</code></a>", m = esc(&d.market)));
    if let Some(q) = &v.question {
        row("question", text(q, PAGE_CHARS));
    }
    row(
        "raw answer",
        match &d.raw {
            Some(r) => format!(
                "<pre class=\"raw\">{}</pre><small>JSON-escaped · {} bytes · keccak256 {}</small>",
                text(&json_text(r), PAGE_CHARS),
                d.raw_length,
                esc(&d.raw_hash)
            ),
            None => format!(
                "not in the record ({} bytes · keccak256 {})",
                d.raw_length,
                esc(&d.raw_hash)
            ),
        },
    );
    row("verdict", format!("<b>{}</b>", v.verdict));
    if let Some(vote) = &d.vote {
        // Each attestor's answer: its signer, the verdict the gate's parser read, and its head
        // (hostile text: escaped, control characters made visible).
        let mut cell = format!("<b>{}</b><ol class=\"vote\">", esc(&vote.counts_line()));
        for a in &vote.answers {
            let _ = write!(
                cell,
                "<li><code>{}</code> {} · <span class=\"raw\">{}</span> <small>{} bytes · keccak256 {}</small></li>",
                esc(&a.signer),
                crate::record::figures::verdict_name(a.verdict()),
                text(&json_text(&a.head), PAGE_CHARS),
                a.length,
                esc(&a.hash)
            );
        }
        cell.push_str("</ol>");
        // A consensus gate's vote is its validators' (issue 36), an attested gate's its
        // attestors'.
        let by = if s.facts.verdict_source.is_some() { "validators" } else { "attested" };
        row(&format!("vote ({by})"), cell);
    }
    row("gate", reason_cell(&v));
    if let Some(b) = &d.book {
        row(
            "snapshot read",
            format!(
                "best bid {} · best ask {} · tick {} · lot {} · min qty {} · expiry {} · now {} · finalized {} · \
                 open {} · notional {} · available {} · H {} · resolver trusted {} · creator trusted {} · held side {}",
                esc(&view::prob(&b.best_bid)), esc(&view::prob(&b.best_ask)), esc(&b.tick_size), esc(&b.lot_size),
                esc(&b.min_quantity), esc(&time(b.expiry)), esc(&time(b.now)), b.finalized, b.open_positions,
                esc(&view::amount(&b.open_notional, &s.symbol)), esc(&view::amount(&b.collateral_available, &s.symbol)),
                esc(&view::amount(&b.high_water_mark, &s.symbol)), b.resolver_trusted, b.creator_trusted,
                match b.held_side { 1 => "UP", 2 => "DOWN", _ => "none" }
            ),
        );
    }
    if let Some(q) = &d.quote {
        row(
            "quote",
            format!(
                "max price paid {} · deadline {}",
                esc(&view::prob(&q.max_price_paid)),
                esc(&time(q.deadline))
            ),
        );
    }
    if v.side.is_some() {
        row(
            "order",
            format!(
                "{} {} tokens at limit {} (best level {}) · cost ≤ {} · filled {} for {}{}",
                esc(&view::tokens(&d.quantity)),
                v.side.unwrap_or(""),
                esc(v.limit.as_deref().unwrap_or("-")),
                esc(v.best_level_price.as_deref().unwrap_or("-")),
                esc(&v.cost_shown),
                esc(&view::tokens(&d.filled)),
                esc(&v.spent_shown),
                v.average_price
                    .as_ref()
                    .map(|a| format!(" · average {}", esc(a)))
                    .unwrap_or_default()
            ),
        );
    }
    if let Some(f) = &d.attempted_fill {
        row(
            "fill undone",
            format!(
                "the market offered {} tokens for {}; the gate undid it",
                esc(&view::tokens(&f.filled)),
                esc(&view::amount(&f.spent, &s.symbol))
            ),
        );
    }
    if let Some(st) = &d.settlement {
        row(
            "settled",
            format!(
                "block {} · {} won · payout {} · position P&amp;L {}",
                st.block,
                if st.up_won { "UP" } else { "DOWN" },
                esc(&view::amount(&st.payout, &s.symbol)),
                esc(&view::amount(&st.pnl, &s.symbol))
            ),
        );
    }
    if let Some(w) = &d.write_off {
        row(
            "written off",
            format!("block {} · notional {}", w.block, esc(&view::amount(&w.notional, &s.symbol))),
        );
    }
    if let Some(p) = &v.pnl {
        row("this row's P&L", esc(&view::amount(p, &s.symbol)));
    }
    row(
        "prompt hash",
        format!("<code>{}</code> (read at block {})", esc(&d.prompt_hash), d.read_block),
    );
    row(
        "model",
        format!(
            "{} · {} · {}",
            text(d.note.provider.as_deref().unwrap_or("-"), 80),
            text(d.note.model.as_deref().unwrap_or("-"), 80),
            text(d.note.model_kind.as_deref().unwrap_or(""), 80)
        ),
    );
    if let Some(sc) = &d.note.scenario {
        row("scenario", text(sc, 200));
    }
    for (name, value) in checked(check, s.facts.verdict_source.is_some()) {
        row(name, value);
    }
    h.push_str("</dl></section>");
    if let Some(p) = &d.note.prompt {
        let _ = write!(
            h,
            "<section class=\"card\"><h2>Prompt (user part, as sent)</h2><p><small>re-derived from chain by \
             <code>keeper report --check-prompts</code>: its keccak256 with the system text is the prompt hash above</small></p><pre>{}</pre></section>",
            text(p, 20_000)
        );
    }
    layout("decision", s, &h)
}

/// What `keeper report --check` found for this row, read again from the node when the page
/// was asked for: one (name, HTML) line per check, each saying ok or what differs.
fn checked(
    check: &Result<crate::commands::report::RowCheck, String>,
    consensus: bool,
) -> Vec<(&'static str, String)> {
    const OK: &str = "<span class=\"ok\">ok</span>";
    let bad = |t: &str| format!("<span class=\"bad\">{}</span>", text(t, PAGE_CHARS));
    let c = match check {
        Ok(c) => c,
        Err(why) => return vec![("checked", bad(&format!("could not be checked: {why}")))],
    };
    let mut out = Vec::new();
    let events = if c.event_problems.is_empty() {
        format!(
            "{OK}: the row and its closing rows match their Decision, Settled and WrittenOff \
             logs field by field, as <code>keeper report --check</code> compares them{}",
            if c.not_yet_appended > 0 {
                format!(" ({} closing row(s) on chain not appended yet)", c.not_yet_appended)
            } else {
                String::new()
            }
        )
    } else {
        c.event_problems.iter().map(|p| bad(p)).collect::<Vec<_>>().join("<br>")
    };
    out.push(("event fields against the row", events));
    out.push((
        "answer against the log",
        match c.answer_matches {
            Some(true) => {
                format!("{OK}: its length and keccak256 are the ones the Decision logged")
            }
            Some(false) => bad("the published answer is not the one the Decision logged"),
            None => "only the logged head is published".into(),
        },
    ));
    out.push((
        "prompt re-derived from chain",
        match &c.prompt {
            Ok(()) if consensus => format!(
                "{OK}: re-rendered from the market's logs after the verdict source's system \
                 text, it is the prompt the source built on chain (its Asked log) and hashes to \
                 the prompt hash above"
            ),
            Ok(()) => format!(
                "{OK}: re-rendered from the market's logs and the published strategy text, it \
                 hashes to the prompt hash above"
            ),
            Err(why) => bad(why),
        },
    ));
    if let Some(v) = &c.consensus {
        out.push((
            "vote against the verdict source",
            match v {
                Ok(()) => format!(
                    "{OK}: the source answered this request (its Answered log names this \
                     reason), asked about this market at this read block with this prompt hash; \
                     each answer shown whole hashes to its keccak256; the counts and the reason \
                     follow from the answers, the platform's status and the source's threshold"
                ),
                Err(why) => bad(why),
            },
        ));
    }
    if let Some(st) = &c.settlement {
        out.push((
            "settlement against the market",
            match st {
                Ok(()) => {
                    format!("{OK}: the market is final with the outcome the settlement names")
                }
                Err(why) => bad(why),
            },
        ));
    }
    out
}

/// A market: its question, the book now, and every decision on it.
pub fn market(
    s: &Snapshot,
    address: &str,
    info: Option<&crate::chain::reads::MarketInfo>,
    book: Option<&MarketState>,
    rows: &Page,
) -> String {
    let mut h =
        format!("<h1>Market <code>{}</code></h1><section class=\"card\"><dl>", esc(address));
    if let Some(m) = info {
        let q = match m.question.text() {
            Some(t) => text(t, PAGE_CHARS),
            None => "<span class=\"bad\">unreadable</span>".into(),
        };
        let now = s.status.head_time;
        let left = m.expiry.saturating_sub(now);
        let _ = write!(
            h,
            "<dt>question</dt><dd>{q}</dd><dt>expiry</dt><dd>{} ({})</dd><dt>resolver</dt><dd><code>{}</code>{}</dd>\
             <dt>creator</dt><dd><code>{}</code>{}</dd><dt>grid</dt><dd>tick {} · lot {} · min qty {}</dd>",
            esc(&time(m.expiry)),
            if left == 0 { "expired".to_string() } else { format!("in {}h {:02}m {:02}s", left / 3600, left % 3600 / 60, left % 60) },
            esc(&m.resolver.to_checksum(None)),
            if s.facts.trusted_resolvers.contains(&m.resolver) { " (trusted)" } else { " (not trusted)" },
            esc(&m.creator.to_checksum(None)),
            if s.facts.trusted_creators.contains(&m.creator) { " (trusted)" } else { " (not trusted)" },
            m.tick_size, m.lot_size, m.min_quantity
        );
    }
    h.push_str("</dl></section>");
    match book {
        Some(b) => {
            let _ = write!(h, "<section class=\"card\"><h2>Book now (UP prices, block {})</h2><table class=\"book\"><thead><tr><th>bid qty</th><th>bid</th><th>ask</th><th>ask qty</th></tr></thead><tbody>", s.status.head);
            for i in 0..b.bids.len().max(b.asks.len()) {
                let side = |l: Option<&(alloy::primitives::U256, alloy::primitives::U256)>| match l
                {
                    Some((p, q)) => (view::prob(&p.to_string()), q.to_string()),
                    None => (String::new(), String::new()),
                };
                let (bp, bq) = side(b.bids.get(i));
                let (ap, aq) = side(b.asks.get(i));
                let _ = write!(
                    h,
                    "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                    esc(&bq),
                    esc(&bp),
                    esc(&ap),
                    esc(&aq)
                );
            }
            let _ =
                write!(h, "</tbody></table><small>finalized: {}</small></section>", b.finalized);
        }
        None => h.push_str("<p>The book could not be read now.</p>"),
    }
    let _ = write!(h, "<section><h2>Decisions on this market ({})</h2><table class=\"feed\"><thead><tr><th>chain time</th><th>market</th><th>raw answer</th><th>verdict</th><th>reason</th><th>price</th><th>order</th><th>settled · P&amp;L</th><th>model</th></tr></thead><tbody>", rows.total);
    for d in &rows.decisions {
        h.push_str(&feed_row(d, &s.symbol));
    }
    h.push_str("</tbody></table></section>");
    layout("market", s, &h)
}

/// One row per model label, ranked by realised P&L; then the calibration table.
pub fn models(s: &Snapshot) -> String {
    let mut h = String::from(
        "<h1>Models</h1><p>Ranked by realised P&amp;L (write-offs included), not by how many decisions they made.</p>\
         <table class=\"models\"><thead><tr><th>#</th><th>model</th><th>provider</th><th>decisions</th><th>passed</th>\
         <th>refused, by reason</th><th>settled fills</th><th>win rate</th><th>realised P&amp;L</th><th>Brier</th></tr></thead><tbody>",
    );
    for (i, m) in s.summary.models_ranked().iter().enumerate() {
        let refusals: Vec<String> = m
            .refusals
            .iter()
            .map(|(r, n)| {
                format!(
                    "{r} {}: {n}",
                    esc(s.facts.labels.get(usize::from(*r)).map(String::as_str).unwrap_or("?"))
                )
            })
            .collect();
        let _ = write!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td><small>{}</small></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            i + 1,
            text(&m.model, 60),
            text(&m.provider, 40),
            m.decisions,
            m.passes,
            refusals.join("<br>"),
            m.settled,
            m.win_rate.map(|w| format!("{:.0}% ({} of {})", w * 100.0, m.won, m.settled)).unwrap_or_else(|| "-".into()),
            esc(&view::amount(&m.realised_pnl, &s.symbol)),
            m.brier.map(|b| format!("{b:.3}")).unwrap_or_else(|| "-".into()),
        );
    }
    h.push_str("</tbody></table>");
    h.push_str(&calibration_table(&s.summary.calibration.view()));
    layout("models", s, &h)
}

fn calibration_table(c: &view::Calibration) -> String {
    let mut h = format!(
        "<h2>Calibration</h2><p>For settled fills: the average price paid (the market's probability of the side \
         bought) against how often that side won. {} settled fills{}.</p><table class=\"cal\"><thead><tr><th>price paid</th>\
         <th>fills</th><th>mean price</th><th>won</th><th>win rate</th></tr></thead><tbody>",
        c.settled,
        c.brier.map(|b| format!("; Brier score of the prices paid {b:.3}")).unwrap_or_default()
    );
    for b in c.buckets.iter().filter(|b| b.count > 0) {
        let _ = write!(
            h,
            "<tr><td>{}–{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            b.lo,
            b.hi,
            b.count,
            b.mean_price.map(|p| format!("{p:.2}")).unwrap_or_default(),
            b.won,
            b.win_rate.map(|w| format!("{:.0}%", w * 100.0)).unwrap_or_default()
        );
    }
    h.push_str("</tbody></table>");
    h
}

/// The charts page: every chart rendered on the server as SVG.
pub fn charts(s: &Snapshot) -> String {
    let mut h = String::from(
        "<h1>Charts</h1><p>Drawn on the server from the record (no script, nothing fetched from elsewhere); \
         the series are at <a href=\"/api/charts\">/api/charts</a>.</p>",
    );
    for (file, alt) in [
        ("pnl.svg", "realised and marked-to-market P&amp;L against chain time"),
        ("drawdown.svg", "drawdown against its bound over time"),
        ("reasons.svg", "decisions per reason over time"),
        ("rules.svg", "rows failing each rule"),
        ("calibration.svg", "calibration of the prices paid"),
        ("decisions.svg", "the record's chart, as results/decisions.svg"),
    ] {
        let _ = write!(h, "<figure><img class=\"chart\" src=\"/chart/{file}\" alt=\"{alt}\"><figcaption>{alt}</figcaption></figure>");
    }
    layout("charts", s, &h)
}

/// A page for an error the user can act on (400, 404).
pub fn error_page(status: u16, message: &str) -> String {
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{status}</title>\
         <link rel=\"stylesheet\" href=\"/assets/floor.css\"></head><body><main><h1>{status}</h1><p>{}</p>\
         <p><a href=\"/\">back to the floor</a></p></main></body></html>\n",
        text(message, 500)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_text_is_escaped_and_made_visible() {
        let s = "<script>window.pwned=1</script><img src=x onerror=\"a()\">'\u{202E}evil\u{200B}";
        let e = esc(s);
        assert!(
            !e.contains('<') && !e.contains('>') && !e.contains('"') && !e.contains('\''),
            "{e}"
        );
        assert!(e.contains("⟨U+202E⟩") && e.contains("⟨U+200B⟩"), "{e}");
        assert!(!e.contains('\u{202E}'));
    }

    #[test]
    fn line_breaks_stay_and_other_control_characters_are_marked() {
        assert_eq!(esc("a\nb\tc\u{1b}[2J"), "a\nb\tc⟨U+001B⟩[2J");
        // An answer reads as submitted: its line break as \n, its quote as \".
        assert_eq!(json_text("BUY_UP\n\"x\""), "BUY_UP\\n\\\"x\\\"");
    }

    #[test]
    fn long_text_is_cut_with_its_length_and_hash() {
        let long = "A".repeat(100_000);
        let t = text(&long, CELL_CHARS);
        // 80 characters shown, then the length of the whole (100000 bytes) and its hash.
        assert!(t.len() < 300, "{} bytes", t.len());
        assert!(t.contains("100000 bytes"), "{t}");
        assert!(t.starts_with(&"A".repeat(CELL_CHARS)));
        assert_eq!(text("short", CELL_CHARS), "short");
    }

    #[test]
    fn chain_time_reads_as_utc() {
        // 951782400 is 2000-02-29 00:00:00 UTC; + 3661 s is 01:01:01.
        assert_eq!(time(951_782_400 + 3_661), "2000-02-29 01:01:01 UTC");
    }
}
