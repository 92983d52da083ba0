//! The sweep's figure: a metric of one flow against the first swept parameter, one line per
//! controller (and value of the other axes), mean ± stdev over seeds.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use chart::ErrorSeries;
use scenario::units;

use super::error::{SweepError, results_error};
use super::grid::Axis;
use super::results::{NUMERIC_METRICS, existing_rows, header};

/// A swept value as a number for the x axis, with its unit: durations in ms, rates in Mbit/s,
/// sizes in bytes, probabilities in %, plain numbers as they are.
pub fn numeric(value: &str) -> Option<(f64, &'static str)> {
    if let Ok(d) = units::parse_duration(value) {
        return Some((d.as_secs_f64() * 1e3, "ms"));
    }
    if let Ok(r) = units::parse_rate(value) {
        return Some((r as f64 / 1e6, "Mbit/s"));
    }
    if let Ok(p) = units::parse_probability(value) {
        return Some((p * 100.0, "%"));
    }
    if let Ok(b) = units::parse_size(value) {
        return Some((b as f64, "B"));
    }
    value.parse::<f64>().ok().map(|v| (v, ""))
}

/// Plots `metric` of `flow` (first flow if None) against the first axis: one line per
/// controller (and per value of the other axes), mean ± stdev over seeds.
pub fn plot(
    csv_path: &Path,
    axes: &[Axis],
    metric: &str,
    flow: Option<&str>,
    stem: &Path,
) -> Result<[PathBuf; 2], SweepError> {
    let header = header(axes);
    let rows = existing_rows(csv_path, &header)?;
    if !NUMERIC_METRICS.contains(&metric) {
        return Err(results_error(
            csv_path,
            format!("--metric {metric:?}: not a metric column; choose one of {NUMERIC_METRICS:?}"),
        ));
    }
    if let Some(flow) = flow
        && !rows.iter().any(|r| r.metrics.flow == flow)
    {
        let mut flows: Vec<&str> = rows.iter().map(|r| r.metrics.flow.as_str()).collect();
        flows.sort_unstable();
        flows.dedup();
        return Err(results_error(
            csv_path,
            format!(
                "--flow {flow:?}: no such flow in the sweep (flows: {})",
                flows.join(", ")
            ),
        ));
    }
    let flow = flow.map_or_else(
        || {
            rows.first()
                .map(|r| r.metrics.flow.clone())
                .unwrap_or_default()
        },
        str::to_owned,
    );
    let x_axis = XAxis::of(&axes[0]);
    // (line label) → x → values over seeds
    let mut lines: BTreeMap<String, BTreeMap<u64, (f64, Vec<f64>)>> = BTreeMap::new();
    let mut line_order: Vec<String> = Vec::new();
    for row in rows.iter().filter(|r| r.metrics.flow == flow) {
        let Some(x) = x_axis.position(&axes[0], &row.values[0]) else {
            continue;
        };
        let others: Vec<String> = axes[1..]
            .iter()
            .zip(&row.values[1..])
            .map(|(a, v)| format!("{}={v}", a.key))
            .collect();
        let label = std::iter::once(row.metrics.cc.clone())
            .chain(others)
            .collect::<Vec<_>>()
            .join(" ");
        if !line_order.contains(&label) {
            line_order.push(label.clone());
        }
        let Some(value) = row.metrics.value(metric) else {
            continue;
        };
        lines
            .entry(label)
            .or_default()
            .entry(x.to_bits())
            .or_insert((x, Vec::new()))
            .1
            .push(value);
    }
    let (y_label, y_scale) = metric_axis(metric);
    let series: Vec<ErrorSeries> = line_order
        .iter()
        .map(|label| ErrorSeries {
            label: label.clone(),
            points: lines
                .get(label)
                .map(|xs| {
                    xs.values()
                        .map(|(x, vs)| {
                            let mean = vs.iter().sum::<f64>() / vs.len() as f64;
                            let var = if vs.len() > 1 {
                                vs.iter().map(|v| (v - mean).powi(2)).sum::<f64>()
                                    / (vs.len() - 1) as f64
                            } else {
                                0.0
                            };
                            (*x, mean * y_scale, var.sqrt() * y_scale)
                        })
                        .collect()
                })
                .unwrap_or_default(),
        })
        .collect();
    let x_label = match x_axis {
        XAxis::Numeric("") | XAxis::Categories => axes[0].key.clone(),
        XAxis::Numeric(unit) => format!("{} ({unit})", axes[0].key),
    };
    let title = format!(
        "{} of flow {flow} vs {}",
        y_label.split(" (").next().unwrap_or(metric),
        axes[0].key
    );
    Ok(match x_axis {
        XAxis::Numeric(_) => chart::error_bar_chart(stem, &title, &x_label, &y_label, &series)?,
        XAxis::Categories => chart::error_bar_chart_categories(
            stem,
            &title,
            &x_label,
            &y_label,
            &axes[0].values,
            &series,
        )?,
    })
}

/// How the first axis's values are laid out along x.
#[derive(Debug, Clone, Copy, PartialEq)]
enum XAxis {
    /// Every value a number in this unit: at its value.
    Numeric(&'static str),
    /// Names (`droptail,red`), or numbers in different units (`1bdp,100kB`): each value at
    /// its place in the grid, labelled with itself.
    Categories,
}

impl XAxis {
    fn of(axis: &Axis) -> XAxis {
        let mut units = axis.values.iter().map(|v| numeric(v).map(|(_, unit)| unit));
        match units.next().flatten() {
            Some(unit) if units.all(|u| u == Some(unit)) => XAxis::Numeric(unit),
            _ => XAxis::Categories,
        }
    }

    /// Where a row's value of `axis` goes on x.
    fn position(self, axis: &Axis, value: &str) -> Option<f64> {
        match self {
            XAxis::Numeric(_) => numeric(value).map(|(x, _)| x),
            XAxis::Categories => axis
                .values
                .iter()
                .position(|v| v == value)
                .map(|i| i as f64),
        }
    }
}

/// The y axis of a metric: rates in Mbit/s rather than bare bits per second ("8M" ticks read
/// as megabytes as easily as megabits), other metrics as they are in sweep.csv.
fn metric_axis(metric: &str) -> (String, f64) {
    match metric.strip_suffix("_bps") {
        Some(name) => (format!("{} (Mbit/s)", name.replace('_', " ")), 1e-6),
        None => (metric.to_owned(), 1.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_metrics_are_plotted_in_mbit_per_s() {
        assert_eq!(
            metric_axis("goodput_bps"),
            ("goodput (Mbit/s)".to_owned(), 1e-6)
        );
        assert_eq!(metric_axis("jain_index"), ("jain_index".to_owned(), 1.0));
    }

    fn axis(values: &[&str]) -> Axis {
        Axis {
            key: "path.forward.aqm".to_owned(),
            values: values.iter().map(|v| (*v).to_owned()).collect(),
        }
    }

    #[test]
    fn names_and_mixed_units_are_categories_at_their_place_in_the_grid() {
        let names = axis(&["red", "droptail"]);
        assert_eq!(XAxis::of(&names), XAxis::Categories);
        assert_eq!(XAxis::Categories.position(&names, "droptail"), Some(1.0));
        assert_eq!(XAxis::Categories.position(&names, "codel"), None);
        let mixed = axis(&["1bdp", "100kB"]);
        assert_eq!(XAxis::of(&mixed), XAxis::Categories);
        let rtts = axis(&["100ms", "1s"]);
        assert_eq!(XAxis::of(&rtts), XAxis::Numeric("ms"));
        assert_eq!(XAxis::Numeric("ms").position(&rtts, "1s"), Some(1000.0));
    }

    #[test]
    fn numeric_values_carry_units() {
        assert_eq!(numeric("600ms"), Some((600.0, "ms")));
        assert_eq!(numeric("10Mbit"), Some((10.0, "Mbit/s")));
        assert_eq!(numeric("1%"), Some((1.0, "%")));
        assert_eq!(numeric("3"), Some((3.0, "")));
        assert_eq!(numeric("cubic"), None);
    }
}
