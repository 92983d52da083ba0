//! Bar charts: one bar per `(label, value)`, vertical or, when there are many or long
//! labels, horizontal; both orientations are drawn by the same code through [`Orientation`].

use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::coord::ranged1d::{KeyPointHint, NoDefaultFormatting, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::PlotError;
use crate::data::y_range;
use crate::render::{
    DrawResult, Figure, center_nudge, fit_text, font, no_data, render, text_width, titled,
};
use crate::style::{
    AXIS_DESC_SIZE, PLOT_TOP, TICK_SIZE, VALUE_SIZE, X_LABEL_AREA, X_TICKS, Y_TICKS, colour,
};
use crate::ticks::{TickFormat, format_sig};

/// A bar chart of `(label, value)` pairs, e.g. per-flow shares of the bottleneck; bar `i` has
/// the colour of series `i` in the other charts and its value printed at its end.
///
/// Bars are vertical, with the labels under them, when there are at most 8 and the labels
/// fit; otherwise the chart turns horizontal (first bar on top). `y_label` always describes
/// the value axis (so it is the x axis description of a horizontal chart). A non-finite value
/// draws no bar and prints `n/a`.
pub fn bar_chart(
    stem: &Path,
    title: &str,
    y_label: &str,
    bars: &[(String, f64)],
) -> Result<[PathBuf; 2], PlotError> {
    render(
        stem,
        &BarFigure {
            title,
            value_label: y_label,
            bars,
        },
    )
}

/// A category axis for bar charts: positions -0.5..n-0.5, one tick at each integer.
#[derive(Clone)]
struct CategoryAxis {
    n: usize,
    inner: RangedCoordf64,
}

impl CategoryAxis {
    fn new(n: usize) -> Self {
        CategoryAxis {
            n,
            inner: (-0.5..n.max(1) as f64 - 0.5).into(),
        }
    }
}

impl Ranged for CategoryAxis {
    type FormatOption = NoDefaultFormatting;
    type ValueType = f64;
    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.inner.map(value, limit)
    }
    fn key_points<H: KeyPointHint>(&self, _hint: H) -> Vec<f64> {
        (0..self.n).map(|i| i as f64).collect()
    }
    fn range(&self) -> std::ops::Range<f64> {
        self.inner.range()
    }
}

/// Unused: bar charts always pass their own label formatter.
impl ValueFormatter<f64> for CategoryAxis {
    fn format(_value: &f64) -> String {
        String::new()
    }
}

/// Half a bar's thickness in category units: 68 % of the slot, at most 160 px.
fn bar_half_width(axis_px: u32, n: usize) -> f64 {
    let slot_px = axis_px as f64 / n.max(1) as f64;
    0.34f64.min(80.0 / slot_px.max(1.0))
}

/// A bar chart.
struct BarFigure<'a> {
    title: &'a str,
    value_label: &'a str,
    bars: &'a [(String, f64)],
}

/// Which way the bars point. A bar chart has a category axis and a value axis either way;
/// the orientation only says which is x, so one drawing routine serves both.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Orientation {
    /// Bars up from the x axis, the labels under them.
    Vertical,
    /// Bars along the x axis, first bar on top: for many bars or labels too long to fit
    /// under them.
    Horizontal,
}

impl Orientation {
    /// The chart coordinates `(x, y)` of `value` at `category`'s position.
    fn point(self, category: f64, value: f64) -> (f64, f64) {
        match self {
            Orientation::Vertical => (category, value),
            Orientation::Horizontal => (value, category),
        }
    }

    /// The position of category `i` of `n` on the category axis: `i`, or `n - 1 - i` when
    /// horizontal so that the first bar is on top.
    fn position(self, i: usize, n: usize) -> usize {
        match self {
            Orientation::Vertical => i,
            Orientation::Horizontal => n - 1 - i,
        }
    }

    /// Where a bar's value is printed, relative to the bar's end: pixel offset and text
    /// anchor, 6 px past the end (beyond the bar's tip on the side it grows to).
    fn value_text_anchor(self, negative: bool, vector: bool) -> ((i32, i32), Pos) {
        match (self, negative) {
            (Orientation::Vertical, false) => ((0, -6), Pos::new(HPos::Center, VPos::Bottom)),
            (Orientation::Vertical, true) => ((0, 6), Pos::new(HPos::Center, VPos::Top)),
            (Orientation::Horizontal, false) => (
                (6, center_nudge(vector, VALUE_SIZE)),
                Pos::new(HPos::Left, VPos::Center),
            ),
            (Orientation::Horizontal, true) => (
                (-6, center_nudge(vector, VALUE_SIZE)),
                Pos::new(HPos::Right, VPos::Center),
            ),
        }
    }
}

/// What the drawing of either orientation needs, decided before the axes exist.
struct BarLayout<'a> {
    orientation: Orientation,
    /// Whether the value axis goes below zero (then a zero line is drawn).
    below_zero: bool,
    /// Value axis tick labels.
    ticks: TickFormat,
    /// Category labels, cut to fit, in bar order.
    labels: Vec<String>,
    /// Pixel sizes of the x and y label areas.
    label_areas: (u32, u32),
    vector: bool,
    value_label: &'a str,
}

impl Figure for BarFigure<'_> {
    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        vector: bool,
    ) -> DrawResult<DB> {
        let body = titled(root, self.title)?;
        let (body_w, _) = body.dim_in_pixel();
        let n = self.bars.len();
        let tick_style = font(TICK_SIZE);

        let (lo, hi) = y_range(self.bars.iter().map(|b| b.1));
        // Room for the value printed at the end of each bar.
        let room = 0.08 * (hi - lo);
        let (lo, hi) = (if lo < 0.0 { lo - room } else { lo }, hi + room);
        let ticks = RangedCoordf64::from(lo..hi).key_points(Y_TICKS);
        let fmt = TickFormat::new(&ticks);
        let mut labels = Vec::with_capacity(n);
        let mut widest = 0;
        for (label, _) in self.bars {
            let label = fit_text(&body, label, &tick_style, (body_w as f64 * 0.4) as u32)?;
            widest = widest.max(text_width(&body, &label, &tick_style)?);
            labels.push(label);
        }
        let slot = body_w as f64 * 0.85 / n.max(1) as f64;
        let orientation = if n > 8 || widest as f64 > slot * 0.95 {
            Orientation::Horizontal
        } else {
            Orientation::Vertical
        };
        let label_areas = match orientation {
            // The category labels go left of the plot, the value ticks and description under it.
            Orientation::Horizontal => (X_LABEL_AREA, widest + 20),
            // The category labels go under the plot, the value ticks and description left of it.
            Orientation::Vertical => {
                let mut y_tick_w = 0;
                for t in &ticks {
                    y_tick_w = y_tick_w.max(text_width(&body, &fmt.format(*t), &tick_style)?);
                }
                (TICK_SIZE as u32 + 30, y_tick_w + AXIS_DESC_SIZE as u32 + 26)
            }
        };
        let layout = BarLayout {
            orientation,
            below_zero: lo < 0.0,
            ticks: fmt,
            labels,
            label_areas,
            vector,
            value_label: self.value_label,
        };
        // An f64 axis from -0.5 to n-0.5 whose only ticks are the categories.
        let categories = CategoryAxis::new(n);
        let values = RangedCoordf64::from(lo..hi);
        match orientation {
            Orientation::Vertical => self.draw_bars(&body, &layout, categories, values),
            Orientation::Horizontal => self.draw_bars(&body, &layout, values, categories),
        }
    }
}

impl BarFigure<'_> {
    /// Draws the axes, the bars and their values on `x` and `y`, one of them the category
    /// axis (as `layout.orientation` says) and the other the value axis.
    fn draw_bars<DB, X, Y>(
        &self,
        body: &DrawingArea<DB, Shift>,
        layout: &BarLayout,
        x: X,
        y: Y,
    ) -> DrawResult<DB>
    where
        DB: DrawingBackend,
        X: Ranged<ValueType = f64> + ValueFormatter<f64>,
        Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
    {
        let orientation = layout.orientation;
        let vector = layout.vector;
        let n = self.bars.len();
        let tick_style = font(TICK_SIZE);
        let value_colour = BLACK.mix(0.85);
        let value_style = font(VALUE_SIZE).color(&value_colour);
        let value_text = |v: f64| {
            if v.is_finite() {
                format_sig(v, 3)
            } else {
                "n/a".to_string()
            }
        };
        let category_label = |v: &f64| {
            let k = v.round();
            if k < 0.0 || k >= n as f64 {
                return String::new();
            }
            layout.labels[orientation.position(k as usize, n)].clone()
        };
        let value_tick = |v: &f64| layout.ticks.format(*v);

        let mut chart = ChartBuilder::on(body)
            .margin_top(PLOT_TOP)
            .margin_right(16)
            .x_label_area_size(layout.label_areas.0)
            .y_label_area_size(layout.label_areas.1)
            .build_cartesian_2d(x, y)?;
        let mut mesh = chart.configure_mesh();
        mesh.set_all_tick_mark_size(5)
            .y_label_offset(center_nudge(vector, TICK_SIZE))
            .label_style(tick_style.clone())
            .axis_desc_style(font(AXIS_DESC_SIZE))
            .bold_line_style(BLACK.mix(0.12))
            .light_line_style(TRANSPARENT)
            .axis_style(BLACK.mix(0.75).stroke_width(1));
        match orientation {
            Orientation::Vertical => mesh
                .disable_x_mesh()
                .y_labels(Y_TICKS)
                .x_label_formatter(&category_label)
                .y_label_formatter(&value_tick)
                .y_desc(layout.value_label),
            Orientation::Horizontal => mesh
                .disable_y_mesh()
                .x_labels(X_TICKS)
                .x_label_formatter(&value_tick)
                .y_label_formatter(&category_label)
                .x_desc(layout.value_label),
        };
        mesh.draw()?;

        let (plot_w, plot_h) = chart.plotting_area().dim_in_pixel();
        let category_px = match orientation {
            Orientation::Vertical => plot_w,
            Orientation::Horizontal => plot_h,
        };
        let half = bar_half_width(category_px, n);
        let last = n.max(1) as f64 - 0.5;
        if layout.below_zero {
            chart.draw_series([PathElement::new(
                vec![orientation.point(-0.5, 0.0), orientation.point(last, 0.0)],
                BLACK.mix(0.5),
            )])?;
        }
        for (i, (_, v)) in self.bars.iter().enumerate() {
            let c = orientation.position(i, n) as f64;
            if v.is_finite() {
                chart.draw_series([Rectangle::new(
                    [
                        orientation.point(c - half, 0.0),
                        orientation.point(c + half, *v),
                    ],
                    colour(i).filled(),
                )])?;
            }
            let (offset, pos) = orientation.value_text_anchor(*v < 0.0, vector);
            let at = if v.is_finite() { *v } else { 0.0 };
            chart.draw_series([EmptyElement::at(orientation.point(c, at))
                + Text::new(value_text(*v), offset, value_style.pos(pos))])?;
        }
        if n == 0 {
            no_data(&chart.plotting_area().strip_coord_spec(), vector)?;
        }
        Ok(())
    }
}
