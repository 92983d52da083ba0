//! `satquic compare A B`: two results directories (e.g. the same scenario on the simulator and
//! on the emulator) side by side — goodput and completion differences, goodput overlaid.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use chart::{Chart, Series};
use clap::Args;

/// Flags of `satquic compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// First results directory (holds summary.json and timeseries.csv).
    pub a: PathBuf,
    /// Second results directory.
    pub b: PathBuf,
    /// Where the overlaid plot goes (default: the first directory).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// (cc, flow) → (goodput bit/s, completion s).
type Results = BTreeMap<(String, String), (f64, Option<f64>)>;

fn results(dir: &Path) -> anyhow::Result<Results> {
    let path = dir.join("summary.json");
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    let json: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("{}: not JSON", path.display()))?;
    let mut out = Results::new();
    for run in json["runs"]
        .as_array()
        .with_context(|| format!("{}: no runs", path.display()))?
    {
        for flow in run["flows"].as_array().into_iter().flatten() {
            let key = (
                run["cc"].as_str().unwrap_or_default().to_owned(),
                flow["name"].as_str().unwrap_or_default().to_owned(),
            );
            out.entry(key).or_insert((
                flow["goodput_bps"].as_f64().unwrap_or(0.0),
                flow["completion_s"].as_f64(),
            ));
        }
    }
    Ok(out)
}

/// (cc, flow) → [(t, goodput Mbit/s)].
type Curves = BTreeMap<(String, String), Vec<(f64, f64)>>;

/// (cc, flow) → (t, goodput Mbit/s), first seed only.
fn series(dir: &Path) -> anyhow::Result<Curves> {
    let path = dir.join("timeseries.csv");
    let mut reader =
        csv::Reader::from_path(&path).with_context(|| format!("reading {}", path.display()))?;
    let headers = reader.headers()?.clone();
    let col = |name: &str| {
        headers
            .iter()
            .position(|h| h == name)
            .with_context(|| format!("{}: no column {name}", path.display()))
    };
    let (cc, flow, t, goodput, run) = (
        col("cc")?,
        col("flow")?,
        col("t_s")?,
        col("goodput_bps")?,
        col("run")?,
    );
    let mut out = Curves::new();
    let mut first_run_of: BTreeMap<String, String> = BTreeMap::new();
    for record in reader.records() {
        let r = record?;
        let run_id = first_run_of
            .entry(r[cc].to_owned())
            .or_insert_with(|| r[run].to_owned());
        if *run_id != r[run] {
            continue;
        }
        out.entry((r[cc].to_owned(), r[flow].to_owned()))
            .or_default()
            .push((
                r[t].parse().unwrap_or(0.0),
                r[goodput].parse::<f64>().unwrap_or(0.0) / 1e6,
            ));
    }
    Ok(out)
}

fn label(dir: &Path) -> String {
    dir.file_name().map_or_else(
        || dir.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// Prints the table and writes `compare.png|svg`.
pub fn compare(args: CompareArgs) -> anyhow::Result<()> {
    let (a, b) = (results(&args.a)?, results(&args.b)?);
    let (la, lb) = (label(&args.a), label(&args.b));
    let common: Vec<_> = a.keys().filter(|k| b.contains_key(*k)).cloned().collect();
    if common.is_empty() {
        bail!(
            "{} and {} share no (controller, flow) pair",
            args.a.display(),
            args.b.display()
        );
    }
    println!(
        "{:<10} {:<12} {:>14} {:>14} {:>8} {:>12} {:>12} {:>8}",
        "cc",
        "flow",
        format!("Mbit/s {la}"),
        format!("Mbit/s {lb}"),
        "diff",
        format!("done {la}"),
        format!("done {lb}"),
        "diff"
    );
    let pct = |x: f64, y: f64| format!("{:+.1}%", (y / x - 1.0) * 100.0);
    for key in &common {
        let ((ga, ca), (gb, cb)) = (a[key], b[key]);
        println!(
            "{:<10} {:<12} {:>14.3} {:>14.3} {:>8} {:>12} {:>12} {:>8}",
            key.0,
            key.1,
            ga / 1e6,
            gb / 1e6,
            pct(ga, gb),
            ca.map_or("-".into(), |c| format!("{c:.2} s")),
            cb.map_or("-".into(), |c| format!("{c:.2} s")),
            match (ca, cb) {
                (Some(x), Some(y)) => pct(x, y),
                _ => "-".into(),
            }
        );
    }
    let (sa, sb) = (series(&args.a)?, series(&args.b)?);
    // Legends show what differs: "thesis-geo-sim" vs "thesis-geo-emu" → "sim", "emu".
    let common_prefix = la
        .chars()
        .zip(lb.chars())
        .take_while(|(x, y)| x == y)
        .count();
    let short = |l: &str| {
        let rest: String = l.chars().skip(common_prefix).collect();
        if rest.is_empty() {
            l.to_owned()
        } else {
            rest.trim_start_matches(['-', '_', '.']).to_owned()
        }
    };
    let (na, nb) = (short(&la), short(&lb));
    let mut lines = Vec::new();
    for key in &common {
        for (name, s) in [(&na, &sa), (&nb, &sb)] {
            if let Some(points) = s.get(key) {
                lines.push(Series {
                    label: format!("{name}: {} {}", key.0, key.1),
                    points: points.clone(),
                });
            }
        }
    }
    let out = args.out.clone().unwrap_or_else(|| args.a.clone());
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    let title = format!("goodput, 1 s sliding average: {la} vs {lb}");
    let written = chart::line_chart(
        &out.join("compare"),
        &Chart {
            title: &title,
            x_label: "time (s)",
            y_label: "in-order goodput (Mbit/s)",
            series: &lines,
        },
    )?;
    println!("wrote {}", written[0].display());
    Ok(())
}
