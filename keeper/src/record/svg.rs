//! The charts' drawing, as SVG text written by hand (no script, no library, nothing fetched),
//! shared by RESULTS.md's chart and the floor's: line charts against chain time, labelled
//! bars, grey shades. Every distinction is carried by line style, shade or a text label as
//! well as colour, so the charts read in grey; every piece of text is escaped.

use crate::domain::format::markup as esc;
use serde::Serialize;
use std::fmt::Write;

pub const W: f64 = 900.0;
pub const H: f64 = 340.0;
/// Plot margins: left, right, top, bottom.
pub const ML: f64 = 90.0;
pub const MR: f64 = 20.0;
pub const MT: f64 = 40.0;
pub const MB: f64 = 50.0;

/// One point of a time series: chain time and a value in collateral base units.
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct Point {
    pub time: u64,
    pub value: i128,
}

/// An SVG document of `W`×`h` with a title.
pub fn doc(h: f64, title: &str, body: &str) -> String {
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {W} {h}\" width=\"{W}\" height=\"{h}\" \
         font-family=\"DejaVu Sans, sans-serif\" font-size=\"12\"><rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\
         <text x=\"{ML}\" y=\"22\" font-size=\"15\" font-weight=\"bold\">{}</text>{body}</svg>\n",
        esc(title)
    )
}

/// A chain time as `MM-DD HH:MM` (UTC).
pub fn hhmm(t: u64) -> String {
    crate::domain::format::utc_date(t).map(|d| d[5..].to_string()).unwrap_or_else(|| t.to_string())
}

/// A line chart of `lines` (label, dash pattern, points) against chain time, amounts in
/// collateral units; `bound` draws a labelled horizontal line.
pub fn time_chart(
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
    // The value axis runs between round ticks that hold every point.
    let step = tick_step(v1 - v0);
    v0 = v0.div_euclid(step) * step;
    v1 = -((-v1).div_euclid(step) * step);
    let decimals = tick_decimals(step);
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
    let mut v = v0;
    while v <= v1 {
        let _ = write!(
            b,
            "<line x1=\"{}\" y1=\"{y:.1}\" x2=\"{ML}\" y2=\"{y:.1}\" stroke=\"#000\"/><text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{:.decimals$}</text>",
            ML - 4.0,
            ML - 6.0,
            y(v) + 4.0,
            v as f64 / 1e6,
            y = y(v)
        );
        v += step;
    }
    for i in 0..=4 {
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
            // Above the line when it is the bottom of the plot (the time labels are below it).
            if v == v0 { y(v) - 5.0 } else { y(v) + 14.0 },
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

/// The distance between value ticks (1e6 units a collateral unit) for a range of `span`: 1, 2
/// or 5 times a power of ten, the smallest that gives at most 6 intervals.
pub fn tick_step(span: i128) -> i128 {
    let mut unit = 1i128;
    loop {
        for m in [1, 2, 5] {
            let step = m * unit;
            if span <= 6 * step {
                return step;
            }
        }
        unit *= 10;
    }
}

/// Decimals a tick label of `step` (1e6 units) needs: 0 from 1.0 up, 1 from 0.1, and so on.
pub fn tick_decimals(step: i128) -> usize {
    let mut d = 0;
    let mut whole = 1_000_000i128;
    while step % whole != 0 && d < 6 {
        whole /= 10;
        d += 1;
    }
    d
}

/// Grey shade of a count against the largest (white for 0, near black for the most).
pub fn shade(n: u64, max: u64) -> (String, &'static str) {
    if n == 0 || max == 0 {
        return ("#ffffff".into(), "#999");
    }
    let level = 235 - (n as f64 / max as f64 * 200.0) as u32;
    (format!("#{level:02x}{level:02x}{level:02x}"), if level < 140 { "#fff" } else { "#000" })
}

/// Where a plot starts whose rows are labelled on its left, the labels ending just before it:
/// room for the longest at about 7 px a character of 12 px DejaVu Sans, within [120, 520].
pub fn label_room<'a>(labels: impl Iterator<Item = &'a str>) -> f64 {
    let longest = labels.map(|l| l.chars().count()).max().unwrap_or(0);
    (16.0 + 7.0 * longest as f64).clamp(120.0, 520.0).round()
}

/// Labelled horizontal bars with their counts; `empty` is said when there is none.
pub fn bars(title: &str, bars: &[(String, u64)], empty: &str) -> String {
    let rows = bars.len().max(1) as f64;
    let h = MT + rows * 22.0 + 30.0;
    let left = label_room(bars.iter().map(|b| b.0.as_str()));
    let max = bars.iter().map(|b| b.1).max().unwrap_or(1).max(1);
    let mut b = String::new();
    if bars.is_empty() {
        let _ = write!(b, "<text x=\"90\" y=\"70\">{}</text>", esc(empty));
    }
    for (row, (label, n)) in bars.iter().enumerate() {
        let y = MT + row as f64 * 22.0;
        let w = (*n as f64 / max as f64) * (W - left - MR - 60.0);
        let _ = write!(
            b,
            "<text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{}</text><rect x=\"{left}\" y=\"{y:.1}\" width=\"{w:.1}\" height=\"16\" fill=\"#555\"/><text x=\"{:.1}\" y=\"{:.1}\">{n}</text>",
            left - 8.0,
            y + 13.0,
            esc(label),
            left + w + 6.0,
            y + 13.0
        );
    }
    doc(h, title, &b)
}

/// Documents from [`doc`] one under another, in one document.
pub fn stack(parts: &[String]) -> String {
    let mut body = String::new();
    let mut y = 0.0;
    for p in parts {
        // Every part starts `<svg xmlns=… viewBox="0 0 W h" width="W" height="h"`, as `doc`
        // writes it.
        let h: f64 = p
            .split_once("height=\"")
            .and_then(|(_, rest)| rest.split_once('"'))
            .and_then(|(v, _)| v.parse().ok())
            .unwrap_or(0.0);
        let _ = write!(body, "{}", p.trim_end().replacen("<svg ", &format!("<svg y=\"{y}\" "), 1));
        y += h;
    }
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {W} {y}\" width=\"{W}\" height=\"{y}\">{body}</svg>\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stacked_charts_sit_one_under_another_and_text_is_escaped() {
        let a = bars("<b>", &[("x & y".into(), 3)], "none");
        let b = bars("two", &[], "nothing <yet>");
        // One bar: MT + 1 × 22 + 30 = 92 high; none: also one row's height.
        assert!(a.contains("height=\"92\""), "{a}");
        let both = stack(&[a, b]);
        assert!(both.contains("<svg y=\"0\" ") && both.contains("<svg y=\"92\" "), "{both}");
        assert!(both.contains("height=\"184\""), "{both}");
        assert!(
            both.contains("&lt;b&gt;")
                && both.contains("x &amp; y")
                && both.contains("nothing &lt;yet&gt;")
        );
        assert!(!both.contains("<b>"));
    }

    #[test]
    fn value_ticks_are_round() {
        // 39.5 collateral units: 6 × 5 = 30 is short of it, 6 × 10 = 60 holds it.
        assert_eq!(tick_step(39_498_536), 10_000_000);
        // 0.3 units: 0.05 (6 × 0.05 = 0.30 holds it exactly).
        assert_eq!(tick_step(300_000), 50_000);
        assert_eq!(tick_step(1), 1);
        assert_eq!(
            (tick_decimals(5_000_000), tick_decimals(500_000), tick_decimals(50_000)),
            (0, 1, 2)
        );
        assert_eq!(tick_decimals(1), 6);
        // The axis of a line from −17.15 to 4.75 runs from −20 to 5 in steps of 5.
        let line = [Point { time: 1, value: -17_148_536 }, Point { time: 2, value: 4_750_000 }];
        let svg = time_chart("t", "y", &[("l", "", &line)], None);
        for label in [">-20<", ">-15<", ">-10<", ">-5<", ">0<", ">5<"] {
            assert!(svg.contains(label), "{label} in {svg}");
        }
        assert!(!svg.contains(">10<"), "{svg}");
    }

    #[test]
    fn labels_get_room_for_the_longest() {
        // 50 characters: 16 + 7 × 50 = 366 px.
        let long = "x".repeat(50);
        assert_eq!(label_room([long.as_str(), "short"].into_iter()), 366.0);
        // Bounds: none at all gets 120; a 200-character label is held to 520.
        assert_eq!(label_room(std::iter::empty()), 120.0);
        assert_eq!(label_room([&*"y".repeat(200)].into_iter()), 520.0);
    }
}
