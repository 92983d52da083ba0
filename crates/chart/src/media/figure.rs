//! The two-panel figure prepared for drawing: layers stacked on their union x grid, the
//! ceiling as steps, dots split at the lower panel's bound, and each panel's legend rows.

use plotters::prelude::*;

use crate::WIDTH;
use crate::data::{decimate, x_range, y_range};
use crate::style::colour;
use crate::ticks::format_sig;

use super::StackedPanelChart;

/// Palette index of the first dot series (see `stacked_panel_chart`). Dots always take the
/// colours from here on, and layers beyond the third skip past them: a dot series keeps its
/// colour in figures with two layers (one connection's media and bulk), three (plus a
/// competitor) and four (two connections, RFC 8867 §5.2), so figures compare side by side.
const FIRST_DOT_COLOUR: usize = 3;

pub(super) const CEILING_WIDTH: u32 = 3;
pub(super) const CEILING_COLOUR: RGBColor = RGBColor(0x1A, 0x1A, 0x1A);
pub(super) const THRESHOLD_COLOUR: RGBColor = RGBColor(0x33, 0x33, 0x33);
const CLIPPED_NOTE_COLOUR: RGBColor = RGBColor(0x55, 0x55, 0x55);

/// The palette index of layer `i` in a figure with `dot_series` dot series.
fn layer_colour_index(i: usize, dot_series: usize) -> usize {
    if i < FIRST_DOT_COLOUR {
        i
    } else {
        i + dot_series
    }
}

/// What a legend row shows left of its label.
#[derive(Clone, Copy)]
pub(super) enum Key {
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

pub(super) struct LegendRow {
    pub(super) label: String,
    pub(super) key: Key,
}

/// A stacked-area panel over a dot panel, prepared for drawing.
pub(super) struct PanelFigure<'a> {
    pub(super) title: &'a str,
    pub(super) x_label: &'a str,
    pub(super) top_y_label: &'a str,
    pub(super) bottom_y_label: &'a str,
    pub(super) x: (f64, f64),
    pub(super) top_y: (f64, f64),
    pub(super) bottom_y: (f64, f64),
    /// Cumulative top edge of each layer (bottom first), with the layer's colour.
    pub(super) bands: Vec<(RGBColor, Vec<(f64, f64)>)>,
    /// The ceiling as step-function vertices.
    pub(super) ceiling: Vec<(f64, f64)>,
    /// Dots not clipped, per series.
    pub(super) dots: Vec<(RGBColor, Vec<(f64, f64)>)>,
    /// X of the clipped dots, per series.
    pub(super) clipped: Vec<(RGBColor, Vec<f64>)>,
    pub(super) threshold: Option<f64>,
    pub(super) top_legend: Vec<LegendRow>,
    pub(super) bottom_legend: Vec<LegendRow>,
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
    pub(super) fn new(c: &StackedPanelChart<'a>) -> Self {
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
            .map(|(i, pts)| {
                let index = layer_colour_index(i, c.bottom_series.len());
                (colour(index), decimate(pts, 2 * WIDTH as usize))
            })
            .collect();
        let ceiling = steps(&ceiling, x.1);

        let threshold = c.bottom_threshold.map(|t| t.1).filter(|t| t.is_finite());
        let mut bottom_y = y_range(series.iter().flatten().map(|p| p.1).chain(threshold));
        let y_max = c.bottom_y_max.filter(|m| m.is_finite() && *m > bottom_y.0);
        if let Some(m) = y_max {
            bottom_y.1 = bottom_y.1.min(m);
        }
        let mut dots = Vec::with_capacity(series.len());
        let mut clipped = Vec::with_capacity(series.len());
        let mut n_clipped = 0;
        for (j, pts) in series.into_iter().enumerate() {
            let col = colour(FIRST_DOT_COLOUR + j);
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
                key: Key::Area(colour(layer_colour_index(i, c.bottom_series.len()))),
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
                key: Key::Dot(colour(FIRST_DOT_COLOUR + j)),
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

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn a_fourth_layer_takes_no_dot_colour_and_dots_keep_theirs() {
        let dots = 2;
        let dot_colours: Vec<usize> = (0..dots).map(|j| FIRST_DOT_COLOUR + j).collect();
        for layers in 1..=5 {
            let layer_colours: Vec<usize> =
                (0..layers).map(|i| layer_colour_index(i, dots)).collect();
            assert!(
                layer_colours.iter().all(|c| !dot_colours.contains(c)),
                "{layers} layers: {layer_colours:?} against dots {dot_colours:?}"
            );
            let mut distinct = layer_colours.clone();
            distinct.dedup();
            assert_eq!(distinct.len(), layers);
        }
        // Figures of up to three layers are drawn as before: layer i in colour i.
        assert_eq!(layer_colour_index(2, dots), 2);
        assert_eq!(layer_colour_index(3, dots), 5);
    }
}
