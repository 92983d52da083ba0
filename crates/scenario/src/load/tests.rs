//! Loading end to end: every key of the format, every rejection naming its field, overrides,
//! and the shipped scenarios.

use std::path::Path;
use std::time::Duration;

use netsim::{
    Aqm, DEFAULT_MTU_BYTES, Jitter, JitterDistribution, LinkConfig, LossModel, QueueLimit,
    RedConfig, ScheduleStep,
};
use sched::SchedulerSpec;

use crate::apps::{AppConfig, AppKind, Download, PerfConfig};
use crate::controllers::{ControllerSpec, HyblaGrowth, HyblaSpec};
use crate::{
    DEFAULT_SAMPLE_INTERVAL, DEFAULT_SEED, DEFAULT_TIME_TO_BYTES, FlowSpec, Scenario,
    ScenarioError, TransportSpec,
};

const ORIGIN: &str = "case.toml";

/// A small valid scenario; cases below break it with overrides or appended text.
const BASE: &str = r#"
name = "base"
duration = "60s"

[path.forward]
rate = "10Mbit"
delay = "250ms"

[path.return]
rate = "2Mbit"
delay = "250ms"

[[flow]]
name = "sat"
cc = "newreno"
download = "10MB"
"#;

fn load(text: &str, overrides: &[&str]) -> Result<Scenario, ScenarioError> {
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    Scenario::from_toml_str(text, ORIGIN, &overrides)
}

/// Loads `text` with `overrides`, expects an error naming `field`, returns its message.
#[track_caller]
fn fails(text: &str, overrides: &[&str], field: &str) -> String {
    let err = load(text, overrides).expect_err("scenario should be rejected");
    let message = err.to_string();
    assert!(message.starts_with(ORIGIN), "no file name: {message}");
    assert!(message.contains(field), "no field {field:?}: {message}");
    message
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

// ---- a full scenario ---------------------------------------------------------------------

const FULL: &str = r#"
name = "full"
description = "every key"
duration = "300s"
seed = 7
sample_interval = "50ms"
mtu = 1400
time_to_bytes = ["1MB", "5MiB"]

[path.forward]
rate = "50Mbit"
delay = "325ms"
queue = "2bdp"
loss = { model = "gilbert-elliott", p = "1.8%", r = "64.5%" }
aqm = "red"
red = { min = 4, max = 12.5, max_p = "5%" }
jitter = { distribution = "normal", mean = "8ms", stddev = "3ms", reorder = true, interval = "5ms" }

[[path.forward.schedule]]
at = "5s"
rate = "10Mbit"

[[path.forward.schedule]]
at = "20s"
delay = "330ms"
loss = "0.1%"

[path.return]
rate = "0.5Mbit"
delay = "325ms"
queue = "50 packets"
loss = { model = "bernoulli", p = "1%" }
aqm = "droptail"
jitter = { distribution = "uniform", min = "0ms", max = "4ms" }
slot = "100ms"

[transport]
initial_rtt = "650ms"
stream_receive_window = "16MB"
receive_window = "auto"
send_window = "32MiB"
ack_eliciting_threshold = 10
max_ack_delay = "25ms"

[[flow]]
name = "hyb"
cc = "hybla"
cc_params = { rtt0 = "25ms", growth = "seed" }
count = 2
start = "1s"
access_delay = "10ms"
download = "unlimited"
stop = "60s"
qlog = true
[flow.transport]
stream_receive_window = "auto"
ack_eliciting_threshold = "auto"
max_ack_delay = "10ms"

[[flow]]
name = "up"
cc = "cubic"
upload = "10MB"
download = "100MB"
repeat_after = "10s"
"#;

#[test]
fn full_scenario_parses_to_exact_values() {
    let s = load(FULL, &[]).unwrap();
    let transport_global = TransportSpec {
        initial_rtt: Some(ms(650)),
        stream_receive_window_bytes: Some(16_000_000),
        receive_window_bytes: None,
        send_window_bytes: Some(32 << 20),
        ack_eliciting_threshold: Some(10),
        max_ack_delay: Some(ms(25)),
    };
    let hyb = FlowSpec {
        name: "hyb-1".into(),
        controller: ControllerSpec::Hybla(HyblaSpec {
            rtt0: Some(ms(25)),
            growth: Some(HyblaGrowth::Seed),
            ..HyblaSpec::default()
        }),
        start: ms(1000),
        access_delay: ms(10),
        apps: vec![AppConfig {
            name: "perf".into(),
            kind: AppKind::Perf(PerfConfig {
                download: Some(Download::Unlimited),
                upload_bytes: None,
                repeat_after: None,
            }),
        }],
        stop: Some(Duration::from_secs(60)),
        reconnect_after: None,
        qlog: true,
        transport: TransportSpec {
            stream_receive_window_bytes: None,
            ack_eliciting_threshold: None,
            max_ack_delay: Some(ms(10)),
            ..transport_global
        },
        scheduler: SchedulerSpec::RoundRobin,
    };
    let expected = Scenario {
        name: "full".into(),
        description: Some("every key".into()),
        duration: Duration::from_secs(300),
        seed: 7,
        sample_interval: ms(50),
        mtu_bytes: 1400,
        time_to_bytes: vec![1_000_000, 5 << 20],
        forward: LinkConfig {
            rate_bps: 50_000_000,
            delay: ms(325),
            queue: QueueLimit::BdpMultiple(2.0),
            aqm: Aqm::Red(RedConfig {
                min_threshold_packets: 4.0,
                max_threshold_packets: 12.5,
                max_probability: 0.05,
                weight: 0.002,
            }),
            loss: LossModel::GilbertElliott {
                p_good_to_bad: 0.018,
                p_bad_to_good: 0.645,
                loss_in_good: 0.0,
                loss_in_bad: 1.0,
            },
            jitter: Jitter {
                distribution: JitterDistribution::Normal {
                    mean: ms(8),
                    stddev: ms(3),
                },
                reorder: true,
                interval: Some(ms(5)),
            },
            slot: None,
            schedule: vec![
                ScheduleStep {
                    at: Duration::from_secs(5),
                    rate_bps: Some(10_000_000),
                    delay: None,
                    loss: None,
                },
                ScheduleStep {
                    at: Duration::from_secs(20),
                    rate_bps: None,
                    delay: Some(ms(330)),
                    loss: Some(LossModel::Bernoulli { probability: 0.001 }),
                },
            ],
        },
        return_link: LinkConfig {
            rate_bps: 500_000,
            delay: ms(325),
            queue: QueueLimit::Packets(50),
            aqm: Aqm::DropTail,
            loss: LossModel::Bernoulli { probability: 0.01 },
            jitter: Jitter {
                distribution: JitterDistribution::Uniform {
                    min: ms(0),
                    max: ms(4),
                },
                reorder: false,
                interval: None,
            },
            slot: Some(ms(100)),
            schedule: vec![],
        },
        flows: vec![
            hyb.clone(),
            FlowSpec {
                name: "hyb-2".into(),
                ..hyb
            },
            FlowSpec {
                name: "up".into(),
                controller: ControllerSpec::named("cubic", "cc").unwrap(),
                start: Duration::ZERO,
                access_delay: Duration::ZERO,
                apps: vec![AppConfig {
                    name: "perf".into(),
                    kind: AppKind::Perf(PerfConfig {
                        download: Some(Download::Bytes(100_000_000)),
                        upload_bytes: Some(10_000_000),
                        repeat_after: Some(Duration::from_secs(10)),
                    }),
                }],
                stop: None,
                reconnect_after: None,
                qlog: false,
                transport: transport_global,
                scheduler: SchedulerSpec::RoundRobin,
            },
        ],
    };
    assert_eq!(s, expected);
    let path = s.path_config();
    assert_eq!(path.access_delays, vec![ms(10), ms(10), Duration::ZERO]);
    assert_eq!(path.mtu_bytes, 1400);
}

#[test]
fn defaults() {
    let s = load(BASE, &[]).unwrap();
    assert_eq!(s.description, None);
    assert_eq!(s.seed, DEFAULT_SEED);
    assert_eq!(s.sample_interval, DEFAULT_SAMPLE_INTERVAL);
    assert_eq!(s.mtu_bytes, DEFAULT_MTU_BYTES);
    assert_eq!(s.time_to_bytes, DEFAULT_TIME_TO_BYTES.to_vec());
    assert_eq!(s.forward, LinkConfig::new(10_000_000, ms(250)));
    assert_eq!(s.return_link, LinkConfig::new(2_000_000, ms(250)));
    let flow = &s.flows[0];
    assert_eq!(flow.name, "sat");
    assert_eq!(flow.start, Duration::ZERO);
    assert_eq!(flow.access_delay, Duration::ZERO);
    assert_eq!(
        flow.perf().unwrap().download,
        Some(Download::Bytes(10_000_000))
    );
    assert_eq!(flow.perf().unwrap().upload_bytes, None);
    assert!(!flow.qlog);
    assert_eq!(
        flow.controller,
        ControllerSpec::named("newreno", "cc").unwrap()
    );
    assert_eq!(flow.transport, TransportSpec::default());
}

#[test]
fn loss_none_and_red_defaults() {
    let s = load(BASE, &["path.forward.loss=none", "path.return.aqm=red"]).unwrap();
    assert_eq!(s.forward.loss, LossModel::None);
    assert_eq!(s.return_link.aqm, Aqm::Red(RedConfig::default()));
}

// ---- invalid values name the file and the field -----------------------------------------

#[test]
fn zero_duration() {
    fails(BASE, &["duration=0s"], "duration");
}

#[test]
fn negative_delay() {
    let m = fails(BASE, &["path.forward.delay=-5ms"], "path.forward.delay");
    assert!(m.contains("negative duration"), "{m}");
}

#[test]
fn no_flows() {
    let text = BASE.split("[[flow]]").next().unwrap();
    let m = fails(text, &[], "flow");
    assert!(m.contains("no flows"), "{m}");
}

#[test]
fn zero_rate() {
    fails(BASE, &["path.forward.rate=0bit"], "path.forward.rate");
    fails(BASE, &["path.return.rate=0Mbit"], "path.return.rate");
}

#[test]
fn zero_rate_in_schedule() {
    fails(
        BASE,
        &[r#"path.forward.schedule=[{ at = "5s", rate = "0Mbit" }]"#],
        "path.forward.schedule[0].rate",
    );
}

#[test]
fn loss_above_100_percent() {
    let m = fails(BASE, &["path.forward.loss=101%"], "path.forward.loss");
    assert!(m.contains("more than 100%"), "{m}");
    fails(
        BASE,
        &[r#"path.return.loss={ model = "gilbert-elliott", p = "1%", r = "150%" }"#],
        "path.return.loss.r",
    );
}

#[test]
fn bad_loss_tables() {
    fails(
        BASE,
        &[r#"path.forward.loss={ model = "gilbert-elliott", p = "1%" }"#],
        "path.forward.loss",
    );
    fails(
        BASE,
        &[r#"path.forward.loss={ model = "bernoulli", p = "1%", r = "5%" }"#],
        "path.forward.loss",
    );
    fails(
        BASE,
        &[r#"path.forward.loss={ model = "uniform", p = "1%" }"#],
        "path.forward.loss.model",
    );
    let m = fails(BASE, &["path.forward.loss=0.01"], "path.forward.loss");
    assert!(m.contains(r#"write "1%" not "0.01""#), "{m}");
}

#[test]
fn schedule_out_of_order() {
    fails(
        BASE,
        &[
            r#"path.forward.schedule=[{ at = "5s", rate = "5Mbit" }, { at = "2s", rate = "1Mbit" }]"#,
        ],
        "path.forward.schedule[1].at",
    );
}

#[test]
fn schedule_beyond_duration() {
    fails(
        BASE,
        &[r#"path.return.schedule=[{ at = "60s", rate = "5Mbit" }]"#],
        "path.return.schedule[0].at",
    );
}

#[test]
fn schedule_step_without_change() {
    let m = fails(
        BASE,
        &[r#"path.forward.schedule=[{ at = "5s" }]"#],
        "path.forward.schedule[0]",
    );
    assert!(m.contains("at least one of rate, delay, loss"), "{m}");
}

#[test]
fn red_without_aqm_red() {
    fails(BASE, &["path.forward.red={ min = 5 }"], "path.forward.red");
    fails(
        BASE,
        &["path.forward.red={ min = 5 }", "path.forward.aqm=droptail"],
        "path.forward.red",
    );
}

#[test]
fn bad_red_thresholds() {
    fails(
        BASE,
        &[
            "path.forward.aqm=red",
            "path.forward.red={ min = 20, max = 10 }",
        ],
        "path.forward.red",
    );
}

#[test]
fn bad_jitter_and_slot() {
    let m = fails(
        BASE,
        &[r#"path.forward.jitter={ distribution = "pareto", mean = "5ms" }"#],
        "path.forward.jitter.distribution",
    );
    assert!(m.contains("exponential"), "{m}");
    let m = fails(
        BASE,
        &[r#"path.forward.jitter={ distribution = "exponential" }"#],
        "path.forward.jitter.mean",
    );
    assert!(m.contains("required"), "{m}");
    let m = fails(
        BASE,
        &[
            r#"path.return.jitter={ distribution = "uniform", mean = "5ms", min = "0ms", max = "9ms" }"#,
        ],
        "path.return.jitter.mean",
    );
    assert!(m.contains("min, max"), "{m}");
    fails(
        BASE,
        &[r#"path.forward.jitter={ distribution = "uniform", min = "9ms", max = "1ms" }"#],
        "path.forward.jitter",
    );
    fails(
        BASE,
        &[r#"path.forward.jitter={ distribution = "normal", mean = "9ms", stddev = "0ms" }"#],
        "path.forward.jitter",
    );
    fails(
        BASE,
        &[r#"path.forward.jitter={ distribution = "exponential", mean = "-1ms" }"#],
        "path.forward.jitter",
    );
    fails(
        BASE,
        &[r#"path.forward.jitter={ distribution = "exponential", mean = "1ms", reorder = "yes" }"#],
        "path.forward.jitter",
    );
    fails(
        BASE,
        &[r#"path.forward.jitter={ distribution = "exponential", mean = "1ms", interval = "0s" }"#],
        "path.forward.jitter.interval",
    );
    fails(BASE, &["path.return.slot=0ms"], "path.return.slot");
    fails(BASE, &["path.return.slot=100"], "path.return.slot");
}

#[test]
fn unknown_aqm() {
    fails(BASE, &["path.forward.aqm=codel"], "path.forward.aqm");
}

#[test]
fn queue_too_small_and_zero() {
    fails(BASE, &["path.forward.queue=1000B"], "path.forward.queue");
    fails(BASE, &["path.forward.queue=0pkt"], "path.forward.queue");
    // 2 Mbit/s × 2 ms = 500 bytes: less than one packet.
    fails(
        BASE,
        &["path.forward.delay=1ms", "path.return.delay=1ms"],
        "path.return.queue",
    );
}

#[test]
fn duplicate_flow_names_after_expansion() {
    let text = format!("{BASE}\n[[flow]]\nname = \"sat-2\"\ncc = \"cubic\"\nupload = \"1MB\"\n");
    let m = fails(&text, &["flow.0.count=3"], "flow[1].name");
    assert!(m.contains("sat-2"), "{m}");
    let text = format!("{BASE}\n[[flow]]\nname = \"sat\"\ncc = \"cubic\"\nupload = \"1MB\"\n");
    fails(&text, &[], "flow[1].name");
}

#[test]
fn unknown_controller() {
    let m = fails(BASE, &["flow.cc=vegas"], "flow[0].cc");
    assert!(m.contains("newreno, cubic, bbr, hybla"), "{m}");
}

#[test]
fn flow_needs_a_transfer() {
    let text = BASE.replace("download = \"10MB\"\n", "");
    fails(&text, &[], "flow[0]");
}

#[test]
fn zero_sizes() {
    fails(BASE, &["flow.0.download=0MB"], "flow[0].download");
    fails(BASE, &["flow.0.upload=0B"], "flow[0].upload");
    fails(
        BASE,
        &[r#"time_to_bytes=["1MB", "0B"]"#],
        "time_to_bytes[1]",
    );
    fails(
        BASE,
        &["transport.stream_receive_window=0B"],
        "transport.stream_receive_window",
    );
}

#[test]
fn bad_sizes_name_the_field() {
    let m = fails(BASE, &["flow.0.download=10Mb"], "flow[0].download");
    assert!(m.contains("unlimited"), "{m}");
    fails(BASE, &[r#"time_to_bytes=["1MB", "2"]"#], "time_to_bytes[1]");
}

#[test]
fn start_not_before_end() {
    fails(BASE, &["flow.start=60s"], "flow[0].start");
}

#[test]
fn count_zero() {
    fails(BASE, &["flow.count=0"], "flow[0].count");
    fails(BASE, &["flow.count=-1"], "flow[0].count");
}

#[test]
fn repeat_and_stop_need_the_right_download() {
    fails(
        BASE,
        &["flow.repeat_after=10s", "flow.download=unlimited"],
        "flow[0].repeat_after",
    );
    fails(BASE, &["flow.stop=10s"], "flow[0].stop");
    fails(
        BASE,
        &["flow.stop=1s", "flow.start=2s", "flow.download=unlimited"],
        "flow[0].stop",
    );
}

#[test]
fn a_reconnecting_flow_with_careful_resume_loads() {
    let s = load(
        BASE,
        &[
            "flow.cc=hybla",
            "flow.reconnect_after=10s",
            "flow.cc_params={ careful_resume = true }",
        ],
    )
    .unwrap();
    assert_eq!(s.flows[0].reconnect_after, Some(Duration::from_secs(10)));
    assert!(s.flows[0].controller.careful_resume());
}

#[test]
fn reconnect_needs_perf_exchanges_that_finish() {
    fails(
        BASE,
        &["flow.reconnect_after=0s"],
        "flow[0].reconnect_after",
    );
    let m = fails(
        BASE,
        &["flow.reconnect_after=10s", "flow.repeat_after=10s"],
        "flow[0].reconnect_after",
    );
    assert!(m.contains("repeat_after"), "{m}");
    let m = fails(
        BASE,
        &["flow.reconnect_after=10s", "flow.download=unlimited"],
        "flow[0].reconnect_after",
    );
    assert!(m.contains("unlimited"), "{m}");
    let media = format!(
        "{}reconnect_after = \"5s\"\n[[flow.app]]\nkind = \"media\"\n",
        BASE.replace("download = \"10MB\"\n", "")
    );
    let m = fails(&media, &[], "flow[0].reconnect_after");
    assert!(m.contains("perf applications only"), "{m}");
}

#[test]
fn careful_resume_needs_a_second_connection() {
    let m = fails(
        BASE,
        &["flow.cc=hybla", "flow.cc_params={ careful_resume = true }"],
        "flow[0].cc_params.careful_resume",
    );
    assert!(m.contains("reconnect_after"), "{m}");
}

#[test]
fn mtu_range() {
    fails(BASE, &["mtu=1227"], "mtu");
    fails(BASE, &["mtu=65536"], "mtu");
    assert_eq!(load(BASE, &["mtu=1228"]).unwrap().mtu_bytes, 1228);
}

#[test]
fn sample_interval_range() {
    fails(BASE, &["sample_interval=0s"], "sample_interval");
    fails(BASE, &["sample_interval=61s"], "sample_interval");
}

#[test]
fn transport_values() {
    fails(
        BASE,
        &["flow.transport.ack_eliciting_threshold=-1"],
        "flow[0].transport.ack_eliciting_threshold",
    );
    fails(
        BASE,
        &["transport.max_ack_delay=20s"],
        "transport.max_ack_delay",
    );
    fails(
        BASE,
        &["transport.initial_rtt=0ms"],
        "transport.initial_rtt",
    );
    let m = fails(
        BASE,
        &["transport.initial_rtt=333"],
        "transport.initial_rtt",
    );
    assert!(m.contains("missing unit"), "{m}");
    fails(
        BASE,
        &["transport.ack_eliciting_threshold=2.5"],
        "transport.ack_eliciting_threshold",
    );
    let m = fails(BASE, &["flow.download=100"], "flow[0].download");
    assert!(m.contains("missing unit"), "{m}");
}

#[test]
fn wrong_types_and_missing_keys() {
    let m = fails(BASE, &["path.forward.rate=10000000"], "path.forward.rate");
    assert!(m.contains("10Mbit"), "{m}");
    let m = fails(BASE, &["path.forward.rate=10MB/s"], "path.forward.rate");
    assert!(m.contains("80Mbit"), "{m}");
    let text = BASE.replace("rate = \"2Mbit\"\n", "");
    let m = fails(&text, &[], "path.return");
    assert!(m.contains("rate"), "{m}");
    let m = load(&BASE.replace("name = \"base\"\n", ""), &[])
        .unwrap_err()
        .to_string();
    assert_eq!(m, "case.toml: missing field `name`");
}

#[test]
fn syntax_error_names_the_file() {
    let err = load("name = ", &[]).unwrap_err();
    assert!(matches!(err, ScenarioError::Syntax { .. }));
    assert!(err.to_string().starts_with("case.toml: "), "{err}");
}

// ---- limits and consistency (an audit of bad input) --------------------------------------

/// `"100TB"`, `"1000000000bdp"` and `"10000000000pkt"` were accepted and the run exhausted
/// the machine's memory.
#[test]
fn a_queue_larger_than_one_gibibyte_is_rejected_in_every_form() {
    for queue in [
        "100TB",
        "1073741825B",
        "1000000000bdp",
        "10000000000pkt",
        "715828pkt",
        "1h",
        "1000s",
    ] {
        let set = format!("path.forward.queue={queue}");
        let m = fails(BASE, &[&set], "path.forward.queue");
        assert!(m.contains("larger than 1 GiB"), "{queue}: {m}");
    }
    let m = fails(
        BASE,
        &["path.forward.queue=715828pkt"],
        "path.forward.queue",
    );
    assert!(
        m.contains("(715828 packets of up to 1500 bytes, the mtu)")
            && m.contains("at mtu 1500 that is 715827 packets"),
        "{m}"
    );
    // The limit itself is allowed, in bytes and in full-size packets.
    let s = load(BASE, &["path.forward.queue=1GiB"]).unwrap();
    assert_eq!(s.forward.queue, QueueLimit::Bytes(1 << 30));
    load(BASE, &["path.forward.queue=715827pkt"]).unwrap();
    // A packet limit counts at the mtu: the same count is too much for larger packets.
    fails(
        BASE,
        &["path.forward.queue=500000pkt", "mtu=9000"],
        "path.forward.queue",
    );
}

/// `"99999999999999999999bdp"` resolved to u64::MAX bytes through a saturating cast, while
/// the same number in `pkt` was rejected.
#[test]
fn a_bdp_multiple_beyond_u64_is_rejected_not_saturated() {
    let m = fails(
        BASE,
        &["path.forward.queue=99999999999999999999bdp"],
        "path.forward.queue",
    );
    assert!(
        m.contains("more than 2^64 bytes") && m.contains("larger than 1 GiB"),
        "{m}"
    );
}

/// `sample_interval = "1ns"` crashed the run with an allocation failure (one time-series row
/// per flow and interval).
#[test]
fn a_sample_interval_below_one_millisecond_is_rejected() {
    for interval in ["1ns", "999us"] {
        let m = fails(
            BASE,
            &[&format!("sample_interval={interval}")],
            "sample_interval",
        );
        assert!(m.contains("shorter than 1ms"), "{m}");
    }
    assert_eq!(
        load(BASE, &["sample_interval=1ms"])
            .unwrap()
            .sample_interval,
        ms(1)
    );
}

#[test]
fn a_time_series_too_large_to_keep_in_memory_is_rejected() {
    // 8760 h at 100 ms: 315 360 000 rows.
    let m = fails(BASE, &["duration=8760h"], "sample_interval");
    assert!(
        m.contains("315360000 time-series rows") && m.contains("duration"),
        "{m}"
    );
    // 1000 flows × 10 000 samples is the limit.
    load(
        BASE,
        &[
            "flow.count=1000",
            "duration=1000s",
            "flow.download=unlimited",
        ],
    )
    .unwrap();
    let m = fails(
        BASE,
        &["flow.count=1000", "duration=1000.1s"],
        "sample_interval",
    );
    assert!(m.contains("count"), "{m}");
}

/// `count = 10000000` crashed loading with an allocation failure.
#[test]
fn more_than_a_thousand_flows_are_rejected_before_any_is_copied() {
    let m = fails(BASE, &["flow.count=10000000"], "flow[0].count");
    assert!(m.contains("at most 1000"), "{m}");
    assert_eq!(load(BASE, &["flow.count=1000"]).unwrap().flows.len(), 1000);
    let text = format!("{BASE}\n[[flow]]\nname = \"other\"\ncc = \"cubic\"\nupload = \"1MB\"\n");
    let m = fails(&text, &["flow.0.count=1000"], "flow[1]");
    assert!(m.contains("1001 flows"), "{m}");
    fails(
        &text,
        &["flow.0.count=999", "flow.1.count=2"],
        "flow[1].count",
    );
}

/// `name = "../../../escaped"` made the default output directory escape its parent, and flow
/// names such as `"../f"` or `"x/y"` became qlog file names.
#[test]
fn scenario_and_flow_names_must_be_one_path_component() {
    for (name, needle) in [
        ("../../../escaped", "'/'"),
        ("x/y", "'/'"),
        ("x\\y", "'\\\\'"),
        (".", "starts with \".\""),
        ("..", "starts with \".\""),
        (".hidden", "starts with \".\""),
        ("a\u{0}b", "U+0000"),
        ("tab\there", "U+0009"),
        ("new\nline", "U+000A"),
    ] {
        let quoted = toml::Value::String(name.into()).to_string();
        for (set, field) in [("name", "name"), ("flow.0.name", "flow[0].name")] {
            let m = fails(BASE, &[&format!("{set}={quoted}")], field);
            assert!(m.contains(needle), "{name:?}: {m}");
            assert!(m.contains("file"), "{m}");
        }
    }
    let long = "x".repeat(129);
    let m = fails(BASE, &[&format!("name={long}")], "name");
    assert!(m.contains("at most 128 bytes"), "{m}");
    // Dots inside a name, spaces and non-ASCII letters are fine.
    let s = load(
        BASE,
        &[
            r#"name="geo..v2 café""#,
            "flow.0.name=f.1",
            &format!("flow.0.name={}", "y".repeat(128)),
        ],
    )
    .unwrap();
    assert_eq!(s.name, "geo..v2 café");
}

/// `initial_window = "0B"`, `"1B"` and `"1200B"` were accepted (the flow then never
/// connected), and so was a bare `10` although a bare number is always an error.
#[test]
fn an_initial_window_needs_a_unit_and_two_full_size_packets() {
    for cc in ["newreno", "cubic", "bbr", "hybla"] {
        for (window, needle) in [
            ("\"0B\"", "2400 bytes"),
            ("\"1B\"", "2400 bytes"),
            ("\"1200B\"", "2400 bytes"),
            ("\"2943B\"", "2 × 1472 = 2944 bytes"),
            ("10", "missing unit"),
            ("20000", "missing unit"),
        ] {
            let m = fails(
                BASE,
                &[
                    &format!("flow.cc={cc}"),
                    &format!("flow.cc_params={{ initial_window = {window} }}"),
                ],
                "flow[0].cc_params.initial_window",
            );
            assert!(m.contains(needle), "{cc} {window}: {m}");
        }
        let s = load(
            BASE,
            &[
                &format!("flow.cc={cc}"),
                "flow.cc_params={ initial_window = \"2944B\" }",
            ],
        )
        .unwrap();
        assert_eq!(s.flows[0].controller.initial_window(), Some(2944));
    }
    // Two full-size packets at the scenario's own mtu.
    let m = fails(
        BASE,
        &["mtu=9000", "flow.cc_params={ initial_window = \"15KB\" }"],
        "flow[0].cc_params.initial_window",
    );
    assert!(m.contains("at mtu 9000 (2 × 8972 = 17944 bytes"), "{m}");
}

/// hybla's `initial_ssthresh = "0B"` and `"1B"` were accepted.
#[test]
fn a_byte_initial_ssthresh_needs_two_full_size_packets() {
    for ssthresh in ["0B", "1B", "2943B"] {
        fails(
            BASE,
            &[
                "flow.cc=hybla",
                &format!("flow.cc_params={{ initial_ssthresh = \"{ssthresh}\" }}"),
            ],
            "flow[0].cc_params.initial_ssthresh",
        );
    }
    load(
        BASE,
        &[
            "flow.cc=hybla",
            "flow.cc_params={ initial_ssthresh = \"2944B\" }",
        ],
    )
    .unwrap();
}

/// Only steps going back in time were rejected; two at one time left which holds to the order
/// they were listed in.
#[test]
fn schedule_steps_at_the_same_time_are_rejected() {
    let m = fails(
        BASE,
        &[
            r#"path.forward.schedule=[{ at = "1s", rate = "5Mbit" }, { at = "1s", rate = "1Mbit" }]"#,
        ],
        "path.forward.schedule[1].at",
    );
    assert!(m.contains("strictly increasing"), "{m}");
    // A first step at 0 s is still fine.
    load(
        BASE,
        &[r#"path.return.schedule=[{ at = "0s", rate = "1Mbit" }, { at = "1s", rate = "2Mbit" }]"#],
    )
    .unwrap();
}

/// `competing` and `classifier` were silently ignored with `growth = "seed"`.
#[test]
fn hybla_parameters_of_pipe_aware_growth_are_rejected_with_seed_growth() {
    for (key, value) in [("competing", "reno"), ("classifier", "loss-by-queue")] {
        let params = format!("flow.cc_params={{ growth = \"seed\", {key} = \"{value}\" }}");
        let m = fails(
            BASE,
            &["flow.cc=hybla", &params],
            &format!("flow[0].cc_params.{key}"),
        );
        assert!(m.contains("pipe-aware"), "{m}");
        let params = format!("flow.cc_params={{ growth = \"pipe-aware\", {key} = \"{value}\" }}");
        load(BASE, &["flow.cc=hybla", &params]).unwrap();
        let params = format!("flow.cc_params={{ {key} = \"{value}\" }}");
        load(BASE, &["flow.cc=hybla", &params]).unwrap();
    }
}

/// `scheduler = "balancer"` on a flow with only a perf download was silently ignored.
#[test]
fn a_scheduler_on_a_flow_without_media_or_bulk_is_rejected() {
    for scheduler in ["priority", "seed-balancer", "balancer"] {
        let m = fails(
            BASE,
            &[&format!("flow.scheduler={scheduler}")],
            "flow[0].scheduler",
        );
        assert!(m.contains("media") && m.contains("bulk"), "{m}");
    }
    // "none", the default, says nothing wrong.
    load(BASE, &["flow.scheduler=none"]).unwrap();
    let media = format!(
        "{}scheduler = \"balancer\"\n[[flow.app]]\nkind = \"media\"\n",
        BASE.replace("download = \"10MB\"\n", "")
    );
    load(&media, &[]).unwrap();
}

/// `red = { min = 5, max = inf }` was accepted (an infinite `weight` was not).
#[test]
fn red_thresholds_must_be_finite() {
    let red = |text: &str| format!("{BASE}\n[path.return.red]\n{text}\n");
    for (text, field) in [
        ("min = 5\nmax = inf", "path.return.red.max"),
        ("min = inf\nmax = inf", "path.return.red.min"),
        ("min = nan\nmax = 15", "path.return.red.min"),
        ("min = 5\nmax = -inf", "path.return.red.max"),
    ] {
        let m = fails(&red(text), &["path.return.aqm=red"], field);
        assert!(m.contains("finite"), "{m}");
    }
}

/// Thresholds at or above the hard queue limit (queue "10pkt" with min 50, max 150) made RED
/// do nothing.
#[test]
fn red_min_must_be_below_the_queue_limit_in_packets() {
    let m = fails(
        BASE,
        &[
            "path.forward.aqm=red",
            "path.forward.queue=10pkt",
            "path.forward.red={ min = 50, max = 150 }",
        ],
        "path.forward.red.min",
    );
    assert!(
        m.contains("queue limit (10 packets)")
            && m.contains("min must be below the queue limit in packets"),
        "{m}"
    );
    // The defaults (min 5) on a 5-packet queue: the same.
    fails(
        BASE,
        &["path.forward.aqm=red", "path.forward.queue=5pkt"],
        "path.forward.red.min",
    );
    // A byte limit holds limit / mtu full-size packets: 15 000 bytes are 10.
    let m = fails(
        BASE,
        &[
            "path.forward.aqm=red",
            "path.forward.queue=15000B",
            "path.forward.red={ min = 10, max = 30 }",
        ],
        "path.forward.red.min",
    );
    assert!(m.contains("10 full-size packets"), "{m}");
    load(
        BASE,
        &[
            "path.forward.aqm=red",
            "path.forward.queue=15000B",
            "path.forward.red={ min = 9.5, max = 30 }",
        ],
    )
    .unwrap();
}

/// An exponential `mean = "0ms"` and a uniform `min = max` were accepted while a normal
/// `stddev = "0ms"` was rejected.
#[test]
fn a_jitter_that_varies_nothing_is_rejected_with_a_hint() {
    for jitter in [
        r#"{ distribution = "exponential", mean = "0ms" }"#,
        r#"{ distribution = "uniform", min = "0ms", max = "0ms" }"#,
        r#"{ distribution = "uniform", min = "5ms", max = "5ms" }"#,
        r#"{ distribution = "normal", mean = "5ms", stddev = "0ms" }"#,
    ] {
        let m = fails(
            BASE,
            &[&format!("path.forward.jitter={jitter}")],
            "path.forward.jitter",
        );
        assert!(
            m.contains("add it to delay") || m.contains("leave jitter out"),
            "{jitter}: {m}"
        );
    }
    load(
        BASE,
        &[r#"path.forward.jitter={ distribution = "normal", mean = "0ms", stddev = "1ms" }"#],
    )
    .unwrap();
}

/// Messages said `expected struct RawLink` (or `RawPath`, `RawFlow`, `RawRed`, `RawJitter`,
/// `RawTransport`): the crate's private type names.
#[test]
fn a_value_where_a_table_belongs_is_reported_without_internal_names() {
    for (set, field) in [
        ("path.forward=5", "path.forward"),
        ("path=5", "path"),
        ("flow.0=5", "flow[0]"),
        ("path.forward.jitter=\"4.5ms\"", "path.forward.jitter"),
        ("transport=5", "transport"),
        ("flow.transport=5", "flow[0].transport"),
        ("path.forward.schedule=[5]", "path.forward.schedule[0]"),
        ("flow.app=[5]", "flow[0].app[0]"),
    ] {
        let m = fails(BASE, &[set], field);
        assert!(
            !m.contains("Raw") && !m.contains("struct") && m.contains("expected a"),
            "{set}: {m}"
        );
        assert!(m.contains("table"), "{set}: {m}");
    }
    let m = fails(
        BASE,
        &["path.forward.aqm=red", "path.forward.red=\"yes\""],
        "path.forward.red",
    );
    assert!(m.contains("expected a table such as { min = 5"), "{m}");
    // Unit enums said "invalid type: unit variant, expected string only".
    for (set, field) in [
        ("path.forward.aqm=5", "path.forward.aqm"),
        (
            r#"path.forward.loss={ model = 5, p = "1%" }"#,
            "path.forward.loss.model",
        ),
    ] {
        let m = fails(BASE, &[set], field);
        assert!(
            m.contains("expected a string") && !m.contains("variant"),
            "{m}"
        );
    }
    let m = fails(BASE, &["path.forward.aqm=codel"], "path.forward.aqm");
    assert!(m.contains(r#""droptail" or "red""#), "{m}");
}

/// `duration = "0.4ns"` was "must be greater than zero".
#[test]
fn a_duration_that_rounds_to_zero_is_reported_as_such() {
    let m = fails(BASE, &["duration=0.4ns"], "duration");
    assert!(m.contains("rounds to zero at the 1 ns resolution"), "{m}");
}

/// `ack_eliciting_threshold = 1.5` was reported as `got "1.5"`, as if a string.
#[test]
fn a_fractional_count_is_quoted_as_a_number() {
    let m = fails(
        BASE,
        &["transport.ack_eliciting_threshold=1.5"],
        "transport.ack_eliciting_threshold",
    );
    assert!(m.ends_with("got 1.5"), "{m}");
    let m = fails(BASE, &["mtu=1.5"], "mtu");
    assert!(m.ends_with("got 1.5"), "{m}");
}

/// `--set seed=18446744073709551615` (a valid u64 that a TOML integer cannot hold) said
/// `invalid type: string "18446744073709551615", expected u64`.
#[test]
fn every_u64_seed_is_accepted() {
    let s = load(BASE, &["seed=18446744073709551615"]).unwrap();
    assert_eq!(s.seed, u64::MAX);
    let s = load(&format!("seed = \"18446744073709551615\"\n{BASE}"), &[]).unwrap();
    assert_eq!(s.seed, u64::MAX);
    assert_eq!(load(BASE, &["seed=0"]).unwrap().seed, 0);
    for (seed, needle) in [
        (
            "18446744073709551616",
            "18446744073709551616 is out of range",
        ),
        ("-1", "-1 is out of range"),
        ("1.5", "got 1.5"),
        ("\"abc\"", "got \"abc\""),
        ("true", "expected an integer from 0 to 18446744073709551615"),
    ] {
        let m = fails(BASE, &[&format!("seed={seed}")], "seed");
        assert!(m.contains(needle), "{seed}: {m}");
    }
    // Other integers too large for TOML are out of range, not strings.
    let m = fails(BASE, &["mtu=99999999999999999999"], "mtu");
    assert!(m.contains("99999999999999999999 is out of range"), "{m}");
    let m = fails(BASE, &["flow.count=-3"], "flow[0].count");
    assert!(m.contains("-3 is out of range"), "{m}");
}

/// `--set flow.-1.cc=cubic` said "`flow[0].-1` does not exist": `-1` was taken as a key for
/// every element.
#[test]
fn an_override_index_that_is_not_a_valid_number_is_named() {
    for key in ["flow.-1.cc", "flow.99999999999999999999.cc"] {
        let err = load(BASE, &[&format!("{key}=cubic")]).unwrap_err();
        assert!(matches!(err, ScenarioError::Override { .. }), "{err}");
        let m = err.to_string();
        let index = key.split('.').nth(1).unwrap();
        assert!(
            m.contains(&format!("`{index}` is not a valid index into `flow`")),
            "{m}"
        );
    }
}

// ---- unknown keys ------------------------------------------------------------------------

#[test]
fn unknown_keys_are_rejected_by_name() {
    let m = fails(&format!("{BASE}\nbandwidth = 1\n"), &[], "bandwidth");
    assert!(m.contains("unknown field"), "{m}");
    let m = fails(BASE, &["path.forward.rat=20Mbit"], "rat");
    assert!(m.contains("unknown field"), "{m}");
    fails(BASE, &["flow.0.transport.cwnd=1"], "cwnd");
    fails(BASE, &["path.forward.red.min_p=1%"], "min_p");
    fails(
        BASE,
        &[r#"path.forward.loss={ model = "bernoulli", p = "1%", q = "2%" }"#],
        "q",
    );
}

// ---- overrides ---------------------------------------------------------------------------

#[test]
fn overrides_replace_values() {
    let s = load(
        BASE,
        &[
            "path.forward.rate=20Mbit",
            "duration = 90s",
            "seed=42",
            "flow.0.cc=hybla",
            "flow.0.qlog=true",
            r#"flow.0.cc_params={ rtt0 = "25ms" }"#,
            "path.forward.loss=1%",
            "transport.max_ack_delay=10ms",
            "description=a b = c",
        ],
    )
    .unwrap();
    assert_eq!(s.forward.rate_bps, 20_000_000);
    assert_eq!(s.duration, Duration::from_secs(90));
    assert_eq!(s.seed, 42);
    assert!(s.flows[0].qlog);
    assert_eq!(
        s.flows[0].controller,
        ControllerSpec::Hybla(HyblaSpec {
            rtt0: Some(ms(25)),
            ..HyblaSpec::default()
        })
    );
    assert_eq!(s.forward.loss, LossModel::Bernoulli { probability: 0.01 });
    assert_eq!(s.flows[0].transport.max_ack_delay, Some(ms(10)));
    assert_eq!(s.description.as_deref(), Some("a b = c"));
}

#[test]
fn override_applies_to_every_flow() {
    let text = format!("{BASE}\n[[flow]]\nname = \"other\"\ncc = \"bbr\"\nupload = \"1MB\"\n");
    let s = load(
        &text,
        &["flow.cc=hybla", "flow.transport.initial_rtt=600ms"],
    )
    .unwrap();
    assert!(s.flows.iter().all(|f| f.controller.name() == "hybla"));
    assert!(
        s.flows
            .iter()
            .all(|f| f.transport.initial_rtt == Some(ms(600)))
    );
    let s = load(&text, &["flow.1.cc=newreno"]).unwrap();
    assert_eq!(s.flows[0].controller.name(), "newreno");
    assert_eq!(s.flows[1].controller.name(), "newreno");
    let s = load(&text, &["flow.1.name=x"]).unwrap();
    assert_eq!(s.flows[1].name, "x");
}

#[test]
fn override_indexes_nested_arrays() {
    let s = load(
        BASE,
        &[
            r#"path.forward.schedule=[{ at = "5s", rate = "5Mbit" }]"#,
            "path.forward.schedule.0.rate=1Mbit",
            "time_to_bytes=[\"1MB\", \"2MB\"]",
            "time_to_bytes.1=3MB",
        ],
    )
    .unwrap();
    assert_eq!(s.forward.schedule[0].rate_bps, Some(1_000_000));
    assert_eq!(s.time_to_bytes, vec![1_000_000, 3_000_000]);
}

#[test]
fn bad_overrides() {
    for (assignment, needle) in [
        ("duration", "key=value"),
        ("flow.5.cc=cubic", "out of range"),
        ("name.x=1", "not a table"),
        ("path..rate=1Mbit", "empty part"),
    ] {
        let err = load(BASE, &[assignment]).unwrap_err();
        assert!(matches!(err, ScenarioError::Override { .. }), "{err}");
        let m = err.to_string();
        assert!(m.starts_with(ORIGIN) && m.contains(needle), "{m}");
    }
}

/// Found by tests/bad_input.rs: `flow.app.bitrate=…` on a file where one flow has no
/// `[[flow.app]]` created a table there and blamed the file ("flow[1].app: invalid type:
/// map, expected a sequence") without naming the override.
#[test]
fn an_override_that_creates_a_wrong_table_is_named() {
    let text = format!(
        "{}\n[[flow]]\nname = \"media\"\ncc = \"cubic\"\n[[flow.app]]\nkind = \"media\"\n",
        BASE
    );
    let err = load(&text, &["flow.app.bitrate=1Mbit"]).unwrap_err();
    assert!(matches!(err, ScenarioError::Override { .. }), "{err}");
    let m = err.to_string();
    assert!(
        m.contains("flow.app.bitrate=1Mbit") && m.contains("`flow[0].app` does not exist"),
        "{m}"
    );
    // Tables that may be created still are.
    let s = load(&text, &["flow.transport.initial_rtt=600ms"]).unwrap();
    assert!(
        s.flows
            .iter()
            .all(|f| f.transport.initial_rtt == Some(ms(600)))
    );
}

#[test]
fn override_values_that_look_like_toml_floats_stay_strings() {
    let s = load(BASE, &["flow.0.name=nan", "name=inf"]).unwrap();
    assert_eq!(s.flows[0].name, "nan");
    assert_eq!(s.name, "inf");
}

// ---- count expansion ---------------------------------------------------------------------

#[test]
fn count_expands_into_named_flows() {
    let s = load(BASE, &["flow.count=3", "flow.access_delay=5ms"]).unwrap();
    let names: Vec<&str> = s.flows.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["sat-1", "sat-2", "sat-3"]);
    assert!(s.flows.iter().all(|f| f.access_delay == ms(5)));
    let s = load(BASE, &["flow.count=1"]).unwrap();
    assert_eq!(s.flows[0].name, "sat");
}

// ---- shipped scenarios -------------------------------------------------------------------

#[test]
fn every_shipped_scenario_parses() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    assert!(files.len() >= 11, "found only {files:?}");
    for file in &files {
        let s = Scenario::from_file(file, &[]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            Some(s.name.as_str()),
            file.file_stem().and_then(|n| n.to_str()),
            "scenario name should match its file name"
        );
    }
}

#[test]
fn shipped_scenarios_match_their_sources() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let load = |name: &str| Scenario::from_file(&dir.join(format!("{name}.toml")), &[]).unwrap();
    let geo = load("thesis-geo");
    assert_eq!(geo.forward.delay + geo.return_link.delay, ms(500));
    assert_eq!(geo.forward.loss, LossModel::Bernoulli { probability: 1e-4 });
    assert_eq!(
        geo.flows[0].perf().unwrap().download,
        Some(Download::Unlimited)
    );
    let variable = load("kuhn-variable");
    assert_eq!(variable.forward.rate_bps, 50_000_000);
    assert_eq!(variable.forward.schedule[0].rate_bps, Some(10_000_000));
    assert_eq!(variable.forward.schedule[0].at, Duration::from_secs(5));
    let pico = load("picoquic-sat");
    assert_eq!(
        pico.forward.queue,
        QueueLimit::Bytes(250_000_000 * 6 / 10 / 8)
    );
    let sat = load("sat");
    assert_eq!(sat.forward.queue, QueueLimit::Packets(25));
    assert_eq!(
        sat.flows[0].perf().unwrap().download,
        Some(Download::Bytes(10 << 20))
    );
}

#[test]
fn app_tables_describe_several_apps_on_one_connection() {
    let text = BASE.replace(
        "download = \"10MB\"",
        "[[flow.app]]\nkind = \"perf\"\nname = \"file\"\ndownload = \"1MB\"\n\
             [[flow.app]]\nkind = \"perf\"\nname = \"update\"\ndownload = \"2MB\"",
    );
    let s = load(&text, &[]).unwrap();
    let names: Vec<&str> = s.flows[0].apps.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, ["file", "update"]);
    assert_eq!(
        s.flows[0].apps[1].kind,
        AppKind::Perf(PerfConfig {
            download: Some(Download::Bytes(2_000_000)),
            upload_bytes: None,
            repeat_after: None,
        })
    );
    let m = fails(&text, &["flow.download=1MB"], "flow[0]");
    assert!(m.contains("not both"), "{m}");
    let m = fails(&text, &["flow.app.1.name=file"], "flow[0].app[1].name");
    assert!(m.contains("already used"), "{m}");
    let m = fails(
        &text,
        &["flow.app.0.download=0MB"],
        "flow[0].app[0].download",
    );
    assert!(m.contains("greater than zero"), "{m}");
    let bad_kind = text.replace(
        "kind = \"perf\"\nname = \"file\"",
        "kind = \"video\"\nname = \"file\"",
    );
    let err = load(&bad_kind, &[]).unwrap_err().to_string();
    assert!(
        err.contains("flow[0].app[0].kind") && err.contains("video"),
        "{err}"
    );
}

#[test]
fn schedulers_and_bulk_tables_are_checked_by_field() {
    let text = BASE.replace(
            "download = \"10MB\"",
            "[[flow.app]]\nkind = \"media\"\n[[flow.app]]\nkind = \"bulk\"\nrate = \"2Mbit\"\nstart = \"10s\"",
        );
    let s = load(&text, &[]).unwrap();
    assert_eq!(s.flows[0].scheduler, SchedulerSpec::RoundRobin);
    let AppKind::Bulk(bulk) = &s.flows[0].apps[1].kind else {
        panic!("not bulk: {:?}", s.flows[0].apps[1]);
    };
    assert_eq!(
        (bulk.rate_bps, bulk.start, bulk.sender),
        (Some(2_000_000), ms(10_000), perfwire::Sender::Server)
    );
    for name in sched::SCHEDULERS {
        let s = load(&text, &[&format!("flow.scheduler={name}")]).unwrap();
        assert_eq!(s.flows[0].scheduler.name(), name);
    }
    let s = load(&text, &["flow.app.1.rate=unlimited"]).unwrap();
    assert!(matches!(&s.flows[0].apps[1].kind, AppKind::Bulk(b) if b.rate_bps.is_none()));
    for (set, field, needle) in [
        ("flow.scheduler=fifo", "flow[0].scheduler", "seed-balancer"),
        ("flow.scheduler=3", "flow[0].scheduler", ""),
        (
            "flow.app.1.rate=0Mbit",
            "flow[0].app[1].rate",
            "greater than zero",
        ),
        ("flow.app.1.rate=2MB", "flow[0].app[1].rate", "unlimited"),
        ("flow.app.1.start=-1s", "flow[0].app[1].start", ""),
        (
            "flow.app.1.start=1h",
            "flow[0].app[1].start",
            "not before the end",
        ),
        (
            "flow.app.1.direction=up",
            "flow[0].app[1].direction",
            "upload",
        ),
        ("flow.app.1.burst=3", "flow[0].app[1]", "burst"),
        ("flow.app.0.adaptive=maybe", "flow[0].app[0].adaptive", ""),
    ] {
        let message = fails(&text, &[set], field);
        assert!(message.contains(needle), "{set}: {message}");
    }
}

#[test]
fn media_tables_take_defaults_and_reject_nonsense_by_field() {
    let text = BASE.replace(
            "download = \"10MB\"",
            "[[flow.app]]\nkind = \"media\"\n[[flow.app]]\nkind = \"perf\"\nname = \"bulk\"\ndownload = \"unlimited\"",
        );
    let s = load(&text, &[]).unwrap();
    assert_eq!(s.flows[0].apps[0].name, "media");
    let AppKind::Media(media) = &s.flows[0].apps[0].kind else {
        panic!("not media: {:?}", s.flows[0].apps[0]);
    };
    assert_eq!(
        (media.bitrate_bps, media.video.fps, media.deadline),
        (2_000_000, 30, None)
    );
    let s = load(
        &text,
        &["flow.app.0.bitrate=500kbit", "flow.app.0.deadline=400ms"],
    )
    .unwrap();
    let AppKind::Media(media) = &s.flows[0].apps[0].kind else {
        panic!();
    };
    assert_eq!(
        (media.bitrate_bps, media.deadline),
        (500_000, Some(ms(400)))
    );
    for (set, field, needle) in [
        (
            "flow.app.0.bitrate=0Mbit",
            "flow[0].app[0].bitrate",
            "greater than zero",
        ),
        ("flow.app.0.fps=0", "flow[0].app[0].fps", "1 to 240"),
        ("flow.app.0.deadline=-5ms", "flow[0].app[0].deadline", ""),
        (
            "flow.app.0.deadline=0ms",
            "flow[0].app[0].deadline",
            "greater than zero",
        ),
        ("flow.app.0.jitter=1.5", "flow[0].app[0].jitter", "below 1"),
        (
            "flow.app.0.direction=sideways",
            "flow[0].app[0].direction",
            "upload",
        ),
        ("flow.app.0.codec=av1", "flow[0].app[0]", "codec"),
    ] {
        let m = fails(&text, &[set], field);
        assert!(m.contains(needle), "{set}: {m}");
    }
}

/// Found by tests/bad_input.rs: a file cut inside a character was "stream did not contain
/// valid UTF-8" with no position.
#[test]
fn a_file_that_is_not_utf8_names_the_position() {
    let path = std::env::temp_dir().join(format!("scenario-latin1-{}.toml", std::process::id()));
    std::fs::write(&path, b"name = \"x\"\n# caf\xe9\n").unwrap();
    let err = Scenario::from_file(&path, &[]).unwrap_err().to_string();
    let _ = std::fs::remove_file(&path);
    assert!(
        err.ends_with("not UTF-8 text: byte 0xe9 at line 2, column 6"),
        "{err}"
    );
}

/// The CLI read files with `read_to_string` ("stream did not contain valid UTF-8", no
/// position) because it keeps the text to load it again; `read_text` gives it the position.
#[test]
fn read_text_names_the_position_of_a_byte_that_is_not_utf8() {
    let path = std::env::temp_dir().join(format!("scenario-read-text-{}.toml", std::process::id()));
    std::fs::write(&path, b"name = \"x\"\nduration = \"1\xffs\"\n").unwrap();
    let err = crate::read_text(&path).unwrap_err();
    let _ = std::fs::remove_file(&path);
    assert!(matches!(
        err,
        ScenarioError::NotUtf8 {
            line: 2,
            column: 14,
            byte: 0xff,
            ..
        }
    ));
    assert!(
        err.to_string().starts_with(&path.display().to_string()),
        "{err}"
    );
    let err = crate::read_text(Path::new("/nonexistent/x.toml")).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("/nonexistent/x.toml: cannot read"),
        "{err}"
    );
}

#[test]
fn missing_file_names_it() {
    let err = Scenario::from_file(Path::new("/nonexistent/x.toml"), &[]).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("/nonexistent/x.toml: cannot read"),
        "{err}"
    );
}

#[test]
fn applications_whose_streams_the_receiver_cannot_tell_apart_are_refused() {
    let flow = |apps: &str| BASE.replace("download = \"10MB\"", apps);
    let media = |name: &str, direction: &str| {
        format!("[[flow.app]]\nkind = \"media\"\nname = \"{name}\"\ndirection = \"{direction}\"\n")
    };
    let bulk = |name: &str, direction: &str, start: &str| {
        format!(
            "[[flow.app]]\nkind = \"bulk\"\nname = \"{name}\"\ndirection = \"{direction}\"\nstart = \"{start}\"\n"
        )
    };
    let perf = |name: &str, transfer: &str| {
        format!("[[flow.app]]\nkind = \"perf\"\nname = \"{name}\"\n{transfer}\n")
    };
    // One media source each way, bulks the same way in start order, perf next to a download.
    let fine = [
        media("up", "upload") + &media("down", "download"),
        bulk("a", "upload", "0s") + &bulk("b", "upload", "0s") + &bulk("c", "upload", "5s"),
        bulk("late", "download", "5s") + &bulk("early", "upload", "1s"),
        perf("file", "download = \"5MB\"") + &media("v", "download") + &bulk("b", "download", "0s"),
        perf("one", "download = \"5MB\"") + &perf("two", "download = \"1MB\""),
    ];
    for apps in fine {
        load(&flow(&apps), &[]).unwrap_or_else(|e| panic!("{apps}: {e}"));
    }
    let refused = [
        (
            media("a", "download") + &media("b", "download"),
            "flow[0].app[1].direction",
            "\"a\"",
        ),
        (
            bulk("a", "upload", "5s") + &bulk("b", "upload", "1s"),
            "flow[0].app[1].start",
            "order they start",
        ),
        (
            perf("file", "download = \"5MB\"") + &bulk("up", "upload", "0s"),
            "flow[0].app[1]",
            "bulk upload (\"up\") next to a perf application (\"file\")",
        ),
        (
            bulk("up", "upload", "0s") + &perf("file", "download = \"5MB\""),
            "flow[0].app[1]",
            "bidirectional streams from the client",
        ),
        (
            perf("one", "download = \"5MB\"") + &perf("two", "upload = \"1MB\""),
            "flow[0].app[1]",
            "whose upload",
        ),
    ];
    for (apps, field, needle) in refused {
        let message = fails(&flow(&apps), &[], field);
        assert!(message.contains(needle), "{apps}: {message}");
    }
}
