use super::summary::SUMMARY_ENTRY_BYTES;
use super::*;
use crate::media::DelayPercentiles;

fn request() -> SessionRequest {
    SessionRequest {
        scheduler: "balancer".into(),
        duration: Duration::from_secs(30),
        apps: vec![
            SessionApp {
                sender: Sender::Server,
                params: AppParams::Media(MediaParams {
                    bitrate_bps: 2_000_000,
                    video: VideoModel {
                        fps: 30,
                        keyframe_interval: 60,
                        keyframe_ratio: 5.0,
                        jitter: 0.2,
                    },
                    deadline: Duration::from_millis(175),
                    seed: 7,
                    adaptive: true,
                }),
            },
            SessionApp {
                sender: Sender::Server,
                params: AppParams::Bulk(BulkParams {
                    rate_bps: None,
                    start: Duration::from_secs(3),
                }),
            },
            SessionApp {
                sender: Sender::Client,
                params: AppParams::Bulk(BulkParams {
                    rate_bps: Some(500_000),
                    start: Duration::ZERO,
                }),
            },
        ],
    }
}

#[test]
fn request_round_trips() {
    let framed = request().encode().unwrap();
    let len = SessionRequest::body_len(framed[..4].try_into().unwrap()).unwrap();
    assert_eq!(len, framed.len() - 4);
    assert_eq!(SessionRequest::decode(&framed[4..]).unwrap(), request());
}

#[test]
fn every_truncation_and_junk_is_an_error_not_a_panic() {
    let framed = request().encode().unwrap();
    let body = &framed[4..];
    for end in 0..body.len() {
        assert!(SessionRequest::decode(&body[..end]).is_err(), "{end}");
    }
    let mut longer = body.to_vec();
    longer.push(0);
    assert_eq!(
        SessionRequest::decode(&longer),
        Err(SessionError::Trailing(1))
    );
    // Every single-byte corruption decodes to a valid request or an error.
    for i in 0..body.len() {
        for v in [0u8, 1, 2, 0x7f, 0xff] {
            let mut bad = body.to_vec();
            bad[i] = v;
            let _ = SessionRequest::decode(&bad);
        }
    }
    // A deterministic stream of junk bodies.
    let mut state = 0x1234_5678u32;
    for _ in 0..2000 {
        let len = (state % 200) as usize;
        let junk: Vec<u8> = (0..len)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 17;
                state ^= state << 5;
                state as u8
            })
            .collect();
        let _ = SessionRequest::decode(&junk);
        let _ = Reply::decode(&junk);
        let _ = Summary::decode(&junk);
    }
    assert!(SessionRequest::body_len([0, 0, 0x10, 0x01]).is_err());
}

#[test]
fn out_of_range_values_name_their_field() {
    let with = |f: &dyn Fn(&mut MediaParams)| {
        let mut r = request();
        if let AppParams::Media(m) = &mut r.apps[0].params {
            f(m);
        }
        r.validate().unwrap_err().to_string()
    };
    assert!(with(&|m| m.bitrate_bps = 0).contains("apps[0].bitrate"));
    assert!(with(&|m| m.video.fps = 0).contains("apps[0].fps"));
    assert!(with(&|m| m.video.jitter = f64::NAN).contains("apps[0].jitter"));
    assert!(with(&|m| m.video.keyframe_ratio = 0.5).contains("apps[0].keyframe_ratio"));
    assert!(with(&|m| m.deadline = Duration::ZERO).contains("apps[0].deadline"));
    let mut r = request();
    r.duration = Duration::ZERO;
    assert!(r.encode().unwrap_err().to_string().contains("duration"));
    let mut r = request();
    r.apps.clear();
    assert!(r.validate().unwrap_err().to_string().contains("apps"));
    let mut framed = request().encode().unwrap();
    framed[4] = 9;
    assert!(
        SessionRequest::decode(&framed[4..])
            .unwrap_err()
            .to_string()
            .contains("version")
    );
}

fn perf(downloads: bool, uploads: bool) -> SessionApp {
    SessionApp {
        sender: if downloads {
            Sender::Server
        } else {
            Sender::Client
        },
        params: AppParams::Perf(PerfParams { downloads, uploads }),
    }
}

#[test]
fn perf_next_to_media_and_bulk_round_trips() {
    let mut r = request();
    r.apps.pop(); // the bulk upload: a client's bidirectional streams are perf's now
    r.apps.push(perf(true, true));
    let framed = r.encode().unwrap();
    assert_eq!(SessionRequest::decode(&framed[4..]).unwrap(), r);
    r.apps[2] = perf(false, true);
    let framed = r.encode().unwrap();
    assert_eq!(SessionRequest::decode(&framed[4..]).unwrap(), r);
}

#[test]
fn sessions_whose_streams_the_receiver_cannot_tell_apart_are_refused() {
    let refused = |apps: Vec<SessionApp>, field: &str, words: &str| {
        let mut r = request();
        r.apps = apps;
        let error = r.validate().unwrap_err();
        let SessionError::Invalid { field: f, problem } = &error else {
            panic!("{error:?}");
        };
        assert_eq!(f, field, "{error}");
        assert!(problem.contains(words), "{error}");
        // `encode` checks as the server's `decode` does: nothing invalid is sent.
        assert_eq!(r.encode().unwrap_err(), error);
    };
    let base = request().apps;
    let (media_down, bulk_down, bulk_up) = (base[0], base[1], base[2]);
    refused(
        vec![bulk_up, perf(true, false)],
        "apps[1]",
        "bulk upload (\"apps[0]\") next to a perf application (\"apps[1]\")",
    );
    refused(
        vec![perf(true, false), media_down, perf(true, false)],
        "apps[2].kind",
        "second perf application next to apps[0]",
    );
    refused(
        vec![media_down, bulk_down, media_down],
        "apps[2].direction",
        "second media source the same way as \"apps[0]\"",
    );
    let mut backwards = bulk_down;
    if let AppParams::Bulk(b) = &mut backwards.params {
        b.start = Duration::from_secs(1);
    }
    refused(
        vec![bulk_down, backwards],
        "apps[1].start",
        "listed earlier the same way",
    );
    refused(
        vec![perf(false, false)],
        "apps[0].flags",
        "download and/or an upload",
    );
    let mut wrong_sender = perf(true, true);
    wrong_sender.sender = Sender::Client;
    refused(
        vec![wrong_sender],
        "apps[0].sender",
        "the server if it downloads",
    );
    // Unknown perf flag bits off the wire.
    let mut r = request();
    r.apps = vec![perf(true, false)];
    let mut framed = r.encode().unwrap();
    let last = framed.len() - 1;
    framed[last] = 0x04;
    let error = SessionRequest::decode(&framed[4..])
        .unwrap_err()
        .to_string();
    assert!(error.contains("apps[0].flags: 0x04"), "{error}");
}

#[test]
fn replies_and_summaries_round_trip() {
    for reply in [
        Reply::Accepted {
            clock: Duration::from_micros(1234),
        },
        Reply::Refused {
            reason: "unknown scheduler \"x\"".into(),
        },
    ] {
        assert_eq!(Reply::decode(&reply.encode()).unwrap(), reply);
    }
    assert_eq!(
        Reply::Accepted {
            clock: Duration::ZERO
        }
        .encode()
        .len(),
        ACCEPTED_REPLY_BYTES
    );
    let long = Reply::Refused {
        reason: "é".repeat(2000),
    };
    let Reply::Refused { reason } = Reply::decode(&long.encode()).unwrap() else {
        panic!("refused");
    };
    assert!(reason.len() <= MAX_REASON_BYTES);
    let summary = Summary {
        apps: vec![
            AppAccount {
                sent: SentSummary {
                    frames_sent: 900,
                    cancelled_frames: 3,
                    written_bytes: 7_500_000,
                    mean_bitrate_bps: 2_000_000,
                    started_at: Some(Duration::ZERO),
                },
                received: ReceivedSummary::default(),
            },
            AppAccount {
                sent: SentSummary::default(),
                received: ReceivedSummary {
                    received_bytes: 3_000_000,
                    frames_received: 880,
                    late_frames: 4,
                    frame_delay_ms: DelayPercentiles {
                        p50: 301.5,
                        p95: 420.25,
                        p99: 610.0,
                        max: 702.125,
                    },
                },
            },
        ],
    };
    let encoded = summary.encode();
    assert_eq!(Summary::decode(&encoded).unwrap(), summary);
    assert!(encoded.len() <= MAX_SUMMARY_BYTES);
    // A delay that is not a delay, or more late frames than frames, names the entry.
    let p50_at = 1 + SUMMARY_ENTRY_BYTES + 8 * 8;
    for (at, value, field) in [
        (p50_at, f64::NAN.to_bits(), "apps[1].frame_delay_ms"),
        (p50_at, (-1.0f64).to_bits(), "apps[1].frame_delay_ms"),
        (1 + SUMMARY_ENTRY_BYTES + 7 * 8, 881, "apps[1].late_frames"),
    ] {
        let mut bad = encoded.clone();
        bad[at..at + 8].copy_from_slice(&value.to_be_bytes());
        let error = Summary::decode(&bad).unwrap_err().to_string();
        assert!(error.contains(field), "{error}");
    }
    assert_eq!(decode_offset(encode_offset(-42)), -42);
}
