//! The two-panel media/bulk figure: stacked throughput areas under a capacity ceiling on
//! top, per-frame delays as dots below, on a shared time axis.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::data::{decimate, x_range, y_range};
use crate::render::{
    DrawResult, Figure, center_nudge, fit_text, font, no_data, render, text_width, titled,
};
use crate::spec::Series;
use crate::style::{
    AXIS_DESC_SIZE, LEGEND_GAP, LEGEND_PAD, LEGEND_SIZE, LEGEND_SWATCH, PLOT_TOP, TICK_SIZE,
    X_LABEL_AREA, X_TICKS, colour,
};
use crate::ticks::{TickFormat, format_sig};
use crate::{PlotError, WIDTH};

/// Height of a [`stacked_panel_chart`], in pixels (its width is [`WIDTH`]).
pub const STACKED_PANEL_HEIGHT: u32 = 900;

/// Palette index of the first dot series (see `stacked_panel_chart`).
const FIRST_DOT_COLOUR: usize = 3;

/// A two-panel figure of how traffic classes share a link over time: what
/// [`stacked_panel_chart`] draws.
///
/// The upper panel stacks `layers` as filled areas (first at the bottom) under an optional
/// `ceiling` step line (e.g. the link capacity); the lower panel shows `bottom_series` as
/// dots (e.g. one per video frame: capture time, delay) with an optional dashed
/// `bottom_threshold` line (e.g. the deadline). Both panels share the x axis.
#[derive(Debug, Clone, Copy)]
pub struct StackedPanelChart<'a> {
    /// Printed above the figure.
    pub title: &'a str,
    /// X axis description (shared by both panels), with its unit, e.g. `"time (s)"`.
    pub x_label: &'a str,
    /// Upper panel's y axis description, e.g. `"throughput (Mbit/s)"`.
    pub top_y_label: &'a str,
    /// The stacked areas, bottom first, in legend order. Layers are stacked on the union of
    /// their x values, linearly interpolated between a layer's own points and 0 outside its
    /// first..last x, so layers sharing one x grid stack exactly. Non-finite points are
    /// skipped; negative values count as 0.
    pub layers: &'a [Series],
    /// A line drawn over the areas as a step function (each y held until the next point's x,
    /// the last one to the end of the x range), thick and black, e.g. the link capacity.
    pub ceiling: Option<&'a Series>,
    /// Lower panel's y axis description, e.g. `"frame delay (ms)"`.
    pub bottom_y_label: &'a str,
    /// The lower panel's dot series, in legend order (later series are drawn on top), e.g.
    /// delivered frames and late frames.
    pub bottom_series: &'a [Series],
    /// A dashed horizontal reference line in the lower panel: `(legend label, y)`, e.g.
    /// `("deadline (175 ms)", 175.0)`.
    pub bottom_threshold: Option<(&'a str, f64)>,
    /// Upper bound of the lower panel's y axis. Points above it are drawn as small
    /// triangles on the panel's top edge, and the legend says how many were clipped
    /// (`"> 1000 ms (271 clipped)"`, the unit taken from the axis description's last
    /// parentheses).
    pub bottom_y_max: Option<f64>,
}

/// Writes `<stem>.png` (1200×900) and `<stem>.svg` side by side (creating the directory if
/// needed) and returns both paths, PNG first.
///
/// The upper panel takes about 62 % of the plotting height. Layer `i` is filled with a light
/// tint of series colour `i`, edged in the full colour; the lower panel's series `j` has
/// series colour `layers.len() + j`, so no two legend entries share a colour. Each panel has
/// its legend box to its right, aligned with its top. A panel with nothing to draw shows
/// "no data".
pub fn stacked_panel_chart(
    stem: &Path,
    chart: &StackedPanelChart,
) -> Result<[PathBuf; 2], PlotError> {
    render(stem, &PanelFigure::new(chart))
}

/// Fraction of the plotting height given to the upper panel.
const TOP_SHARE: f64 = 0.62;
/// Gap between the upper panel's plotting area and the lower panel's.
const PANEL_GAP: u32 = 22;
/// Height under the upper panel's plotting area (tick marks only, no labels).
const TOP_X_AREA: u32 = 6;
const TOP_Y_TICKS: usize = 8;
const BOTTOM_Y_TICKS: usize = 6;
const DOT_RADIUS: i32 = 2;
const CEILING_WIDTH: u32 = 3;
const CEILING_COLOUR: RGBColor = RGBColor(0x1A, 0x1A, 0x1A);
const THRESHOLD_COLOUR: RGBColor = RGBColor(0x33, 0x33, 0x33);
const CLIPPED_NOTE_COLOUR: RGBColor = RGBColor(0x55, 0x55, 0x55);
/// Opacity of a layer's colour in its (opaque) fill, mixed with white.
const FILL_STRENGTH: f64 = 0.45;

/// `c` mixed with white, opaque, so fills can be painted over each other.
fn tint(c: RGBColor, strength: f64) -> RGBColor {
    let mix = |v: u8| (v as f64 * strength + 255.0 * (1.0 - strength)).round() as u8;
    RGBColor(mix(c.0), mix(c.1), mix(c.2))
}

/// What a legend row shows left of its label.
#[derive(Clone, Copy)]
enum Key {
    /// A filled box in the tint, edged in the colour.
    Area(RGBColor),
    /// A solid line of the given width.
    Line(RGBColor, u32),
    /// A dashed line.
    Dashed(RGBColor),
    /// A dot.
    Dot(RGBColor),
    /// A triangle on a short bar (points clipped at the top edge).
    Clipped(RGBColor),
}

struct LegendRow {
    label: String,
    key: Key,
}

/// A stacked-area panel over a dot panel, prepared for drawing.
struct PanelFigure<'a> {
    title: &'a str,
    x_label: &'a str,
    top_y_label: &'a str,
    bottom_y_label: &'a str,
    x: (f64, f64),
    top_y: (f64, f64),
    bottom_y: (f64, f64),
    /// Cumulative top edge of each layer (bottom first), with the layer's colour.
    bands: Vec<(RGBColor, Vec<(f64, f64)>)>,
    /// The ceiling as step-function vertices.
    ceiling: Vec<(f64, f64)>,
    /// Dots not clipped, per series.
    dots: Vec<(RGBColor, Vec<(f64, f64)>)>,
    /// X of the clipped dots, per series.
    clipped: Vec<(RGBColor, Vec<f64>)>,
    threshold: Option<f64>,
    top_legend: Vec<LegendRow>,
    bottom_legend: Vec<LegendRow>,
}

fn finite(points: &[(f64, f64)]) -> Vec<(f64, f64)> {
    points
        .iter()
        .copied()
        .filter(|(x, y)| x.is_finite() && y.is_finite())
        .collect()
}

/// `pts` (sorted by x, non-empty) at `x`: linear between points, 0 outside first..last x.
fn value_at(pts: &[(f64, f64)], x: f64) -> f64 {
    let (first, last) = (pts[0].0, pts[pts.len() - 1].0);
    if x < first || x > last {
        return 0.0;
    }
    let i = pts.partition_point(|p| p.0 < x);
    let b = pts[i];
    if b.0 == x || i == 0 {
        return b.1;
    }
    let a = pts[i - 1];
    a.1 + (b.1 - a.1) * (x - a.0) / (b.0 - a.0)
}

/// Cumulative sums of `layers` (each sorted by x, negatives as 0) on the union x grid.
fn stack(layers: &[Vec<(f64, f64)>]) -> Vec<Vec<(f64, f64)>> {
    let mut grid: Vec<f64> = layers.iter().flatten().map(|p| p.0).collect();
    grid.sort_by(f64::total_cmp);
    grid.dedup();
    let mut sum = vec![0.0; grid.len()];
    layers
        .iter()
        .map(|pts| {
            if !pts.is_empty() {
                for (s, &x) in sum.iter_mut().zip(&grid) {
                    *s += value_at(pts, x).max(0.0);
                }
            }
            grid.iter().copied().zip(sum.iter().copied()).collect()
        })
        .collect()
}

/// Step-function vertices of `pts` (sorted by x): each y held until the next x, the last
/// one until `x_end`.
fn steps(pts: &[(f64, f64)], x_end: f64) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(2 * pts.len() + 1);
    for (i, &(x, y)) in pts.iter().enumerate() {
        if i > 0 {
            out.push((x, pts[i - 1].1));
        }
        out.push((x, y));
    }
    if let Some(&(x, y)) = pts.last()
        && x_end > x
    {
        out.push((x_end, y));
    }
    out
}

/// The unit in the last parentheses of an axis description (`"delay (ms)"` → `"ms"`).
fn unit_of(label: &str) -> Option<&str> {
    let open = label.rfind('(')?;
    let close = open + label[open..].find(')')?;
    Some(label[open + 1..close].trim()).filter(|u| !u.is_empty())
}

impl<'a> PanelFigure<'a> {
    fn new(c: &StackedPanelChart<'a>) -> Self {
        let mut layers: Vec<Vec<(f64, f64)>> = c.layers.iter().map(|s| finite(&s.points)).collect();
        for l in &mut layers {
            l.sort_by(|a, b| a.0.total_cmp(&b.0));
        }
        let mut ceiling = c.ceiling.map(|s| finite(&s.points)).unwrap_or_default();
        ceiling.sort_by(|a, b| a.0.total_cmp(&b.0));
        let series: Vec<Vec<(f64, f64)>> =
            c.bottom_series.iter().map(|s| finite(&s.points)).collect();

        let x = x_range(
            layers
                .iter()
                .chain([&ceiling])
                .chain(&series)
                .flatten()
                .map(|p| p.0),
            0.0,
        );

        let cumulative = stack(&layers);
        let top_y = y_range(
            cumulative
                .last()
                .into_iter()
                .flatten()
                .chain(&ceiling)
                .map(|p| p.1),
        );
        let bands = cumulative
            .into_iter()
            .enumerate()
            .map(|(i, pts)| (colour(i), decimate(pts, 2 * WIDTH as usize)))
            .collect();
        let ceiling = steps(&ceiling, x.1);

        let threshold = c.bottom_threshold.map(|t| t.1).filter(|t| t.is_finite());
        let mut bottom_y = y_range(series.iter().flatten().map(|p| p.1).chain(threshold));
        let y_max = c.bottom_y_max.filter(|m| m.is_finite() && *m > bottom_y.0);
        if let Some(m) = y_max {
            bottom_y.1 = bottom_y.1.min(m);
        }
        // Dots take the colours after the layers', but never before the fourth: the same dot
        // series keeps its colour in figures with two layers (one connection's media and
        // bulk) and with three (plus a competitor), so figures compare side by side.
        let first_dot = c.layers.len().max(FIRST_DOT_COLOUR);
        let mut dots = Vec::with_capacity(series.len());
        let mut clipped = Vec::with_capacity(series.len());
        let mut n_clipped = 0;
        for (j, pts) in series.into_iter().enumerate() {
            let col = colour(first_dot + j);
            let (inside, above): (Vec<_>, Vec<_>) =
                pts.into_iter().partition(|p| p.1 <= bottom_y.1);
            n_clipped += above.len();
            dots.push((col, inside));
            clipped.push((col, above.into_iter().map(|p| p.0).collect()));
        }

        let mut top_legend: Vec<LegendRow> = c
            .layers
            .iter()
            .enumerate()
            .map(|(i, s)| LegendRow {
                label: s.label.clone(),
                key: Key::Area(colour(i)),
            })
            .collect();
        if let Some(s) = c.ceiling {
            top_legend.push(LegendRow {
                label: s.label.clone(),
                key: Key::Line(CEILING_COLOUR, CEILING_WIDTH),
            });
        }
        let mut bottom_legend: Vec<LegendRow> = c
            .bottom_series
            .iter()
            .enumerate()
            .map(|(j, s)| LegendRow {
                label: s.label.clone(),
                key: Key::Dot(colour(first_dot + j)),
            })
            .collect();
        if let Some((label, _)) = c.bottom_threshold {
            bottom_legend.push(LegendRow {
                label: label.to_string(),
                key: Key::Dashed(THRESHOLD_COLOUR),
            });
        }
        if n_clipped > 0 {
            let unit = unit_of(c.bottom_y_label).map_or(String::new(), |u| format!(" {u}"));
            bottom_legend.push(LegendRow {
                label: format!(
                    "> {}{unit} ({n_clipped} clipped)",
                    format_sig(bottom_y.1, 4)
                ),
                key: Key::Clipped(CLIPPED_NOTE_COLOUR),
            });
        }

        PanelFigure {
            title: c.title,
            x_label: c.x_label,
            top_y_label: c.top_y_label,
            bottom_y_label: c.bottom_y_label,
            x,
            top_y,
            bottom_y,
            bands,
            ceiling,
            dots,
            clipped,
            threshold: threshold.filter(|t| *t >= bottom_y.0 && *t <= bottom_y.1),
            top_legend,
            bottom_legend,
        }
    }
}

type Plot<'b, DB> = ChartContext<'b, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// Draws `points` as a polyline; on the bitmap backend as separate segments (plotters' wide
/// polylines spike out at sharp turns there).
fn polyline<DB: DrawingBackend>(
    chart: &mut Plot<'_, DB>,
    root: &DrawingArea<DB, Shift>,
    points: &[(f64, f64)],
    style: ShapeStyle,
    vector: bool,
) -> DrawResult<DB> {
    if vector {
        chart.draw_series(LineSeries::new(points.iter().copied(), style))?;
        return Ok(());
    }
    let mut px: Vec<(i32, i32)> = Vec::with_capacity(points.len());
    for p in points {
        let q = chart.backend_coord(p);
        if px.last() != Some(&q) {
            px.push(q);
        }
    }
    for w in px.windows(2) {
        root.draw(&PathElement::new(vec![w[0], w[1]], style))?;
    }
    Ok(())
}

/// Draws a step line (horizontal and vertical segments only); on the bitmap backend as
/// rectangles, which join cleanly at the corners.
fn step_line<DB: DrawingBackend>(
    chart: &mut Plot<'_, DB>,
    root: &DrawingArea<DB, Shift>,
    points: &[(f64, f64)],
    colour: RGBColor,
    width: u32,
    vector: bool,
) -> DrawResult<DB> {
    if vector {
        chart.draw_series(LineSeries::new(
            points.iter().copied(),
            colour.stroke_width(width),
        ))?;
        return Ok(());
    }
    let lo = (width as i32 - 1) / 2;
    let hi = width as i32 - 1 - lo;
    for w in points.windows(2) {
        let (a, b) = (chart.backend_coord(&w[0]), chart.backend_coord(&w[1]));
        let (x0, x1) = (a.0.min(b.0), a.0.max(b.0));
        let (y0, y1) = (a.1.min(b.1), a.1.max(b.1));
        root.draw(&Rectangle::new(
            [(x0 - lo, y0 - lo), (x1 + hi, y1 + hi)],
            colour.filled(),
        ))?;
    }
    Ok(())
}

/// The axis styling shared by both panels.
fn mesh<DB: DrawingBackend>(
    chart: &mut Plot<'_, DB>,
    vector: bool,
    x_ticks: (usize, &dyn Fn(&f64) -> String),
    y_ticks: (usize, &dyn Fn(&f64) -> String),
    x_desc: Option<&str>,
    y_desc: &str,
) -> DrawResult<DB> {
    let mut m = chart.configure_mesh();
    m.set_all_tick_mark_size(5)
        .y_label_offset(center_nudge(vector, TICK_SIZE))
        .x_labels(x_ticks.0)
        .y_labels(y_ticks.0)
        .x_label_formatter(x_ticks.1)
        .y_label_formatter(y_ticks.1)
        .y_desc(y_desc)
        .label_style(font(TICK_SIZE))
        .axis_desc_style(font(AXIS_DESC_SIZE))
        .bold_line_style(BLACK.mix(0.12))
        .light_line_style(TRANSPARENT)
        .axis_style(BLACK.mix(0.75).stroke_width(1));
    if let Some(d) = x_desc {
        m.x_desc(d);
    }
    m.draw()
}

/// Draws a legend box at `(LEGEND_GAP, top)` of `area`, `width` wide.
fn legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    rows: &[(String, Key)],
    top: i32,
    width: u32,
    size: f64,
    vector: bool,
) -> DrawResult<DB> {
    if rows.is_empty() {
        return Ok(());
    }
    let style = font(size);
    let row = (size * 1.45).round() as i32;
    let (x0, y0) = (LEGEND_GAP as i32, top);
    let (x1, y1) = (
        (width - 2) as i32,
        y0 + row * rows.len() as i32 + 2 * LEGEND_PAD as i32,
    );
    area.draw(&Rectangle::new([(x0, y0), (x1, y1)], WHITE.filled()))?;
    area.draw(&Rectangle::new(
        [(x0, y0), (x1, y1)],
        BLACK.mix(0.35).stroke_width(1),
    ))?;
    for (i, (label, key)) in rows.iter().enumerate() {
        let cy = y0 + LEGEND_PAD as i32 + row * i as i32 + row / 2;
        let sx = x0 + LEGEND_PAD as i32;
        let ex = sx + LEGEND_SWATCH as i32;
        let mid = (sx + ex) / 2;
        match *key {
            Key::Area(c) => {
                let h = (row as f64 * 0.3).round() as i32;
                area.draw(&Rectangle::new(
                    [(sx, cy - h), (ex, cy + h)],
                    tint(c, FILL_STRENGTH).filled(),
                ))?;
                area.draw(&PathElement::new(
                    [(sx, cy - h), (ex, cy - h)],
                    c.stroke_width(2),
                ))?;
            }
            Key::Line(c, w) => {
                area.draw(&Rectangle::new(
                    [(sx, cy - (w as i32 - 1) / 2), (ex, cy + w as i32 / 2)],
                    c.filled(),
                ))?;
            }
            Key::Dashed(c) => {
                area.draw(&DashedPathElement::new(
                    [(sx, cy), (ex, cy)],
                    7,
                    5,
                    c.stroke_width(2),
                ))?;
            }
            Key::Dot(c) => {
                area.draw(&Circle::new((mid, cy), 4, c.filled()))?;
            }
            Key::Clipped(c) => {
                area.draw(&PathElement::new(
                    [(sx, cy - 5), (ex, cy - 5)],
                    BLACK.mix(0.75).stroke_width(1),
                ))?;
                area.draw(&Polygon::new(
                    vec![(mid, cy - 4), (mid - 5, cy + 5), (mid + 5, cy + 5)],
                    c.filled(),
                ))?;
            }
        }
        area.draw(&Text::new(
            label.as_str(),
            (ex + LEGEND_PAD as i32, cy + center_nudge(vector, size)),
            style.pos(Pos::new(HPos::Left, VPos::Center)),
        ))?;
    }
    Ok(())
}

impl Figure for PanelFigure<'_> {
    fn size(&self) -> (u32, u32) {
        (WIDTH, STACKED_PANEL_HEIGHT)
    }

    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        vector: bool,
    ) -> DrawResult<DB> {
        let body = titled(root, self.title)?;
        let (body_w, body_h) = body.dim_in_pixel();

        // Vertical layout: upper plot, gap, lower plot, x labels.
        let plots_h = body_h.saturating_sub(PLOT_TOP + TOP_X_AREA + PANEL_GAP + X_LABEL_AREA);
        let top_plot_h = (plots_h as f64 * TOP_SHARE).round() as u32;
        let bottom_plot_h = plots_h - top_plot_h;
        let split_y = PLOT_TOP + top_plot_h + TOP_X_AREA;

        // One legend column for both panels; rows shrink (font down to 12) to fit a panel.
        let fit = |n: usize, h: u32| {
            let room = h as f64 - 2.0 * LEGEND_PAD as f64;
            (room / n.max(1) as f64 / 1.45).clamp(12.0, LEGEND_SIZE)
        };
        let legend_size = fit(self.top_legend.len(), top_plot_h)
            .min(fit(self.bottom_legend.len(), bottom_plot_h));
        let legend_style = font(legend_size);
        let max_label = (body_w as f64 * 0.3) as u32;
        let mut widest = 0;
        let mut fitted = |rows: &[LegendRow]| -> Result<Vec<(String, Key)>, _> {
            let mut out = Vec::with_capacity(rows.len());
            for r in rows {
                let label = fit_text(&body, &r.label, &legend_style, max_label)?;
                widest = widest.max(text_width(&body, &label, &legend_style)?);
                out.push((label, r.key));
            }
            Ok(out)
        };
        let top_rows = fitted(&self.top_legend)?;
        let bottom_rows = fitted(&self.bottom_legend)?;
        let legend_w = if top_rows.is_empty() && bottom_rows.is_empty() {
            0
        } else {
            LEGEND_SWATCH + 3 * LEGEND_PAD + widest + LEGEND_GAP
        };
        let (plots, legend_col) = body.split_horizontally(body_w - legend_w);
        let (top_area, bottom_area) = plots.split_vertically(split_y);
        let (top_legend_area, bottom_legend_area) = legend_col.split_vertically(split_y);

        // Ticks; both panels get the same y label width so their plotting areas align.
        let x_ticks = RangedCoordf64::from(self.x.0..self.x.1).key_points(X_TICKS);
        let top_ticks = RangedCoordf64::from(self.top_y.0..self.top_y.1).key_points(TOP_Y_TICKS);
        let bottom_ticks =
            RangedCoordf64::from(self.bottom_y.0..self.bottom_y.1).key_points(BOTTOM_Y_TICKS);
        let x_fmt = TickFormat::new(&x_ticks);
        let top_fmt = TickFormat::new(&top_ticks);
        let bottom_fmt = TickFormat::new(&bottom_ticks);
        let tick_style = font(TICK_SIZE);
        let mut y_tick_w = 0;
        for t in &top_ticks {
            y_tick_w = y_tick_w.max(text_width(&body, &top_fmt.format(*t), &tick_style)?);
        }
        for t in &bottom_ticks {
            y_tick_w = y_tick_w.max(text_width(&body, &bottom_fmt.format(*t), &tick_style)?);
        }
        let y_area = y_tick_w + AXIS_DESC_SIZE as u32 + 26;

        // Upper panel: stacked areas (painted top layer first, each down to the baseline,
        // so every layer's band shows between its own and the lower layer's edge), edges,
        // then the ceiling.
        let mut top = ChartBuilder::on(&top_area)
            .margin_top(PLOT_TOP)
            .margin_right(16)
            .x_label_area_size(TOP_X_AREA)
            .y_label_area_size(y_area)
            .build_cartesian_2d(self.x.0..self.x.1, self.top_y.0..self.top_y.1)?;
        mesh(
            &mut top,
            vector,
            (X_TICKS, &|_| String::new()),
            (TOP_Y_TICKS, &|v| top_fmt.format(*v)),
            None,
            self.top_y_label,
        )?;
        let base = self.top_y.0.max(0.0);
        for (c, pts) in self.bands.iter().rev() {
            if let (Some(first), Some(last)) = (pts.first(), pts.last()) {
                let mut poly = pts.clone();
                poly.push((last.0, base));
                poly.push((first.0, base));
                top.draw_series([Polygon::new(poly, tint(*c, FILL_STRENGTH).filled())])?;
            }
        }
        for (c, pts) in &self.bands {
            if pts.len() == 1 {
                top.draw_series([Circle::new(pts[0], 4, c.filled())])?;
            }
            polyline(&mut top, root, pts, c.stroke_width(2), vector)?;
        }
        step_line(
            &mut top,
            root,
            &self.ceiling,
            CEILING_COLOUR,
            CEILING_WIDTH,
            vector,
        )?;
        if self.bands.iter().all(|b| b.1.is_empty()) && self.ceiling.is_empty() {
            no_data(&top.plotting_area().strip_coord_spec(), vector)?;
        }

        // Lower panel: dots, clipped points as triangles on the top edge, the threshold on top.
        let mut bottom = ChartBuilder::on(&bottom_area)
            .margin_top(PANEL_GAP)
            .margin_right(16)
            .x_label_area_size(X_LABEL_AREA)
            .y_label_area_size(y_area)
            .build_cartesian_2d(self.x.0..self.x.1, self.bottom_y.0..self.bottom_y.1)?;
        mesh(
            &mut bottom,
            vector,
            (X_TICKS, &|v| x_fmt.format(*v)),
            (BOTTOM_Y_TICKS, &|v| bottom_fmt.format(*v)),
            Some(self.x_label),
            self.bottom_y_label,
        )?;
        let mut any = false;
        for (c, pts) in &self.dots {
            any |= !pts.is_empty();
            // One dot per pixel: identical pictures, far smaller SVGs for long runs.
            let mut seen = HashSet::new();
            let style = c.filled();
            let kept: Vec<(f64, f64)> = pts
                .iter()
                .copied()
                .filter(|p| seen.insert(bottom.backend_coord(p)))
                .collect();
            bottom.draw_series(kept.into_iter().map(|p| Circle::new(p, DOT_RADIUS, style)))?;
        }
        let top_edge = self.bottom_y.1;
        for (c, xs) in &self.clipped {
            any |= !xs.is_empty();
            let mut seen = HashSet::new();
            let style = c.filled();
            let kept: Vec<f64> = xs
                .iter()
                .copied()
                .filter(|&x| seen.insert(bottom.backend_coord(&(x, top_edge)).0))
                .collect();
            bottom.draw_series(kept.into_iter().map(|x| {
                EmptyElement::at((x, top_edge)) + Polygon::new(vec![(0, 0), (-4, 8), (4, 8)], style)
            }))?;
        }
        if let Some(t) = self.threshold {
            let (a, b) = (
                bottom.backend_coord(&(self.x.0, t)),
                bottom.backend_coord(&(self.x.1, t)),
            );
            root.draw(&DashedPathElement::new(
                [a, b],
                7,
                5,
                THRESHOLD_COLOUR.stroke_width(2),
            ))?;
        }
        if !any {
            no_data(&bottom.plotting_area().strip_coord_spec(), vector)?;
        }

        legend(
            &top_legend_area,
            &top_rows,
            PLOT_TOP as i32,
            legend_w,
            legend_size,
            vector,
        )?;
        legend(
            &bottom_legend_area,
            &bottom_rows,
            PANEL_GAP as i32,
            legend_w,
            legend_size,
            vector,
        )?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh directory under the system temp dir.
    fn temp_dir(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("satquic-plots-{}-media-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn svg_of(paths: &[PathBuf; 2]) -> String {
        let png = std::fs::read(&paths[0]).unwrap();
        assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
        let svg = std::fs::read_to_string(&paths[1]).unwrap();
        assert!(svg.starts_with("<svg"), "not an SVG");
        assert!(svg.contains(&format!("height=\"{STACKED_PANEL_HEIGHT}\"")));
        svg
    }

    /// A small deterministic generator in 0..1.
    struct Lcg(u64);
    impl Lcg {
        fn next(&mut self) -> f64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (self.0 >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    /// The thesis-style scenario: capacity 2/4/0.6/1/3/1 Mbit/s, 70 s each; media takes up
    /// to 2 Mbit/s, bulk the rest; 30 fps frame delays with bursts after each drop.
    /// The thesis-style figure of [`scenario`]'s data, as the media report draws it.
    fn sample_chart<'a>(
        layers: &'a [Series],
        capacity: &'a Series,
        frames: &'a [Series],
    ) -> StackedPanelChart<'a> {
        StackedPanelChart {
            title: "media-bulk-thesis — scheduler: balancer (cubic, seed 1)",
            x_label: "time (s)",
            top_y_label: "throughput (Mbit/s)",
            layers,
            ceiling: Some(capacity),
            bottom_y_label: "frame delay (ms)",
            bottom_series: frames,
            bottom_threshold: Some(("deadline (175 ms)", 175.0)),
            bottom_y_max: Some(1000.0),
        }
    }

    fn scenario() -> (Vec<Series>, Series, Vec<Series>) {
        let caps = [2.0, 4.0, 0.6, 1.0, 3.0, 1.0];
        let cap_at = |t: f64| caps[((t / 70.0) as usize).min(caps.len() - 1)];
        let mut rng = Lcg(1);
        let (mut media, mut bulk) = (Vec::new(), Vec::new());
        for i in 0..=840 {
            let t = i as f64 * 0.5;
            let cap = cap_at(t);
            let m = (2.0f64.min(cap * 0.92) * (0.93 + 0.07 * rng.next())).max(0.0);
            let b = (cap * (0.9 + 0.08 * rng.next()) - m).max(0.0);
            media.push((t, m));
            bulk.push((t, b));
        }
        let capacity = Series {
            label: "link capacity".into(),
            points: (0..caps.len())
                .map(|k| (k as f64 * 70.0, caps[k]))
                .chain([(420.0, caps[caps.len() - 1])])
                .collect(),
        };
        let (mut ok, mut late) = (Vec::new(), Vec::new());
        for f in 0..420 * 30 {
            let t = f as f64 / 30.0;
            let mut d = 30.0 + 120.0 * rng.next().powi(2);
            // Bursts after the drops at 140 s (4 → 0.6) and 350 s (3 → 1).
            for drop in [140.0, 350.0] {
                let since = t - drop;
                if (0.0..6.0).contains(&since) {
                    d += 5000.0 * (since / 2.0).min(1.0) * (1.0 - since / 6.0);
                }
            }
            if d > 175.0 { &mut late } else { &mut ok }.push((t, d));
        }
        (
            vec![
                Series {
                    label: "media (video call)".into(),
                    points: media,
                },
                Series {
                    label: "bulk transfer".into(),
                    points: bulk,
                },
            ],
            capacity,
            vec![
                Series {
                    label: "frame on time".into(),
                    points: ok,
                },
                Series {
                    label: "frame late".into(),
                    points: late,
                },
            ],
        )
    }

    #[test]
    fn stacked_panel_chart_writes_png_and_svg() {
        let dir = temp_dir("stacked");
        let (layers, capacity, frames) = scenario();
        let chart = sample_chart(&layers, &capacity, &frames);
        let paths = stacked_panel_chart(&dir.join("run"), &chart).unwrap();
        assert_eq!(paths[0], dir.join("run.png"));
        assert_eq!(paths[1], dir.join("run.svg"));
        let svg = svg_of(&paths);
        for t in [
            "media-bulk-thesis — scheduler: balancer (cubic, seed 1)",
            "time (s)",
            "throughput (Mbit/s)",
            "frame delay (ms)",
            "media (video call)",
            "bulk transfer",
            "link capacity",
            "frame on time",
            "frame late",
            "deadline (175 ms)",
            "&gt; 1000 ms (271 clipped)",
        ] {
            assert!(svg.contains(t), "SVG lacks {t:?}");
        }
        // 12 600 frames, thinned to one dot per pixel.
        assert!(svg.len() < 1_500_000, "SVG is {} bytes", svg.len());

        // Without the bound nothing is clipped and the note disappears.
        let chart = StackedPanelChart {
            bottom_y_max: None,
            ..chart
        };
        let svg = svg_of(&stacked_panel_chart(&dir.join("unclipped"), &chart).unwrap());
        assert!(!svg.contains("clipped"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn degenerate_stacked_panel_charts_do_not_fail() {
        let dir = temp_dir("stacked-degenerate");
        let empty = StackedPanelChart {
            title: "empty",
            x_label: "time (s)",
            top_y_label: "throughput (Mbit/s)",
            layers: &[],
            ceiling: None,
            bottom_y_label: "frame delay (ms)",
            bottom_series: &[],
            bottom_threshold: None,
            bottom_y_max: None,
        };
        assert!(
            svg_of(&stacked_panel_chart(&dir.join("empty"), &empty).unwrap()).contains("no data")
        );
        let odd_layers = [
            Series {
                label: "nan".into(),
                points: vec![(f64::NAN, 1.0), (1.0, f64::INFINITY), (2.0, -3.0)],
            },
            Series {
                label: "single".into(),
                points: vec![(5.0, 3.0)],
            },
            Series {
                label: "empty".into(),
                points: vec![],
            },
        ];
        let ceiling = Series {
            label: "cap".into(),
            points: vec![(f64::NAN, 2.0), (3.0, 4.0)],
        };
        let dots = [Series {
            label: "d".into(),
            points: vec![(1.0, f64::NAN), (2.0, 50.0), (3.0, 1e9)],
        }];
        let odd = StackedPanelChart {
            title: "odd",
            layers: &odd_layers,
            ceiling: Some(&ceiling),
            bottom_series: &dots,
            bottom_threshold: Some(("deadline", f64::NAN)),
            bottom_y_max: Some(-5.0),
            ..empty
        };
        stacked_panel_chart(&dir.join("odd"), &odd).unwrap();
        let only_top = StackedPanelChart {
            bottom_series: &[],
            bottom_threshold: Some(("deadline (175 ms)", 175.0)),
            bottom_y_max: Some(100.0),
            ..odd
        };
        let svg = svg_of(&stacked_panel_chart(&dir.join("only-top"), &only_top).unwrap());
        assert!(svg.contains("no data") && svg.contains("deadline (175 ms)"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn stacking_and_steps() {
        let a = vec![(0.0, 1.0), (2.0, 1.0)];
        let b = vec![(1.0, 2.0), (3.0, 4.0)];
        let s = stack(&[a, b]);
        assert_eq!(s[0], vec![(0.0, 1.0), (1.0, 1.0), (2.0, 1.0), (3.0, 0.0)]);
        assert_eq!(s[1], vec![(0.0, 1.0), (1.0, 3.0), (2.0, 4.0), (3.0, 4.0)]);
        assert_eq!(
            steps(&[(0.0, 2.0), (1.0, 4.0)], 3.0),
            vec![(0.0, 2.0), (1.0, 2.0), (1.0, 4.0), (3.0, 4.0)]
        );
        assert_eq!(steps(&[], 3.0), vec![]);
        assert_eq!(unit_of("frame delay (ms)"), Some("ms"));
        assert_eq!(unit_of("delay"), None);
    }

    /// Renders the thesis-style sample to `<temp>/chart-sample.png` (and `.svg`) for a visual
    /// check: `cargo test -p chart media::tests::demo -- --ignored`.
    #[test]
    #[ignore]
    fn demo() {
        let (layers, capacity, frames) = scenario();
        let chart = sample_chart(&layers, &capacity, &frames);
        let start = std::time::Instant::now();
        let paths =
            stacked_panel_chart(&std::env::temp_dir().join("chart-sample"), &chart).unwrap();
        eprintln!("{paths:?} in {:?}", start.elapsed());
        let empty = StackedPanelChart {
            title: "bulk only, no frames",
            layers: &layers[1..],
            bottom_series: &[],
            ..chart
        };
        stacked_panel_chart(&std::env::temp_dir().join("chart-sample-sparse"), &empty).unwrap();
    }
}
