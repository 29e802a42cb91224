//! RESULTS.md: a deterministic page built from the gate's facts, the feed rows and the
//! settlements (no wall-clock time in it, so the page can be re-derived byte for byte).

use super::{
    feed::{ChainRecord, FeedRow, GateFacts},
    CHART_FILE,
};
use std::{collections::BTreeSet, fmt::Write};

/// Units helper: 1e6 base units shown as a decimal with six places.
fn units(v: &str) -> String {
    let neg = v.starts_with('-');
    let digits = v.trim_start_matches('-');
    let padded = format!("{digits:0>7}");
    let (int, frac) = padded.split_at(padded.len() - 6);
    format!("{}{int}.{frac}", if neg { "-" } else { "" })
}

fn esc(s: &str) -> String {
    // Inside a table cell: show the answer JSON-escaped, and neutralise pipes and backticks.
    let j = serde_json::to_string(s).unwrap_or_default();
    let mut out = j.replace('|', "\\|").replace('`', "'");
    if out.len() > 60 {
        let mut end = 57;
        while !out.is_char_boundary(end) {
            end -= 1;
        }
        out.truncate(end);
        out.push_str("...");
    }
    out
}

pub fn render(facts: &GateFacts, rows: &[FeedRow], chain: &ChainRecord) -> String {
    let mut md = String::new();
    let b = &facts.bounds;
    let decisions: Vec<_> = rows
        .iter()
        .filter_map(|r| if let FeedRow::Decision(d) = r { Some(d) } else { None })
        .collect();
    let offchain = rows.len() - decisions.len();
    let _ = writeln!(md, "# RiskGate results\n");
    let _ = writeln!(
        md,
        "Every row below was rebuilt from the gate's `Decision` and `Settled` events; \
         `keeper report --gate {} --check` re-derives this page from chain.\n",
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
    let _ = writeln!(md, "| keeper | `{}` |", facts.keeper);
    let _ = writeln!(md, "| collateral | `{}` |", facts.collateral);
    let _ = writeln!(md, "| market factory | `{}` |\n", facts.factory);

    let models: BTreeSet<String> = decisions
        .iter()
        .filter_map(|d| match (&d.note.provider, &d.note.model) {
            (Some(p), Some(m)) => Some(format!("{p} / {m}")),
            (Some(p), None) => Some(p.clone()),
            _ => None,
        })
        .collect();
    let _ = writeln!(md, "## Models\n");
    if models.is_empty() {
        let _ = writeln!(md, "No keeper annotations (record rebuilt from chain only).\n");
    }
    for m in &models {
        let _ = writeln!(md, "- {m}");
    }
    if !models.is_empty() {
        let _ = writeln!(md);
    }

    let passes = decisions.iter().filter(|d| d.reason == 0).count();
    let _ = writeln!(md, "## Summary\n");
    let _ = writeln!(md, "- decisions on chain: {}", decisions.len());
    let _ = writeln!(md, "- passed (orders placed): {passes}");
    let _ = writeln!(md, "- refused by the gate: {}", decisions.len() - passes);
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

    let _ = writeln!(md, "## Positions and settlements\n");
    let _ = writeln!(
        md,
        "| market | fills | bought (units) | spent | settled | outcome | payout | P&L |"
    );
    let _ = writeln!(md, "| --- | ---: | ---: | ---: | --- | --- | ---: | ---: |");
    let mut markets: Vec<&str> =
        decisions.iter().filter(|d| d.filled != "0").map(|d| d.market.as_str()).collect();
    markets.dedup();
    let mut seen = BTreeSet::new();
    let mut realised: i128 = 0;
    for m in markets {
        if !seen.insert(m) {
            continue;
        }
        let fills: Vec<_> = decisions.iter().filter(|d| d.market == m && d.filled != "0").collect();
        let bought: u128 = fills.iter().map(|d| d.filled.parse::<u128>().unwrap_or(0)).sum();
        let spent: u128 = fills.iter().map(|d| d.spent.parse::<u128>().unwrap_or(0)).sum();
        let settled: Vec<_> = chain.settlements.iter().filter(|(sm, _)| sm == m).collect();
        if settled.is_empty() {
            let _ = writeln!(
                md,
                "| `{m}` | {} | {bought} | {} | open | | | |",
                fills.len(),
                units(&spent.to_string())
            );
        }
        for (_, st) in settled {
            realised += st.pnl.parse::<i128>().unwrap_or(0);
            let _ = writeln!(
                md,
                "| `{m}` | {} | {bought} | {} | block {} | {} | {} | {} |",
                fills.len(),
                units(&spent.to_string()),
                st.block,
                if st.up_won { "UP" } else { "DOWN" },
                units(&st.payout),
                units(&st.pnl)
            );
        }
    }
    let _ = writeln!(md, "\nRealised P&L: {} collateral units.\n", units(&realised.to_string()));

    let _ = writeln!(md, "## Latest rows\n");
    let _ = writeln!(
        md,
        "| block | market | raw answer | verdict | reason | failing rules | price | qty | filled |"
    );
    let _ = writeln!(md, "| ---: | --- | --- | ---: | --- | --- | ---: | ---: | ---: |");
    for d in decisions.iter().rev().take(15) {
        let rules: Vec<String> = d.failed_rules.iter().map(u8::to_string).collect();
        let short_market = d.market.get(..10).unwrap_or(&d.market);
        let _ = writeln!(
            md,
            "| {} | `{short_market}` | {} | {} | {} {} | {} | {} | {} | {} |",
            d.block,
            esc(&d.raw),
            d.verdict,
            d.reason,
            d.reason_label,
            rules.join(","),
            d.price_paid,
            d.quantity,
            d.filled
        );
    }
    md
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
