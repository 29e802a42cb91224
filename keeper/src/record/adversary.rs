//! The adversary section of RESULTS.md: every group of rows whose scenario is labelled
//! `attack ...` (the demo's replay of issue 7's and issue 14's attacks), with what it cost the gate and the
//! bound that held. Every figure is computed from the chain record (decisions, snapshots,
//! quotes, and the settlements and write-offs their rows carry); only the grouping comes from
//! the keeper's labels, so `keeper report --check` re-derives the section like the rest of the
//! page. The rows come from the [`Summary`]'s attack groups (capped, and said so).

use super::figures::{amount_of, prob, tokens};
use super::{
    feed::DecisionRow,
    summary::{drawdown, AttackGroup, Summary},
    GateFacts,
};
use crate::{
    domain::decision::{Settlement, WriteOff},
    domain::format::int,
    kit::bindings::{reason, verdict, BPS, PRICE_ONE},
};
use std::{
    collections::{BTreeMap, BTreeSet},
    fmt::Write,
};

pub use super::summary::ATTACK_PREFIX;

/// The settlement and the write-off of each market the group bought in, once per market, in
/// the order of the group's rows.
/// Per market: its settlement, and its write-off.
type Closes<'a> = (Vec<(&'a str, &'a Settlement)>, Vec<(&'a str, &'a WriteOff)>);

fn closes(rows: &[DecisionRow]) -> Closes<'_> {
    let mut settled: Vec<(&str, &Settlement)> = Vec::new();
    let mut written: Vec<(&str, &WriteOff)> = Vec::new();
    for d in rows.iter().filter(|d| d.filled != "0") {
        if let Some(st) = &d.settlement {
            if !settled.iter().any(|(m, _)| *m == d.market) {
                settled.push((&d.market, st));
            }
        }
        if let Some(w) = &d.write_off {
            if !written.iter().any(|(m, _)| *m == d.market) {
                written.push((&d.market, w));
            }
        }
    }
    // In chain order, as the events came.
    settled.sort_by_key(|(_, s)| s.block);
    written.sort_by_key(|(_, w)| w.block);
    (settled, written)
}

/// The price of the token the row's verdict buys, in the book the gate read.
fn book_price(d: &DecisionRow) -> Option<i128> {
    let b = d.book.as_ref()?;
    match d.verdict {
        verdict::BUY_UP => Some(int(&b.best_ask)),
        verdict::BUY_DOWN => Some((PRICE_ONE as i128 - int(&b.best_bid)).max(0)),
        _ => None,
    }
}

fn count(rows: &[DecisionRow], code: u8) -> usize {
    rows.iter().filter(|d| d.reason == code).count()
}

/// The bound that held for one group, one clause per rule that refused and per write-off.
fn bounds_held(facts: &GateFacts, rows: &[DecisionRow], cost: i128) -> String {
    let b = &facts.bounds;
    let amt = |v: i128| amount_of(v, &facts.symbol);
    let pr = |v: i128| prob(&v.to_string());
    let mut out: Vec<String> = Vec::new();
    let n = rows.len();
    let of = |code: u8| count(rows, code);
    if of(reason::RESOLVER_UNTRUSTED) > 0 {
        out.push(format!(
            "rule 12 (resolver not trusted) refused {} of {n} attempts",
            of(reason::RESOLVER_UNTRUSTED)
        ));
    }
    if of(reason::CREATOR_UNTRUSTED) > 0 {
        let slots = rows.iter().filter(|d| d.filled != "0").count();
        out.push(format!(
            "rule 19 (market creator not trusted) refused {} of {n} attempts; {slots} slots taken",
            of(reason::CREATOR_UNTRUSTED)
        ));
    }
    if of(reason::NOT_ATTESTED) > 0 {
        out.push(format!(
            "21 (answer not attested) refused {} of {n} attempts",
            of(reason::NOT_ATTESTED)
        ));
    }
    if of(reason::ATTESTORS_DISAGREE) > 0 {
        out.push(format!(
            "22 (attestors disagree: no verdict reached k) refused {} of {n} attempts",
            of(reason::ATTESTORS_DISAGREE)
        ));
    }
    if let Some(secs) = rows
        .iter()
        .filter(|d| d.reason == reason::HORIZON)
        .filter_map(|d| d.book.as_ref().map(|k| k.expiry.saturating_sub(k.now)))
        .max()
    {
        out.push(format!(
            "rule 13: expiry {secs} s out > maxHorizon {} s ({} refused)",
            b.maxHorizon,
            of(reason::HORIZON)
        ));
    }
    if of(reason::DRAWDOWN) > 0 {
        let peak = rows.iter().filter_map(drawdown).max().unwrap_or(0);
        let max_dd = int(&b.maxDrawdown.to_string());
        out.push(format!(
            "rule 14 refused {} orders once H − (balance − cost) > maxDrawdown; H − balance \
             peaked at {} of {}; cost {} ≤ maxDrawdown: {}",
            of(reason::DRAWDOWN),
            amt(peak),
            amt(max_dd),
            amt(cost),
            if cost <= max_dd { "yes" } else { "NO" }
        ));
    }
    // Money moved in and out between refused attempts: H changed, and H − balance did not.
    let refused_all = rows.iter().all(|d| d.filled == "0");
    let marks: Vec<(i128, i128)> = rows
        .iter()
        .filter_map(|d| d.book.as_ref())
        .map(|k| (int(&k.high_water_mark), int(&k.collateral_available)))
        .collect();
    if let (Some(lo), Some(hi)) = (marks.iter().map(|m| m.0).min(), marks.iter().map(|m| m.0).max())
    {
        if lo != hi && refused_all {
            let gaps: BTreeSet<i128> = marks.iter().map(|(h, b)| (h - b).max(0)).collect();
            let gap = match (gaps.first(), gaps.last()) {
                (Some(a), Some(z)) if a == z => format!("stayed {}", amt(*a)),
                (Some(a), Some(z)) => {
                    format!("ranged {} to {}", amt(*a), amt(*z))
                }
                _ => String::new(),
            };
            out.push(format!(
                "H moved between {} and {} with the money put in and taken out, while H − \
                 balance {gap} at every attempt",
                amt(lo),
                amt(hi)
            ));
        }
    }
    for d in rows.iter().filter(|d| d.reason == reason::QUOTE_LIMIT) {
        if let (Some(p), Some(q)) = (book_price(d), &d.quote) {
            out.push(format!(
                "rule 15: the book moved to {} > quoted maxPricePaid {}",
                pr(p),
                prob(&q.max_price_paid)
            ));
        }
    }
    for d in rows.iter().filter(|d| d.reason == reason::EXPIRED) {
        if let (Some(k), Some(q)) = (&d.book, &d.quote) {
            out.push(format!(
                "rule 16: executed at chain time {} > deadline {} ({} s late)",
                k.now,
                q.deadline,
                k.now.saturating_sub(q.deadline)
            ));
        }
    }
    for d in rows.iter().filter(|d| d.reason == reason::OPPOSITE_SIDE) {
        // The side held, at the average price actually paid in this market.
        let held: Vec<&DecisionRow> =
            rows.iter().filter(|h| h.market == d.market && h.filled != "0").collect();
        let (filled, spent) =
            held.iter().fold((0i128, 0i128), |(f, s), h| (f + int(&h.filled), s + int(&h.spent)));
        if let (Some(p), true) = (book_price(d), filled > 0) {
            let held_price = spent * PRICE_ONE as i128 / filled;
            out.push(format!(
                "rule 17: the other side at {} refused while holding one bought at {}: the pair \
                 would have cost {} per 1 of payout",
                pr(p),
                pr(held_price),
                pr(held_price + p)
            ));
        }
    }
    for d in rows.iter().filter(|d| d.reason == reason::FILL_BELOW_MIN) {
        if let Some(a) = &d.attempted_fill {
            out.push(format!(
                "rule 18: fill {} of {} tokens < minFillBps {} bps, undone ({} not spent)",
                tokens(&a.filled),
                tokens(&d.quantity),
                b.minFillBps,
                amount_of(int(&a.spent), &facts.symbol)
            ));
        }
    }
    let passed: Vec<&DecisionRow> =
        rows.iter().filter(|d| d.reason == reason::PASS && d.filled != "0").collect();
    if !passed.is_empty() {
        let (filled, spent) =
            passed.iter().fold((0i128, 0i128), |(f, s), d| (f + int(&d.filled), s + int(&d.spent)));
        let least = passed.iter().map(|d| int(&d.filled)).min().unwrap_or(0);
        let quantity = passed.iter().map(|d| int(&d.quantity)).max().unwrap_or(0);
        let min_fill = quantity * i128::from(b.minFillBps) / BPS as i128;
        // The average price paid over the group, rounded up as the feed rounds each row's.
        let average = (spent * PRICE_ONE as i128 + filled - 1) / filled.max(1);
        let tok = |v: i128| tokens(&v.to_string());
        out.push(if passed.len() == 1 {
            format!(
                "PASS filled {} of {} tokens (minimum fill {}) at an average price of {}",
                tok(filled),
                tok(quantity),
                tok(min_fill),
                pr(average)
            )
        } else {
            format!(
                "{} PASS filled {} tokens in all, the least {} of {} (minimum fill {}), at an \
                 average price of {}",
                passed.len(),
                tok(filled),
                tok(least),
                tok(quantity),
                tok(min_fill),
                pr(average)
            )
        });
    }
    let (settlements, write_offs) = closes(rows);
    for (m, w) in write_offs {
        let settled = settlements.iter().find(|(s, _)| *s == m).map(|(_, s)| s);
        out.push(format!(
            "writeOff {} s after expiry (writeOffGrace {} s) freed the slot, {} counted as lost{}",
            w.time.saturating_sub(w.expiry),
            b.writeOffGrace,
            amount_of(int(&w.notional), &facts.symbol),
            match settled {
                Some(s) =>
                    format!("; redeemed later for {}", amount_of(int(&s.payout), &facts.symbol)),
                None => String::new(),
            }
        ));
    }
    if out.is_empty() {
        out.push("no rule refused".into());
    }
    out.join("; ")
}

/// Writes the section (nothing when no row is labelled as an attack).
pub fn render(md: &mut String, facts: &GateFacts, s: &Summary) {
    if s.attacks.is_empty() {
        return;
    }
    let _ = writeln!(md, "## Adversaries\n");
    let _ = writeln!(
        md,
        "The attacks replayed against this gate by real transactions (the demo's: issues 7 and \
         14 on a relayed gate, issue 35's compromised keeper on an attested one). Cost to the \
         gate = \
         collateral spent in the attack's markets − payouts collected there (an open or \
         written-off position counts as lost). Every figure is computed from the chain record.\n"
    );
    let _ = writeln!(
        md,
        "| attack | rows | reasons | spent | paid back | cost to the gate | bound that held |"
    );
    let _ = writeln!(md, "| --- | ---: | --- | ---: | ---: | ---: | --- |");
    for AttackGroup { label, rows, more } in &s.attacks {
        let mut reasons: BTreeMap<u8, usize> = BTreeMap::new();
        for d in rows {
            *reasons.entry(d.reason).or_default() += 1;
        }
        let reasons: Vec<String> = reasons.iter().map(|(c, n)| format!("{c} ×{n}")).collect();
        let spent: i128 = rows.iter().map(|d| int(&d.spent)).sum();
        let paid_back: i128 = closes(rows).0.iter().map(|(_, s)| int(&s.payout)).sum();
        let cost = spent - paid_back;
        let shown = if *more > 0 {
            format!("{} (the first {}; {more} more not kept)", rows.len() as u64 + more, rows.len())
        } else {
            rows.len().to_string()
        };
        let _ = writeln!(
            md,
            "| {} | {shown} | {} | {} | {} | {} | {} |",
            crate::domain::format::label_cell(label),
            reasons.join(", "),
            amount_of(spent, &facts.symbol),
            amount_of(paid_back, &facts.symbol),
            amount_of(cost, &facts.symbol),
            bounds_held(facts, rows, cost)
        );
    }
    if s.attacks_left_out > 0 {
        let _ = writeln!(
            md,
            "\n{} attack rows are past the page's caps and not shown above.",
            s.attacks_left_out
        );
    }
    let _ = writeln!(
        md,
        "\nThe drawdown invariant, balance ≥ H − maxDrawdown: the largest H − balance the gate \
         read at any decision of this record is {} of maxDrawdown {}.\n",
        amount_of(s.peak_drawdown, &facts.symbol),
        amount_of(int(&facts.bounds.maxDrawdown.to_string()), &facts.symbol)
    );
}
