//! The look every chart shares: the font and its sizes, the palette, and the layout constants
//! (tick counts, legend boxes, dashes) that make charts of one run line up.

use plotters::prelude::*;

/// The font family name the bundled font is registered under.
pub(crate) const FONT: &str = "sans-serif";
// Sizes in plotters' units; the SVG's CSS font-size is these divided by 1.24.
pub(crate) const TITLE_SIZE: f64 = 32.0;
pub(crate) const AXIS_DESC_SIZE: f64 = 25.0;
pub(crate) const TICK_SIZE: f64 = 21.0;
pub(crate) const LEGEND_SIZE: f64 = 21.0;
pub(crate) const VALUE_SIZE: f64 = 19.0;

/// Okabe–Ito without its yellow (invisible on white), plus wine, olive and grey from Paul
/// Tol's palettes.
pub(crate) const PALETTE: [RGBColor; 10] = [
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
pub(crate) fn colour(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// Tick counts of the x and y axes (a hint: plotters picks round values near it).
pub(crate) const X_TICKS: usize = 10;
pub(crate) const Y_TICKS: usize = 8;
/// Dash and gap lengths of dashed lines, pixels.
pub(crate) const DASH_PX: u32 = 10;
pub(crate) const DASH_GAP_PX: u32 = 6;
pub(crate) const SUBTITLE_SIZE: f64 = 22.0;
/// Gap between the top of the area below the title and the plotting area.
pub(crate) const PLOT_TOP: u32 = 12;
/// Height of the x tick labels plus the x axis description.
pub(crate) const X_LABEL_AREA: u32 = TICK_SIZE as u32 + AXIS_DESC_SIZE as u32 + 26;
/// Legend boxes: the line sample's length, the inner padding, the gap to the plot.
pub(crate) const LEGEND_SWATCH: u32 = 36;
pub(crate) const LEGEND_PAD: u32 = 10;
pub(crate) const LEGEND_GAP: u32 = 8;
