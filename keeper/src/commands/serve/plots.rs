//! The floor's charts, as series derived from the record and drawn as SVG on the server (no
//! script, no library, nothing fetched): P&L against chain time, realised and marked to
//! market; decisions per reason over time; rows failing each rule; calibration; drawdown
//! against its bound. Every distinction is carried by line style, shade or a text label as
//! well as colour, so the charts read in grey.

use super::view;
use crate::{
    domain::format::markup as esc,
    record::summary::Summary,
    record::svg::{self, doc, hhmm, shade, time_chart, Point, H, MB, ML, MR, MT, W},
};
use serde::Serialize;
use std::{collections::BTreeMap, fmt::Write};

/// Time buckets of the per-reason chart.
pub const TIME_BUCKETS: usize = 12;

/// Everything the charts draw, also served as JSON (`/api/charts`).
#[derive(Debug, Clone, Serialize)]
pub struct Series {
    /// Realised P&L after each settlement or write-off.
    pub realised: Vec<Point>,
    /// Realised P&L plus each open position marked at the last price the gate read for its
    /// side: the record summary's line ([`crate::record::summary::Summary::marked_line`]).
    pub marked: Vec<Point>,
    /// H − balance at each decision that read the book.
    pub drawdown: Vec<Point>,
    pub max_drawdown: i128,
    /// Time buckets (start times) and, per reason code, the decisions in each.
    pub bucket_starts: Vec<u64>,
    pub reasons: BTreeMap<u8, Vec<u64>>,
    /// Rows failing each rule (a row can fail several).
    pub rules: BTreeMap<u8, u64>,
}

/// The time buckets of the per-reason chart over a record whose decisions span chain times
/// `first..=last`: [`TIME_BUCKETS`] equal spans from the first decision (start times, and the
/// span).
pub fn buckets(first: Option<u64>, last: Option<u64>) -> (Vec<u64>, u64) {
    let (t0, t1) = match (first, last) {
        (Some(a), Some(b)) => (a, b.max(a + 1)),
        _ => (0, 1),
    };
    let span = (t1 - t0).div_ceil(TIME_BUCKETS as u64).max(1);
    ((0..TIME_BUCKETS as u64).map(|i| t0 + i * span).collect(), span)
}

/// The series the charts draw, from the record's aggregates: the summary's realised and marked
/// lines and rule tallies, the decisions per reason in each of `bucket_starts`' spans
/// (`reasons`), and the drawdown line (`drawdown`, H − balance at each decision that read the
/// book, thinned to its peaks by the state database's reader).
pub fn series(
    summary: &Summary,
    max_drawdown: i128,
    bucket_starts: Vec<u64>,
    reasons: BTreeMap<u8, Vec<u64>>,
    drawdown: Vec<(u64, i128)>,
) -> Series {
    let points = |v: Vec<(u64, i128)>| -> Vec<Point> {
        v.into_iter().map(|(time, value)| Point { time, value }).collect()
    };
    Series {
        realised: points(summary.realised_line()),
        marked: points(summary.marked_line()),
        drawdown: points(drawdown),
        max_drawdown,
        bucket_starts,
        reasons,
        rules: summary.failing.clone(),
    }
}

pub fn pnl_svg(s: &Series, symbol: &str) -> String {
    time_chart(
        "P&L against chain time",
        &format!("P&L ({symbol})"),
        &[
            ("realised (write-offs included)", "", &s.realised),
            ("marked to market (last bid read)", "6 4", &s.marked),
        ],
        None,
    )
}

pub fn drawdown_svg(s: &Series, symbol: &str) -> String {
    time_chart(
        "Drawdown against its bound",
        &format!("H − balance ({symbol})"),
        &[("drawdown read at each decision", "", &s.drawdown)],
        Some(("maxDrawdown (fixed at deploy)", s.max_drawdown)),
    )
}

/// Decisions per reason over time: one row per reason (labelled), one column per time bucket,
/// each cell shaded by its count and showing it.
pub fn reasons_svg(s: &Series, labels: &[String]) -> String {
    let rows = s.reasons.len().max(1) as f64;
    let h = MT + 30.0 + rows * 22.0 + 40.0;
    let row_label = |reason: u8, counts: &[u64]| {
        let label = labels.get(usize::from(reason)).map(String::as_str).unwrap_or("?");
        format!("{reason} · {label} ({})", counts.iter().sum::<u64>())
    };
    let shown: Vec<String> = s.reasons.iter().map(|(r, c)| row_label(*r, c)).collect();
    let left = svg::label_room(shown.iter().map(String::as_str));
    let cw = (W - left - MR) / TIME_BUCKETS as f64;
    let max = s.reasons.values().flat_map(|v| v.iter()).copied().max().unwrap_or(0);
    let mut b = String::new();
    for (i, t) in s.bucket_starts.iter().enumerate() {
        if i % 2 == 0 {
            let _ = write!(
                b,
                "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\" font-size=\"11\">{}</text>",
                left + cw * (i as f64 + 0.5),
                MT + 12.0,
                esc(&hhmm(*t))
            );
        }
    }
    for (row, ((_, counts), label)) in s.reasons.iter().zip(&shown).enumerate() {
        let y = MT + 24.0 + row as f64 * 22.0;
        let _ = write!(
            b,
            "<text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            left - 8.0,
            y + 15.0,
            esc(label)
        );
        for (i, n) in counts.iter().enumerate() {
            let (fill, ink) = shade(*n, max);
            let x = left + cw * i as f64;
            let _ = write!(b, "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"20\" fill=\"{fill}\" stroke=\"#ccc\"/>", cw - 1.0);
            if *n > 0 {
                let _ = write!(b, "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"{ink}\" font-size=\"11\">{n}</text>", x + cw / 2.0, y + 14.0);
            }
        }
    }
    let _ = write!(b, "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">chain time (UTC, MM-DD HH:MM, bucket starts); cell: decisions with that reason</text>", left + (W - left - MR) / 2.0, h - 14.0);
    doc(h, "Decisions per reason over time", &b)
}

/// Rows failing each rule: labelled horizontal bars with their counts.
pub fn rules_svg(s: &Series, labels: &[String]) -> String {
    let bars: Vec<(String, u64)> = s
        .rules
        .iter()
        .map(|(rule, n)| {
            let label = labels.get(usize::from(*rule)).map(String::as_str).unwrap_or("?");
            (format!("rule {rule} · {label}"), *n)
        })
        .collect();
    svg::bars("Rows failing each rule", &bars, "no row failed a rule yet")
}

/// Calibration: mean price paid against the win rate per bucket, with the diagonal, each point
/// labelled with its count.
pub fn calibration_svg(c: &view::Calibration) -> String {
    let side = H - MT - MB;
    let x = |p: f64| ML + p * side;
    let y = |p: f64| MT + (1.0 - p) * side;
    let mut b = String::new();
    let _ = write!(
        b,
        "<rect x=\"{ML}\" y=\"{MT}\" width=\"{side}\" height=\"{side}\" fill=\"none\" stroke=\"#000\"/>\
         <line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#888\" stroke-dasharray=\"4 3\"/>",
        x(0.0),
        y(0.0),
        x(1.0),
        y(1.0)
    );
    for i in 0..=10 {
        let p = i as f64 / 10.0;
        if i % 2 == 0 {
            let _ = write!(b, "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">{p:.1}</text><text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{p:.1}</text>", x(p), MT + side + 16.0, ML - 6.0, y(p) + 4.0);
        }
    }
    for bk in &c.buckets {
        let (Some(mp), Some(wr)) = (bk.mean_price, bk.win_rate) else { continue };
        let r = 3.0 + (bk.count as f64).sqrt() * 1.5;
        let _ = write!(
            b,
            "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"{r:.1}\" fill=\"#444\" fill-opacity=\"0.7\"/><text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\">n={}</text>",
            x(mp),
            y(wr),
            x(mp) + r + 3.0,
            y(wr) + 4.0,
            bk.count
        );
    }
    let _ = write!(
        b,
        "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">average price paid (the market's probability of the side bought)</text>\
         <text transform=\"translate(30,{:.1}) rotate(-90)\" text-anchor=\"middle\">how often that side won</text>\
         <text x=\"{:.1}\" y=\"{:.1}\">{} settled fills</text><text x=\"{:.1}\" y=\"{:.1}\">Brier score {}</text>\
         <text x=\"{:.1}\" y=\"{:.1}\">dashed: perfectly calibrated</text>",
        ML + side / 2.0,
        H - 12.0,
        MT + side / 2.0,
        ML + side + 30.0,
        MT + 20.0,
        c.settled,
        ML + side + 30.0,
        MT + 40.0,
        c.brier.map(|b| format!("{b:.3}")).unwrap_or_else(|| "-".into()),
        ML + side + 30.0,
        MT + 60.0
    );
    doc(H, "Calibration of the prices paid", &b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_in_a_chart_is_escaped() {
        let s = Series {
            realised: vec![],
            marked: vec![],
            drawdown: vec![],
            max_drawdown: 1,
            bucket_starts: vec![0; TIME_BUCKETS],
            reasons: [(3u8, vec![1; TIME_BUCKETS])].into_iter().collect(),
            rules: [(3u8, 2)].into_iter().collect(),
        };
        let labels: Vec<String> = (0..21).map(|_| "<script>x</script>".to_string()).collect();
        for svg in [reasons_svg(&s, &labels), rules_svg(&s, &labels)] {
            assert!(!svg.contains("<script>") && svg.contains("&lt;script&gt;"), "{svg}");
        }
    }
}
