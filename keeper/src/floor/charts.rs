//! The floor's charts, as series derived from the record and drawn as SVG on the server (no
//! script, no library, nothing fetched): P&L against chain time, realised and marked to
//! market; decisions per reason over time; rows failing each rule; calibration; drawdown
//! against its bound. Every distinction is carried by line style, shade or a text label as
//! well as colour, so the charts read in grey.

use super::{html::esc, view};
use crate::{decision::DecisionRow, format::int};
use serde::Serialize;
use std::{collections::BTreeMap, fmt::Write};

const W: f64 = 900.0;
const H: f64 = 340.0;
/// Plot margins: left, right, top, bottom.
const ML: f64 = 90.0;
const MR: f64 = 20.0;
const MT: f64 = 40.0;
const MB: f64 = 50.0;
/// Time buckets of the per-reason chart.
pub const TIME_BUCKETS: usize = 12;

/// One point of a time series: chain time and a value in collateral base units.
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct Point {
    pub time: u64,
    pub value: i128,
}

/// Everything the charts draw, also served as JSON (`/api/charts`).
#[derive(Debug, Clone, Serialize)]
pub struct Series {
    /// Realised P&L after each settlement or write-off.
    pub realised: Vec<Point>,
    /// Realised P&L plus each open position marked at the last best bid the gate read for
    /// its side in that market (no bid: 0), after each decision.
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

/// A held position while the series is built.
struct Held {
    up: bool,
    units: i128,
    spent: i128,
    mark: i128,
}

/// The value of `units` of a side at the book the gate read (UP prices): UP sells at the best
/// bid, DOWN at 1 − the best ask; no such price marks it at 0.
fn mark_price(up: bool, bid: &str, ask: &str) -> i128 {
    let one = i128::from(crate::bindings::PRICE_ONE);
    if up {
        int(bid).clamp(0, one)
    } else {
        let a = int(ask);
        if a <= 0 || a >= one {
            0
        } else {
            one - a
        }
    }
}

pub fn series(rows: &[DecisionRow], max_drawdown: i128) -> Series {
    let one = i128::from(crate::bindings::PRICE_ONE);
    // Realised changes: (time, order, delta); a position counts once, at its first closing.
    let mut realised_ev: Vec<(u64, i128)> = Vec::new();
    let mut held: BTreeMap<String, Held> = BTreeMap::new();
    let mut closed: std::collections::HashSet<String> = Default::default();
    let mut marked = Vec::new();
    let mut drawdown = Vec::new();
    let mut rules: BTreeMap<u8, u64> = BTreeMap::new();
    for d in rows {
        for r in &d.failed_rules {
            *rules.entry(*r).or_default() += 1;
        }
        if let Some(dd) = crate::recorder::summary::drawdown(d) {
            drawdown.push(Point { time: d.time, value: dd });
        }
        if let Some(b) = &d.book {
            if let Some(h) = held.get_mut(&d.market) {
                h.mark = mark_price(h.up, &b.best_bid, &b.best_ask);
            }
        }
        if int(&d.filled) > 0 && !closed.contains(&d.market) {
            let up = d.verdict == crate::bindings::verdict::BUY_UP;
            let avg = d.average_price_paid.as_deref().map(int).unwrap_or(0);
            let h =
                held.entry(d.market.clone()).or_insert(Held { up, units: 0, spent: 0, mark: avg });
            h.units += int(&d.filled);
            h.spent += int(&d.spent);
        }
        if let Some(p) = view::row_pnl(d) {
            let t = d.settlement.as_ref().map(|s| s.time).filter(|t| *t > 0).unwrap_or(d.time);
            let t = d
                .write_off
                .as_ref()
                .map(|w| w.time)
                .filter(|_| d.settlement.is_none())
                .unwrap_or(t);
            realised_ev.push((t.max(d.time), p));
            if d.settlement.is_some() || d.write_off.is_some() {
                closed.insert(d.market.clone());
            }
        }
        let realised_now: i128 =
            realised_ev.iter().filter(|(t, _)| *t <= d.time).map(|(_, p)| p).sum();
        let open: i128 = held
            .iter()
            .filter(|(m, _)| !closed.contains(*m))
            .map(|(_, h)| h.units * h.mark / one - h.spent)
            .sum();
        marked.push(Point { time: d.time, value: realised_now + open });
    }
    realised_ev.sort_by_key(|(t, _)| *t);
    let mut total = 0;
    // Realised P&L is 0 from the first decision until something closes.
    let start = rows.first().map(|d| Point { time: d.time, value: 0 });
    let realised = start
        .into_iter()
        .chain(realised_ev.iter().map(|(t, p)| {
            total += p;
            Point { time: *t, value: total }
        }))
        .collect();
    let (t0, t1) = match (rows.first(), rows.last()) {
        (Some(a), Some(b)) => (a.time, b.time.max(a.time + 1)),
        _ => (0, 1),
    };
    let span = (t1 - t0).div_ceil(TIME_BUCKETS as u64).max(1);
    let bucket_starts: Vec<u64> = (0..TIME_BUCKETS as u64).map(|i| t0 + i * span).collect();
    let mut reasons: BTreeMap<u8, Vec<u64>> = BTreeMap::new();
    for d in rows {
        let i = (((d.time - t0) / span) as usize).min(TIME_BUCKETS - 1);
        reasons.entry(d.reason).or_insert_with(|| vec![0; TIME_BUCKETS])[i] += 1;
    }
    Series { realised, marked, drawdown, max_drawdown, bucket_starts, reasons, rules }
}

/// An SVG document of `W`×`h` with a title.
fn doc(h: f64, title: &str, body: &str) -> String {
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {W} {h}\" width=\"{W}\" height=\"{h}\" \
         font-family=\"DejaVu Sans, sans-serif\" font-size=\"12\"><rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\
         <text x=\"{ML}\" y=\"22\" font-size=\"15\" font-weight=\"bold\">{}</text>{body}</svg>\n",
        esc(title)
    )
}

fn hhmm(t: u64) -> String {
    crate::format::utc_date(t).map(|d| d[5..].to_string()).unwrap_or_else(|| t.to_string())
}

/// A line chart of `lines` (label, dash pattern, points) against chain time, amounts in
/// collateral units; `bound` draws a labelled horizontal line.
fn time_chart(
    title: &str,
    y_label: &str,
    lines: &[(&str, &str, &[Point])],
    bound: Option<(&str, i128)>,
) -> String {
    let pts: Vec<&Point> = lines.iter().flat_map(|(_, _, p)| p.iter()).collect();
    if pts.is_empty() {
        return doc(120.0, title, "<text x=\"90\" y=\"70\">nothing to draw yet</text>");
    }
    let (mut t0, mut t1) = (u64::MAX, 0);
    let (mut v0, mut v1) = (0i128, 0i128);
    for p in &pts {
        t0 = t0.min(p.time);
        t1 = t1.max(p.time);
        v0 = v0.min(p.value);
        v1 = v1.max(p.value);
    }
    if let Some((_, b)) = bound {
        v1 = v1.max(b);
        v0 = v0.min(b);
    }
    if t1 == t0 {
        t1 = t0 + 1;
    }
    if v1 == v0 {
        v1 = v0 + 1_000_000;
    }
    let x = |t: u64| ML + (t - t0) as f64 / (t1 - t0) as f64 * (W - ML - MR);
    let y = |v: i128| MT + (v1 - v) as f64 / (v1 - v0) as f64 * (H - MT - MB);
    let mut b = String::new();
    // Axes, zero line, ticks.
    let _ =
        write!(b, "<line x1=\"{ML}\" y1=\"{MT}\" x2=\"{ML}\" y2=\"{}\" stroke=\"#000\"/>", H - MB);
    let _ = write!(
        b,
        "<line x1=\"{ML}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#000\"/>",
        H - MB,
        W - MR,
        H - MB
    );
    for i in 0..=4 {
        let v = v0 + (v1 - v0) * i / 4;
        let _ = write!(
            b,
            "<line x1=\"{}\" y1=\"{y:.1}\" x2=\"{ML}\" y2=\"{y:.1}\" stroke=\"#000\"/><text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{:.2}</text>",
            ML - 4.0,
            ML - 6.0,
            y(v) + 4.0,
            v as f64 / 1e6,
            y = y(v)
        );
        let t = t0 + (t1 - t0) * i as u64 / 4;
        let anchor = match i {
            0 => "start",
            4 => "end",
            _ => "middle",
        };
        let _ = write!(
            b,
            "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"{anchor}\">{}</text>",
            x(t),
            H - MB + 16.0,
            esc(&hhmm(t))
        );
    }
    if v0 < 0 && v1 > 0 {
        let _ = write!(b, "<line x1=\"{ML}\" y1=\"{:.1}\" x2=\"{}\" y2=\"{:.1}\" stroke=\"#888\" stroke-width=\"0.8\"/>", y(0), W - MR, y(0));
    }
    let _ = write!(
        b,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">chain time (UTC, MM-DD HH:MM)</text>\
         <text transform=\"translate(18,{}) rotate(-90)\" text-anchor=\"middle\">{}</text>",
        ML + (W - ML - MR) / 2.0,
        H - 12.0,
        MT + (H - MT - MB) / 2.0,
        esc(y_label)
    );
    if let Some((label, v)) = bound {
        let _ = write!(
            b,
            "<line x1=\"{ML}\" y1=\"{:.1}\" x2=\"{}\" y2=\"{:.1}\" stroke=\"#000\" stroke-dasharray=\"2 3\"/>\
             <text x=\"{}\" y=\"{:.1}\">{}</text>",
            y(v),
            W - MR,
            y(v),
            ML + 8.0,
            y(v) + 14.0,
            esc(label)
        );
    }
    for (i, (label, dash, points)) in lines.iter().enumerate() {
        // Steps: a value holds until the next point.
        let mut path = String::new();
        let mut last: Option<i128> = None;
        // Points at one chain time collapse to the last of them (one block holds many rows).
        let collapsed: Vec<&Point> = points
            .iter()
            .enumerate()
            .filter(|(i, p)| points.get(i + 1).is_none_or(|n| n.time != p.time))
            .map(|(_, p)| p)
            .collect();
        for p in collapsed {
            let (px, py) = (x(p.time), y(p.value));
            match last {
                None => {
                    let _ = write!(path, "M{px:.1},{py:.1}");
                }
                Some(l) => {
                    let _ = write!(path, " L{px:.1},{:.1} L{px:.1},{py:.1}", y(l));
                }
            }
            last = Some(p.value);
        }
        let _ = write!(
            b,
            "<path d=\"{path}\" fill=\"none\" stroke=\"#222\" stroke-width=\"{}\" stroke-dasharray=\"{dash}\"/>",
            if i == 0 { 2.2 } else { 1.4 }
        );
        let ly = MT + 4.0 + 16.0 * i as f64;
        let _ = write!(
            b,
            "<line x1=\"{}\" y1=\"{ly}\" x2=\"{}\" y2=\"{ly}\" stroke=\"#222\" stroke-width=\"{}\" stroke-dasharray=\"{dash}\"/><text x=\"{}\" y=\"{}\">{}</text>",
            W - MR - 300.0,
            W - MR - 265.0,
            if i == 0 { 2.2 } else { 1.4 },
            W - MR - 258.0,
            ly + 4.0,
            esc(label)
        );
    }
    doc(H, title, &b)
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

/// Grey shade of a count against the largest (white for 0, near black for the most).
fn shade(n: u64, max: u64) -> (String, &'static str) {
    if n == 0 || max == 0 {
        return ("#ffffff".into(), "#999");
    }
    let level = 235 - (n as f64 / max as f64 * 200.0) as u32;
    (format!("#{level:02x}{level:02x}{level:02x}"), if level < 140 { "#fff" } else { "#000" })
}

/// Decisions per reason over time: one row per reason (labelled), one column per time bucket,
/// each cell shaded by its count and showing it.
pub fn reasons_svg(s: &Series, labels: &[String]) -> String {
    let rows = s.reasons.len().max(1) as f64;
    let h = MT + 30.0 + rows * 22.0 + 40.0;
    let left = 340.0;
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
    for (row, (reason, counts)) in s.reasons.iter().enumerate() {
        let y = MT + 24.0 + row as f64 * 22.0;
        let label = labels.get(usize::from(*reason)).map(String::as_str).unwrap_or("?");
        let total: u64 = counts.iter().sum();
        let _ = write!(
            b,
            "<text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{} · {} ({total})</text>",
            left - 8.0,
            y + 15.0,
            reason,
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
    let rows = s.rules.len().max(1) as f64;
    let h = MT + rows * 22.0 + 30.0;
    let left = 340.0;
    let max = s.rules.values().copied().max().unwrap_or(1).max(1);
    let mut b = String::new();
    if s.rules.is_empty() {
        b.push_str("<text x=\"90\" y=\"70\">no row failed a rule yet</text>");
    }
    for (row, (rule, n)) in s.rules.iter().enumerate() {
        let y = MT + row as f64 * 22.0;
        let label = labels.get(usize::from(*rule)).map(String::as_str).unwrap_or("?");
        let w = (*n as f64 / max as f64) * (W - left - MR - 60.0);
        let _ = write!(
            b,
            "<text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">rule {rule} · {}</text><rect x=\"{left}\" y=\"{y:.1}\" width=\"{w:.1}\" height=\"16\" fill=\"#555\"/><text x=\"{:.1}\" y=\"{:.1}\">{n}</text>",
            left - 8.0,
            y + 13.0,
            esc(label),
            left + w + 6.0,
            y + 13.0
        );
    }
    doc(h, "Rows failing each rule", &b)
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
    fn a_down_position_is_marked_at_one_minus_the_ask_and_no_price_marks_it_at_zero() {
        // UP sells at the best bid: 0.40. DOWN sells at 1 − the UP ask: 1 − 0.45 = 0.55.
        assert_eq!(mark_price(true, "400000", "450000"), 400_000);
        assert_eq!(mark_price(false, "400000", "450000"), 550_000);
        // No bid, or no ask (0, or the book's "none" of 1.0 and above): nothing to sell at.
        assert_eq!(mark_price(true, "0", "450000"), 0);
        assert_eq!(mark_price(false, "400000", "0"), 0);
        assert_eq!(mark_price(false, "400000", "1000000"), 0);
    }

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
