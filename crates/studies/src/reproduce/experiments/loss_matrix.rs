//! The loss matrix: random loss against the share of the link and self-inflicted drops.

use std::fmt::Write;
use std::path::PathBuf;

use super::super::{Context, ReproduceError, Section, seeds_text};
use super::{check, load, run_pairs_over_seeds, set};
use chart::{Colour, LineStyle, Series, StyledChart, StyledSeries};
use report::output;
use report::summary::RunSummary;
use sim::losses::MatchedLosses;

const LOSS_MATRIX: &str = include_str!("../../../../../scenarios/reproduce/loss-matrix.toml");

/// Mathis et al. (1997): the most a loss-based Reno flow gets at packet loss rate p,
/// MSS / RTT · sqrt(3 / (2p)), in bits per second of payload.
fn mathis_bound_bps(payload_bytes: f64, rtt_s: f64, loss: f64) -> f64 {
    payload_bytes * 8.0 / rtt_s * (1.5 / loss).sqrt()
}

/// One cell's lone flow over its seeds: means, and the loss verdicts pooled
/// ([`MatchedLosses::pooled`]: shares of all the seeds' losses together).
#[derive(Debug, Clone, PartialEq)]
struct Cell {
    /// Goodput over the most the link carries, mean over the seeds.
    ceiling_fraction: f64,
    /// The most the link carries, bit/s of payload (the same for every seed).
    ceiling_bps: f64,
    /// Queue-overflow drops per 1000 sent packets, mean over the seeds.
    drops_per_1000: f64,
    /// How the flow took its losses, pooled; `None` for a controller that does not say.
    matched: Option<MatchedLosses>,
}

impl Cell {
    /// One run's lone flow.
    fn of_run(run: &RunSummary) -> Cell {
        let f = &run.flows[0];
        Cell {
            ceiling_fraction: f.ceiling_fraction,
            ceiling_bps: f.goodput_bps / f.ceiling_fraction.max(1e-12),
            drops_per_1000: 1000.0 * f.forward_queue_drops as f64 / f.sent_packets.max(1) as f64,
            matched: f.losses.matched,
        }
    }

    /// The seeds of one cell together: means of the fractions and drops, the ceiling of the
    /// first (the path is the same), the verdicts pooled.
    fn over_seeds(seeds: &[Cell]) -> Cell {
        let n = seeds.len().max(1) as f64;
        let matched: Vec<MatchedLosses> = seeds.iter().filter_map(|c| c.matched).collect();
        Cell {
            ceiling_fraction: seeds.iter().map(|c| c.ceiling_fraction).sum::<f64>() / n,
            ceiling_bps: seeds.first().map_or(f64::NAN, |c| c.ceiling_bps),
            drops_per_1000: seeds.iter().map(|c| c.drops_per_1000).sum::<f64>() / n,
            matched: (!matched.is_empty()).then(|| MatchedLosses::pooled(matched)),
        }
    }
}

pub(super) fn loss_matrix(ctx: &Context) -> Result<Section, ReproduceError> {
    const LOSSES: [f64; 5] = [0.0, 0.1, 0.5, 1.0, 2.0];
    const RTTS_MS: [u64; 3] = [30, 250, 600];
    const LINKS: [(&str, &str, &str); 2] = [
        ("10/10 Mbit/s", "10Mbit", "10Mbit"),
        ("20/2 Mbit/s", "20Mbit", "2Mbit"),
    ];
    // Every registered controller, in the figures' order (hybla first).
    let controllers = output::controllers_in_figure_order();
    /// Loss rates of the jitter cells (the targets' 0.1–1 %).
    const JITTER_LOSSES: [f64; 3] = [0.1, 0.5, 1.0];
    /// 10 ms of mean jitter on both links, a new draw per packet, order kept.
    const JITTER: &str = r#"{ distribution = "exponential", mean = "10ms" }"#;
    let cell_overrides = |forward: &str, back: &str, rtt: u64, loss: &str| {
        let one_way = format!("{}ms", rtt as f64 / 2.0);
        set(&[
            ("path.forward.rate", forward.into()),
            ("path.return.rate", back.into()),
            ("path.forward.delay", one_way.clone()),
            ("path.return.delay", one_way),
            ("path.forward.loss", loss.into()),
            ("path.return.loss", loss.into()),
        ])
    };
    let mut pairs = Vec::new();
    for (_, forward, back) in LINKS {
        for rtt in RTTS_MS {
            for loss in LOSSES {
                let scenario = load(
                    LOSS_MATRIX,
                    "loss-matrix",
                    &cell_overrides(forward, back, rtt, &format!("{loss}%")),
                )?;
                for cc in &controllers {
                    pairs.push((scenario.clone(), cc.to_string()));
                }
            }
        }
    }
    // Bursty loss: Gilbert-Elliott, 10 Mbit/s, 600 ms.
    let mut bursty = load(
        LOSS_MATRIX,
        "loss-matrix",
        &cell_overrides("10Mbit", "10Mbit", 600, "0%"),
    )?;
    let ge = netsim::LossModel::GilbertElliott {
        p_good_to_bad: 0.018,
        p_bad_to_good: 0.645,
        loss_in_bad: 1.0,
        loss_in_good: 0.0,
    };
    bursty.forward.loss = ge;
    bursty.return_link.loss = ge;
    let bursty_start = pairs.len();
    for cc in &controllers {
        pairs.push((bursty.clone(), cc.to_string()));
    }
    // Jitter: the same paths with 10 ms of mean jitter both ways, every controller (what the
    // others reach there is the scale hybla's 80 % target is read against).
    let jitter_start = pairs.len();
    for (_, forward, back) in LINKS {
        for rtt in RTTS_MS {
            for loss in JITTER_LOSSES {
                let mut overrides = cell_overrides(forward, back, rtt, &format!("{loss}%"));
                overrides.extend(set(&[
                    ("path.forward.jitter", JITTER.into()),
                    ("path.return.jitter", JITTER.into()),
                ]));
                let scenario = load(LOSS_MATRIX, "loss-matrix", &overrides)?;
                for cc in &controllers {
                    pairs.push((scenario.clone(), cc.to_string()));
                }
            }
        }
    }
    let s: Vec<Cell> = run_pairs_over_seeds(ctx, &pairs, ctx.seeds)?
        .iter()
        .map(|runs| Cell::over_seeds(&runs.iter().map(Cell::of_run).collect::<Vec<_>>()))
        .collect();
    let payload = f64::from(sim::payload_bytes_per_packet(1500));
    let mut measured = String::from(
        "Each cell: ceiling fraction (goodput / most the link carries) · queue-overflow drops per 1000 sent packets. Last column: how hybla took its losses — random losses taken as random, and queue drops taken as congestion (with their number).\n",
    );
    // The worst share of random losses taken as random, and of queue drops taken as
    // congestion, over the hybla cells (plain; the jitter cells are checked apart).
    let mut worst_random: (f64, String) = (f64::INFINITY, String::new());
    let mut worst_queue: (f64, String) = (f64::INFINITY, String::new());
    let accuracy = |cell: &Cell| {
        let m = cell.matched.unwrap_or_default();
        let pct = |v: Option<f64>| v.map_or("—".to_string(), |v| format!("{:.0} %", 100.0 * v));
        (
            m,
            format!(
                "{} · {} of {}",
                pct(m.random_loss_accuracy),
                pct(m.queue_drop_accuracy),
                m.queue_drops_as_congestion + m.queue_drops_as_random
            ),
        )
    };
    let mut figures = Vec::new();
    let mut checks = Vec::new();
    let mut worst_drops: (f64, String) = (0.0, String::new());
    let mut low_loss_worst: (f64, String) = (f64::INFINITY, String::new());
    let mut geo_1pct = f64::NAN;
    let mut i = 0;
    let subtitle = if ctx.seeds > 1 {
        format!("mean of seeds 1–{}", ctx.seeds)
    } else {
        String::new()
    };
    let dir = ctx.out.join("loss-matrix");
    std::fs::create_dir_all(&dir).map_err(|source| ReproduceError::Io {
        path: dir.clone(),
        source,
    })?;
    for (link, _, _) in LINKS {
        for rtt in RTTS_MS {
            let _ = write!(
                measured,
                "\n**{link}, RTT {rtt} ms**\n\n| loss | {} | Mathis bound | hybla: random as random · queue drops as congestion |\n|---|---|---|---|---|---|---|\n",
                controllers.join(" | ")
            );
            let mut series: Vec<Series> = controllers
                .iter()
                .map(|cc| Series {
                    label: cc.to_string(),
                    points: Vec::new(),
                })
                .collect();
            let mut mathis = Series {
                label: "Mathis bound (Reno)".into(),
                points: Vec::new(),
            };
            for loss in LOSSES {
                let _ = write!(measured, "| {loss} % |");
                let mut ceiling = f64::NAN;
                let mut hybla_accuracy = String::new();
                for (k, cc) in controllers.iter().enumerate() {
                    let f = &s[i];
                    i += 1;
                    ceiling = f.ceiling_bps;
                    let drops = f.drops_per_1000;
                    let _ = write!(
                        measured,
                        " {:.0} % · {:.1} |",
                        100.0 * f.ceiling_fraction,
                        drops
                    );
                    series[k].points.push((loss, 100.0 * f.ceiling_fraction));
                    let cell = format!("{link} {rtt} ms {loss} %");
                    if *cc == "hybla" {
                        let (m, text) = accuracy(f);
                        hybla_accuracy = text;
                        if let Some(a) = m.random_loss_accuracy
                            && a < worst_random.0
                        {
                            worst_random = (a, cell.clone());
                        }
                        if let Some(a) = m.queue_drop_accuracy
                            && a < worst_queue.0
                        {
                            worst_queue = (a, cell.clone());
                        }
                        if drops > worst_drops.0 || worst_drops.1.is_empty() {
                            worst_drops = (drops, cell.clone());
                        }
                        if (0.1..=0.5).contains(&loss) && f.ceiling_fraction < low_loss_worst.0 {
                            low_loss_worst = (f.ceiling_fraction, cell.clone());
                        }
                        if link.starts_with("10/10") && rtt == 600 && loss == 1.0 {
                            geo_1pct = f.ceiling_fraction;
                        }
                    }
                }
                let bound = if loss > 0.0 {
                    let b = mathis_bound_bps(payload, rtt as f64 / 1e3, loss / 100.0) / ceiling;
                    mathis.points.push((loss, 100.0 * b.min(1.0)));
                    format!("{:.0} %", 100.0 * b.min(9.99))
                } else {
                    "—".into()
                };
                let _ = writeln!(measured, " {bound} | {hybla_accuracy} |");
            }
            let colours = output::line_colours(&controllers);
            let mut lines: Vec<StyledSeries> = series
                .into_iter()
                .zip(colours)
                .map(|(series, colour)| StyledSeries {
                    series,
                    style: LineStyle::data(colour),
                })
                .collect();
            lines.push(StyledSeries {
                series: mathis,
                style: LineStyle::reference(Colour::Black),
            });
            let stem = format!(
                "ceiling-vs-loss-{}-{rtt}ms",
                if link.starts_with("10/10") {
                    "10-10"
                } else {
                    "20-2"
                }
            );
            let title =
                format!("{link}, RTT {rtt} ms, 1-BDP drop-tail: share of the link vs random loss");
            chart::styled_line_chart(
                &dir.join(&stem),
                &StyledChart {
                    title: &title,
                    subtitle: &subtitle,
                    x_label: "random loss, both directions (%)",
                    y_label: "goodput / goodput ceiling (%)",
                    legend_title: "",
                    lines: &lines,
                },
            )?;
            figures.push(PathBuf::from("loss-matrix").join(format!("{stem}.png")));
        }
    }
    let _ = write!(
        measured,
        "\n**Bursty loss (Gilbert-Elliott p = 1.8 %, r = 64.5 %: 2.7 % loss in bursts of 1.55), 10/10 Mbit/s, RTT 600 ms**\n\n| {} |\n|---|---|---|---|\n|",
        controllers.join(" | ")
    );
    for (k, _) in controllers.iter().enumerate() {
        let r = &s[bursty_start + k];
        let _ = write!(
            measured,
            " {:.0} % · {:.1} |",
            100.0 * r.ceiling_fraction,
            r.drops_per_1000
        );
        if k == 0 && r.drops_per_1000 > worst_drops.0 {
            worst_drops = (r.drops_per_1000, "Gilbert-Elliott".into());
        }
    }
    measured.push('\n');
    let _ = write!(
        measured,
        "\n**With 10 ms of mean jitter both ways** (exponential, a new draw per packet, order kept). Each cell: ceiling fraction · queue-overflow drops per 1000 sent packets; last column: how hybla took its losses, as above.\n\n| path | loss | {} | hybla: random as random · queue drops as congestion |\n|---|---|{}---|\n",
        controllers.join(" | "),
        "---|".repeat(controllers.len())
    );
    let mut jitter_worst: (f64, String) = (f64::INFINITY, String::new());
    let mut jitter_worst_random: (f64, String) = (f64::INFINITY, String::new());
    let mut jitter_worst_queue: (f64, String) = (f64::INFINITY, String::new());
    let mut j = jitter_start;
    for (link, _, _) in LINKS {
        for rtt in RTTS_MS {
            for loss in JITTER_LOSSES {
                let _ = write!(measured, "| {link}, RTT {rtt} ms | {loss} % |");
                let mut hybla = None;
                for cc in &controllers {
                    let f = &s[j];
                    j += 1;
                    let _ = write!(
                        measured,
                        " {:.0} % · {:.1} |",
                        100.0 * f.ceiling_fraction,
                        f.drops_per_1000
                    );
                    if *cc == "hybla" {
                        hybla = Some(f);
                    }
                }
                let Some(f) = hybla else {
                    measured.push('\n');
                    continue;
                };
                let (m, text) = accuracy(f);
                let _ = writeln!(measured, " {text} |");
                let cell = format!("{link} {rtt} ms {loss} %");
                let in_target = loss <= 0.5 || (link.starts_with("10/10") && rtt == 600);
                if in_target && f.ceiling_fraction < jitter_worst.0 {
                    jitter_worst = (f.ceiling_fraction, cell.clone());
                }
                if let Some(a) = m.queue_drop_accuracy
                    && a < jitter_worst_queue.0
                {
                    jitter_worst_queue = (a, cell.clone());
                }
                if let Some(a) = m.random_loss_accuracy
                    && a < jitter_worst_random.0
                {
                    jitter_worst_random = (a, cell);
                }
            }
        }
    }
    checks.push(check(
        "Hybla ≥ 85 % of the ceiling at 1 % loss, 10 Mbit/s, RTT 600 ms",
        format!("{:.1} %", 100.0 * geo_1pct),
        geo_1pct >= 0.85,
    ));
    checks.push(check(
        "Hybla ≥ 85 % of the ceiling at 0.1–0.5 % loss in every cell",
        format!(
            "worst {:.1} % ({})",
            100.0 * low_loss_worst.0,
            low_loss_worst.1
        ),
        low_loss_worst.0 >= 0.85,
    ));
    checks.push(check(
        "Hybla's queue-overflow drops ≤ 1 % of sent packets in every cell",
        format!("worst {:.1} per 1000 ({})", worst_drops.0, worst_drops.1),
        worst_drops.0 <= 10.0,
    ));
    checks.push(check(
        "With 10 ms of mean jitter: Hybla ≥ 80 % of the ceiling at 1 % loss (10 Mbit/s, 600 ms) and in every 0.1–0.5 % cell",
        format!("worst {:.1} % ({})", 100.0 * jitter_worst.0, jitter_worst.1),
        jitter_worst.0 >= 0.80,
    ));
    let worst = |w: &(f64, String)| {
        if w.1.is_empty() {
            "none to classify".to_string()
        } else {
            format!("worst {:.0} % ({})", 100.0 * w.0, w.1)
        }
    };
    checks.push(check(
        "Hybla takes ≥ 90 % of its random losses as random in every cell",
        worst(&worst_random),
        worst_random.0 >= 0.9,
    ));
    checks.push(check(
        "Hybla takes ≥ 90 % of its queue drops as congestion in every cell that has them",
        worst(&worst_queue),
        worst_queue.0 >= 0.9,
    ));
    checks.push(check(
        "With 10 ms of mean jitter: Hybla takes ≥ 90 % of its random losses as random in every cell",
        worst(&jitter_worst_random),
        jitter_worst_random.0 >= 0.9,
    ));
    // The jitter cells' queue drops too: the target is every cell of the matrix.
    checks.push(check(
        "With 10 ms of mean jitter: Hybla takes ≥ 90 % of its queue drops as congestion in every cell that has them",
        worst(&jitter_worst_queue),
        jitter_worst_queue.0 >= 0.9,
    ));
    Ok(Section {
        id: "loss-matrix".into(),
        title: "Random loss: share of the link and self-inflicted drops".into(),
        scenario: format!("One unlimited download for 120 s ({}) per cell: Bernoulli loss 0 / 0.1 / 0.5 / 1 / 2 % in both directions × RTT 30 / 250 / 600 ms × 10/10 and 20/2 Mbit/s, drop-tail buffers of 1 BDP; a Gilbert-Elliott bursty case; and every controller again at 0.1 / 0.5 / 1 % with 10 ms of mean jitter (exponential, per packet, order kept) on both links. Goodput counts from the request, so start-up is included. How hybla took each loss is matched packet by packet against the path's record of why it was lost{}.", seeds_text(ctx.seeds), if ctx.seeds > 1 { "; each cell's ceiling fraction and drops are means over the seeds, its loss verdicts pooled" } else { "" }),
        published: "Targets set for satquic's Hybla: ≥ 85 % of the ceiling at 1 % loss on 10 Mbit/s at 600 ms and at 0.1–0.5 % everywhere, ≥ 80 % with 10 ms of mean jitter; ≥ 90 % of random losses taken as random and ≥ 90 % of queue drops as congestion; queue-overflow drops ≤ 1 % of sent packets. The Mathis bound MSS/RTT·sqrt(3/(2p)) is what a loss-halving Reno flow can reach.".into(),
        measured,
        checks,
        notes: String::new(),
        figures,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(ceiling_fraction: f64, drops_per_1000: f64, random: (u64, u64)) -> Cell {
        Cell {
            ceiling_fraction,
            ceiling_bps: 9.6e6,
            drops_per_1000,
            matched: Some(MatchedLosses::pooled([MatchedLosses {
                random_losses_as_random: random.0,
                random_losses_as_congestion: random.1,
                ..MatchedLosses::default()
            }])),
        }
    }

    #[test]
    fn one_seed_is_itself() {
        let one = cell(0.8, 2.0, (9, 1));
        assert_eq!(Cell::over_seeds(std::slice::from_ref(&one)), one);
    }

    #[test]
    fn seeds_average_their_fractions_and_pool_their_losses() {
        // 1 of 2 and 17 of 18 random losses taken right: pooled 18 of 20 (the mean of the
        // shares would be 0.72).
        let seeds = [
            cell(0.8, 2.0, (1, 1)),
            cell(0.6, 4.0, (17, 1)),
            cell(0.7, 0.0, (0, 0)),
        ];
        let cell = Cell::over_seeds(&seeds);
        assert!((cell.ceiling_fraction - 0.7).abs() < 1e-12);
        assert!((cell.drops_per_1000 - 2.0).abs() < 1e-12);
        assert_eq!(cell.ceiling_bps, 9.6e6);
        assert_eq!(
            cell.matched.unwrap().random_loss_accuracy,
            Some(18.0 / 20.0)
        );
        // A controller that does not say how it took its losses says nothing over seeds too.
        let silent = Cell {
            matched: None,
            ..seeds[0].clone()
        };
        assert_eq!(Cell::over_seeds(&[silent.clone(), silent]).matched, None);
    }
}
