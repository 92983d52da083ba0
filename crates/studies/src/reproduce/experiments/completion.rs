//! Completion-time objectives: the draft-kuhn cases, the SaT cases and picoquic's deadlines.

use std::fmt::Write;

use super::super::{Context, ReproduceError, Section};
use super::{check, load_builtin, mbps, run_pairs, secs, set};
use report::summary::{self};

/// The draft-kuhn cases of the catalog with their objectives: seconds to the first 2, 10 and
/// 100 MB (`None`: no objective).
pub(super) const KUHN: &[(&str, [Option<f64>; 3])] = &[
    ("kuhn-small", [Some(3.0), Some(10.0), Some(85.0)]),
    ("kuhn-medium", [Some(3.0), Some(5.0), Some(20.0)]),
    ("kuhn-congested", [Some(3.0), Some(5.0), Some(20.0)]),
    ("kuhn-variable", [None, None, None]),
    ("kuhn-large", [Some(3.0), Some(5.0), Some(8.0)]),
    ("kuhn-lossy", [Some(3.0), Some(6.0), Some(10.0)]),
];

pub(super) fn kuhn(ctx: &Context) -> Result<Section, ReproduceError> {
    let controllers: &[&str] = if ctx.quick {
        &["newreno", "hybla"]
    } else {
        &["newreno", "cubic", "bbr", "hybla"]
    };
    let cases: Vec<_> = KUHN
        .iter()
        .filter(|(id, _)| !ctx.quick || *id == "kuhn-medium" || *id == "kuhn-large")
        .collect();
    let mut pairs = Vec::new();
    for (id, _) in &cases {
        for cc in controllers {
            pairs.push((load_builtin(id, &[])?, cc.to_string()));
        }
    }
    let s = run_pairs(ctx, &pairs)?;
    let mut measured = String::new();
    let mut hybla_startup_ok = true;
    let mut hybla_startup = Vec::new();
    for (i, (id, objectives)) in cases.iter().enumerate() {
        let _ = writeln!(
            measured,
            "\n**{id}** — objectives 2 MB / 10 MB / 100 MB: {}\n\n| controller | download | t(2 MB) | t(10 MB) | t(100 MB) |\n|---|---|---|---|---|",
            objectives
                .iter()
                .map(|o| o.map_or("—".into(), |v| format!("{v} s")))
                .collect::<Vec<_>>()
                .join(" / ")
        );
        for (j, cc) in controllers.iter().enumerate() {
            let r = &s[i * controllers.len() + j];
            for (n, exchange) in r.flows[0].exchanges.iter().enumerate() {
                let cell = |label: &str, objective: Option<f64>| {
                    let t = exchange.time_to_bytes.get(label);
                    match (t, objective) {
                        (Some(t), Some(o)) => {
                            format!("{t:.2} s {}", if t <= o { "PASS" } else { "FAIL" })
                        }
                        (Some(t), None) => format!("{t:.2} s"),
                        (None, Some(_)) => "not reached FAIL".into(),
                        (None, None) => "—".into(),
                    }
                };
                let _ = writeln!(
                    measured,
                    "| {cc} | {} | {} | {} | {} |",
                    if n == 0 { "first" } else { "after 10 s idle" },
                    cell("2MB", objectives[0]),
                    cell("10MB", objectives[1]),
                    cell("100MB", objectives[2])
                );
                if *cc == "hybla" && n == 0 {
                    for (label, objective) in [
                        ("2MB", objectives[0]),
                        ("10MB", objectives[1]),
                        ("100MB", objectives[2]),
                    ] {
                        if objective.is_none() {
                            continue;
                        }
                        let t = exchange.time_to_bytes.get(label);
                        hybla_startup.push(format!("{id} {label}: {}", secs(t)));
                        hybla_startup_ok &= matches!((t, objective), (Some(t), Some(o)) if t <= o);
                    }
                }
            }
        }
    }
    Ok(Section {
        id: "kuhn".into(),
        title: "draft-kuhn-quic-4-sat objectives ([Kuhn-slides])".into(),
        scenario: "The six draft-kuhn cases (the scenario catalog), RTT 650 ms, 1-BDP buffers, download 100 MB (medium and large: again after 10 s idle); times from request to the first 2 / 10 / 100 MB in order. Transport: satquic's satellite preset (windows from the BDP; ACK thinning from the return-link budget: k = 64 on 250/3 and 50/0.5, 5 on 50/10 and 10/2, with the quinn-proto stall workaround).".into(),
        published: "Objectives (time to 2 / 10 / 100 MB): small 3/10/85 s, medium and congested 3/5/20 s, large 3/5/8 s, lossy 3/6/10 s; variable has none. [Kuhn-slides] reports that only picoquic client + server met them.".into(),
        measured,
        checks: vec![check(
            "Hybla meets every objective (2 / 10 / 100 MB) of every case that has one",
            hybla_startup.join(", "),
            hybla_startup_ok,
        )],
        notes: "Hybla's start-up target is the path's BDP as the scenario declares it (the thesis's INITIAL_SSTHRESH is the same fact, fixed); NewReno, Cubic and BBR get no such hint. With thinned ACKs NewReno and Cubic overshoot slow start into hundreds of losses and stay bound by their per-RTT growth; at 1 % loss (kuhn-lossy) they crawl at the Mathis bound, while Hybla keeps its window on losses that come with no queue. In quick mode only kuhn-medium and kuhn-large run.".into(),
        figures: Vec::new(),
    })
}

pub(super) fn sat(ctx: &Context) -> Result<Section, ReproduceError> {
    let controllers: &[&str] = if ctx.quick {
        &["newreno", "hybla"]
    } else {
        &["newreno", "cubic", "bbr", "hybla"]
    };
    let mut pairs = Vec::new();
    for id in ["sat", "satl"] {
        for cc in controllers {
            pairs.push((load_builtin(id, &[])?, cc.to_string()));
        }
    }
    let s = run_pairs(ctx, &pairs)?;
    let mut measured = String::from(
        "| scenario | controller | goodput | efficiency (goodput / 20 Mbit/s) | completion |\n|---|---|---|---|---|\n",
    );
    let n = controllers.len();
    for (i, r) in s.iter().enumerate() {
        let id = if i < n { "sat" } else { "satl" };
        let f = &r.flows[0];
        let _ = writeln!(
            measured,
            "| {id} | {} | {} | {:.1} % | {} |",
            r.cc,
            mbps(f.goodput_bps),
            f.goodput_bps / 20e6 * 100.0,
            secs(f.completion_s)
        );
    }
    let eff = |i: usize| s[i].flows[0].goodput_bps / 20e6;
    let h = n - 1;
    Ok(Section {
        id: "sat".into(),
        title: "QUIC interop runner, satellite edition: sat and satl".into(),
        scenario: "20/2 Mbit/s, RTT 600 ms, 25-packet buffers, download 10 MiB; satl adds 1 % loss both ways.".into(),
        published: "The interop runner reports goodput as a fraction of 20 Mbit/s per implementation pair; no single published figure for quinn.".into(),
        measured,
        checks: vec![
            check("sat: Hybla efficiency ≥ NewReno's", format!("{:.1} % vs {:.1} %", eff(h) * 100.0, eff(0) * 100.0), eff(h) >= eff(0)),
            check("satl: Hybla efficiency ≥ NewReno's", format!("{:.1} % vs {:.1} %", eff(n + h) * 100.0, eff(n) * 100.0), eff(n + h) >= eff(n)),
        ],
        notes: String::new(),
        figures: Vec::new(),
    })
}

pub(super) fn picoquic_sat(ctx: &Context) -> Result<Section, ReproduceError> {
    // (label, overrides, controllers, picoquic deadline per controller)
    // (path, overrides, controllers with picoquic's deadline)
    type Case<'a> = (&'a str, Vec<String>, Vec<(&'a str, Option<f64>)>);
    let cases: Vec<Case> = vec![
        (
            "250/3 Mbit/s",
            vec![],
            vec![
                ("bbr", Some(5.5)),
                ("cubic", Some(6.5)),
                ("hybla", Some(5.5)),
            ],
        ),
        (
            "250/3 Mbit/s, loss 1/64",
            set(&[
                ("path.forward.loss", "1.5625%".into()),
                ("path.return.loss", "1.5625%".into()),
            ]),
            vec![("bbr", Some(8.0)), ("hybla", Some(8.0))],
        ),
        (
            "50/10 Mbit/s",
            set(&[
                ("path.forward.rate", "50Mbit".into()),
                ("path.return.rate", "10Mbit".into()),
                ("path.forward.queue", "3.75MB".into()),
                ("path.return.queue", "750KB".into()),
            ]),
            vec![("bbr", Some(18.2)), ("hybla", Some(18.2))],
        ),
        (
            "10/2 Mbit/s",
            set(&[
                ("path.forward.rate", "10Mbit".into()),
                ("path.return.rate", "2Mbit".into()),
                ("path.forward.queue", "750KB".into()),
                ("path.return.queue", "150KB".into()),
                ("duration", "200s".into()),
            ]),
            vec![("bbr", Some(81.5)), ("hybla", Some(81.5))],
        ),
    ];
    let cases: Vec<_> = if ctx.quick {
        cases.into_iter().take(1).collect()
    } else {
        cases
    };
    let mut pairs = Vec::new();
    for (_, overrides, controllers) in &cases {
        for (cc, _) in controllers {
            pairs.push((load_builtin("picoquic-sat", overrides)?, cc.to_string()));
        }
    }
    let s = run_pairs(ctx, &pairs)?;
    let mut measured = String::from(
        "| path | controller | our completion (100 MB) | picoquic deadline | |\n|---|---|---|---|---|\n",
    );
    let mut i = 0;
    let mut hybla_results = Vec::new();
    let mut hybla_ok = true;
    for (label, _, controllers) in &cases {
        for (cc, deadline) in controllers {
            let t = s[i].flows[0].completion_s;
            i += 1;
            let verdict = match (t, deadline) {
                (Some(t), Some(d)) if t <= *d => "within",
                (_, Some(_)) => "over",
                _ => "",
            };
            let _ = writeln!(
                measured,
                "| {label} | {cc} | {} | {} | {verdict} |",
                secs(t),
                deadline.map_or("—".into(), |d| format!("{d} s"))
            );
            if *cc == "hybla" {
                // A deadline below what the modelled link can physically carry (100 MB at our
                // goodput ceiling after IP/UDP/QUIC overhead, plus the request's RTT) is
                // replaced by that floor + 2 %: picoquic's simulator charges fewer header
                // bytes to the link than our IP-level model does.
                let path = summary::path_summary(&pairs[i - 1].0);
                let floor = 100e6 * 8.0 / path.goodput_ceiling_bps + path.base_rtt_ms / 1e3;
                let effective = deadline.map(|d| d.max(floor * 1.02));
                hybla_results.push(format!(
                    "{label}: {} (limit {})",
                    secs(t),
                    effective.map_or("—".into(), |d| format!("{d:.1} s"))
                ));
                hybla_ok &= matches!((t, effective), (Some(t), Some(d)) if t <= d);
            }
        }
    }
    Ok(Section {
        id: "picoquic-sat".into(),
        title: "Our completion times next to picoquic's satellite test deadlines".into(),
        scenario: "picoquic's satellite tests: 100 MB download, RTT 600 ms, buffers of 600 ms of the link rate; 250/3, 250/3 with 1/64 loss, 50/10 and 10/2 Mbit/s.".into(),
        published: "picoquic test deadlines: 250/3 BBR 5.5 s, BBR with 1/64 loss 8.0 s, Cubic 6.5 s; 50/10 18.2 s; 10/2 81.5 s.".into(),
        measured,
        checks: vec![check("Hybla within picoquic's deadline on every path (or within 2 % of the modelled link's physical minimum where the deadline lies below it)", hybla_results.join(", "), hybla_ok)],
        notes: "picoquic's deadlines come from its own stack and simulator. The 10/2 Mbit/s deadline (81.5 s, 9.82 Mbit/s of payload) lies below what our IP-level link model can carry: 1500-byte packets hold 1439 bytes of stream payload after IPv4/UDP (28 B) and QUIC (33 B) overhead, so 100 MB needs at least 83.4 s plus the request's RTT at 10 Mbit/s; picoquic's simulator charges fewer header bytes to the link. That case is checked against our floor + 2 %. Hybla's start-up target on these paths is the declared path BDP (the scenario states the link), and ACK thinning (k = 64 on 250/3) with the quinn-proto stall workaround keeps the 3 Mbit/s return link from capping the ACK clock.".into(),
        figures: Vec::new(),
    })
}

// ---- loss matrix -------------------------------------------------------------------------------
