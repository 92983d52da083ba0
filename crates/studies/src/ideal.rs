//! \[Caini2004\] §3.4 (Fig. 3–4): on an ideal channel (1 Gbit/s, no loss, a buffer that never
//! fills) the data Hybla transmits over time follows eq. 8 whatever the RTT, while NewReno's
//! falls with the RTT (eq. 4). We run both for several RTTs and report the deviation from the
//! continuous model.
//!
//! Model (segments, t from the first transmission, γ = initial ssthresh in segments):
//! T(t) = (2^{t/R} − 1)/ln 2 for t < t_γ = R·log₂γ, else
//! (γ − 1)/ln 2 + (t − t_γ)²/(2R²) + γ(t − t_γ)/R, with R = RTT0 for Hybla (eq. 8) and
//! R = RTT for NewReno (eq. 4).

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use chart::{Colour, LineStyle, PlotError, Series, StyledChart, StyledSeries};
use lab::runner::{self, Progress, RunError};
use scenario::RunSpec;
use scenario::{Scenario, ScenarioError};

/// The seed's example threshold (Fig. 1–3): γ = 32 segments.
pub const GAMMA_SEGMENTS: f64 = 32.0;

/// Transmitted segments after `t` seconds for growth time constant `r` seconds (eq. 4 / 8).
pub fn transmitted_segments(t: f64, r: f64, gamma: f64) -> f64 {
    let t_gamma = r * gamma.log2();
    if t < t_gamma {
        ((t / r).exp2() - 1.0) / std::f64::consts::LN_2
    } else {
        let dt = t - t_gamma;
        (gamma - 1.0) / std::f64::consts::LN_2 + dt * dt / (2.0 * r * r) + gamma * dt / r
    }
}

/// One simulated curve and its model.
#[derive(Debug, Clone)]
pub struct Curve {
    /// "hybla" or "newreno-rules".
    pub cc: String,
    /// Round-trip time.
    pub rtt: Duration,
    /// (seconds since the first transmission, segments transmitted) from the simulation.
    pub simulated: Vec<(f64, f64)>,
    /// Model time constant: RTT0 for Hybla, the RTT for NewReno.
    pub model_r: f64,
}

impl Curve {
    /// Simulated segments at `t` (linear interpolation between samples).
    pub fn simulated_at(&self, t: f64) -> Option<f64> {
        let i = self.simulated.iter().position(|&(x, _)| x >= t)?;
        if i == 0 {
            return Some(self.simulated[0].1);
        }
        let ((x0, y0), (x1, y1)) = (self.simulated[i - 1], self.simulated[i]);
        Some(y0 + (y1 - y0) * (t - x0) / (x1 - x0))
    }

    /// (simulated − model) / model at `t`.
    pub fn deviation_at(&self, t: f64) -> Option<f64> {
        let model = transmitted_segments(t, self.model_r, GAMMA_SEGMENTS);
        Some(self.simulated_at(t)? / model - 1.0)
    }
}

/// Why the experiment failed.
#[derive(Debug, thiserror::Error)]
pub enum IdealError {
    /// The built-in scenario text is wrong (a bug).
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    /// A run failed.
    #[error(transparent)]
    Run(#[from] RunError),
    /// A plot failed.
    #[error(transparent)]
    Plot(#[from] PlotError),
}

/// The ideal channel: 1 Gbit/s each way with a buffer that never fills. 1 GiB, the largest a
/// scenario may state, is 14 BDP at 600 ms; the queue peaks at 27 kB within the default 30 s
/// horizon (RTT 600 ms), where the window is 43 MB, below one BDP.
fn scenario(rtt: Duration, horizon: Duration, cc_params: &str) -> Result<Scenario, ScenarioError> {
    let half_ms = rtt.as_secs_f64() * 1e3 / 2.0;
    // Run long enough for `horizon` of transmission after the handshake and the request.
    let duration_ms = (horizon + 3 * rtt + Duration::from_secs(1)).as_millis();
    let text = format!(
        r#"
name = "paper-ideal"
duration = "{duration_ms}ms"
[path.forward]
rate = "1Gbit"
delay = "{half_ms}ms"
queue = "1GiB"
[path.return]
rate = "1Gbit"
delay = "{half_ms}ms"
queue = "1GiB"
[[flow]]
name = "bulk"
cc = "hybla"
cc_params = {cc_params}
download = "unlimited"
"#
    );
    Scenario::from_toml_str(&text, "paper-ideal", &[])
}

/// Runs Hybla (seed rules, RTT0 25 ms, ssthresh γ·ρ) and the same controller with ρ forced to 1
/// (NewReno's rules, ssthresh γ) at each RTT, `horizon` of transmission each.
pub fn run(
    rtts: &[Duration],
    horizon: Duration,
    threads: usize,
    progress: &dyn Progress,
    cancel: &AtomicBool,
) -> Result<Vec<Curve>, IdealError> {
    let variants = [
        (
            "hybla",
            r#"{ rtt0 = "25ms", growth = "seed", initial_ssthresh = "32seg", initial_window = "2944B" }"#,
            None,
        ),
        (
            "newreno-rules",
            // RTT0 above every RTT: ρ = 1, i.e. NewReno's rules with the same γ.
            r#"{ rtt0 = "10s", growth = "seed", initial_ssthresh = "32seg", initial_window = "2944B" }"#,
            Some(()),
        ),
    ];
    let mut curves = Vec::new();
    for &rtt in rtts {
        for (cc, params, rho_one) in &variants {
            let scenario = scenario(rtt, horizon, params)?;
            let spec = RunSpec {
                cc_override: None,
                seed: 1,
            };
            let runs = runner::run_all(&scenario, &[spec], None, threads, progress, cancel)?;
            let outcome = &runs[0].outcome;
            let payload = f64::from(sim::payload_bytes_per_packet(scenario.mtu_bytes));
            // Data the server transmits at τ after its first transmission reaches the client
            // half an RTT later; the server starts half an RTT after the request.
            let start = outcome.flows[0].apps[0].busy_periods[0].0 + rtt;
            let simulated = outcome
                .samples
                .iter()
                .filter(|s| s.t >= start)
                .map(|s| {
                    (
                        (s.t - start).as_secs_f64(),
                        s.delivered_bytes as f64 / payload,
                    )
                })
                .filter(|&(t, _)| t <= horizon.as_secs_f64() + 0.5)
                .collect();
            curves.push(Curve {
                cc: cc.to_string(),
                rtt,
                simulated,
                model_r: if rho_one.is_some() {
                    rtt.as_secs_f64()
                } else {
                    0.025
                },
            });
        }
    }
    Ok(curves)
}

/// Deviation table rows: (cc, RTT ms, deviation at each of `at`, in order).
pub fn deviations(curves: &[Curve], at: &[f64]) -> Vec<(String, f64, Vec<Option<f64>>)> {
    curves
        .iter()
        .map(|c| {
            let row = at.iter().map(|&t| c.deviation_at(t)).collect();
            (c.cc.clone(), c.rtt.as_secs_f64() * 1e3, row)
        })
        .collect()
}

/// Writes `stem.png`/`.svg` (\[Caini2004\] Fig. 4: Hybla's simulated curves, one colour per
/// RTT, over eq. 8 dashed) and `stem-newreno.png`/`.svg` (Fig. 3: NewReno's rules, each RTT's
/// eq. 4 dashed in the curve's colour). Two figures, because on one linear axis NewReno's
/// curves (thousands of segments) lie flat under Hybla's (hundreds of thousands).
pub fn plot(stem: &std::path::Path, curves: &[Curve], horizon: Duration) -> Result<(), IdealError> {
    let steps = 300;
    let grid: Vec<f64> = (0..=steps)
        .map(|i| horizon.as_secs_f64() * i as f64 / steps as f64)
        .collect();
    let model = |r: f64| -> Vec<(f64, f64)> {
        grid.iter()
            .map(|&t| (t, transmitted_segments(t, r, GAMMA_SEGMENTS) / 1e3))
            .collect()
    };
    let mut rtts: Vec<Duration> = curves.iter().map(|c| c.rtt).collect();
    rtts.sort();
    rtts.dedup();
    let colour_of = |rtt: Duration| rtts.iter().position(|&r| r == rtt).unwrap_or(0);
    let rtt_ms = |c: &Curve| c.rtt.as_secs_f64() * 1e3;
    let simulated = |c: &Curve| StyledSeries {
        series: Series {
            label: format!("RTT {:.0} ms (sim)", rtt_ms(c)),
            points: c.simulated.iter().map(|&(t, y)| (t, y / 1e3)).collect(),
        },
        style: LineStyle::data(colour_of(c.rtt)),
    };

    let mut hybla: Vec<StyledSeries> = curves
        .iter()
        .filter(|c| c.cc == "hybla")
        .map(simulated)
        .collect();
    hybla.push(StyledSeries {
        series: Series {
            label: "eq. 8 (model, any RTT)".into(),
            points: model(0.025),
        },
        style: LineStyle::reference(Colour::Black),
    });
    let mut newreno = Vec::new();
    for c in curves.iter().filter(|c| c.cc != "hybla") {
        newreno.push(simulated(c));
        newreno.push(StyledSeries {
            series: Series {
                label: format!("RTT {:.0} ms, eq. 4 (model)", rtt_ms(c)),
                points: model(c.model_r),
            },
            style: LineStyle::reference(Colour::Palette(colour_of(c.rtt))),
        });
    }
    let subtitle = "1 Gbit/s, no loss, a buffer that never fills; γ = 32 segments; \
                    t from the server's first transmission";
    for (figure, title, lines) in [
        (
            stem.to_path_buf(),
            "Ideal channel: Hybla sends the same whatever the RTT ([Caini2004] Fig. 4)",
            &hybla,
        ),
        (
            stem.with_file_name(format!(
                "{}-newreno",
                stem.file_name().unwrap_or_default().to_string_lossy()
            )),
            "Ideal channel: NewReno's rules send less the longer the RTT ([Caini2004] Fig. 3)",
            &newreno,
        ),
    ] {
        chart::styled_line_chart(
            &figure,
            &StyledChart {
                title,
                subtitle,
                x_label: "time since first transmission (s)",
                y_label: "segments transmitted (thousands)",
                legend_title: "",
                lines,
            },
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_matches_hand_values() {
        // Slow start: after 2 R, (2² − 1)/ln 2 = 4.328 segments.
        assert!(
            (transmitted_segments(0.05, 0.025, 32.0) - 3.0 / std::f64::consts::LN_2).abs() < 1e-9
        );
        // At t_γ = 5 R the two branches meet: (γ − 1)/ln 2.
        let t_gamma = 0.025 * 5.0;
        let left = transmitted_segments(t_gamma - 1e-12, 0.025, 32.0);
        let right = transmitted_segments(t_gamma, 0.025, 32.0);
        assert!((left - right).abs() < 1e-6);
        // 1 s after t_γ: 1/(2·0.025²) + 32/0.025 = 800 + 1280, plus 31/ln 2.
        let t = t_gamma + 1.0;
        let expected = 31.0 / std::f64::consts::LN_2 + 800.0 + 1280.0;
        assert!((transmitted_segments(t, 0.025, 32.0) - expected).abs() < 1e-6);
    }
}
