//! Hybla through the whole stack: faster GEO start-up than NewReno, without a loss burst.

mod common;

use sim::apps::perf::PerfReport;

#[test]
fn hybla_reaches_2mb_much_sooner_than_newreno_on_geo_without_a_loss_burst() {
    let scenario = common::shipped("thesis-geo.toml", &["duration=15s"]);
    let runs = common::run(&scenario, &common::per_controller(&["hybla", "newreno"], 1));
    let time_to_2mb = |i: usize| {
        let perf = PerfReport::of(&runs[i].outcome.flows[0].apps[0]).unwrap();
        let exchange = &perf.exchanges[0];
        (exchange.reached[&2_000_000] - exchange.requested_at).as_secs_f64()
    };
    let (hybla, newreno) = (time_to_2mb(0), time_to_2mb(1));
    assert!(
        hybla * 1.5 < newreno,
        "hybla {hybla:.2} s vs newreno {newreno:.2} s"
    );
    // The estimated ssthresh stops slow start at the pipe: no overshoot burst.
    let lost = runs[0].outcome.flows[0].sender.lost_packets;
    assert!(lost < 50, "hybla lost {lost} packets in 15 s");
}

/// The loss accounting of a run: every drop of the data sender's packets is counted by cause,
/// matched to the batch that declared it, and the controller's own counts agree with the
/// matched ones. A shallow buffer and random loss give both kinds of drop.
#[test]
fn every_drop_is_counted_by_cause_and_matched_to_its_verdict() {
    let scenario = common::shipped(
        "thesis-geo.toml",
        &[
            "duration=20s",
            "path.forward.queue=0.25bdp",
            "path.forward.loss=0.5%",
        ],
    );
    let runs = common::run(&scenario, &common::per_controller(&["hybla", "newreno"], 1));
    for run in &runs {
        let flow = &run.outcome.flows[0];
        let losses = flow.losses;
        // Ground truth: the path's own per-flow counters in the data direction.
        assert_eq!(losses.queue_drops, flow.bottleneck_forward.queue_drops);
        assert_eq!(losses.random_losses, flow.bottleneck_forward.random_losses);
        assert!(losses.random_losses > 0, "{}: {losses:?}", run.label);
    }
    let hybla = runs[0].outcome.flows[0].losses;
    assert!(
        hybla.random_losses > 20 && hybla.queue_drops > 0,
        "{hybla:?}"
    );
    let (verdicts, m) = (hybla.verdicts.unwrap(), hybla.matched.unwrap());
    // Every drop is matched exactly once, declared or not.
    assert_eq!(
        m.queue_drops_as_congestion + m.queue_drops_as_random + m.queue_drops_undeclared,
        hybla.queue_drops + hybla.aqm_drops
    );
    assert_eq!(
        m.random_losses_as_random + m.random_losses_as_congestion + m.random_losses_undeclared,
        hybla.random_losses
    );
    // quinn declares (almost) every drop: at most a handful are ACK-only or still in flight.
    let undeclared = m.queue_drops_undeclared + m.random_losses_undeclared;
    assert!(undeclared <= 5, "{m:?}");
    // The controller's batches are at least the matched ones' and at most all lost packets.
    let batches = verdicts.congestion_batches + verdicts.random_batches;
    assert!(
        batches >= 1 && batches <= hybla.queue_drops + hybla.random_losses,
        "{verdicts:?}"
    );
    // NewReno does not classify: ground truth only.
    let newreno = runs[1].outcome.flows[0].losses;
    assert!(newreno.verdicts.is_none() && newreno.matched.is_none());
}

/// The loss matrix's hardest cell, seed 1: 30 ms, 1 % loss both ways, 10 ms of mean jitter on
/// both links, for `duration`, with Hybla's `classifier` where given.
fn run_jitter_cell(duration: &str, classifier: Option<&str>) -> Vec<report::CompletedRun> {
    let jitter = r#"{ distribution = "exponential", mean = "10ms" }"#;
    let mut overrides = vec![
        format!("duration={duration}"),
        "path.forward.delay=15ms".to_owned(),
        "path.return.delay=15ms".to_owned(),
        "path.forward.loss=1%".to_owned(),
        "path.return.loss=1%".to_owned(),
        format!("path.forward.jitter={jitter}"),
        format!("path.return.jitter={jitter}"),
    ];
    if let Some(classifier) = classifier {
        overrides.push(format!("flow.cc_params.classifier=\"{classifier}\""));
    }
    let overrides: Vec<&str> = overrides.iter().map(String::as_str).collect();
    let scenario = common::shipped("reproduce/loss-matrix.toml", &overrides);
    common::run(&scenario, &[common::spec(1)])
}

/// `classifier = "truth"`: the controller takes each loss as the path's record says it was. On
/// a 30 ms path with 10 ms of mean jitter (the loss matrix's hardest cell) the classifier takes
/// some overflow drops as random; with the record, none: a batch is congestion where the
/// bottleneck dropped one of its packets. A time mismatch between the record and quinn's send
/// times, or a drop told too late, would show as an overflow drop taken as random here.
#[test]
fn with_the_paths_record_as_classifier_every_overflow_drop_is_congestion() {
    let matched = |classifier: &str| {
        let runs = run_jitter_cell("30s", Some(classifier));
        let losses = runs[0].outcome.flows[0].losses;
        assert!(
            losses.random_losses > 100 && losses.queue_drops > 50,
            "{classifier}: {losses:?}"
        );
        losses.matched.unwrap()
    };
    let guessed = matched("threshold");
    assert!(guessed.queue_drops_as_random > 0, "{guessed:?}");
    let told = matched("truth");
    assert_eq!(told.queue_drops_as_random, 0, "{told:?}");
    assert_eq!(told.queue_drop_accuracy, Some(1.0));
    // A random loss declared in the same batch as an overflow drop is taken with it (quinn
    // gives one verdict per batch): the record's verdicts stay short of all random losses.
    assert!(told.random_loss_accuracy.unwrap() > 0.85, "{told:?}");
}

/// `losses.csv` holds every loss batch once: summed over its rows, the path's drops by the
/// verdict of their batch are summary.json's matched counts, and the file reads back as
/// written. A batch left out, counted twice or given another batch's drops would show here.
#[test]
fn the_loss_batches_file_adds_up_to_the_matched_counts() {
    let runs = run_jitter_cell("20s", None);
    let outcome = &runs[0].outcome;
    let pairs = [("hybla", outcome)];
    assert!(report::loss_batches::has_loss_batches(&pairs));
    let mut written = Vec::new();
    report::loss_batches::write_csv(&mut written, &pairs).unwrap();
    let rows = report::loss_batches::read_csv(written.as_slice()).unwrap();
    let flow = &outcome.flows[0];
    assert_eq!(rows.len(), flow.loss_batches.len());
    let sum = |verdict: &str, field: fn(&report::loss_batches::Row) -> u64| -> u64 {
        rows.iter()
            .filter(|r| r.verdict == verdict)
            .map(field)
            .sum()
    };
    let m = flow.losses.matched.unwrap();
    assert!(
        m.queue_drops_as_congestion > 0 && m.random_losses_as_random > 0,
        "{m:?}"
    );
    assert_eq!(
        sum("congestion", |r| r.queue_drops),
        m.queue_drops_as_congestion
    );
    assert_eq!(sum("random", |r| r.queue_drops), m.queue_drops_as_random);
    assert_eq!(
        sum("random", |r| r.random_losses),
        m.random_losses_as_random
    );
    assert_eq!(
        sum("congestion", |r| r.random_losses),
        m.random_losses_as_congestion
    );
    let v = flow.losses.verdicts.unwrap();
    assert_eq!(
        rows.iter().filter(|r| r.verdict == "congestion").count() as u64,
        v.congestion_batches
    );
    let lost: u64 = rows.iter().map(|r| r.lost_bytes).sum();
    assert_eq!(lost, v.congestion_bytes + v.random_bytes);
    assert!(rows.iter().all(|r| r.flow == flow.name && r.seed == 1));
}

/// Real time has no record of why a packet was lost: the truth classifier is refused before
/// anything starts, naming the field.
#[test]
fn the_real_time_backend_refuses_the_truth_classifier_naming_the_field() {
    let scenario = common::shipped(
        "thesis-geo.toml",
        &["flow.cc=\"hybla\"", "flow.cc_params.classifier=\"truth\""],
    );
    let err = lab::emu_backend::run(
        &scenario,
        &common::spec(1),
        &std::sync::atomic::AtomicBool::new(false),
        &|_| {},
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("flow[0].cc_params.classifier"), "{err}");
    assert!(err.contains("simulator"), "{err}");
}
