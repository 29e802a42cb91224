//! RESULTS.md: a deterministic page built from the gate's facts and the aggregates of its rows
//! ([`Summary`]); no wall-clock time in it, so the page can be re-derived byte for byte.

use super::{adversary, feed::DecisionRow, summary::Summary, GateFacts, CHART_FILE};
use crate::format::{esc, label_cell, units};
use std::fmt::Write;

/// The Models section: who answered, as each row records it (for a server, the model its
/// responses named), what it is, its file's hash where known, how its answers arrived, and the
/// reasons its decisions got.
fn models(md: &mut String, s: &Summary) {
    let _ = writeln!(md, "## Models\n");
    if s.models.is_empty() {
        let _ = writeln!(md, "No keeper annotations (record rebuilt from chain only).\n");
        return;
    }
    let _ = writeln!(
        md,
        "Who answered, as each row names it: for a server, the `model` its response named, not \
         the name the keeper asked for. \"rules\" is the built-in rule-based strategy and \
         \"replay\" a file of scripted answers; neither is a language model.\n"
    );
    let _ = writeln!(
        md,
        "| provider | model | what it is | model file sha256 | answers arrived as | decisions | reasons |"
    );
    let _ = writeln!(md, "| --- | --- | --- | --- | --- | ---: | --- |");
    for ((provider, model, kind, sha), t) in &s.models {
        let arrivals: Vec<String> =
            t.arrivals.iter().map(|(a, n)| format!("{} ×{n}", label_cell(a))).collect();
        let reasons: Vec<String> = t.reasons.iter().map(|(c, n)| format!("{c} ×{n}")).collect();
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} | {} |",
            label_cell(provider),
            label_cell(model),
            if kind.is_empty() { "not recorded".to_string() } else { label_cell(kind) },
            match (sha.as_str(), kind.as_str()) {
                ("", "rules" | "replay") => "n/a (no model file)".to_string(),
                ("", _) => "not known".to_string(),
                (sha, _) => format!("`{}`", label_cell(sha)),
            },
            arrivals.join(", "),
            t.rows,
            reasons.join(", ")
        );
    }
    let _ = writeln!(md);
}

/// The answer cell: the answer, or its length and hash when the record does not hold it.
fn raw_cell(d: &DecisionRow) -> String {
    match &d.raw {
        Some(raw) => esc(raw),
        None => format!("({} bytes, keccak {})", d.raw_length, d.raw_hash.get(..10).unwrap_or("")),
    }
}

pub fn render(facts: &GateFacts, s: &Summary) -> String {
    let mut md = String::new();
    let b = &facts.bounds;
    let _ = writeln!(md, "# RiskGate results\n");
    let _ = writeln!(
        md,
        "Every row below was rebuilt from the gate's `Decision`, `Settled` and `WrittenOff` \
         events; `keeper report --gate {} --check` re-derives this page from chain, and checks \
         each published answer against the length and keccak256 its event logged.\n",
        facts.gate
    );
    let _ = writeln!(md, "## Gate\n");
    let _ = writeln!(md, "| field | value |\n| --- | --- |");
    let _ = writeln!(md, "| gate | `{}` |", facts.gate);
    let _ = writeln!(md, "| chain id | {} |", facts.chain_id);
    let deploy = facts.deploy_block.map(|b| b.to_string()).unwrap_or_else(|| "unknown".into());
    let _ = writeln!(md, "| deploy block | {deploy} |");
    let _ = writeln!(md, "| paramsHash | `{}` |", facts.params_hash);
    let _ = writeln!(md, "| minPrice | {} |", b.minPrice);
    let _ = writeln!(md, "| maxPrice | {} |", b.maxPrice);
    let _ = writeln!(md, "| maxSize | {} |", b.maxSize);
    let _ = writeln!(md, "| minHeadroom (s) | {} |", b.minHeadroom);
    let _ = writeln!(md, "| maxConcurrent | {} |", b.maxConcurrent);
    let _ = writeln!(md, "| maxNotional | {} |", b.maxNotional);
    let _ = writeln!(md, "| maxHorizon (s) | {} |", b.maxHorizon);
    let _ = writeln!(md, "| maxDrawdown | {} |", b.maxDrawdown);
    let _ = writeln!(md, "| writeOffGrace (s) | {} |", b.writeOffGrace);
    let _ = writeln!(md, "| minFillBps | {} |", b.minFillBps);
    let trusted: Vec<String> = facts.trusted_resolvers.iter().map(|a| format!("`{a}`")).collect();
    let _ = writeln!(md, "| trusted resolvers | {} |", trusted.join(", "));
    let _ = writeln!(md, "| keeper | `{}` |", facts.keeper);
    let _ = writeln!(md, "| collateral | `{}` |", facts.collateral);
    let _ = writeln!(md, "| market factory | `{}` |\n", facts.factory);

    models(&mut md, s);

    let _ = writeln!(md, "## Summary\n");
    let _ = writeln!(md, "- decisions on chain: {}", s.decisions);
    let _ = writeln!(md, "- passed (orders placed): {}", s.passes);
    let _ = writeln!(md, "- refused by the gate: {}", s.decisions - s.passes);
    let _ = writeln!(md, "- positions written off: {}", s.write_offs);
    let _ = writeln!(md, "- off-chain failures (nothing submitted): {}\n", s.offchain);

    let _ = writeln!(md, "## Decisions by reason\n");
    let _ = writeln!(md, "![decisions by reason and cumulative P&L]({CHART_FILE})\n");
    let _ = writeln!(md, "| code | label | count | share | rows failing this rule |");
    let _ = writeln!(md, "| ---: | --- | ---: | ---: | ---: |");
    for (code, label) in facts.labels.iter().enumerate() {
        let count = s.reason_count(code as u8);
        let in_mask = s.failing_count(code as u8);
        let share = if s.decisions == 0 {
            "0.0%".to_string()
        } else {
            format!("{:.1}%", 100.0 * count as f64 / s.decisions as f64)
        };
        let _ = writeln!(md, "| {code} | {label} | {count} | {share} | {in_mask} |");
    }
    let _ = writeln!(md);

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
    positions(&mut md, s);

    let _ = writeln!(md, "## Latest rows\n");
    let _ = writeln!(
        md,
        "| block | market | raw answer | verdict | reason | failing rules | best level price | \
         average price paid | limit | qty | filled |"
    );
    let _ =
        writeln!(md, "| ---: | --- | --- | ---: | --- | --- | ---: | ---: | ---: | ---: | ---: |");
    for d in s.latest.iter().rev() {
        let rules: Vec<String> = d.failed_rules.iter().map(u8::to_string).collect();
        let short_market = d.market.get(..10).unwrap_or(&d.market);
        let _ = writeln!(
            md,
            "| {} | `{short_market}` | {} | {} | {} {} | {} | {} | {} | {} | {} | {} |",
            d.block,
            raw_cell(d),
            d.verdict,
            d.reason,
            d.reason_label,
            rules.join(","),
            d.price_paid,
            average_cell(d),
            d.limit,
            d.quantity,
            d.filled
        );
    }
    md
}

/// The average price paid of a row with a fill (`ceil(spent × 1e6 / filled)`); for a fill the
/// gate undid (reason 18), that of the fill offered, marked as undone; empty without a fill.
fn average_cell(d: &DecisionRow) -> String {
    match (&d.average_price_paid, &d.attempted_fill) {
        (Some(avg), _) => avg.clone(),
        (None, Some(a)) => {
            a.average_price_paid.as_ref().map(|p| format!("{p} (undone)")).unwrap_or_default()
        }
        _ => String::new(),
    }
}

/// One line per market the gate bought in: what it spent (at what average price), whether the
/// position was written off, and how it settled. Realised P&L counts a write-off as a loss of
/// the position's notional when it happens, and a later payout as a gain when it comes.
fn positions(md: &mut String, s: &Summary) {
    let _ = writeln!(md, "## Positions and settlements\n");
    let _ = writeln!(
        md,
        "| market | fills | bought (units) | spent | average price paid | written off | settled | outcome | payout | P&L |"
    );
    let _ = writeln!(md, "| --- | ---: | ---: | ---: | ---: | --- | --- | --- | ---: | ---: |");
    for p in &s.positions {
        let (m, bought, spent) = (&p.market, p.bought, p.spent);
        let average = if bought > 0 {
            let avg = (spent * 1_000_000 + bought - 1) / bought;
            units(&avg.to_string())
        } else {
            String::new()
        };
        let written_off = p.written_off.map_or(0, |(_, n)| n);
        let written = p.written_off.map(|(b, _)| format!("block {b}")).unwrap_or_default();
        match &p.settled {
            None => {
                // A written-off position is a realised loss of its notional until a payout comes.
                let pnl = if written_off > 0 {
                    format!("{} (written off)", units(&(-written_off).to_string()))
                } else {
                    String::new()
                };
                let _ = writeln!(
                    md,
                    "| `{m}` | {} | {bought} | {} | {average} | {written} | open | | | {pnl} |",
                    p.fills,
                    units(&spent.to_string())
                );
            }
            Some(st) => {
                let late =
                    if written_off > 0 { " (loss at write-off, payout when it came)" } else { "" };
                let _ = writeln!(
                    md,
                    "| `{m}` | {} | {bought} | {} | {average} | {written} | block {} | {} | {} | {}{late} |",
                    p.fills,
                    units(&spent.to_string()),
                    st.block,
                    if st.up_won { "UP" } else { "DOWN" },
                    units(&st.payout),
                    units(&st.pnl)
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
        "\nRealised P&L: {} collateral units (settlements, with every written-off position \
         counted as a loss of its notional when written off and any later payout as a gain when \
         it came).\n",
        units(&s.realised_total.to_string())
    );
}

#[cfg(test)]
mod tests {
    use super::units;

    #[test]
    fn units_render_six_places() {
        assert_eq!(units("0"), "0.000000");
        assert_eq!(units("4000000"), "4.000000"); // 4e6 base units = 4.0
        assert_eq!(units("-1500000"), "-1.500000");
        assert_eq!(units("7"), "0.000007");
    }
}
