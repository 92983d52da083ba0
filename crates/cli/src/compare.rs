//! `satquic compare A B`: two results directories (e.g. the same scenario on the simulator and
//! on the emulator) side by side — goodput and completion differences, goodput overlaid.

use std::path::{Path, PathBuf};

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

fn label(dir: &Path) -> String {
    dir.file_name().map_or_else(
        || dir.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// Prints the table and writes `compare.png|svg`.
pub fn compare(args: CompareArgs) -> anyhow::Result<()> {
    let pairs = report::compare::compare(&args.a, &args.b)?;
    // Checked before printing: the table is only worth showing with its plot.
    let out = args.out.clone().unwrap_or_else(|| args.a.clone());
    crate::flags::results_dir(if args.out.is_some() { "--out" } else { "DIR_A" }, &out)?;
    let (la, lb) = (label(&args.a), label(&args.b));
    outln!(
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
    for pair in &pairs {
        let ([ga, gb], [ca, cb]) = (pair.goodput_bps, pair.completion_s);
        outln!(
            "{:<10} {:<12} {:>14.3} {:>14.3} {:>8} {:>12} {:>12} {:>8}",
            pair.cc,
            pair.flow,
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
    let title = format!("goodput, 1 s sliding average: {la} vs {lb}");
    let written = report::compare::plot(&out.join("compare"), &pairs, [&na, &nb], &title)?;
    outln!("wrote {}", written[0].display());
    Ok(())
}
