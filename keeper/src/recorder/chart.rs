//! The SVG chart linked from RESULTS.md: decisions per reason code and cumulative realised P&L,
//! drawn with plotters' SVG backend.

use super::{summary::Summary, RecordError, Result};
use plotters::prelude::*;

/// Pixels left blank on each side of a bar.
const BAR_MARGIN_PX: u32 = 4;

/// The chart as SVG text: the same bytes for the same record, every time.
pub fn render_svg(s: &Summary, labels: &[String]) -> Result<String> {
    let counts: Vec<u32> = (0..labels.len().max(crate::bindings::REASON_COUNT as usize))
        .map(|code| u32::try_from(s.reason_count(code as u8)).unwrap_or(u32::MAX))
        .collect();
    let mut cumulative = vec![(0i32, 0f64)];
    let mut acc = 0f64;
    // Write-offs count as losses when they happen, late payouts as gains when they come.
    for (i, r) in s.realised.iter().enumerate() {
        acc += r.2 as f64 / 1e6;
        cumulative.push((i as i32 + 1, acc));
    }
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (960, 400)).into_drawing_area();
        let e = |x: DrawingAreaErrorKind<std::io::Error>| RecordError::Chart(Box::new(x));
        root.fill(&WHITE).map_err(e)?;
        let (left, right) = root.split_horizontally(520);
        let max_count = counts.iter().copied().max().unwrap_or(1).max(1);
        let mut bars = ChartBuilder::on(&left)
            .caption("Decisions by reason code", ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(30)
            .y_label_area_size(40)
            .build_cartesian_2d(
                (0u32..counts.len() as u32 - 1).into_segmented(),
                0u32..max_count + 1,
            )
            .map_err(e)?;
        bars.configure_mesh()
            .x_desc("reason code")
            .y_desc("rows")
            .disable_x_mesh()
            .draw()
            .map_err(e)?;
        // One rectangle per code, in code order. (plotters' `Histogram` sums its data in a
        // HashMap and so emits the bars in a different order on every run; the chart must be
        // the same bytes every time it is rendered, for `keeper report --check`.)
        bars.draw_series(counts.iter().enumerate().map(|(c, n)| {
            let c = c as u32;
            let mut bar = Rectangle::new(
                [(SegmentValue::Exact(c), 0), (SegmentValue::Exact(c + 1), *n)],
                BLUE.filled(),
            );
            bar.set_margin(0, 0, BAR_MARGIN_PX, BAR_MARGIN_PX);
            bar
        }))
        .map_err(e)?;

        let (lo, hi) =
            cumulative.iter().fold((0f64, 0f64), |(lo, hi), (_, v)| (lo.min(*v), hi.max(*v)));
        let pad = ((hi - lo) * 0.1).max(0.5);
        let n = cumulative.len() as i32;
        let mut pnl = ChartBuilder::on(&right)
            .caption("Cumulative realised P&L (tUSD)", ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(30)
            .y_label_area_size(50)
            .build_cartesian_2d(0i32..n.max(1), (lo - pad)..(hi + pad))
            .map_err(e)?;
        pnl.configure_mesh().x_desc("settlements and write-offs").draw().map_err(e)?;
        pnl.draw_series(LineSeries::new(cumulative.iter().copied(), &RED)).map_err(e)?;
        root.present().map_err(e)?;
    }
    Ok(svg)
}
