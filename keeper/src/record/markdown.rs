//! RESULTS.md: a deterministic page built from the gate's facts and the aggregates of its rows
//! ([`Summary`]); no wall-clock time in it, so the page can be re-derived byte for byte.
//!
//! It reads the record the way the floor does, through [`super::figures`]: verdicts by name,
//! prices as probabilities, every amount of collateral with the token's (sanitised) symbol and
//! every quantity in outcome tokens.

use super::{
    adversary,
    feed::DecisionRow,
    figures::{self, amount_of, native, percent, prob, ratio, tokens, verdict_name},
    summary::Summary,
    GateFacts, Questions, CHART_FILE,
};
use crate::domain::format::{answer_cell, grouped, int, label_cell, md_cell, utc_date};
use std::fmt::Write;

/// An optional score to four places, "n/a" when there is none.
fn score(v: Option<f64>) -> String {
    v.map(|r| format!("{r:.4}")).unwrap_or_else(|| "n/a".into())
}

/// A chain time as `YYYY-MM-DD HH:MM UTC`.
fn when(t: u64) -> String {
    utc_date(t).map(|d| format!("{d} UTC")).unwrap_or_else(|| format!("unix {t}"))
}

/// Seconds in their largest units, zero parts left out: "2 d 3 h 4 min", "1 h 1 min 1 s".
fn readable(secs: u64) -> String {
    let parts: Vec<String> = [
        (secs / 86_400, "d"),
        (secs % 86_400 / 3_600, "h"),
        (secs % 3_600 / 60, "min"),
        (secs % 60, "s"),
    ]
    .iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, u)| format!("{n} {u}"))
    .collect();
    parts.join(" ")
}

/// A span of chain time to the minute: "15 h 17 min" ("0 min" under a minute).
fn span(secs: u64) -> String {
    if secs < 60 {
        "0 min".to_string()
    } else {
        readable(secs - secs % 60)
    }
}

/// A duration as its seconds and, from a minute on, its [`readable`] form: "600 s (10 min)",
/// "86400 s (1 d)", "45 s".
fn seconds(secs: u64) -> String {
    if secs < 60 {
        format!("{secs} s")
    } else {
        format!("{secs} s ({})", readable(secs))
    }
}

/// Basis points as a percentage, the bps after: 2500 as "25% (2,500 bps)".
fn bps(v: u64) -> String {
    let whole = v / 100;
    let frac = v % 100;
    let pct = if frac == 0 { format!("{whole}%") } else { format!("{whole}.{frac:02}%") };
    format!("{pct} ({} bps)", grouped(u128::from(v)))
}

fn gate(md: &mut String, facts: &GateFacts) {
    let b = &facts.bounds;
    let sym = &facts.symbol;
    let amt = |v: &dyn ToString| amount_of(int(&v.to_string()), sym);
    let pr = |v: &dyn ToString| prob(&v.to_string());
    let _ = writeln!(md, "## Gate\n");
    let _ = writeln!(
        md,
        "Bounds fixed at deploy (prices as probabilities, sizes in outcome tokens that pay 1 \
         {sym} each if their side wins, amounts in {sym}):\n"
    );
    let _ = writeln!(md, "| field | value |\n| --- | --- |");
    let _ = writeln!(md, "| gate | `{}` |", facts.gate);
    let _ = writeln!(md, "| chain id | {} |", facts.chain_id);
    let deploy = facts.deploy_block.map(|b| b.to_string()).unwrap_or_else(|| "unknown".into());
    let _ = writeln!(md, "| deploy block | {deploy} |");
    let _ = writeln!(md, "| paramsHash | `{}` |", facts.params_hash);
    let _ = writeln!(md, "| mode | {} |", facts.mode_line());
    if let Some(source) = facts.verdict_source {
        let _ = writeln!(md, "| verdict source | `{source}` |");
    }
    match &facts.attestors {
        None => {}
        Some(a) => {
            let signers: Vec<String> = a.signers.iter().map(|s| format!("`{s}`")).collect();
            let _ = writeln!(md, "| attestors | {} |", signers.join(", "));
            let _ = writeln!(md, "| attestor set | `{}` |", a.set);
        }
    }
    let _ = writeln!(md, "| minPrice | {} |", pr(&b.minPrice));
    let _ = writeln!(md, "| maxPrice | {} |", pr(&b.maxPrice));
    let _ = writeln!(md, "| maxSize | {} tokens |", tokens(&b.maxSize.to_string()));
    let _ = writeln!(md, "| minHeadroom | {} |", seconds(u64::from(b.minHeadroom)));
    let _ = writeln!(md, "| maxConcurrent | {} positions |", b.maxConcurrent);
    let _ = writeln!(md, "| maxNotional | {} |", amt(&b.maxNotional));
    let _ = writeln!(md, "| maxHorizon | {} |", seconds(u64::from(b.maxHorizon)));
    let _ = writeln!(md, "| maxDrawdown | {} |", amt(&b.maxDrawdown));
    let _ = writeln!(md, "| writeOffGrace | {} |", seconds(u64::from(b.writeOffGrace)));
    let _ = writeln!(md, "| minFillBps | {} |", bps(u64::from(b.minFillBps)));
    let list = |v: &[alloy::primitives::Address]| {
        if v.is_empty() {
            "none".to_string()
        } else {
            v.iter().map(|a| format!("`{a}`")).collect::<Vec<_>>().join(", ")
        }
    };
    let _ = writeln!(md, "| trusted resolvers | {} |", list(&facts.trusted_resolvers));
    let _ = writeln!(md, "| trusted creators | {} |", list(&facts.trusted_creators));
    let _ = writeln!(md, "| keeper | `{}` |", facts.keeper);
    let _ = writeln!(md, "| collateral | `{}` ({sym}) |", facts.collateral);
    let _ = writeln!(md, "| market factory | `{}` |\n", facts.factory);
}

fn summary(md: &mut String, facts: &GateFacts, s: &Summary) {
    let sym = &facts.symbol;
    let c = &s.calibration;
    let _ = writeln!(md, "## Summary\n");
    if let (Some((b0, t0)), Some((b1, t1))) = (s.first, s.last) {
        let _ = writeln!(
            md,
            "- time span: block {b0} ({}) to block {b1} ({}), {} of chain time",
            when(t0),
            when(t1),
            span(t1.saturating_sub(t0))
        );
    }
    let _ = writeln!(md, "- decisions on chain: {}", s.decisions);
    let _ = writeln!(md, "- passed (orders placed): {}", s.passes);
    let _ = writeln!(md, "- refused by the gate: {}", s.decisions - s.passes);
    let _ = writeln!(md, "- positions written off: {}", s.write_offs);
    let _ = writeln!(md, "- off-chain failures (nothing submitted): {}", s.offchain);
    let _ = writeln!(
        md,
        "- win rate: {} ({} of {} settled fills bought the side that won)",
        ratio(c.win_rate()),
        c.won,
        c.settled
    );
    let _ = writeln!(
        md,
        "- realised P&L: {} (settlements, and write-offs as a loss of their notional)",
        amount_of(s.realised_total, sym)
    );
    let _ = writeln!(
        md,
        "- marked P&L: {} (realised, plus {} open position{} at the last price the gate read: \
         UP at the best bid, DOWN at 1 − the best ask)",
        amount_of(s.realised_total + s.open_marked(), sym),
        s.open_positions(),
        if s.open_positions() == 1 { "" } else { "s" }
    );
    let _ = writeln!(
        md,
        "- return on capital: {} (realised P&L ÷ the {} its closed positions spent)",
        ratio(s.return_on_capital()),
        amount_of(s.spent_closed, sym)
    );
    let max_dd = int(&facts.bounds.maxDrawdown.to_string());
    let _ = writeln!(
        md,
        "- largest drawdown: {} of maxDrawdown {} ({}), the largest H − balance the gate read \
         at a decision",
        amount_of(s.peak_drawdown, sym),
        amount_of(max_dd, sym),
        percent(s.peak_drawdown, max_dd)
    );
    let unknown = if s.gas_unknown > 0 {
        format!("; {} rows carry no receipt", s.gas_unknown)
    } else {
        String::new()
    };
    let _ = writeln!(
        md,
        "- gas: {} gas over {} transactions, {} of the chain's native coin in fees{unknown}\n",
        grouped(s.gas_used),
        grouped(u128::from(s.gas_txs)),
        native(s.gas_fee)
    );
}

/// The Models section: one row per model label, best realised P&L first. Who answered is as
/// each row records it (for a server, the model its responses named).
fn models(md: &mut String, facts: &GateFacts, s: &Summary) {
    let _ = writeln!(md, "## Models\n");
    if s.models.is_empty() {
        let _ = writeln!(md, "No decisions yet.\n");
        return;
    }
    let _ = writeln!(
        md,
        "Who answered, as each row names it: for a server, the `model` its response named, not \
         the name the keeper asked for. \"rules\" is the built-in rule-based strategy and \
         \"replay\" a file of scripted answers; neither is a language model. Ranked by realised \
         P&L; the Brier score is that of the prices paid on settled fills (lower is better).\n"
    );
    let _ = writeln!(
        md,
        "| provider | model | what it is | model file sha256 | answers arrived as | decisions | \
         passed | refusals by reason | settled | win rate | realised P&L | Brier |"
    );
    let _ = writeln!(
        md,
        "| --- | --- | --- | --- | --- | ---: | ---: | --- | ---: | ---: | ---: | ---: |"
    );
    for m in s.models_ranked() {
        let arrivals: Vec<String> =
            m.arrivals.iter().map(|(a, n)| format!("{} ×{n}", label_cell(a))).collect();
        let refusals: Vec<String> = m.refusals.iter().map(|(c, n)| format!("{c} ×{n}")).collect();
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            label_cell(&m.provider),
            label_cell(&m.model),
            if m.kind.is_empty() { "not recorded".to_string() } else { label_cell(&m.kind) },
            match (m.sha256.as_str(), m.kind.as_str()) {
                ("", "rules" | "replay") => "n/a (no model file)".to_string(),
                ("", _) => "not known".to_string(),
                (sha, _) => format!("`{}`", label_cell(sha)),
            },
            arrivals.join(", "),
            m.decisions,
            m.passes,
            if refusals.is_empty() { "none".to_string() } else { refusals.join(", ") },
            m.settled,
            ratio(m.win_rate),
            amount_of(int(&m.realised_pnl), &facts.symbol),
            score(m.brier)
        );
    }
    let _ = writeln!(md);
}

/// Calibration: for settled fills, the average price paid against how often that side won.
fn calibration(md: &mut String, s: &Summary) {
    let c = s.calibration.view();
    let _ = writeln!(md, "## Calibration\n");
    let _ = writeln!(
        md,
        "Settled fills bucketed by the average price paid for the side bought, which is the \
         market's probability of that side. A model that beats the market wins more often than \
         it paid for: win rate above mean price. Brier score of the prices paid over {} settled \
         fills: {} (0 is perfect; always paying 0.5 scores 0.25).\n",
        c.settled,
        score(c.brier)
    );
    let min = figures::CALIBRATION_MIN_FILLS;
    // A win rate's standard error is at most √(0.25 ÷ n): 0.158 at n = 10.
    let _ = writeln!(
        md,
        "A bucket of fewer than {min} fills is marked as too small to mean anything: at {min} \
         fills a win rate's standard error is still up to √(0.25 ÷ {min}) ≈ {:.0} points.\n",
        100.0 * (0.25 / min as f64).sqrt()
    );
    let _ = writeln!(md, "| price paid | fills | mean price paid | won | win rate | |");
    let _ = writeln!(md, "| --- | ---: | ---: | ---: | ---: | --- |");
    for b in &c.buckets {
        let mean = b.mean_price.map(|p| format!("{p:.3}")).unwrap_or_else(|| "–".into());
        let rate = b.win_rate.map_or_else(|| "–".into(), |r| ratio(Some(r)));
        let note = if (1..min).contains(&b.count) { "too few fills to mean anything" } else { "" };
        let _ = writeln!(
            md,
            "| {}–{} | {} | {mean} | {} | {rate} | {note} |",
            b.lo, b.hi, b.count, b.won
        );
    }
    let _ = writeln!(md);
}

fn reasons(md: &mut String, facts: &GateFacts, s: &Summary) {
    let _ = writeln!(md, "## Decisions by reason\n");
    let _ = writeln!(
        md,
        "![decisions by reason, and realised and marked P&L over chain time]({CHART_FILE})\n"
    );
    let _ = writeln!(md, "| code | label | count | share | rows failing this rule |");
    let _ = writeln!(md, "| ---: | --- | ---: | ---: | ---: |");
    for (code, label) in facts.labels.iter().enumerate() {
        let count = s.reason_count(code as u8);
        let in_mask = s.failing_count(code as u8);
        let share = percent(i128::from(count), i128::from(s.decisions.max(1)));
        let _ = writeln!(md, "| {code} | {} | {count} | {share} | {in_mask} |", label_cell(label));
    }
    let _ = writeln!(md);
}

/// The answer cell: the answer, or its length and hash when the record does not hold it.
fn raw_cell(d: &DecisionRow) -> String {
    match &d.raw {
        Some(raw) => answer_cell(raw),
        None => format!("({} bytes, keccak {})", d.raw_length, d.raw_hash.get(..10).unwrap_or("")),
    }
}

/// An attested or consensus row's vote: the counts, then each signer (shortened) with the
/// verdict its answer gave; the answers' text is in the raw answer column (the one the gate
/// showed) and the feed.
fn vote_cell(d: &DecisionRow) -> String {
    let Some(v) = &d.vote else { return String::new() };
    if v.answers.is_empty() {
        return "no answers".to_string();
    }
    let each: Vec<String> = v
        .answers
        .iter()
        .map(|a| {
            format!("`{}` {}", a.signer.get(..10).unwrap_or(&a.signer), verdict_name(a.verdict()))
        })
        .collect();
    format!("{}: {}", v.counts_line(), each.join(", "))
}

/// The average price paid of a row with a fill (`ceil(spent × 1e6 / filled)`); for a fill the
/// gate undid (reason 18), that of the fill offered, marked as undone; empty without a fill.
fn average_cell(d: &DecisionRow) -> String {
    match (&d.average_price_paid, &d.attempted_fill) {
        (Some(avg), _) => prob(avg),
        (None, Some(a)) => a
            .average_price_paid
            .as_ref()
            .map(|p| format!("{} (undone)", prob(p)))
            .unwrap_or_default(),
        _ => String::new(),
    }
}

/// A price cell: empty for a row that evaluated no price (ABSTAIN, unparseable).
fn price_cell(v: &str) -> String {
    if int(v) > 0 {
        prob(v)
    } else {
        String::new()
    }
}

fn latest(md: &mut String, facts: &GateFacts, s: &Summary) {
    let _ = writeln!(md, "## Latest rows\n");
    let _ = writeln!(
        md,
        "Newest first. Prices are for the side bought; quantities are outcome tokens; amounts \
         are {}.\n",
        facts.symbol
    );
    // An attested gate's attestors and a consensus gate's validators both vote.
    let voters = match (&facts.attestors, facts.verdict_source) {
        (Some(_), _) => Some("attestor"),
        (None, Some(_)) => Some("validator"),
        (None, None) => None,
    };
    let voted = voters.is_some();
    let _ = writeln!(
        md,
        "| chain time | block | market | raw answer | {}verdict | side | reason | failing rules | \
         best level price | limit | quantity | filled | average price paid | spent |",
        voters.map(|v| format!("vote (each {v}'s verdict) | ")).unwrap_or_default()
    );
    let _ = writeln!(
        md,
        "| --- | --- | --- | --- | {}--- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
        if voted { "--- | " } else { "" }
    );
    for d in s.latest.iter().rev() {
        let rules: Vec<String> = d
            .failed_rules
            .iter()
            .map(|&r| match facts.labels.get(usize::from(r)) {
                Some(l) => format!("{r} {}", label_cell(l)),
                None => r.to_string(),
            })
            .collect();
        let short_market = d.market.get(..10).unwrap_or(&d.market);
        let bought = int(&d.filled) > 0;
        let vote = if voted { format!("{} | ", vote_cell(d)) } else { String::new() };
        let _ = writeln!(
            md,
            "| {} | #{} | `{short_market}` | {} | {vote}{} | {} | {} {} | {} | {} | {} | {} | {} | {} | {} |",
            when(d.time),
            d.block,
            raw_cell(d),
            verdict_name(d.verdict),
            figures::side(d.verdict).unwrap_or(""),
            d.reason,
            label_cell(&d.reason_label),
            rules.join("; "),
            price_cell(&d.price_paid),
            price_cell(&d.limit),
            if int(&d.quantity) > 0 { tokens(&d.quantity) } else { String::new() },
            if bought { tokens(&d.filled) } else { String::new() },
            average_cell(d),
            if bought { amount_of(int(&d.spent), &facts.symbol) } else { String::new() },
        );
    }
}

/// One line per market the gate bought in: the side it holds, what it spent (at what average
/// price), whether the position was written off, and how it settled. Realised P&L counts a
/// write-off as a loss of the position's notional when it happens, and a later payout as a gain
/// when it comes.
fn positions(md: &mut String, facts: &GateFacts, s: &Summary, questions: &Questions) {
    let sym = &facts.symbol;
    let amt = |v: i128| amount_of(v, sym);
    let _ = writeln!(md, "## Positions and settlements\n");
    let _ = writeln!(
        md,
        "| market | question | side | fills | tokens bought | spent | average price paid | \
         written off | settled | outcome | payout | P&L |"
    );
    let _ = writeln!(
        md,
        "| --- | --- | --- | ---: | ---: | ---: | ---: | --- | --- | --- | ---: | ---: |"
    );
    for p in &s.positions {
        let (m, bought, spent) = (&p.market, p.bought, p.spent);
        let average = if bought > 0 {
            prob(&((spent * 1_000_000 + bought - 1) / bought).to_string())
        } else {
            String::new()
        };
        let question = match questions.get(m) {
            Some(q) => md_cell(q, QUESTION_CHARS),
            None => "(unreadable: not checked against the market's questionHash)".to_string(),
        };
        let head = format!(
            "| `{m}` | {question} | {} | {} | {} | {} | {average}",
            p.side,
            p.fills,
            tokens(&bought.to_string()),
            amt(spent)
        );
        let written_off = p.written_off.map_or(0, |(_, n)| n);
        let written = p.written_off.map(|(b, _)| format!("block {b}")).unwrap_or_default();
        match &p.settled {
            None => {
                // A written-off position is a realised loss of its notional until a payout comes.
                let pnl = if written_off > 0 {
                    format!("{} (written off)", amt(-written_off))
                } else {
                    String::new()
                };
                let _ = writeln!(md, "{head} | {written} | open | | | {pnl} |");
            }
            Some(st) => {
                let late =
                    if written_off > 0 { " (loss at write-off, payout when it came)" } else { "" };
                let _ = writeln!(
                    md,
                    "{head} | {written} | block {} | {} | {} | {}{late} |",
                    st.block,
                    if st.up_won { "UP won" } else { "DOWN won" },
                    amt(int(&st.payout)),
                    amt(int(&st.pnl))
                );
            }
        }
    }
    if s.positions_left_out > 0 {
        let _ = writeln!(
            md,
            "\n{} earlier closed positions are not listed; the totals count them.",
            s.positions_left_out
        );
    }
    let _ = writeln!(
        md,
        "\nRealised P&L: {} (settlements, with every written-off position counted as a loss of \
         its notional when written off and any later payout as a gain when it came).\n",
        amt(s.realised_total)
    );
}

/// Characters of a market's question shown in the positions table (the rest is cut, with the
/// question's length).
const QUESTION_CHARS: usize = 60;

pub fn render(facts: &GateFacts, s: &Summary, questions: &Questions) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "# RiskGate results\n");
    let _ = writeln!(
        md,
        "Every row below was rebuilt from the gate's `Decision`, `Settled` and `WrittenOff` \
         events and the receipts of the transactions that published them; `keeper report \
         --gate {} --check` re-derives this page from chain, and checks each published answer \
         against the length and keccak256 its event logged.\n",
        facts.gate
    );
    gate(&mut md, facts);
    summary(&mut md, facts, s);
    models(&mut md, facts, s);
    calibration(&mut md, s);
    reasons(&mut md, facts, s);
    if !s.scenarios.is_empty() {
        let _ = writeln!(md, "## Scenarios\n");
        let _ = writeln!(md, "| scenario | rows | reasons |\n| --- | ---: | --- |");
        for (sc, t) in &s.scenarios {
            let codes: Vec<String> = t.reasons.iter().map(u8::to_string).collect();
            let _ = writeln!(md, "| {} | {} | {} |", label_cell(sc), t.rows, codes.join(", "));
        }
        let _ = writeln!(md);
    }
    adversary::render(&mut md, facts, s);
    positions(&mut md, facts, s, questions);
    latest(&mut md, facts, s);
    md
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::format::units;

    #[test]
    fn units_render_six_places() {
        assert_eq!(units("0"), "0.000000");
        assert_eq!(units("4000000"), "4.000000"); // 4e6 base units = 4.0
        assert_eq!(units("-1500000"), "-1.500000");
        assert_eq!(units("7"), "0.000007");
    }

    #[test]
    fn amounts_carry_the_symbol_and_prices_read_as_probabilities() {
        assert_eq!(amount_of(4_000_000, "tUSD"), "4.000000 tUSD");
        assert_eq!(amount_of(-1_500_000, "units"), "-1.500000 units");
        assert_eq!(price_cell("450000"), "0.45");
        assert_eq!(price_cell("0"), ""); // no price evaluated
    }

    /// Every text a stranger chose (the answer, the question, the model's labels, the
    /// scenario) with each thing that could break a markdown table or page planted in it: a
    /// pipe, a backtick, a line break, HTML, a link, a heading, bidi and zero-width characters.
    const HOSTILE: &str = "\u{202E}\u{200B}\u{2066}|\r\n# INJECTED `rm` [click](http://e.x) *bold \
                           <script>| --- | and more text past the cut, longer than any cell";

    fn hostile_page() -> String {
        use crate::domain::decision::{Annotation, DecisionRow, FeedRow};
        let market = "0x1111111111111111111111111111111111111111".to_string();
        let row = DecisionRow {
            chain_id: 1,
            gate: "0x0".into(),
            block: 7,
            log_index: 0,
            tx: format!("0x{:064x}", 7),
            time: 1_700_000_000,
            market: market.clone(),
            prompt_hash: String::new(),
            read_block: 7,
            raw: Some(HOSTILE.into()),
            raw_length: HOSTILE.len() as u64,
            raw_hash: String::new(),
            verdict: 1,
            reason: 0,
            reason_label: "PASS".into(),
            failed_mask: 0,
            failed_rules: vec![],
            book: None,
            quote: None,
            price_paid: "450000".into(),
            average_price_paid: Some("450000".into()),
            limit: "450000".into(),
            quantity: "10000000".into(),
            cost: "4500000".into(),
            filled: "10000000".into(),
            spent: "4500000".into(),
            attempted_fill: None,
            settlement: None,
            write_off: None,
            gas: None,
            // An attested row whose attestor's answer (its head in the vote) is hostile too.
            vote: Some(crate::domain::decision::VoteRow {
                counts: crate::domain::decision::VoteCounts {
                    unparseable: 1,
                    ..Default::default()
                },
                answers: vec![crate::domain::decision::VoteAnswer {
                    signer: "0x2222222222222222222222222222222222222222".into(),
                    length: HOSTILE.len() as u32,
                    hash: String::new(),
                    head: HOSTILE.into(),
                }],
            }),
            note: Annotation {
                provider: Some(HOSTILE.into()),
                model: Some(HOSTILE.into()),
                scenario: Some(HOSTILE.into()),
                model_kind: Some(HOSTILE.into()),
                arrival: Some(HOSTILE.into()),
                ..Annotation::default()
            },
        };
        let mut s = Summary::default();
        s.add(&FeedRow::Decision(row));
        let facts = facts_in(Some(one_attestor()), None);
        let questions = Questions::from([(market, HOSTILE.to_string())]);
        render(&facts, &s, &questions)
    }

    /// A set of one attestor, k = 1.
    fn one_attestor() -> crate::domain::decision::AttestorFacts {
        crate::domain::decision::AttestorFacts {
            set: alloy::primitives::Address::ZERO,
            signers: vec![alloy::primitives::Address::repeat_byte(0x22)],
            threshold: 1,
            max_read_age: 5,
            max_slippage_bps: 200,
        }
    }

    /// A gate's facts in the mode its attestors and verdict source give, otherwise empty.
    fn facts_in(
        attestors: Option<crate::domain::decision::AttestorFacts>,
        verdict_source: Option<alloy::primitives::Address>,
    ) -> GateFacts {
        GateFacts {
            gate: alloy::primitives::Address::ZERO,
            chain_id: 1,
            deploy_block: Some(1),
            params_hash: Default::default(),
            bounds: Default::default(),
            trusted_resolvers: vec![],
            trusted_creators: vec![],
            keeper: alloy::primitives::Address::ZERO,
            collateral: alloy::primitives::Address::ZERO,
            factory: alloy::primitives::Address::ZERO,
            labels: vec!["PASS".into()],
            attestors,
            verdict_source,
            symbol: "tUSD".into(),
        }
    }

    #[test]
    fn each_mode_is_named_on_the_page() {
        let mode = |f: &GateFacts| {
            let page = render(f, &Summary::default(), &Questions::new());
            page.lines().find(|l| l.starts_with("| mode |")).map(str::to_string).unwrap()
        };
        assert!(mode(&facts_in(None, None)).starts_with("| mode | relayed:"));
        assert!(mode(&facts_in(Some(one_attestor()), None)).starts_with("| mode | attested: "));
        // A consensus gate is never shown as relayed: it names its source.
        let source = alloy::primitives::Address::repeat_byte(0x44);
        let f = facts_in(None, Some(source));
        let line = mode(&f);
        assert!(line.starts_with("| mode | consensus: "), "{line}");
        assert!(line.contains(&source.to_string()), "{line}");
        let page = render(&f, &Summary::default(), &Questions::new());
        assert!(page.contains(&format!("| verdict source | `{source}` |")), "{page}");
    }

    /// Pipes in a table line that end a cell (not backslash-escaped).
    fn cell_pipes(line: &str) -> usize {
        let mut n = 0;
        let mut escaped = false;
        for c in line.chars() {
            match c {
                '\\' if !escaped => escaped = true,
                '|' if !escaped => n += 1,
                _ => escaped = false,
            }
            if c != '\\' {
                escaped = false;
            }
        }
        n
    }

    #[test]
    fn hostile_text_cannot_break_the_page() {
        let page = hostile_page();
        // The hostile text reached the page (the answer, the question, the labels).
        assert!(page.contains("INJECTED"), "{page}");
        // No line break from it: nothing it carried starts a line of its own.
        for line in page.lines() {
            assert!(!line.starts_with("# INJECTED") && !line.starts_with("INJECTED"), "{line}");
        }
        // Every line of a table has as many cell-ending pipes as its header.
        let mut header: Option<usize> = None;
        for line in page.lines() {
            if line.starts_with('|') {
                let n = cell_pipes(line);
                let want = *header.get_or_insert(n);
                assert_eq!(n, want, "a cell was broken open: {line}");
            } else {
                header = None;
            }
        }
        // No tag, no link, no emphasis, no code span formed; no character that reorders or
        // hides text survives (each is shown as its code point).
        // Each markup character the text carried is preceded by a backslash (shown as itself).
        let unescaped =
            |pat: &str| page.match_indices(pat).any(|(i, _)| !page[..i].ends_with('\\'));
        for formed in ["<script", "</script", "](http", "`rm", "*bold", "[click"] {
            assert!(!unescaped(formed), "{formed} formed in the page");
        }
        for hidden in ['\u{202E}', '\u{200B}', '\u{2066}', '\r'] {
            assert!(!page.contains(hidden), "{:?} survived", hidden);
        }
        for shown in ["⟨U+202E⟩", "⟨U+200B⟩", "⟨U+2066⟩", "⟨U+000A⟩", "&lt;script&gt;"]
        {
            assert!(page.contains(shown), "{shown} not shown");
        }
        // The answer is cut at 60 characters and says its whole length.
        assert!(page.contains(&format!("… ({} bytes)", HOSTILE.len())), "{page}");
    }

    /// A cell of a markdown table that is a bare integer of six or more digits: a number a
    /// reader cannot read without knowing its unit.
    pub(crate) fn bare_big_integers(page: &str) -> Vec<String> {
        let mut out = Vec::new();
        for line in page.lines().filter(|l| l.starts_with('|')) {
            for cell in line.split('|').map(str::trim) {
                let digits = cell.strip_prefix('-').unwrap_or(cell);
                if digits.len() >= 6 && digits.bytes().all(|b| b.is_ascii_digit()) {
                    out.push(format!("{cell} in: {line}"));
                }
            }
        }
        out
    }

    #[test]
    fn the_demo_page_has_no_bare_integer_of_six_or_more_digits() {
        // The committed demo record's page (make demo writes it; report --check re-derives it).
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../results/RESULTS.md");
        let page = std::fs::read_to_string(path).expect("results/RESULTS.md is committed");
        let bare = bare_big_integers(&page);
        assert!(bare.is_empty(), "cells without a unit: {bare:#?}");
        // The check itself catches one.
        assert_eq!(bare_big_integers("| a | 450000 |\n| b | 0.45 |").len(), 1);
        assert!(bare_big_integers(&hostile_page()).is_empty());
    }

    #[test]
    fn bounds_read_in_human_units() {
        assert_eq!(seconds(600), "600 s (10 min)");
        assert_eq!(seconds(86_400), "86400 s (1 d)");
        // 3,661 s = 1 h + 1 min + 1 s.
        assert_eq!(seconds(3_661), "3661 s (1 h 1 min 1 s)");
        assert_eq!(seconds(45), "45 s");
        assert_eq!(bps(2_500), "25% (2,500 bps)");
        assert_eq!(bps(50), "0.50% (50 bps)");
        assert_eq!(grouped(17_268_197), "17,268,197");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1_000), "1,000");
    }

    #[test]
    fn spans_and_times_read_plainly() {
        assert_eq!(span(59), "0 min");
        assert_eq!(span(3_600 + 120), "1 h 2 min");
        assert_eq!(span(2 * 86_400 + 3 * 3_600 + 4 * 60), "2 d 3 h 4 min");
        // 1_700_000_000 s = 2023-11-14 22:13:20 UTC.
        assert_eq!(when(1_700_000_000), "2023-11-14 22:13 UTC");
    }
}
