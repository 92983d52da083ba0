//! Hybla through the whole stack: faster GEO start-up than NewReno, without a loss burst.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use lab::runner::{self, Silent};
use scenario::RunSpec;
use scenario::Scenario;
use sim::apps::perf::PerfReport;

#[test]
fn hybla_reaches_2mb_much_sooner_than_newreno_on_geo_without_a_loss_burst() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/thesis-geo.toml");
    let scenario = Scenario::from_file(&file, &["duration=15s".to_owned()]).unwrap();
    let specs: Vec<RunSpec> = ["hybla", "newreno"]
        .iter()
        .map(|cc| RunSpec {
            cc_override: Some(cc.to_string()),
            seed: 1,
        })
        .collect();
    let runs =
        runner::run_all(&scenario, &specs, None, 2, &Silent, &AtomicBool::new(false)).unwrap();
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
