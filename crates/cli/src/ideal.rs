//! `satquic ideal`: \[Caini2004\] Fig. 3–4 — Hybla and NewReno's rules on an ideal channel against
//! the continuous model (eq. 8 / eq. 4).

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use studies::ideal;

use crate::progress::Bars;

/// Flags of `satquic ideal`.
#[derive(Debug, Args)]
pub struct IdealArgs {
    /// Round-trip times to simulate (e.g. 25ms,100ms,300ms,600ms).
    #[arg(long, value_delimiter = ',', default_values_t = ["25ms".to_string(), "100ms".to_string(), "300ms".to_string(), "600ms".to_string()])]
    pub rtt: Vec<String>,
    /// Transmission time to follow after the first packet.
    #[arg(long, default_value = "30s")]
    pub horizon: String,
    /// Results directory.
    #[arg(long, default_value = "out/paper-ideal")]
    pub out: PathBuf,
}

/// Runs the experiment, prints the deviation table and writes the plot.
pub fn ideal(args: IdealArgs) -> anyhow::Result<()> {
    let parse = |flag: &str, v: &str| {
        scenario::units::parse_duration(v).with_context(|| format!("{flag}: {v:?}"))
    };
    let rtts = args
        .rtt
        .iter()
        .map(|v| parse("--rtt", v))
        .collect::<anyhow::Result<Vec<Duration>>>()?;
    if let Some(bad) = rtts.iter().find(|r| r.is_zero()) {
        anyhow::bail!("--rtt: {bad:?} must be greater than zero");
    }
    let horizon = parse("--horizon", &args.horizon)?;
    if horizon < Duration::from_secs(1) {
        anyhow::bail!("--horizon: at least 1s");
    }
    crate::flags::results_dir("--out", &args.out)?;
    let visible = std::io::stderr().is_terminal();
    let labels: Vec<(String, u64)> = vec![("paper-ideal".into(), 1)];
    let bars = Bars::new(&labels, horizon, visible);
    let cancel = AtomicBool::new(false);
    let curves = ideal::run(&rtts, horizon, 1, &bars, &cancel)?;
    drop(bars);
    ideal::plot(&args.out.join("ideal"), &curves, horizon)?;
    let marks: Vec<f64> = [5.0, 10.0, horizon.as_secs_f64()]
        .into_iter()
        .filter(|&t| t <= horizon.as_secs_f64())
        .collect();
    outln!("deviation of simulated transmitted data from the model (eq. 8 Hybla, eq. 4 NewReno):");
    out!("{:<14} {:>8}", "rules", "RTT ms");
    for t in &marks {
        out!(" {:>9}", format!("{t}s"));
    }
    outln!(" {:>14} {:>14}", "segments@end", "model@end");
    for (cc, rtt_ms, row) in ideal::deviations(&curves, &marks) {
        out!("{cc:<14} {rtt_ms:>8.0}");
        for value in &row {
            match value {
                Some(d) => out!(" {:>8.1}%", d * 100.0),
                None => out!(" {:>9}", "-"),
            }
        }
        let end = curves
            .iter()
            .find(|c| c.cc == cc && (c.rtt.as_secs_f64() * 1e3 - rtt_ms).abs() < 1e-9)
            .and_then(|c| c.simulated_at(horizon.as_secs_f64()))
            .unwrap_or(0.0);
        let model_r = if cc == "hybla" { 0.025 } else { rtt_ms / 1e3 };
        let model =
            ideal::transmitted_segments(horizon.as_secs_f64(), model_r, ideal::GAMMA_SEGMENTS);
        outln!(" {end:>14.0} {model:>14.0}");
    }
    for figure in ["ideal.png", "ideal-newreno.png"] {
        outln!("wrote {}", args.out.join(figure).display());
    }
    Ok(())
}
