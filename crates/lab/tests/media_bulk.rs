//! Media and bulk on one connection, every scheduler, end to end on a short capacity schedule:
//! the outputs are byte-identical for the same seed, each scheduler does what it claims, and
//! the per-period results add up.

mod common;

use std::path::PathBuf;

use report::CompletedRun;
use report::summary::RunSummary;
use scenario::Scenario;

/// 4 Mbit/s for 20 s, then 1 Mbit/s for 10 s: media 2 Mbit/s from 0 s, bulk 2 Mbit/s from 3 s.
const SCENARIO: &str = r#"
name = "media-bulk-short"
duration = "30s"
[path.forward]
rate = "4Mbit"
delay = "25ms"
queue = "300ms"
[[path.forward.schedule]]
at = "20s"
rate = "1Mbit"
[path.return]
rate = "10Mbit"
delay = "25ms"
[[flow]]
name = "call"
cc = "cubic"
[[flow.app]]
kind = "media"
[[flow.app]]
kind = "bulk"
rate = "2Mbit"
start = "3s"
"#;

fn scenario(scheduler: &str) -> Scenario {
    Scenario::from_toml_str(SCENARIO, "test", &[format!("flow.scheduler={scheduler}")]).unwrap()
}

fn run(scheduler: &str) -> (Scenario, Vec<CompletedRun>) {
    let scenario = scenario(scheduler);
    let runs = common::run_seed(&scenario, 1);
    (scenario, runs)
}

fn summary(scheduler: &str) -> RunSummary {
    common::summary_seed(&scenario(scheduler), 1)
}

fn temp(name: &str) -> PathBuf {
    common::temp("media-bulk", name)
}

#[test]
fn same_seed_gives_byte_identical_outputs_for_every_scheduler() {
    for scheduler in sched::SCHEDULERS {
        let mut outputs = Vec::new();
        for attempt in ["a", "b"] {
            let (scenario, runs) = run(scheduler);
            let dir = temp(&format!("{scheduler}-{attempt}"));
            report::output::write_all(&dir, &scenario, 1, 1, &runs).unwrap();
            let files: Vec<Vec<u8>> = ["summary.json", "apps.csv", "frames.csv", "timeseries.csv"]
                .iter()
                .map(|f| std::fs::read(dir.join(f)).unwrap())
                .collect();
            assert!(dir.join("media.png").exists() && dir.join("media.svg").exists());
            outputs.push(files);
        }
        assert!(
            outputs[0] == outputs[1],
            "{scheduler}: outputs differ between identical runs"
        );
    }
}

#[test]
fn periods_follow_the_schedule_and_add_up() {
    let run = summary("balancer");
    assert_eq!(run.periods.len(), 2);
    let (first, second) = (&run.periods[0], &run.periods[1]);
    assert_eq!(
        (first.start_s, first.end_s, first.capacity_bps),
        (0.0, 20.0, 4e6)
    );
    assert_eq!(
        (second.start_s, second.end_s, second.capacity_bps),
        (20.0, 30.0, 1e6)
    );
    for period in &run.periods {
        let media = &period.apps["media"];
        assert_eq!(media.kind, "media");
        assert_eq!(period.apps["bulk"].kind, "bulk");
        // 30 frames per second, less what could not arrive before the end of the run.
        let length = period.end_s - period.start_s;
        let frames = media.frames.unwrap() as f64;
        assert!(
            frames <= 30.0 * length + 1.0 && frames >= 30.0 * (length - 1.0),
            "{frames}"
        );
        let utilization = period.utilization.unwrap();
        // A packet whose serialization straddles a boundary counts in the period it ends in:
        // one packet (1.5 kB) over a 10 s period is 0.1 % at 1 Mbit/s.
        // The balancer keeps the link busy with media and bulk (92 % and 99 % at seed 1; issue
        // 24 asks 90 % where capacity is plentiful) ...
        assert!(utilization >= 0.9, "{utilization}");
        // ... and never more than the link carries.
        assert!(utilization <= 1.002, "{utilization}");
        // Application goodput cannot exceed what the link serialized.
        let goodput: f64 = period.apps.values().map(|a| a.goodput_bps).sum();
        assert!(
            goodput <= utilization * period.capacity_bps * 1.001,
            "{goodput}"
        );
    }
    // Only a period that starts with a drop reports a recovery time.
    assert!(first.apps["media"].recovery_s.is_none());
    assert!(second.apps["media"].recovery_s.is_some());
}

#[test]
fn the_balancer_keeps_media_on_time_where_round_robin_does_not() {
    let none = summary("none");
    let balancer = summary("balancer");
    // 4 Mbit/s carries media 2 + bulk 2 only just (with overhead, not quite): round robin
    // lets the bulk's queue delay the media; the balancer keeps frames within the deadline.
    let late = |run: &RunSummary| {
        let media = &run.periods[0].apps["media"];
        media.late_frames.unwrap() as f64 / media.frames.unwrap() as f64
    };
    assert!(
        late(&balancer) < 0.05,
        "balancer late share {}",
        late(&balancer)
    );
    assert!(
        late(&none) > 2.0 * late(&balancer),
        "none {} vs balancer {}",
        late(&none),
        late(&balancer)
    );
    // And the bulk still gets most of what is left.
    let bulk = balancer.periods[0].apps["bulk"].goodput_bps;
    assert!(bulk > 1.0e6, "bulk {bulk}");
}

#[test]
fn the_seed_balancer_and_priority_run_with_every_controller() {
    for scheduler in ["priority", "seed-balancer", "balancer"] {
        for cc in ["newreno", "cubic", "hybla", "bbr"] {
            let scenario = Scenario::from_toml_str(
                SCENARIO,
                "test",
                &[
                    format!("flow.scheduler={scheduler}"),
                    "duration=8s".to_owned(),
                ],
            )
            .unwrap_err();
            // 8 s ends before the schedule's step: the scenario says so, naming the field.
            assert!(
                scenario.to_string().contains("schedule[0].at"),
                "{scenario}"
            );
            let scenario = Scenario::from_toml_str(
                &SCENARIO.replace("at = \"20s\"", "at = \"6s\""),
                "test",
                &[
                    format!("flow.scheduler={scheduler}"),
                    format!("flow.cc={cc}"),
                    "duration=8s".to_owned(),
                ],
            )
            .unwrap();
            let runs = common::run_seed(&scenario, 3);
            let flow = &runs[0].outcome.flows[0];
            assert!(
                flow.apps.iter().all(|a| a.received_bytes > 0),
                "{scheduler} with {cc}: {:?}",
                flow.apps
                    .iter()
                    .map(|a| a.received_bytes)
                    .collect::<Vec<_>>()
            );
        }
    }
}

/// [`SCENARIO`] at 1 Mbit/s for 10 s, then 4 Mbit/s for 10 s, with the balancer; optionally a perf download on the same bottleneck from 5 s.
fn rise(competitor: bool) -> Scenario {
    let mut text = SCENARIO.to_owned();
    if competitor {
        text.push_str(
            "[[flow]]\nname = \"download\"\ncc = \"cubic\"\nstart = \"5s\"\ndownload = \"unlimited\"\n",
        );
    }
    let overrides = [
        "duration=20s",
        "path.forward.rate=1Mbit",
        r#"path.forward.schedule=[{ at = "10s", rate = "4Mbit" }]"#,
        "flow.0.scheduler=balancer",
    ]
    .map(str::to_owned);
    Scenario::from_toml_str(&text, "test", &overrides).unwrap()
}

#[test]
fn the_evaluation_agrees_with_the_periods_and_times_the_rise() {
    let scenario = rise(false);
    let runs = common::run_seed(&scenario, 1);
    let outcome = &runs[0].outcome;
    let periods = report::periods::periods(outcome, &scenario.forward);
    let evaluation = report::evaluation::evaluate(outcome, &scenario.forward).unwrap();
    assert_eq!(evaluation.periods.len(), 2);
    assert!(evaluation.competition.is_none());
    for (e, p) in evaluation.periods.iter().zip(&periods) {
        let media = &p.apps["media"];
        assert_eq!(
            (e.start_s, e.end_s, e.capacity_bps),
            (p.start_s, p.end_s, p.capacity_bps)
        );
        assert_eq!(e.media_rate_bps, 2e6);
        assert_eq!(
            (e.frames, e.late_frames),
            (media.frames.unwrap(), media.late_frames.unwrap())
        );
        assert_eq!(e.media_goodput_bps, media.goodput_bps);
        assert_eq!(e.bulk_goodput_bps, p.apps["bulk"].goodput_bps);
        // The first 2 s of 30 fps are left out of the settled frames.
        assert!(e.settled_frames <= e.frames && e.settled_frames + 61 >= e.frames);
        assert!(e.settled_late_frames <= e.late_frames);
        assert!(e.ours_share.is_none() && e.media_fair_ratio.is_none());
    }
    let (before, after) = (&evaluation.periods[0], &evaluation.periods[1]);
    assert_eq!(before.ramp_s, None, "the first period is no rise");
    let ramp = after.ramp_s.unwrap().unwrap();
    // Issue 24's bound for a rise: 3 s + 3 base RTTs (50 ms here); 0.8 s at seed 1.
    assert!(ramp > 0.0 && ramp <= 3.15, "ramp {ramp}");
    // At 4 Mbit/s the media is served: what it sends arrives (within a frame or two).
    let sent = after.settled_media_sent_bps.unwrap();
    assert!(
        (sent - after.settled_media_goodput_bps).abs() < 0.05 * sent,
        "sent {sent}, goodput {}",
        after.settled_media_goodput_bps
    );
    let summary = common::summary_seed(&scenario, 1);
    assert_eq!(evaluation.rfc8868.utilization, summary.link_utilization);
    assert!(evaluation.rfc8868.media_goodput_low_bps <= evaluation.rfc8868.media_goodput_bps);
}

#[test]
fn next_to_a_download_the_evaluation_measures_our_share() {
    let scenario = rise(true);
    let runs = common::run_seed(&scenario, 1);
    let outcome = &runs[0].outcome;
    let evaluation = report::evaluation::evaluate(outcome, &scenario.forward).unwrap();
    let competition = evaluation.competition.unwrap();
    assert_eq!((competition.from_s, competition.to_s), (5.0, 20.0));
    // Both connections' IP bytes cannot exceed the link's capacity.
    assert!(
        competition.ours_share > 0.0 && competition.ours_share < 1.0,
        "{competition:?}"
    );
    let (first, second) = (&evaluation.periods[0], &evaluation.periods[1]);
    assert_eq!((first.competed_s, second.competed_s), (5.0, 10.0));
    assert!(first.ours_share.is_some() && second.media_fair_ratio.is_some());
}

#[test]
fn a_perf_download_listed_before_the_media_does_not_take_its_room() {
    // The simulator drives perf after the scheduled applications whatever the scenario's
    // order: listed first, it took the room acknowledgements freed before the media's turn
    // (177 of 298 frames cancelled), listed after the media none.
    let media = |perf_first: bool| {
        let (perf, media) = (
            "[[flow.app]]\nkind = \"perf\"\ndownload = \"2MB\"\n",
            "[[flow.app]]\nkind = \"media\"\nbitrate = \"1Mbit\"\n",
        );
        let apps = if perf_first {
            format!("{perf}{media}")
        } else {
            format!("{media}{perf}")
        };
        let text = format!(
            "name = \"perf-and-media\"\nduration = \"10s\"\n[path.forward]\nrate = \"4Mbit\"\n\
             delay = \"25ms\"\nqueue = \"300ms\"\n[path.return]\nrate = \"10Mbit\"\n\
             delay = \"25ms\"\n[[flow]]\nname = \"call\"\ncc = \"cubic\"\n\
             scheduler = \"balancer\"\n{apps}"
        );
        let scenario = Scenario::from_toml_str(&text, "perf-and-media", &[]).unwrap();
        let outcome = common::run_seed(&scenario, 1).remove(0).outcome;
        outcome.flows[0]
            .apps
            .iter()
            .find_map(sim::apps::media::MediaReport::of)
            .expect("a media application")
    };
    for perf_first in [false, true] {
        let report = media(perf_first);
        assert_eq!(
            (report.cancelled_frames, report.frames_received >= 295),
            (0, true),
            "perf first: {perf_first}, {} frames received",
            report.frames_received
        );
    }
}

/// Review finding (issue 24): each frame is a stream, and quinn's round robin among streams
/// of one priority let the frames after a keyframe take turns with it while the congestion
/// window held it back, so they arrived before it and it arrived late. With ours the
/// transport sends streams in the order they were written: on a path that loses nothing no
/// frame completes before an earlier one.
#[test]
fn no_frame_overtakes_an_earlier_one_with_the_balancer() {
    // SCENARIO on a GEO path whose window Hybla holds at about the pipe: 3 Mbit/s throughout,
    // 300 ms each way, 1 s of buffer.
    let overrides = [
        "duration=40s",
        "flow.cc=hybla",
        "flow.scheduler=balancer",
        "path.forward.rate=3Mbit",
        "path.forward.schedule.0.rate=3Mbit",
        "path.forward.delay=300ms",
        "path.forward.queue=1s",
        "path.return.rate=1Mbit",
        "path.return.delay=300ms",
    ]
    .map(String::from);
    let scenario = Scenario::from_toml_str(SCENARIO, "test", &overrides).unwrap();
    let runs = common::run_seed(&scenario, 1);
    let dir = temp("geo-keyframes");
    report::output::write_all(&dir, &scenario, 1, 1, &runs).unwrap();
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("summary.json")).unwrap()).unwrap();
    // Lost packets are retransmitted after later frames: a frame may then complete late.
    assert_eq!(summary["runs"][0]["flows"][0]["lost_packets"], 0);
    let frames = std::fs::read_to_string(dir.join("frames.csv")).unwrap();
    // Every captured frame has a row; those that never arrived have no arrival time.
    let mut received: Vec<(u64, f64)> = frames
        .lines()
        .skip(1)
        .filter_map(|line| {
            let fields: Vec<&str> = line.split(',').collect();
            (!fields[7].is_empty())
                .then(|| (fields[5].parse().unwrap(), fields[7].parse().unwrap()))
        })
        .collect();
    received.sort_by_key(|&(seq, _)| seq);
    assert!(received.len() > 1000, "{} frames received", received.len());
    let overtaken = received
        .windows(2)
        .filter(|pair| pair[1].1 < pair[0].1)
        .count();
    assert_eq!(overtaken, 0, "frames completed before an earlier one");
}
