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
//! Inside: `spec` holds what callers pass, `xy` the line and error-bar figures, `bar` the bar
//! figure (one drawing routine for both orientations), `media` the two-panel figure; they draw
//! through `render` (files, font, titles) with the look of `style`, the labels of `ticks`
//! and the ranges of `data`.
//!
//! Text is drawn with the Ubuntu Light font bundled in `epaint_default_fonts`, so no system
//! fonts are needed. The SVG names the font family `sans-serif`, so viewers render it with
//! their own sans-serif font, whose widths can differ slightly from the layout's.

mod bar;
mod data;
mod media;
mod render;
mod spec;
mod style;
mod ticks;
mod xy;

pub use bar::bar_chart;
pub use media::{STACKED_PANEL_HEIGHT, StackedPanelChart, stacked_panel_chart};
pub use render::PlotError;
pub use spec::{Chart, Colour, ErrorSeries, LineStyle, Series, StyledChart, StyledSeries};
pub use xy::{error_bar_chart, error_bar_chart_categories, line_chart, styled_line_chart};

/// Width of every chart, in pixels.
pub const WIDTH: u32 = 1200;
/// Height of every chart but [`stacked_panel_chart`]'s, in pixels.
pub const HEIGHT: u32 = 700;

#[cfg(test)]
mod tests;
