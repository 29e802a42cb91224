//! RESULTS.md: a deterministic page built from the gate's facts, the feed rows, the
//! settlements and the write-offs (no wall-clock time in it, so the page can be re-derived byte
//! for byte).

use super::{
    adversary,
    feed::{ChainRecord, DecisionRow, FeedRow},
    GateFacts, CHART_FILE,
};
use crate::format::{esc, int, label_cell, units};
use std::{collections::BTreeSet, fmt::Write};

/// The Models section: who answered, as each row records it (for a server, the model its
/// responses named), what it is, its file's hash where known, how its answers arrived, and the
/// reasons its decisions got.
fn models(md: &mut String, decisions: &[&DecisionRow]) {
    type Key<'a> = (&'a str, &'a str, &'a str, &'a str);
    let mut by: std::collections::BTreeMap<Key, Vec<&DecisionRow>> = Default::default();
    for d in decisions {
        let n = &d.note;
        if n.provider.is_none() && n.model.is_none() {
            continue;
        }
        let key = (
            n.provider.as_deref().unwrap_or("?"),
            n.model.as_deref().unwrap_or("?"),
            n.model_kind.as_deref().unwrap_or(""),
            n.model_sha256.as_deref().unwrap_or(""),
        );
        by.entry(key).or_default().push(d);
    }
    let _ = writeln!(md, "## Models\n");
    if by.is_empty() {
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
    for ((provider, model, kind, sha), rows) in &by {
        let mut arrivals: std::collections::BTreeMap<&str, usize> = Default::default();
        let mut reasons: std::collections::BTreeMap<u8, usize> = Default::default();
        for d in rows {
            *arrivals.entry(d.note.arrival.as_deref().unwrap_or("not recorded")).or_default() += 1;
            *reasons.entry(d.reason).or_default() += 1;
        }
        let arrivals: Vec<String> = arrivals.iter().map(|(a, n)| format!("{a} ×{n}")).collect();
        let reasons: Vec<String> = reasons.iter().map(|(c, n)| format!("{c} ×{n}")).collect();
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} | {} |",
            label_cell(provider),
            label_cell(model),
            if kind.is_empty() { "not recorded".to_string() } else { label_cell(kind) },
            match (*sha, *kind) {
                ("", "rules" | "replay") => "n/a (no model file)".to_string(),
                ("", _) => "not known".to_string(),
                (sha, _) => format!("`{}`", label_cell(sha)),
            },
            arrivals.join(", "),
            rows.len(),
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

pub fn render(facts: &GateFacts, rows: &[FeedRow], chain: &ChainRecord) -> String {
    let mut md = String::new();
    let b = &facts.bounds;
    let decisions: Vec<&DecisionRow> = rows
        .iter()
        .filter_map(|r| if let FeedRow::Decision(d) = r { Some(d) } else { None })
        .collect();
    let offchain = rows.len() - decisions.len();
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

    models(&mut md, &decisions);

    let passes = decisions.iter().filter(|d| d.reason == 0).count();
    let _ = writeln!(md, "## Summary\n");
    let _ = writeln!(md, "- decisions on chain: {}", decisions.len());
    let _ = writeln!(md, "- passed (orders placed): {passes}");
    let _ = writeln!(md, "- refused by the gate: {}", decisions.len() - passes);
    let _ = writeln!(md, "- positions written off: {}", chain.write_offs.len());
    let _ = writeln!(md, "- off-chain failures (nothing submitted): {offchain}\n");

    let _ = writeln!(md, "## Decisions by reason\n");
    let _ = writeln!(md, "![decisions by reason and cumulative P&L]({CHART_FILE})\n");
    let _ = writeln!(md, "| code | label | count | share | rows failing this rule |");
    let _ = writeln!(md, "| ---: | --- | ---: | ---: | ---: |");
    for (code, label) in facts.labels.iter().enumerate() {
        let count = decisions.iter().filter(|d| d.reason as usize == code).count();
        let in_mask = decisions.iter().filter(|d| d.failed_rules.contains(&(code as u8))).count();
        let share = if decisions.is_empty() {
            "0.0%".to_string()
        } else {
            format!("{:.1}%", 100.0 * count as f64 / decisions.len() as f64)
        };
        let _ = writeln!(md, "| {code} | {label} | {count} | {share} | {in_mask} |");
    }
    let _ = writeln!(md);

    let scenarios: BTreeSet<&str> =
        decisions.iter().filter_map(|d| d.note.scenario.as_deref()).collect();
    if !scenarios.is_empty() {
        let _ = writeln!(md, "## Scenarios\n");
        let _ = writeln!(md, "| scenario | rows | reasons |\n| --- | ---: | --- |");
        for sc in scenarios {
            let rs: Vec<_> =
                decisions.iter().filter(|d| d.note.scenario.as_deref() == Some(sc)).collect();
            let codes: BTreeSet<u8> = rs.iter().map(|d| d.reason).collect();
            let codes: Vec<String> = codes.iter().map(u8::to_string).collect();
            let _ = writeln!(md, "| {sc} | {} | {} |", rs.len(), codes.join(", "));
        }
        let _ = writeln!(md);
    }

    adversary::render(&mut md, facts, &decisions, chain);
    positions(&mut md, &decisions, chain);

    let _ = writeln!(md, "## Latest rows\n");
    let _ = writeln!(
        md,
        "| block | market | raw answer | verdict | reason | failing rules | best level price | \
         average price paid | limit | qty | filled |"
    );
    let _ =
        writeln!(md, "| ---: | --- | --- | ---: | --- | --- | ---: | ---: | ---: | ---: | ---: |");
    for d in decisions.iter().rev().take(15) {
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
fn positions(md: &mut String, decisions: &[&DecisionRow], chain: &ChainRecord) {
    let _ = writeln!(md, "## Positions and settlements\n");
    let _ = writeln!(
        md,
        "| market | fills | bought (units) | spent | average price paid | written off | settled | outcome | payout | P&L |"
    );
    let _ = writeln!(md, "| --- | ---: | ---: | ---: | ---: | --- | --- | --- | ---: | ---: |");
    let mut seen = BTreeSet::new();
    let realised: i128 = chain.realised().iter().map(|r| r.delta).sum();
    for m in decisions.iter().filter(|d| d.filled != "0").map(|d| d.market.as_str()) {
        if !seen.insert(m) {
            continue;
        }
        let fills: Vec<_> = decisions.iter().filter(|d| d.market == m && d.filled != "0").collect();
        let bought: i128 = fills.iter().map(|d| int(&d.filled)).sum();
        let spent: i128 = fills.iter().map(|d| int(&d.spent)).sum();
        let average = if bought > 0 {
            let avg = (spent * 1_000_000 + bought - 1) / bought;
            units(&avg.to_string())
        } else {
            String::new()
        };
        let written_off: i128 =
            chain.write_offs.iter().filter(|(wm, _)| wm == m).map(|(_, w)| int(&w.notional)).sum();
        let written: Vec<String> = chain
            .write_offs
            .iter()
            .filter(|(wm, _)| wm == m)
            .map(|(_, w)| format!("block {}", w.block))
            .collect();
        let written = written.join(", ");
        let settled: Vec<_> = chain.settlements.iter().filter(|(sm, _)| sm == m).collect();
        if settled.is_empty() {
            // A written-off position is a realised loss of its notional until a payout comes.
            let pnl = if written_off > 0 {
                format!("{} (written off)", units(&(-written_off).to_string()))
            } else {
                String::new()
            };
            let _ = writeln!(
                md,
                "| `{m}` | {} | {bought} | {} | {average} | {written} | open | | | {pnl} |",
                fills.len(),
                units(&spent.to_string())
            );
        }
        for (_, st) in settled {
            let late =
                if written_off > 0 { " (loss at write-off, payout when it came)" } else { "" };
            let _ = writeln!(
                md,
                "| `{m}` | {} | {bought} | {} | {average} | {written} | block {} | {} | {} | {}{late} |",
                fills.len(),
                units(&spent.to_string()),
                st.block,
                if st.up_won { "UP" } else { "DOWN" },
                units(&st.payout),
                units(&st.pnl)
            );
        }
    }
    let _ = writeln!(
        md,
        "\nRealised P&L: {} collateral units (settlements, with every written-off position \
         counted as a loss of its notional when written off and any later payout as a gain when \
         it came).\n",
        units(&realised.to_string())
    );
}

#[cfg(test)]
mod tests {
    use super::units;

    #[test]
    fn a_write_off_is_a_loss_and_a_late_payout_a_gain() {
        use crate::recorder::feed::{ChainRecord, RealisedKind, Settlement, WriteOff};
        let wo = |block, notional: &str| WriteOff {
            block,
            time: 0,
            tx: String::new(),
            up_units: "0".into(),
            down_units: "0".into(),
            notional: notional.into(),
            expiry: 0,
        };
        let st = |block, notional: &str, payout: &str, pnl: &str| Settlement {
            block,
            tx: String::new(),
            up_won: true,
            up_units: "0".into(),
            down_units: "0".into(),
            notional: notional.into(),
            payout: payout.into(),
            pnl: pnl.into(),
        };
        let rec = ChainRecord {
            // Market a: written off (4.0 at risk) at block 10, paid 10.0 at block 20.
            // Market b: written off (2.5) at block 12, never paid. Market c: settled at a loss.
            write_offs: vec![("a".into(), wo(10, "4000000")), ("b".into(), wo(12, "2500000"))],
            settlements: vec![
                ("c".into(), st(5, "1000000", "0", "-1000000")),
                ("a".into(), st(20, "4000000", "10000000", "6000000")),
            ],
            ..ChainRecord::default()
        };
        let r = rec.realised();
        let deltas: Vec<(u64, i128, RealisedKind)> =
            r.iter().map(|e| (e.block, e.delta, e.what)).collect();
        assert_eq!(
            deltas,
            vec![
                (5, -1_000_000, RealisedKind::Settled),
                (10, -4_000_000, RealisedKind::WrittenOff),
                (12, -2_500_000, RealisedKind::WrittenOff),
                (20, 10_000_000, RealisedKind::LatePayout),
            ]
        );
        // -1.0 - 4.0 - 2.5 + 10.0 = 2.5: a's net is its pnl (+6.0), b's loss (-2.5) counts.
        assert_eq!(r.iter().map(|e| e.delta).sum::<i128>(), 2_500_000);
    }

    #[test]
    fn units_render_six_places() {
        assert_eq!(units("0"), "0.000000");
        assert_eq!(units("4000000"), "4.000000"); // 4e6 base units = 4.0
        assert_eq!(units("-1500000"), "-1.500000");
        assert_eq!(units("7"), "0.000007");
    }
}
