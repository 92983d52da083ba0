//! The two-panel media/bulk figure: stacked throughput areas under a capacity ceiling on
//! top, per-frame delays as dots below, on a shared time axis.
//!
//! Inside: `figure` turns the caller's series into what is drawn (stacked bands, the ceiling's
//! steps, dots and clipped points, legend rows); `draw` lays out and draws it.

use std::path::{Path, PathBuf};

use crate::PlotError;
use crate::render::render;
use crate::spec::Series;

mod draw;
mod figure;

use figure::PanelFigure;

/// Height of a [`stacked_panel_chart`], in pixels (its width is [`WIDTH`](crate::WIDTH)).
pub const STACKED_PANEL_HEIGHT: u32 = 900;

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

#[cfg(test)]
mod tests;
