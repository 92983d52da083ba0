//! Which applications may share one connection: a receiving end tells the streams of its
//! peer's applications apart only by stream kind and order, so two applications whose
//! streams look alike to the receiver cannot run side by side.
//!
//! The streams each application opens: a media source one unidirectional stream per frame
//! (from its sender); a bulk source one bidirectional stream (from its sender), routed to the
//! receiver's bulk applications of that direction in the order they start; perf one
//! bidirectional stream per request, always from the client, whichever way its data goes.
//! The scenario format checks a flow's `[[flow.app]]` tables with [`check_routing`] at load and
//! the session protocol checks a request with it, so the simulator and a real server refuse
//! the same combinations with the same reasons.

use std::time::Duration;

use crate::Sender;

/// What an application opens, as far as telling its streams apart goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamUse {
    /// Synthetic video: a unidirectional stream per frame from `sender`.
    Media {
        /// Which end sends the frames.
        sender: Sender,
    },
    /// Bulk data: one bidirectional stream from `sender`, opened at `start`.
    Bulk {
        /// Which end sends the data.
        sender: Sender,
        /// When the source starts (orders the bulk streams of one direction).
        start: Duration,
    },
    /// The perf protocol: a bidirectional stream per request, from the client.
    Perf {
        /// Whether its requests carry an upload (the server then counts whose bytes it got).
        uploads: bool,
    },
}

/// Application `index` cannot run next to an earlier one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{problem}")]
pub struct RoutingConflict {
    /// The later application of the two (its index in the list checked).
    pub index: usize,
    /// The key of that application's description the conflict is about, if one (`direction`,
    /// `start`).
    pub key: Option<&'static str>,
    /// Why, naming the earlier application.
    pub problem: String,
}

/// Checks that the receiver can tell every application's streams apart. `apps` are the
/// applications in order, each with the name the error should use for it.
pub fn check_routing<'a>(
    apps: impl IntoIterator<Item = (&'a str, StreamUse)>,
) -> Result<(), RoutingConflict> {
    // Per direction (index: sender is the client): the first media source, the last bulk
    // source and its start.
    let mut media: [Option<&str>; 2] = [None, None];
    let mut bulk: [Option<(&str, Duration)>; 2] = [None, None];
    let mut perf: Option<(&str, bool)> = None;
    for (index, (name, app)) in apps.into_iter().enumerate() {
        let conflict = |key, problem| RoutingConflict {
            index,
            key,
            problem,
        };
        match app {
            StreamUse::Media { sender } => {
                if let Some(first) = media[upload(sender)] {
                    return Err(conflict(
                        Some("direction"),
                        format!(
                            "a second media source the same way as {first:?}: the receiver cannot tell their frame streams apart (one media application per direction)"
                        ),
                    ));
                }
                media[upload(sender)] = Some(name);
            }
            StreamUse::Bulk { sender, start } => {
                if let Some((previous, previous_start)) = bulk[upload(sender)]
                    && start < previous_start
                {
                    return Err(conflict(
                        Some("start"),
                        format!(
                            "{start:?} is before the start of {previous:?} ({previous_start:?}), listed earlier the same way: list the bulk applications of one direction in the order they start (the receiver tells their streams apart by that order)"
                        ),
                    ));
                }
                bulk[upload(sender)] = Some((name, start));
                if sender == Sender::Client
                    && let Some((perf, _)) = perf
                {
                    return Err(conflict(None, bulk_next_to_perf(name, perf)));
                }
            }
            StreamUse::Perf { uploads } => {
                if let Some((first, first_uploads)) = perf
                    && (uploads || first_uploads)
                {
                    return Err(conflict(
                        None,
                        format!(
                            "a second perf application next to {first:?}, one of them uploading: the server cannot tell whose upload a request stream carries (give one perf application the whole exchange)"
                        ),
                    ));
                }
                if let Some((bulk, _)) = bulk[upload(Sender::Client)] {
                    return Err(conflict(None, bulk_next_to_perf(bulk, name)));
                }
                perf.get_or_insert((name, uploads));
            }
        }
    }
    Ok(())
}

fn upload(sender: Sender) -> usize {
    usize::from(sender == Sender::Client)
}

fn bulk_next_to_perf(bulk: &str, perf: &str) -> String {
    format!(
        "a bulk upload ({bulk:?}) next to a perf application ({perf:?}): both open bidirectional streams from the client, which the server cannot tell apart"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(apps: &[StreamUse]) -> Result<(), RoutingConflict> {
        let names = ["a", "b", "c", "d"];
        check_routing(names.iter().copied().zip(apps.iter().copied()))
    }

    const MEDIA_DOWN: StreamUse = StreamUse::Media {
        sender: Sender::Server,
    };
    const MEDIA_UP: StreamUse = StreamUse::Media {
        sender: Sender::Client,
    };

    fn bulk(sender: Sender, start_s: u64) -> StreamUse {
        StreamUse::Bulk {
            sender,
            start: Duration::from_secs(start_s),
        }
    }

    #[test]
    fn streams_a_receiver_tells_apart_pass() {
        let perf = StreamUse::Perf { uploads: false };
        for apps in [
            vec![MEDIA_DOWN, MEDIA_UP, bulk(Sender::Server, 0)],
            vec![bulk(Sender::Server, 0), bulk(Sender::Server, 0)],
            vec![bulk(Sender::Client, 1), bulk(Sender::Server, 0)],
            vec![MEDIA_DOWN, bulk(Sender::Server, 3), perf, perf],
            vec![StreamUse::Perf { uploads: true }, MEDIA_UP],
        ] {
            assert_eq!(check(&apps), Ok(()), "{apps:?}");
        }
    }

    #[test]
    fn each_conflict_names_both_applications_and_the_key() {
        let perf_up = StreamUse::Perf { uploads: true };
        let perf_down = StreamUse::Perf { uploads: false };
        for (apps, index, key, words) in [
            (
                vec![bulk(Sender::Server, 0), MEDIA_DOWN, MEDIA_DOWN],
                2,
                Some("direction"),
                "second media source the same way as \"b\"",
            ),
            (
                vec![bulk(Sender::Client, 5), bulk(Sender::Client, 2)],
                1,
                Some("start"),
                "before the start of \"a\" (5s)",
            ),
            (
                vec![perf_down, perf_up],
                1,
                None,
                "second perf application next to \"a\"",
            ),
            (
                vec![perf_down, MEDIA_UP, bulk(Sender::Client, 0)],
                2,
                None,
                "bulk upload (\"c\") next to a perf application (\"a\")",
            ),
            (
                vec![bulk(Sender::Client, 0), perf_down],
                1,
                None,
                "bulk upload (\"a\") next to a perf application (\"b\")",
            ),
        ] {
            let conflict = check(&apps).unwrap_err();
            assert_eq!((conflict.index, conflict.key), (index, key), "{apps:?}");
            assert!(conflict.problem.contains(words), "{}", conflict.problem);
        }
    }
}
