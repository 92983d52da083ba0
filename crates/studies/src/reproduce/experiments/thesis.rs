//! The thesis's experiments: QUIC Hybla on its GEO and LEO paths.

use std::fmt::Write;

use super::super::{Context, ReproduceError, Section};
use super::{check, duration, load_builtin, mbps, run_controllers};

pub(super) fn thesis_geo(ctx: &Context) -> Result<Section, ReproduceError> {
    let scenario = load_builtin("thesis-geo", &duration(ctx, "60s"))?;
    let (s, figures) =
        run_controllers(ctx, "thesis-geo", &scenario, &["hybla", "newreno", "cubic"])?;
    let mut measured = String::from(
        "| controller | goodput | lost packets | link utilization |\n|---|---|---|---|\n",
    );
    for r in &s {
        let f = &r.flows[0];
        let _ = writeln!(
            measured,
            "| {} | {} | {} | {:.1} % |",
            r.cc,
            mbps(f.goodput_bps),
            f.lost_packets,
            r.link_utilization * 100.0
        );
    }
    let (hybla, newreno) = (s[0].flows[0].goodput_bps, s[1].flows[0].goodput_bps);
    Ok(Section {
        id: "thesis-geo".into(),
        title: "QUIC Hybla on a GEO link ([Cavallotti2024] §5.3, Fig. 5.2–5.5)".into(),
        scenario: format!(
            "10 Mbit/s both ways, RTT 500 ms, PER 0.01 % both ways, 1-BDP drop-tail buffer (the thesis does not state it), one bulk flow, {} s. Hybla: RTT0 25 ms, our defaults (estimated initial ssthresh instead of the thesis's 750 KB, pipe-aware growth).",
            scenario.duration.as_secs()
        ),
        published: "Hybla ≈ 8.9 Mbit/s average, NewReno ≈ 3.7 Mbit/s (picoquic, Virtualbricks testbed, 300 s).".into(),
        measured,
        checks: vec![
            check("Hybla average ≥ 8.9 Mbit/s (the thesis's Hybla)", mbps(hybla), hybla >= 8.9e6),
            check("Hybla ≥ 2 × NewReno (thesis: 8.9 / 3.7 = 2.4×)", format!("{:.1}×", hybla / newreno), hybla >= 2.0 * newreno),
        ],
        notes: "Our NewReno averages less than the thesis's 3.7 Mbit/s: its slow start overshoots a 1-BDP buffer (about 800 drops) and congestion avoidance at 500 ms then regrows by one packet per RTT; the thesis's buffer and picoquic's recovery details are not published.".into(),
        figures,
    })
}

pub(super) fn thesis_leo(ctx: &Context) -> Result<Section, ReproduceError> {
    let scenario = load_builtin("thesis-leo", &duration(ctx, "30s"))?;
    let (s, figures) = run_controllers(ctx, "thesis-leo", &scenario, &["hybla", "newreno"])?;
    let mut measured = String::from("| controller | goodput | lost packets |\n|---|---|---|\n");
    for r in &s {
        let _ = writeln!(
            measured,
            "| {} | {} | {} |",
            r.cc,
            mbps(r.flows[0].goodput_bps),
            r.flows[0].lost_packets
        );
    }
    let ratio = s[0].flows[0].goodput_bps / s[1].flows[0].goodput_bps;
    Ok(Section {
        id: "thesis-leo".into(),
        title: "LEO-like RTT: Hybla ≈ NewReno ([Cavallotti2024] §5.3)".into(),
        scenario: format!(
            "As thesis-geo with RTT 30 ms (ρ = 1.2), {} s.",
            scenario.duration.as_secs()
        ),
        published: "\"Hybla's performance is more modest – closer to that of NewReno\" (ρ ≈ 1.2)."
            .into(),
        measured,
        checks: vec![check(
            "Hybla within ±10 % of NewReno",
            format!("ratio {ratio:.3}"),
            (ratio - 1.0).abs() <= 0.10,
        )],
        notes: String::new(),
        figures,
    })
}

// ---- paper: ideal channel -----------------------------------------------------------------------------
