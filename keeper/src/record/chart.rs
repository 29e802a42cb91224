//! The SVG chart linked from RESULTS.md: decisions per reason, labelled, and realised and
//! marked-to-market P&L against chain time, drawn from the record's [`Summary`] by the same SVG code as the floor's
//! charts ([`super::svg`]), in black and greys with dashes and labels, so it reads printed in
//! grey. The same record gives the same bytes, for `keeper report --check`.

use super::{
    figures,
    summary::Summary,
    svg::{self, Point},
};

/// The chart as SVG text.
pub fn render_svg(s: &Summary, labels: &[String], symbol: &str, max_drawdown: i128) -> String {
    let codes = labels.len().max(crate::kit::bindings::REASON_COUNT as usize);
    let bars: Vec<(String, u64)> = (0..codes)
        .map(|code| {
            let n = s.reason_count(code as u8);
            let label = labels.get(code).map(String::as_str).unwrap_or("?");
            let share = figures::percent(i128::from(n), i128::from(s.decisions));
            (format!("{code} · {label} ({share})"), n)
        })
        .collect();
    let reasons = svg::bars("Decisions by reason (code · label, share of all)", &bars, "");
    let line: Vec<Point> =
        s.realised_line().into_iter().map(|(time, value)| Point { time, value }).collect();
    let marked: Vec<Point> =
        s.marked_line().into_iter().map(|(time, value)| Point { time, value }).collect();
    let pnl = svg::time_chart(
        "P&L against chain time",
        &format!("P&L ({symbol})"),
        &[
            ("realised, write-offs included", "", &line),
            ("marked to market (last price read)", "6 4", &marked),
        ],
        Some(("−maxDrawdown (fixed at deploy)", -max_drawdown)),
    );
    svg::stack(&[reasons, pnl])
}
