//! What a caller describes: the series, their styles and the chart records that the drawing
//! functions take. No drawing here.

use plotters::style::{BLACK, RGBColor};

use crate::style::colour;

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
    /// Palette colour `i` (cycling after 10): what series `i` gets in
    /// [`line_chart`](crate::line_chart), so a caller can keep one colour per category across
    /// charts with different series.
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
    /// A solid 2 px line in palette colour `i`: [`line_chart`](crate::line_chart)'s look for
    /// series `i`.
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
    /// The legend text and points, as in [`line_chart`](crate::line_chart).
    pub series: Series,
    /// How it is drawn.
    pub style: LineStyle,
}

/// A line chart with styled lines: what [`styled_line_chart`](crate::styled_line_chart) draws.
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

/// A line chart: what [`line_chart`](crate::line_chart) draws.
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

impl Colour {
    pub(crate) fn rgb(self) -> RGBColor {
        match self {
            Colour::Palette(i) => colour(i),
            Colour::Black => BLACK,
            Colour::Grey => RGBColor(0x80, 0x80, 0x80),
        }
    }
}
