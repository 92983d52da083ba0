//! Charts for lab results, written as a PNG (for quick looks) and an SVG (for papers) side by
//! side.
//!
//! Every chart has a title, axis descriptions (callers put the units in them, e.g.
//! `"time (s)"`), a light grid, tick labels with as few decimals as the ticks need and a
//! legend in a box to the right of the plotting area, so it never hides data. Series colours
//! come from a fixed colour-blind-friendly palette (Okabe–Ito, extended to 10 colours) and
//! cycle after 10 series; series `i` has the same colour in every chart, and bar `i` in a
//! [`bar_chart`] has the colour of series `i`, so per-flow charts match.
//!
//! [`styled_line_chart`] is [`line_chart`] with a subtitle (the setting, e.g. the path), a
//! legend heading, and per-line colour, width and dashes: fixed colours per category (e.g.
//! per congestion controller, the same in every figure) and dashed reference lines (e.g. the
//! link capacity) that read as references rather than data.
//!
//! Besides [`line_chart`], [`error_bar_chart`] and [`bar_chart`] (1200×700),
//! [`stacked_panel_chart`] draws a taller (1200×900) two-panel figure on a shared x axis:
//! stacked areas under a step "ceiling" line above, dots with a dashed threshold below, one
//! legend box right of each panel (e.g. a video call and a bulk transfer sharing a link).
//!
//! Axis ranges follow the data: x from its minimum to its maximum, y from 0 (or the minimum,
//! if negative) to 1.05 × the maximum. Non-finite points are skipped; empty charts draw empty
//! axes with a "no data" note rather than fail.
//!
//! Text is drawn with the Ubuntu Light font bundled in `epaint_default_fonts`, so no system
//! fonts are needed. The SVG names the font family `sans-serif`, so viewers render it with
//! their own sans-serif font, whose widths can differ slightly from the layout's.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use plotters::coord::Shift;
use plotters::coord::ranged1d::{KeyPointHint, NoDefaultFormatting, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

mod media;
pub use media::{STACKED_PANEL_HEIGHT, StackedPanelChart, stacked_panel_chart};

/// Width of every chart, in pixels.
pub const WIDTH: u32 = 1200;
/// Height of every chart but [`stacked_panel_chart`]'s, in pixels.
pub const HEIGHT: u32 = 700;

/// The font family name the bundled font is registered under.
const FONT: &str = "sans-serif";
// Sizes in plotters' units; the SVG's CSS font-size is these divided by 1.24.
const TITLE_SIZE: f64 = 32.0;
const AXIS_DESC_SIZE: f64 = 25.0;
const TICK_SIZE: f64 = 21.0;
const LEGEND_SIZE: f64 = 21.0;
const VALUE_SIZE: f64 = 19.0;

/// Okabe–Ito without its yellow (invisible on white), plus wine, olive and grey from Paul
/// Tol's palettes.
const PALETTE: [RGBColor; 10] = [
    RGBColor(0x00, 0x72, 0xB2), // blue
    RGBColor(0xD5, 0x5E, 0x00), // vermillion
    RGBColor(0x00, 0x9E, 0x73), // bluish green
    RGBColor(0xCC, 0x79, 0xA7), // reddish purple
    RGBColor(0xE6, 0x9F, 0x00), // orange
    RGBColor(0x56, 0xB4, 0xE9), // sky blue
    RGBColor(0x00, 0x00, 0x00), // black
    RGBColor(0x88, 0x22, 0x55), // wine
    RGBColor(0x99, 0x99, 0x33), // olive
    RGBColor(0x7F, 0x7F, 0x7F), // grey
];

/// The colour of series (or bar) `i`.
fn colour(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// One line on a chart.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Series {
    /// The legend text.
    pub label: String,
    /// `(x, y)` points, drawn in the given order; non-finite points are skipped.
    pub points: Vec<(f64, f64)>,
}

/// The colour of a line in a [`StyledChart`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Colour {
    /// Palette colour `i` (cycling after 10): what series `i` gets in [`line_chart`], so a
    /// caller can keep one colour per category across charts with different series.
    Palette(usize),
    /// Black, for the most important reference (e.g. the link capacity).
    Black,
    /// Mid grey, for secondary references.
    Grey,
}

/// How a line of a [`StyledChart`] is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineStyle {
    /// Its colour.
    pub colour: Colour,
    /// Stroke width, pixels (at least 1).
    pub width_px: u32,
    /// Dashed (for reference lines) or solid.
    pub dashed: bool,
}

impl LineStyle {
    /// A solid 2 px line in palette colour `i`: [`line_chart`]'s look for series `i`.
    pub fn data(i: usize) -> Self {
        LineStyle {
            colour: Colour::Palette(i),
            width_px: 2,
            dashed: false,
        }
    }

    /// A dashed 2 px line, for references such as a capacity or a threshold.
    pub fn reference(colour: Colour) -> Self {
        LineStyle {
            colour,
            width_px: 2,
            dashed: true,
        }
    }
}

/// A line with its own style.
#[derive(Debug, Clone, PartialEq)]
pub struct StyledSeries {
    /// The legend text and points, as in [`line_chart`].
    pub series: Series,
    /// How it is drawn.
    pub style: LineStyle,
}

/// A line chart with styled lines: what [`styled_line_chart`] draws.
#[derive(Debug, Clone, Copy)]
pub struct StyledChart<'a> {
    /// Printed above the chart.
    pub title: &'a str,
    /// A smaller second line under the title, e.g. the path and the seed; empty for none.
    pub subtitle: &'a str,
    /// X axis description, with its unit, e.g. `"time (s)"`.
    pub x_label: &'a str,
    /// Y axis description, with its unit.
    pub y_label: &'a str,
    /// A heading over the legend entries, e.g. what the numbers in them are; empty for none.
    pub legend_title: &'a str,
    /// The lines, in legend order; later lines are drawn on top.
    pub lines: &'a [StyledSeries],
}

/// One line with error bars: per point `(x, mean, stdev)`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ErrorSeries {
    /// The legend text.
    pub label: String,
    /// `(x, mean, stdev)` points; drawn sorted by x. Points with a non-finite x or mean are
    /// skipped; a non-finite stdev draws no bar.
    pub points: Vec<(f64, f64, f64)>,
}

/// A line chart: what [`line_chart`] draws.
#[derive(Debug, Clone, Copy)]
pub struct Chart<'a> {
    /// Printed above the chart.
    pub title: &'a str,
    /// X axis description, with its unit, e.g. `"time (s)"`.
    pub x_label: &'a str,
    /// Y axis description, with its unit, e.g. `"cwnd (kB)"`.
    pub y_label: &'a str,
    /// The lines, in legend order.
    pub series: &'a [Series],
}

/// Why a chart could not be written.
#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    /// The bundled font could not be loaded (a build problem, not a data problem).
    #[error("cannot load the bundled chart font")]
    Font,
    /// Plotters failed while drawing or encoding the file.
    #[error("drawing {}: {message}", path.display())]
    Draw {
        /// The file being drawn.
        path: PathBuf,
        /// Plotters' error, as text.
        message: String,
    },
    /// Creating the directory or writing the file failed.
    #[error("writing {}: {source}", path.display())]
    Io {
        /// The file or directory involved.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}

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
    };
    render(stem, &fig)
}

impl Colour {
    fn rgb(self) -> RGBColor {
        match self {
            Colour::Palette(i) => colour(i),
            Colour::Black => BLACK,
            Colour::Grey => RGBColor(0x80, 0x80, 0x80),
        }
    }
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
    let x = x_range(cleaned.iter().flatten().map(|p| p.0), 0.04);
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
    };
    render(stem, &fig)
}

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

// ---------------------------------------------------------------------------------------------
// Rendering

type DrawResult<DB> = Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

/// Something that can draw itself on any backend.
trait Figure {
    /// `vector` is true for the SVG backend, false for the bitmap one.
    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        vector: bool,
    ) -> DrawResult<DB>;

    /// The canvas size in pixels.
    fn size(&self) -> (u32, u32) {
        (WIDTH, HEIGHT)
    }
}

/// Registers the bundled font once; every chart function calls this first.
fn ensure_font() -> Result<(), PlotError> {
    static LOADED: OnceLock<bool> = OnceLock::new();
    let ok = *LOADED.get_or_init(|| {
        plotters::style::register_font(FONT, FontStyle::Normal, epaint_default_fonts::UBUNTU_LIGHT)
            .is_ok()
    });
    if ok { Ok(()) } else { Err(PlotError::Font) }
}

/// `stem` with `.ext` appended (not replacing an existing extension such as `run.v2`).
fn with_suffix(stem: &Path, ext: &str) -> PathBuf {
    let mut s = OsString::from(stem.as_os_str());
    s.push(".");
    s.push(ext);
    PathBuf::from(s)
}

fn render(stem: &Path, fig: &impl Figure) -> Result<[PathBuf; 2], PlotError> {
    ensure_font()?;
    let png = with_suffix(stem, "png");
    let svg = with_suffix(stem, "svg");
    if let Some(dir) = png.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|source| PlotError::Io {
            path: dir.to_path_buf(),
            source,
        })?;
    }
    let draw_err = |path: &Path| {
        let path = path.to_path_buf();
        move |e: &dyn std::fmt::Display| PlotError::Draw {
            path: path.clone(),
            message: e.to_string(),
        }
    };

    {
        let err = draw_err(&png);
        let root = BitMapBackend::new(&png, fig.size()).into_drawing_area();
        fig.draw(&root, false).map_err(|e| err(&e))?;
        root.present().map_err(|e| err(&e))?;
    }

    let mut text = String::new();
    {
        let err = draw_err(&svg);
        let root = SVGBackend::with_string(&mut text, fig.size()).into_drawing_area();
        fig.draw(&root, true).map_err(|e| err(&e))?;
        root.present().map_err(|e| err(&e))?;
    }
    std::fs::write(&svg, text).map_err(|source| PlotError::Io {
        path: svg.clone(),
        source,
    })?;
    Ok([png, svg])
}

fn font(size: f64) -> TextStyle<'static> {
    (FONT, size).into_font().color(&BLACK)
}

/// Fills the background, draws the title and returns the area below it.
fn titled<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
) -> Result<DrawingArea<DB, Shift>, DrawingAreaErrorKind<DB::ErrorType>> {
    root.fill(&WHITE)?;
    let root = root.margin(14, 10, 14, 24);
    // Shrink a title too long for the width (down to 60 %) rather than clip it.
    let avail = root.dim_in_pixel().0 as f64;
    let width = text_width(&root, title, &font(TITLE_SIZE))? as f64;
    let size = if width > avail {
        (TITLE_SIZE * avail / width).max(TITLE_SIZE * 0.6)
    } else {
        TITLE_SIZE
    };
    root.titled(title, font(size))
}

/// Pixel width to reserve for `text` in `style`: the bundled font's width plus 12 %, because
/// SVG viewers substitute their own (usually wider, e.g. DejaVu Sans) sans-serif font.
fn text_width<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    text: &str,
    style: &TextStyle,
) -> Result<u32, DrawingAreaErrorKind<DB::ErrorType>> {
    Ok((area.estimate_text_size(text, style)?.0 as f64 * 1.12).ceil() as u32)
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
}

/// Gap between the top of the area below the title and the plotting area.
const PLOT_TOP: u32 = 12;

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
            .x_labels(X_TICKS)
            .y_labels(Y_TICKS)
            .x_label_formatter(&|v| x_fmt.format(*v))
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

const X_TICKS: usize = 10;
/// Dash and gap lengths of dashed lines, pixels.
const DASH_PX: u32 = 10;
const DASH_GAP_PX: u32 = 6;
const SUBTITLE_SIZE: f64 = 22.0;

/// Draws `subtitle` (if any) centred at the top of `area`, in a smaller grey font, and
/// returns the area below it.
fn subtitled<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    subtitle: &str,
    vector: bool,
) -> Result<DrawingArea<DB, Shift>, DrawingAreaErrorKind<DB::ErrorType>> {
    if subtitle.is_empty() {
        return Ok(area.clone());
    }
    let (w, _) = area.dim_in_pixel();
    let width = text_width(area, subtitle, &font(SUBTITLE_SIZE))? as f64;
    let size = if width > w as f64 {
        (SUBTITLE_SIZE * w as f64 / width).max(SUBTITLE_SIZE * 0.6)
    } else {
        SUBTITLE_SIZE
    };
    let grey = BLACK.mix(0.7);
    let line_h = (size * 1.5).round() as i32;
    area.draw(&Text::new(
        subtitle,
        (w as i32 / 2, line_h / 2 + center_nudge(vector, size)),
        font(size)
            .color(&grey)
            .pos(Pos::new(HPos::Center, VPos::Center)),
    ))?;
    Ok(area.margin(line_h, 0, 0, 0))
}
/// Height of the x tick labels plus the x axis description.
const X_LABEL_AREA: u32 = TICK_SIZE as u32 + AXIS_DESC_SIZE as u32 + 26;
const Y_TICKS: usize = 8;
const LEGEND_SWATCH: u32 = 36;
const LEGEND_PAD: u32 = 10;
const LEGEND_GAP: u32 = 8;

/// Pixels to move vertically centred text down on the bitmap backend: plotters' ab_glyph
/// text sits about a fifth of the font size above the requested centre (the SVG is right).
fn center_nudge(vector: bool, size: f64) -> i32 {
    if vector {
        0
    } else {
        (size * 0.22).round() as i32
    }
}

/// Draws "no data" in the middle of `area`.
fn no_data<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, vector: bool) -> DrawResult<DB> {
    let (w, h) = area.dim_in_pixel();
    area.draw(&Text::new(
        "no data",
        (
            w as i32 / 2,
            h as i32 / 2 + center_nudge(vector, AXIS_DESC_SIZE),
        ),
        font(AXIS_DESC_SIZE)
            .color(&BLACK.mix(0.5))
            .pos(Pos::new(HPos::Center, VPos::Center)),
    ))
}

/// `text`, cut with an ellipsis if wider than `max` pixels.
fn fit_text<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    text: &str,
    style: &TextStyle,
    max: u32,
) -> Result<String, DrawingAreaErrorKind<DB::ErrorType>> {
    if text_width(area, text, style)? <= max {
        return Ok(text.to_string());
    }
    let mut chars: Vec<char> = text.chars().collect();
    while !chars.is_empty() {
        chars.pop();
        let cut: String = chars.iter().collect::<String>().trim_end().to_string() + "…";
        if text_width(area, &cut, style)? <= max {
            return Ok(cut);
        }
    }
    Ok("…".to_string())
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
        let value_colour = BLACK.mix(0.85);
        let value_style = font(VALUE_SIZE).color(&value_colour);

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
        let value_text = |v: f64| {
            if v.is_finite() {
                format_sig(v, 3)
            } else {
                "n/a".to_string()
            }
        };
        let slot = body_w as f64 * 0.85 / n.max(1) as f64;
        let horizontal = n > 8 || widest as f64 > slot * 0.95;
        // Category i sits at position i (vertical) or n-1-i (horizontal: first bar on top),
        // on an f64 axis from -0.5 to n-0.5 whose only ticks are the categories.
        let pos_of = |i: usize| {
            if horizontal {
                (n - 1 - i) as f64
            } else {
                i as f64
            }
        };
        let cats = CategoryAxis::new(n);
        let label_of = |v: &f64| {
            let k = v.round();
            if k < 0.0 || k >= n as f64 {
                return String::new();
            }
            let k = k as usize;
            labels[if horizontal { n - 1 - k } else { k }].clone()
        };

        if horizontal {
            let mut chart = ChartBuilder::on(&body)
                .margin_top(PLOT_TOP)
                .margin_right(16)
                .x_label_area_size(X_LABEL_AREA)
                .y_label_area_size(widest + 20)
                .build_cartesian_2d(lo..hi, cats)?;
            chart
                .configure_mesh()
                .set_all_tick_mark_size(5)
                .y_label_offset(center_nudge(vector, TICK_SIZE))
                .disable_y_mesh()
                .x_labels(X_TICKS)
                .x_label_formatter(&|v| fmt.format(*v))
                .y_label_formatter(&label_of)
                .x_desc(self.value_label)
                .label_style(tick_style.clone())
                .axis_desc_style(font(AXIS_DESC_SIZE))
                .bold_line_style(BLACK.mix(0.12))
                .light_line_style(TRANSPARENT)
                .axis_style(BLACK.mix(0.75).stroke_width(1))
                .draw()?;
            let half = bar_half_width(chart.plotting_area().dim_in_pixel().1, n);
            if lo < 0.0 {
                chart.draw_series([PathElement::new(
                    vec![(0.0, -0.5), (0.0, n.max(1) as f64 - 0.5)],
                    BLACK.mix(0.5),
                )])?;
            }
            for (i, (_, v)) in self.bars.iter().enumerate() {
                let c = pos_of(i);
                if v.is_finite() {
                    chart.draw_series([Rectangle::new(
                        [(0.0, c - half), (*v, c + half)],
                        colour(i).filled(),
                    )])?;
                }
                let (dx, h) = if *v < 0.0 {
                    (-6, HPos::Right)
                } else {
                    (6, HPos::Left)
                };
                let at = if v.is_finite() { *v } else { 0.0 };
                chart.draw_series([EmptyElement::at((at, c))
                    + Text::new(
                        value_text(*v),
                        (dx, center_nudge(vector, VALUE_SIZE)),
                        value_style.pos(Pos::new(h, VPos::Center)),
                    )])?;
            }
            if n == 0 {
                no_data(&chart.plotting_area().strip_coord_spec(), vector)?;
            }
        } else {
            let mut y_tick_w = 0;
            for t in &ticks {
                y_tick_w = y_tick_w.max(text_width(&body, &fmt.format(*t), &tick_style)?);
            }
            let mut chart = ChartBuilder::on(&body)
                .margin_top(PLOT_TOP)
                .margin_right(16)
                .x_label_area_size(TICK_SIZE as u32 + 30)
                .y_label_area_size(y_tick_w + AXIS_DESC_SIZE as u32 + 26)
                .build_cartesian_2d(cats, lo..hi)?;
            chart
                .configure_mesh()
                .set_all_tick_mark_size(5)
                .y_label_offset(center_nudge(vector, TICK_SIZE))
                .disable_x_mesh()
                .y_labels(Y_TICKS)
                .x_label_formatter(&label_of)
                .y_label_formatter(&|v| fmt.format(*v))
                .y_desc(self.value_label)
                .label_style(tick_style.clone())
                .axis_desc_style(font(AXIS_DESC_SIZE))
                .bold_line_style(BLACK.mix(0.12))
                .light_line_style(TRANSPARENT)
                .axis_style(BLACK.mix(0.75).stroke_width(1))
                .draw()?;
            let half = bar_half_width(chart.plotting_area().dim_in_pixel().0, n);
            if lo < 0.0 {
                chart.draw_series([PathElement::new(
                    vec![(-0.5, 0.0), (n.max(1) as f64 - 0.5, 0.0)],
                    BLACK.mix(0.5),
                )])?;
            }
            for (i, (_, v)) in self.bars.iter().enumerate() {
                let c = pos_of(i);
                if v.is_finite() {
                    chart.draw_series([Rectangle::new(
                        [(c - half, 0.0), (c + half, *v)],
                        colour(i).filled(),
                    )])?;
                }
                let (dy, vp) = if *v < 0.0 {
                    (6, VPos::Top)
                } else {
                    (-6, VPos::Bottom)
                };
                let at = if v.is_finite() { *v } else { 0.0 };
                chart.draw_series([EmptyElement::at((c, at))
                    + Text::new(
                        value_text(*v),
                        (0, dy),
                        value_style.pos(Pos::new(HPos::Center, vp)),
                    )])?;
            }
            if n == 0 {
                no_data(&chart.plotting_area().strip_coord_spec(), vector)?;
            }
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// Data helpers

fn min_max(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    values
        .filter(|v| v.is_finite())
        .fold(None, |acc, v| match acc {
            None => Some((v, v)),
            Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
        })
}

/// X range: min..max of the data, padded by `pad` × the span on both sides; a single x value
/// gets ±10 % (±1 around 0); no data gives 0..1.
fn x_range(values: impl Iterator<Item = f64>, pad: f64) -> (f64, f64) {
    match min_max(values) {
        None => (0.0, 1.0),
        Some((lo, hi)) if hi - lo > 0.0 && (hi - lo).is_finite() => {
            let p = pad * (hi - lo);
            (lo - p, hi + p)
        }
        Some((v, _)) => {
            let d = if v == 0.0 { 1.0 } else { v.abs() * 0.1 };
            (v - d, v + d)
        }
    }
}

/// Y range: from 0 (or the minimum, less 5 % of the span, if negative) to 1.05 × the maximum
/// (or 0 if all values are negative); all-zero or no data gives 0..1.
fn y_range(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = match min_max(values) {
        None => return (0.0, 1.0),
        Some((lo, hi)) => (lo.min(0.0), hi.max(0.0)),
    };
    let span = hi - lo;
    if span <= 0.0 || !span.is_finite() {
        return (0.0, 1.0);
    }
    (
        if lo < 0.0 { lo - 0.05 * span } else { lo },
        if hi > 0.0 { hi + 0.05 * span } else { hi },
    )
}

/// Thins a long series with sorted x to the first, min, max and last point of each of
/// `buckets` equal-width x slices ("M4"), which draws the same picture at the pixel level.
/// Series that are short or not sorted by x are returned unchanged.
fn decimate(points: Vec<(f64, f64)>, buckets: usize) -> Vec<(f64, f64)> {
    if points.len() <= 4 * buckets || !points.windows(2).all(|w| w[0].0 <= w[1].0) {
        return points;
    }
    let (x0, x1) = (points[0].0, points[points.len() - 1].0);
    let width = (x1 - x0) / buckets as f64;
    if width <= 0.0 || !width.is_finite() {
        return points;
    }
    let bucket = |x: f64| (((x - x0) / width) as usize).min(buckets - 1);
    let mut out = Vec::with_capacity(4 * buckets + 4);
    let mut i = 0;
    while i < points.len() {
        let b = bucket(points[i].0);
        let start = i;
        let (mut lo, mut hi) = (i, i);
        while i < points.len() && bucket(points[i].0) == b {
            if points[i].1 < points[lo].1 {
                lo = i;
            }
            if points[i].1 > points[hi].1 {
                hi = i;
            }
            i += 1;
        }
        let mut keep = [start, lo, hi, i - 1];
        keep.sort_unstable();
        let mut last = usize::MAX;
        for k in keep {
            if k != last {
                out.push(points[k]);
                last = k;
            }
        }
    }
    out
}

/// How the tick labels of one axis are printed: with the same number of decimals (as few as
/// make every tick exact, at most 6), with SI prefixes (k, M, G, T) when the values reach
/// 100 000, or in scientific notation when all are below 0.001.
struct TickFormat {
    mode: TickMode,
}

enum TickMode {
    Fixed(usize),
    Si,
    Scientific,
}

impl TickFormat {
    fn new(ticks: &[f64]) -> Self {
        let max_abs = ticks.iter().fold(0.0f64, |m, t| m.max(t.abs()));
        let mode = if max_abs >= 1e5 {
            TickMode::Si
        } else if max_abs > 0.0 && max_abs < 1e-3 {
            TickMode::Scientific
        } else {
            TickMode::Fixed(ticks.iter().map(|&t| decimals_needed(t)).max().unwrap_or(0))
        };
        TickFormat { mode }
    }

    fn format(&self, v: f64) -> String {
        match self.mode {
            TickMode::Fixed(d) => fixed(v, d),
            TickMode::Si => {
                let (scale, prefix) = [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")]
                    .into_iter()
                    .find(|(s, _)| v.abs() >= *s)
                    .unwrap_or((1.0, ""));
                let x = v / scale;
                format!("{}{prefix}", trim_zeros(fixed(x, decimals_needed(x))))
            }
            TickMode::Scientific => {
                if v == 0.0 {
                    return "0".to_string();
                }
                let s = format!("{v:.2e}");
                match s.split_once('e') {
                    Some((m, e)) => format!("{}e{e}", trim_zeros(m.to_string())),
                    None => s,
                }
            }
        }
    }
}

/// Fewest decimals (≤ 6) that print `v` exactly (up to float noise).
fn decimals_needed(v: f64) -> usize {
    (0..=6)
        .find(|&d| {
            let scaled = v * 10f64.powi(d as i32);
            (scaled - scaled.round()).abs() < 1e-6 * scaled.abs().max(1.0)
        })
        .unwrap_or(6)
}

/// `v` with `d` decimals, never `-0`.
fn fixed(v: f64, d: usize) -> String {
    let s = format!("{v:.d$}");
    if s.starts_with('-') && s[1..].chars().all(|c| c == '0' || c == '.') {
        s[1..].to_string()
    } else {
        s
    }
}

fn trim_zeros(s: String) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// `v` with about `sig` significant digits, SI prefixes above 100 000 (for bar values).
fn format_sig(v: f64, sig: i32) -> String {
    if v == 0.0 {
        return "0".to_string();
    }
    if v.abs() >= 1e5 {
        let (scale, prefix) = [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")]
            .into_iter()
            .find(|(s, _)| v.abs() >= *s)
            .unwrap_or((1.0, ""));
        return format!("{}{prefix}", format_sig(v / scale, sig));
    }
    if v.abs() < 1e-3 {
        let s = format!("{v:.2e}");
        return match s.split_once('e') {
            Some((m, e)) => format!("{}e{e}", trim_zeros(m.to_string())),
            None => s,
        };
    }
    let magnitude = v.abs().log10().floor() as i32;
    let d = (sig - 1 - magnitude).max(0) as usize;
    trim_zeros(fixed(v, d))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A fresh directory under the system temp dir.
    fn temp_dir(name: &str) -> PathBuf {
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "satquic-plots-{}-{}-{name}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn check_outputs(paths: &[PathBuf; 2], texts: &[&str]) {
        let png = std::fs::read(&paths[0]).unwrap();
        assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
        assert_eq!(paths[0].extension().unwrap(), "png");
        assert_eq!(paths[1].extension().unwrap(), "svg");
        let svg = std::fs::read_to_string(&paths[1]).unwrap();
        assert!(svg.starts_with("<svg"), "not an SVG");
        for t in texts {
            assert!(svg.contains(t), "SVG lacks {t:?}");
        }
    }

    fn demo_series() -> Vec<Series> {
        let n = 3000;
        let t = |i: usize| i as f64 * 300.0 / (n - 1) as f64;
        vec![
            Series {
                label: "cwnd (Hybla)".into(),
                points: (0..n)
                    .map(|i| (t(i), 40.0 + 60.0 * ((t(i) / 25.0).fract())))
                    .collect(),
            },
            Series {
                label: "cwnd (CUBIC)".into(),
                points: (0..n)
                    .map(|i| (t(i), 110.0 * (1.0 - (-t(i) / 60.0).exp())))
                    .collect(),
            },
            Series {
                label: "BDP".into(),
                points: (0..n).map(|i| (t(i), 75.0)).collect(),
            },
        ]
    }

    #[test]
    fn line_chart_writes_png_and_svg() {
        let dir = temp_dir("line");
        let series = demo_series();
        let chart = Chart {
            title: "Congestion window over a GEO path",
            x_label: "time (s)",
            y_label: "cwnd (kB)",
            series: &series,
        };
        let paths = line_chart(&dir.join("cwnd"), &chart).unwrap();
        check_outputs(
            &paths,
            &[
                "Congestion window over a GEO path",
                "time (s)",
                "cwnd (kB)",
                "cwnd (Hybla)",
                "cwnd (CUBIC)",
                "BDP",
            ],
        );
        assert_eq!(paths[0], dir.join("cwnd.png"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn styled_chart_writes_subtitle_legend_heading_and_references() {
        let dir = temp_dir("styled");
        let lines = [
            StyledSeries {
                series: Series {
                    label: "hybla 9.45 Mbit/s (99 %)".into(),
                    points: (0..=100).map(|i| (i as f64, 9.9)).collect(),
                },
                style: LineStyle::data(0),
            },
            StyledSeries {
                series: Series {
                    label: "link capacity 10 Mbit/s".into(),
                    points: vec![(0.0, 10.0), (100.0, 10.0)],
                },
                style: LineStyle::reference(Colour::Black),
            },
        ];
        let paths = styled_line_chart(
            &dir.join("goodput"),
            &StyledChart {
                title: "thesis-geo: delivery rate",
                subtitle: "bytes reaching the receiver per second",
                x_label: "time (s)",
                y_label: "delivery rate (Mbit/s)",
                legend_title: "mean goodput (% of max)",
                lines: &lines,
            },
        )
        .unwrap();
        check_outputs(
            &paths,
            &[
                "thesis-geo: delivery rate",
                "bytes reaching the receiver per second",
                "mean goodput (% of max)",
                "hybla 9.45 Mbit/s (99 %)",
                "link capacity 10 Mbit/s",
            ],
        );
        // The dashed black reference is drawn as one short segment per dash (10 px + 6 px gap
        // over a plot about 700 px wide: > 30), opaque and 2 px wide, unlike the translucent
        // 1 px axes and ticks.
        let svg = std::fs::read_to_string(&paths[1]).unwrap();
        let dashes = svg
            .lines()
            .flat_map(|l| l.split("<polyline").skip(1))
            .filter(|e| e.contains("opacity=\"1\" stroke=\"#000000\" stroke-width=\"2\""))
            .count();
        assert!(dashes > 30, "{dashes} black dashes in the SVG");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn stem_with_dot_and_missing_dir() {
        let dir = temp_dir("stem");
        let stem = dir.join("sub/run.v2");
        let series = [Series {
            label: "a".into(),
            points: vec![(0.0, 1.0), (1.0, 2.0)],
        }];
        let chart = Chart {
            title: "t",
            x_label: "x",
            y_label: "y",
            series: &series,
        };
        let paths = line_chart(&stem, &chart).unwrap();
        assert_eq!(paths[0], dir.join("sub/run.v2.png"));
        assert_eq!(paths[1], dir.join("sub/run.v2.svg"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn degenerate_line_charts_do_not_fail() {
        let dir = temp_dir("degenerate");
        let cases: Vec<(&str, Vec<Series>)> = vec![
            ("none", vec![]),
            (
                "empty",
                vec![Series {
                    label: "empty".into(),
                    points: vec![],
                }],
            ),
            (
                "single",
                vec![Series {
                    label: "single".into(),
                    points: vec![(5.0, 3.0)],
                }],
            ),
            (
                "zeros",
                vec![Series {
                    label: "zeros".into(),
                    points: vec![(0.0, 0.0), (1.0, 0.0)],
                }],
            ),
            (
                "nonfinite",
                vec![Series {
                    label: "nonfinite".into(),
                    points: vec![
                        (f64::NAN, 1.0),
                        (1.0, f64::INFINITY),
                        (2.0, 2.0),
                        (3.0, f64::NAN),
                    ],
                }],
            ),
            (
                "all-nan",
                vec![Series {
                    label: "all-nan".into(),
                    points: vec![(f64::NAN, f64::NAN)],
                }],
            ),
            (
                "negative",
                vec![Series {
                    label: "negative".into(),
                    points: vec![(0.0, -5.0), (1.0, 3.0)],
                }],
            ),
            (
                "all-negative",
                vec![Series {
                    label: "all-negative".into(),
                    points: vec![(0.0, -5.0), (1.0, -3.0)],
                }],
            ),
            (
                "tiny",
                vec![Series {
                    label: "tiny".into(),
                    points: vec![(0.0, 1e-7), (1.0, 3e-7)],
                }],
            ),
            (
                "huge",
                vec![Series {
                    label: "huge".into(),
                    points: vec![(0.0, 1e9), (1e7, 3e9)],
                }],
            ),
        ];
        for (name, series) in &cases {
            let chart = Chart {
                title: name,
                x_label: "x (s)",
                y_label: "y (kB)",
                series,
            };
            let paths =
                line_chart(&dir.join(name), &chart).unwrap_or_else(|e| panic!("{name}: {e}"));
            let labels: Vec<&str> = series.iter().map(|s| s.label.as_str()).collect();
            check_outputs(&paths, &labels);
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn error_bar_chart_writes_files() {
        let dir = temp_dir("errorbars");
        let rtts = [25.0, 50.0, 100.0, 250.0, 500.0, 600.0];
        let series: Vec<ErrorSeries> = ["NewReno", "CUBIC", "Hybla"]
            .iter()
            .enumerate()
            .map(|(k, name)| ErrorSeries {
                label: name.to_string(),
                points: rtts
                    .iter()
                    .map(|&r| {
                        (
                            r,
                            9.5 - (k as f64 + 1.0) * r / 200.0 + k as f64,
                            0.3 + r / 400.0,
                        )
                    })
                    .collect(),
            })
            .collect();
        let paths = error_bar_chart(
            &dir.join("sweep"),
            "Goodput vs RTT",
            "RTT (ms)",
            "goodput (Mbit/s)",
            &series,
        )
        .unwrap();
        check_outputs(
            &paths,
            &[
                "Goodput vs RTT",
                "RTT (ms)",
                "goodput (Mbit/s)",
                "NewReno",
                "CUBIC",
                "Hybla",
            ],
        );
        for (name, s) in [
            ("none", vec![]),
            (
                "empty",
                vec![ErrorSeries {
                    label: "e".into(),
                    points: vec![],
                }],
            ),
            (
                "single",
                vec![ErrorSeries {
                    label: "s".into(),
                    points: vec![(100.0, 5.0, f64::NAN)],
                }],
            ),
            (
                "nan",
                vec![ErrorSeries {
                    label: "n".into(),
                    points: vec![(f64::NAN, 1.0, 1.0), (1.0, 0.0, 0.0)],
                }],
            ),
        ] {
            error_bar_chart(&dir.join(name), name, "x", "y", &s)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn bar_chart_writes_files() {
        let dir = temp_dir("bars");
        let bars: Vec<(String, f64)> = (1..=4)
            .map(|i| (format!("flow {i}"), 0.1 * i as f64))
            .collect();
        let paths = bar_chart(
            &dir.join("shares"),
            "Bottleneck share per flow",
            "share of capacity",
            &bars,
        )
        .unwrap();
        check_outputs(
            &paths,
            &[
                "Bottleneck share per flow",
                "share of capacity",
                "flow 1",
                "flow 4",
                "0.4",
            ],
        );
        let many: Vec<(String, f64)> = (1..=12)
            .map(|i| (format!("flow {i} (Hybla, 600 ms)"), i as f64))
            .collect();
        let paths = bar_chart(&dir.join("many"), "Many", "goodput (Mbit/s)", &many).unwrap();
        check_outputs(
            &paths,
            &["flow 1 (Hybla, 600 ms)", "flow 12 (Hybla, 600 ms)"],
        );
        for (name, b) in [
            ("none", vec![]),
            ("single", vec![("only".to_string(), 1.0)]),
            (
                "zeros",
                vec![("a".to_string(), 0.0), ("b".to_string(), 0.0)],
            ),
            (
                "odd",
                vec![
                    ("nan".to_string(), f64::NAN),
                    ("neg".to_string(), -2.0),
                    ("pos".to_string(), 3.0),
                ],
            ),
        ] {
            bar_chart(&dir.join(name), name, "v", &b).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn many_points_render() {
        let dir = temp_dir("many");
        let series: Vec<Series> = (0..6)
            .map(|k| Series {
                label: format!("flow {k}"),
                points: (0..3000)
                    .map(|i| {
                        (
                            i as f64 * 0.1,
                            (i as f64 * 0.01 + k as f64).sin() * 10.0 + 20.0,
                        )
                    })
                    .collect(),
            })
            .collect();
        let chart = Chart {
            title: "many",
            x_label: "time (s)",
            y_label: "rate (Mbit/s)",
            series: &series,
        };
        line_chart(&dir.join("many"), &chart).unwrap();

        // Per-packet traces: thinned to a few points per pixel column, so still quick and the
        // SVG stays small.
        let long: Vec<Series> = (0..3)
            .map(|k| Series {
                label: format!("trace {k}"),
                points: (0..200_000)
                    .map(|i| (i as f64 * 1e-3, ((i * (k + 7)) % 1013) as f64))
                    .collect(),
            })
            .collect();
        let chart = Chart {
            series: &long,
            ..chart
        };
        let paths = line_chart(&dir.join("long"), &chart).unwrap();
        let svg_len = std::fs::metadata(&paths[1]).unwrap().len();
        assert!(svg_len < 1_000_000, "SVG is {svg_len} bytes");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn ranges() {
        assert_eq!(y_range([].into_iter()), (0.0, 1.0));
        assert_eq!(y_range([0.0, 0.0].into_iter()), (0.0, 1.0));
        assert_eq!(y_range([2.0, 10.0].into_iter()), (0.0, 10.5));
        assert_eq!(y_range([-10.0, 0.0].into_iter()), (-10.5, 0.0));
        assert_eq!(y_range([f64::NAN, 4.0].into_iter()), (0.0, 4.2));
        assert_eq!(x_range([3.0, 1.0, 2.0].into_iter(), 0.0), (1.0, 3.0));
        assert_eq!(x_range([].into_iter(), 0.0), (0.0, 1.0));
        assert_eq!(x_range([0.0].into_iter(), 0.0), (-1.0, 1.0));
        assert_eq!(x_range([10.0].into_iter(), 0.0), (9.0, 11.0));
    }

    #[test]
    fn tick_formatting() {
        let f = TickFormat::new(&[0.0, 0.5, 1.0, 1.5]);
        assert_eq!(
            [f.format(0.0), f.format(0.5), f.format(1.0)],
            ["0.0", "0.5", "1.0"]
        );
        let f = TickFormat::new(&[0.0, 50.0, 100.0]);
        assert_eq!(f.format(50.0), "50");
        let f = TickFormat::new(&[0.1 + 0.2, 0.6]);
        assert_eq!(f.format(0.1 + 0.2), "0.3");
        let f = TickFormat::new(&[0.0, 2e5, 1.2e6]);
        assert_eq!(
            [f.format(0.0), f.format(2e5), f.format(1.2e6)],
            ["0", "200k", "1.2M"]
        );
        let f = TickFormat::new(&[0.0, 2.5e-4]);
        assert_eq!(f.format(2.5e-4), "2.5e-4");
        let f = TickFormat::new(&[-1.0, -0.0, 1.0]);
        assert_eq!(f.format(-0.0), "0");
        assert_eq!(format_sig(0.333333, 3), "0.333");
        assert_eq!(format_sig(12.3456, 3), "12.3");
        assert_eq!(format_sig(1234.56, 3), "1235");
        assert_eq!(format_sig(2.5e6, 3), "2.5M");
    }

    #[test]
    fn decimation_keeps_extremes() {
        let pts: Vec<(f64, f64)> = (0..100_000).map(|i| (i as f64, (i % 97) as f64)).collect();
        let out = decimate(pts.clone(), 100);
        assert!(out.len() <= 400);
        assert_eq!(out.first(), pts.first());
        assert_eq!(out.last(), pts.last());
        assert!(out.iter().any(|p| p.1 == 96.0) && out.iter().any(|p| p.1 == 0.0));
        // Unsorted x is left alone.
        let mut rev = pts.clone();
        rev.reverse();
        assert_eq!(decimate(rev.clone(), 100).len(), rev.len());
    }

    /// Renders demo charts to `<temp>/plots-demo/` for a visual check:
    /// `cargo test -p lab chart::tests::demo -- --ignored`.
    #[test]
    #[ignore]
    fn demo() {
        let dir = std::env::temp_dir().join("plots-demo");
        let series = demo_series();
        let chart = Chart {
            title: "Congestion window over a GEO path (600 ms RTT)",
            x_label: "time (s)",
            y_label: "cwnd (kB)",
            series: &series,
        };
        let start = std::time::Instant::now();
        line_chart(&dir.join("cwnd"), &chart).unwrap();
        eprintln!("line chart: {:?}", start.elapsed());

        let rtts = [25.0, 50.0, 100.0, 250.0, 500.0, 600.0];
        let sweep: Vec<ErrorSeries> = ["NewReno", "CUBIC", "Hybla"]
            .iter()
            .enumerate()
            .map(|(k, name)| ErrorSeries {
                label: name.to_string(),
                points: rtts
                    .iter()
                    .map(|&r| (r, 9.5 - (3.0 - k as f64) * r / 250.0, 0.3 + r / 500.0))
                    .collect(),
            })
            .collect();
        error_bar_chart(
            &dir.join("sweep"),
            "Goodput vs RTT (10 Mbit/s, 1% loss)",
            "RTT (ms)",
            "goodput (Mbit/s)",
            &sweep,
        )
        .unwrap();

        let shares: Vec<(String, f64)> = [
            ("flow 1 (Hybla)", 0.41),
            ("flow 2 (CUBIC)", 0.27),
            ("flow 3 (NewReno)", 0.2),
            ("flow 4 (BBR)", 0.12),
        ]
        .iter()
        .map(|(l, v)| (l.to_string(), *v))
        .collect();
        bar_chart(
            &dir.join("shares"),
            "Bottleneck share per flow",
            "share of capacity",
            &shares,
        )
        .unwrap();
        let many: Vec<(String, f64)> = (1..=12)
            .map(|i| (format!("flow {i} (Hybla, {} ms)", 50 * i), 1.5 * i as f64))
            .collect();
        bar_chart(
            &dir.join("shares-many"),
            "Goodput per flow",
            "goodput (Mbit/s)",
            &many,
        )
        .unwrap();

        let big: Vec<Series> = (0..6)
            .map(|k| Series {
                label: format!("flow {k}"),
                points: (0..3000)
                    .map(|i| {
                        (
                            i as f64 * 0.1,
                            1e6 * ((i as f64 * 0.01 + k as f64).sin() * 0.5 + 1.5 + k as f64 * 0.3),
                        )
                    })
                    .collect(),
            })
            .collect();
        let start = std::time::Instant::now();
        line_chart(
            &dir.join("big"),
            &Chart {
                title: "6 × 3000 points",
                x_label: "time (s)",
                y_label: "bytes in flight (B)",
                series: &big,
            },
        )
        .unwrap();
        eprintln!("6x3000 chart: {:?}", start.elapsed());
        bar_chart(
            &dir.join("bars-single"),
            "One flow",
            "share",
            &[("only".into(), 1.0)],
        )
        .unwrap();
        bar_chart(&dir.join("bars-empty"), "No flows", "share", &[]).unwrap();
        bar_chart(
            &dir.join("bars-odd"),
            "NaN and negative",
            "change (%)",
            &[
                ("nan".into(), f64::NAN),
                ("neg".into(), -2.0),
                ("pos".into(), 3.0),
            ],
        )
        .unwrap();
        error_bar_chart(
            &dir.join("sweep-single"),
            "One point",
            "RTT (ms)",
            "goodput (Mbit/s)",
            &[ErrorSeries {
                label: "Hybla".into(),
                points: vec![(600.0, 7.0, 1.5)],
            }],
        )
        .unwrap();
        let flows: Vec<Series> = (0..24)
            .map(|k| Series {
                label: format!("flow {k} (Hybla)"),
                points: (0..100).map(|i| (i as f64, (i + k) as f64)).collect(),
            })
            .collect();
        line_chart(
            &dir.join("many-series"),
            &Chart {
                title: "geo-600ms-1pct-loss-24-flows-hybla-vs-cubic — goodput, 1 s sliding average, seed 1234567",
                x_label: "time (s)",
                y_label: "goodput (Mbit/s)",
                series: &flows,
            },
        )
        .unwrap();
        line_chart(
            &dir.join("empty"),
            &Chart {
                title: "Empty",
                x_label: "time (s)",
                y_label: "cwnd (kB)",
                series: &[],
            },
        )
        .unwrap();
        line_chart(
            &dir.join("single"),
            &Chart {
                title: "Single point",
                x_label: "time (s)",
                y_label: "cwnd (kB)",
                series: &[Series {
                    label: "one".into(),
                    points: vec![(5.0, 3.0)],
                }],
            },
        )
        .unwrap();
    }
}
