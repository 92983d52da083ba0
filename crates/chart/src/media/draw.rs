//! The two-panel figure drawn: the layout (panel heights, one legend column, aligned y
//! label areas), both panels' axes and data, and the legend boxes.

use std::collections::HashSet;

use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::WIDTH;
use crate::render::{
    DrawResult, Figure, center_nudge, fit_text, font, no_data, text_width, titled,
};
use crate::style::{
    AXIS_DESC_SIZE, LEGEND_GAP, LEGEND_PAD, LEGEND_SIZE, LEGEND_SWATCH, PLOT_TOP, TICK_SIZE,
    X_LABEL_AREA, X_TICKS,
};
use crate::ticks::TickFormat;

use super::STACKED_PANEL_HEIGHT;
use super::figure::{CEILING_COLOUR, CEILING_WIDTH, Key, LegendRow, PanelFigure, THRESHOLD_COLOUR};

/// Fraction of the plotting height given to the upper panel.
const TOP_SHARE: f64 = 0.62;
/// Gap between the upper panel's plotting area and the lower panel's.
const PANEL_GAP: u32 = 22;
/// Height under the upper panel's plotting area (tick marks only, no labels).
const TOP_X_AREA: u32 = 6;
const TOP_Y_TICKS: usize = 8;
const BOTTOM_Y_TICKS: usize = 6;
const DOT_RADIUS: i32 = 2;
/// Opacity of a layer's colour in its (opaque) fill, mixed with white.
const FILL_STRENGTH: f64 = 0.45;

/// `c` mixed with white, opaque, so fills can be painted over each other.
fn tint(c: RGBColor, strength: f64) -> RGBColor {
    let mix = |v: u8| (v as f64 * strength + 255.0 * (1.0 - strength)).round() as u8;
    RGBColor(mix(c.0), mix(c.1), mix(c.2))
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
