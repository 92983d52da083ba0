//! Line, styled-line and error-bar charts: one figure on x/y axes with a legend box to the
//! right ([`XyFigure`]).

use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::data::{decimate, min_max, x_range, y_range};
use crate::render::{
    DrawResult, Figure, center_nudge, fit_text, font, no_data, render, subtitled, text_width,
    titled,
};
use crate::spec::{Chart, ErrorSeries, LineStyle, StyledChart, StyledSeries};
use crate::style::{
    AXIS_DESC_SIZE, DASH_GAP_PX, DASH_PX, LEGEND_GAP, LEGEND_PAD, LEGEND_SIZE, LEGEND_SWATCH,
    PLOT_TOP, TICK_SIZE, X_LABEL_AREA, X_TICKS, Y_TICKS, colour,
};
use crate::ticks::TickFormat;
use crate::{PlotError, WIDTH};

/// Writes `<stem>.png` (1200×700) and `<stem>.svg` side by side (creating the directory if
/// needed) and returns both paths, PNG first.
///
/// Lines are 2 px wide; series with at most 40 points also get a dot on each point, so
/// single-point series show (and the x range is then padded by 3 % on both sides, so the
/// outermost dots are whole). Series longer than 9 600 points with sorted x are thinned to
/// the first, min, max and last point of each half-pixel-wide x slice, which leaves the
/// picture unchanged and keeps the SVG small.
pub fn line_chart(stem: &Path, chart: &Chart) -> Result<[PathBuf; 2], PlotError> {
    let lines: Vec<StyledSeries> = chart
        .series
        .iter()
        .enumerate()
        .map(|(i, s)| StyledSeries {
            series: s.clone(),
            style: LineStyle::data(i),
        })
        .collect();
    styled_line_chart(
        stem,
        &StyledChart {
            title: chart.title,
            subtitle: "",
            x_label: chart.x_label,
            y_label: chart.y_label,
            legend_title: "",
            lines: &lines,
        },
    )
}

/// Like [`line_chart`], with each line's colour, width and dashes given, a subtitle under the
/// title and a heading over the legend. Solid lines with at most 40 points get a dot on each
/// point; dashed lines never do. Dashed lines count for the axis ranges like any other and
/// are drawn first, under the solid ones (a flow running at the capacity covers the capacity
/// line rather than being hidden by it); the legend keeps the given order.
pub fn styled_line_chart(stem: &Path, chart: &StyledChart) -> Result<[PathBuf; 2], PlotError> {
    let series: Vec<Prepared> = chart
        .lines
        .iter()
        .map(|line| {
            let points: Vec<(f64, f64)> = line
                .series
                .points
                .iter()
                .copied()
                .filter(|(x, y)| x.is_finite() && y.is_finite())
                .collect();
            Prepared {
                label: line.series.label.clone(),
                colour: line.style.colour.rgb(),
                width: line.style.width_px.max(1),
                dashed: line.style.dashed,
                markers: !line.style.dashed && points.len() <= 40,
                points: decimate(points, 2 * WIDTH as usize),
                bars: Vec::new(),
            }
        })
        .collect();
    // Dots at the first and last x would be cut in half by the plot's edges: pad by 3 %.
    let pad = if series.iter().any(|s| s.markers) {
        0.03
    } else {
        0.0
    };
    let x = x_range(
        series.iter().flat_map(|s| s.points.iter().map(|p| p.0)),
        pad,
    );
    let y = y_range(series.iter().flat_map(|s| s.points.iter().map(|p| p.1)));
    let fig = XyFigure {
        title: chart.title,
        subtitle: chart.subtitle,
        x_label: chart.x_label,
        y_label: chart.y_label,
        legend_title: chart.legend_title,
        series,
        x,
        y,
        x_categories: &[],
    };
    render(stem, &fig)
}

/// Like [`line_chart`], with a vertical error bar of ± one stdev around each mean and lines
/// through the means (sorted by x), for sweeps such as "goodput vs RTT".
///
/// The x range is padded by 4 % on both sides so the outermost bars are not cut. When several
/// series share x values, each series is shifted sideways by up to ±1.5 % of the x range
/// (dodging), so their bars do not overlap; the tick labels stay at the true x values.
pub fn error_bar_chart(
    stem: &Path,
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[ErrorSeries],
) -> Result<[PathBuf; 2], PlotError> {
    error_bar_chart_categories(stem, title, x_label, y_label, &[], series)
}

/// Like [`error_bar_chart`] over named values rather than numbers (a sweep of queue
/// disciplines, of controllers): a point's x is the index of its value in `categories`, whose
/// names label the ticks, one per value, in that order (none: a numeric axis).
pub fn error_bar_chart_categories(
    stem: &Path,
    title: &str,
    x_label: &str,
    y_label: &str,
    categories: &[String],
    series: &[ErrorSeries],
) -> Result<[PathBuf; 2], PlotError> {
    let mut cleaned: Vec<Vec<(f64, f64, f64)>> = series
        .iter()
        .map(|s| {
            let mut pts: Vec<(f64, f64, f64)> = s
                .points
                .iter()
                .filter(|(x, m, _)| x.is_finite() && m.is_finite())
                .map(|&(x, m, sd)| (x, m, if sd.is_finite() { sd.abs() } else { 0.0 }))
                .collect();
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            pts
        })
        .collect();

    let all_x = || cleaned.iter().flatten().map(|p| p.0);
    let (x_min, x_max) = min_max(all_x()).unwrap_or((0.0, 0.0));
    let span = x_max - x_min;
    let shared_x = {
        let mut xs: Vec<(u64, usize)> = cleaned
            .iter()
            .enumerate()
            .flat_map(|(i, s)| s.iter().map(move |p| (p.0.to_bits(), i)))
            .collect();
        xs.sort_unstable();
        xs.dedup();
        xs.windows(2).any(|w| w[0].0 == w[1].0)
    };
    let n = cleaned.len();
    if shared_x && n > 1 && span > 0.0 {
        let step = 0.03 * span / (n - 1) as f64;
        for (i, pts) in cleaned.iter_mut().enumerate() {
            let shift = (i as f64 - (n - 1) as f64 / 2.0) * step;
            pts.iter_mut().for_each(|p| p.0 += shift);
        }
    }

    let prepared: Vec<Prepared> = series
        .iter()
        .zip(&cleaned)
        .enumerate()
        .map(|(i, (s, pts))| Prepared {
            label: s.label.clone(),
            colour: colour(i),
            width: 2,
            dashed: false,
            markers: false,
            points: pts.iter().map(|p| (p.0, p.1)).collect(),
            bars: pts.clone(),
        })
        .collect();
    let x = if categories.is_empty() {
        x_range(cleaned.iter().flatten().map(|p| p.0), 0.04)
    } else {
        (-0.5, categories.len() as f64 - 0.5)
    };
    let y = y_range(
        cleaned
            .iter()
            .flatten()
            .flat_map(|&(_, m, sd)| [m - sd, m + sd]),
    );
    let fig = XyFigure {
        title,
        subtitle: "",
        x_label,
        y_label,
        legend_title: "",
        series: prepared,
        x,
        y,
        x_categories: categories,
    };
    render(stem, &fig)
}

/// The name of the category at tick `x`: ticks fall on whole positions; any other (plotters
/// may place more ticks than there are categories) stays blank.
pub(crate) fn category_at(categories: &[String], x: f64) -> String {
    let index = x.round();
    if (x - index).abs() > 1e-6 || index < 0.0 {
        return String::new();
    }
    categories.get(index as usize).cloned().unwrap_or_default()
}

/// A series ready to draw: finite points, colour, optional error bars `(x, mean, sd)`.
struct Prepared {
    label: String,
    colour: RGBColor,
    width: u32,
    dashed: bool,
    markers: bool,
    points: Vec<(f64, f64)>,
    bars: Vec<(f64, f64, f64)>,
}

/// A line or error-bar chart.
struct XyFigure<'a> {
    title: &'a str,
    subtitle: &'a str,
    x_label: &'a str,
    y_label: &'a str,
    legend_title: &'a str,
    series: Vec<Prepared>,
    x: (f64, f64),
    y: (f64, f64),
    /// Names of the x positions 0, 1, …, for an axis of values that are not numbers (empty:
    /// a numeric axis).
    x_categories: &'a [String],
}

impl Figure for XyFigure<'_> {
    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        vector: bool,
    ) -> DrawResult<DB> {
        let body = subtitled(&titled(root, self.title)?, self.subtitle, vector)?;
        let (body_w, body_h) = body.dim_in_pixel();

        // Legend column on the right, outside the plotting area; with many series the rows
        // shrink (font down to 12) to fit the plot's height. A legend heading takes a row.
        let heading = !self.legend_title.is_empty() && !self.series.is_empty();
        let rows = self.series.len() + usize::from(heading);
        let n = rows.max(1) as f64;
        let legend_room = body_h as f64 - (PLOT_TOP + 2 * LEGEND_PAD) as f64 - X_LABEL_AREA as f64;
        let row_h = (LEGEND_SIZE * 1.45).min(legend_room / n);
        let legend_size = (row_h / 1.45).clamp(12.0, LEGEND_SIZE);
        let legend_style = font(legend_size);
        let max_label = (body_w as f64 * 0.3) as u32;
        let mut labels = Vec::with_capacity(self.series.len());
        let mut widest = 0;
        for s in &self.series {
            let label = fit_text(&body, &s.label, &legend_style, max_label)?;
            widest = widest.max(text_width(&body, &label, &legend_style)?);
            labels.push(label);
        }
        let mut legend_w = if labels.is_empty() {
            0
        } else {
            LEGEND_SWATCH + 3 * LEGEND_PAD + widest + LEGEND_GAP
        };
        let heading_text = if heading {
            let max_heading = max_label + LEGEND_SWATCH + LEGEND_PAD;
            let text = fit_text(&body, self.legend_title, &legend_style, max_heading)?;
            legend_w = legend_w
                .max(2 * LEGEND_PAD + text_width(&body, &text, &legend_style)? + LEGEND_GAP);
            text
        } else {
            String::new()
        };
        let (plot_area, legend_area) = body.split_horizontally(body_w - legend_w);

        // Tick labels.
        let x_ticks = RangedCoordf64::from(self.x.0..self.x.1).key_points(X_TICKS);
        let y_ticks = RangedCoordf64::from(self.y.0..self.y.1).key_points(Y_TICKS);
        let x_fmt = TickFormat::new(&x_ticks);
        let y_fmt = TickFormat::new(&y_ticks);
        let tick_style = font(TICK_SIZE);
        let mut y_tick_w = 0;
        for t in &y_ticks {
            y_tick_w = y_tick_w.max(text_width(&body, &y_fmt.format(*t), &tick_style)?);
        }

        let mut chart = ChartBuilder::on(&plot_area)
            .margin_top(PLOT_TOP)
            .margin_right(16)
            .x_label_area_size(X_LABEL_AREA)
            .y_label_area_size(y_tick_w + AXIS_DESC_SIZE as u32 + 26)
            .build_cartesian_2d(self.x.0..self.x.1, self.y.0..self.y.1)?;
        chart
            .configure_mesh()
            .set_all_tick_mark_size(5)
            .y_label_offset(center_nudge(vector, TICK_SIZE))
            .x_labels(if self.x_categories.is_empty() {
                X_TICKS
            } else {
                self.x_categories.len()
            })
            .y_labels(Y_TICKS)
            .x_label_formatter(&|v| {
                if self.x_categories.is_empty() {
                    x_fmt.format(*v)
                } else {
                    category_at(self.x_categories, *v)
                }
            })
            .y_label_formatter(&|v| y_fmt.format(*v))
            .x_desc(self.x_label)
            .y_desc(self.y_label)
            .label_style(tick_style.clone())
            .axis_desc_style(font(AXIS_DESC_SIZE))
            .bold_line_style(BLACK.mix(0.12))
            .light_line_style(TRANSPARENT)
            .axis_style(BLACK.mix(0.75).stroke_width(1))
            .draw()?;
        if self.y.0 < 0.0 && self.y.1 > 0.0 {
            chart.draw_series(LineSeries::new(
                [(self.x.0, 0.0), (self.x.1, 0.0)],
                BLACK.mix(0.5).stroke_width(1),
            ))?;
        }

        let mut any = false;
        // Dashed references first, so the data lines stay on top of them.
        let dashed_first = self
            .series
            .iter()
            .filter(|s| s.dashed)
            .chain(self.series.iter().filter(|s| !s.dashed));
        for s in dashed_first {
            any |= !s.points.is_empty();
            let style = s.colour.stroke_width(s.width);
            if s.dashed {
                let px: Vec<(i32, i32)> = s.points.iter().map(|p| chart.backend_coord(p)).collect();
                root.draw(&DashedPathElement::new(px, DASH_PX, DASH_GAP_PX, style))?;
            } else if vector {
                chart.draw_series(LineSeries::new(s.points.iter().copied(), style))?;
            } else {
                // Plotters turns a wide polyline into one polygon with unlimited miter joins,
                // which spikes far out of the chart at sharp turns (e.g. a sawtooth's drop).
                // Separate segments have no joins; at 2 px the missing joins do not show.
                let mut px: Vec<(i32, i32)> = Vec::with_capacity(s.points.len());
                for p in &s.points {
                    let q = chart.backend_coord(p);
                    if px.last() != Some(&q) {
                        px.push(q);
                    }
                }
                for w in px.windows(2) {
                    root.draw(&PathElement::new(vec![w[0], w[1]], style))?;
                }
            }
            if s.markers {
                chart.draw_series(
                    s.points
                        .iter()
                        .map(|&p| Circle::new(p, 4, s.colour.filled())),
                )?;
            }
            chart.draw_series(s.bars.iter().map(|&(x, m, sd)| {
                ErrorBar::new_vertical(x, m - sd, m, m + sd, s.colour.filled().stroke_width(2), 12)
            }))?;
        }
        if !any {
            no_data(&chart.plotting_area().strip_coord_spec(), vector)?;
        }

        // The legend, aligned with the top of the plotting area.
        if !labels.is_empty() {
            let row = (legend_size * 1.45).round() as i32;
            let (x0, y0) = (LEGEND_GAP as i32, PLOT_TOP as i32);
            let (x1, y1) = (
                (legend_w - 2) as i32,
                y0 + row * rows as i32 + 2 * LEGEND_PAD as i32,
            );
            legend_area.draw(&Rectangle::new([(x0, y0), (x1, y1)], WHITE.filled()))?;
            legend_area.draw(&Rectangle::new(
                [(x0, y0), (x1, y1)],
                BLACK.mix(0.35).stroke_width(1),
            ))?;
            if heading {
                legend_area.draw(&Text::new(
                    heading_text.as_str(),
                    (
                        x0 + LEGEND_PAD as i32,
                        y0 + LEGEND_PAD as i32 + row / 2 + center_nudge(vector, legend_size),
                    ),
                    legend_style.pos(Pos::new(HPos::Left, VPos::Center)),
                ))?;
            }
            let first_row = usize::from(heading);
            for (i, (s, label)) in self.series.iter().zip(&labels).enumerate() {
                let cy = y0 + LEGEND_PAD as i32 + row * (i + first_row) as i32 + row / 2;
                let sx = x0 + LEGEND_PAD as i32;
                let ex = sx + LEGEND_SWATCH as i32;
                let swatch = s.colour.stroke_width(s.width + 1);
                if s.dashed {
                    legend_area.draw(&DashedPathElement::new(
                        [(sx, cy), (ex, cy)],
                        DASH_PX,
                        DASH_GAP_PX,
                        swatch,
                    ))?;
                } else {
                    legend_area.draw(&PathElement::new([(sx, cy), (ex, cy)], swatch))?;
                }
                if s.markers || !s.bars.is_empty() {
                    legend_area.draw(&Circle::new(((sx + ex) / 2, cy), 5, s.colour.filled()))?;
                }
                legend_area.draw(&Text::new(
                    label.as_str(),
                    (
                        ex + LEGEND_PAD as i32,
                        cy + center_nudge(vector, legend_size),
                    ),
                    legend_style.pos(Pos::new(HPos::Left, VPos::Center)),
                ))?;
            }
        }
        Ok(())
    }
}
