//! Progress bars (indicatif): one per run, in virtual seconds ([`Bars`]), or one spinner
//! counting the runs of a study ([`RunCounter`]); and what every long command sets up next to
//! them: the Ctrl-C flag ([`cancel_on_ctrl_c`]) and its worker count ([`threads`]).

use std::io::IsTerminal;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use lab::runner::Progress;

/// One bar per run; hidden when stderr is not a terminal or `--quiet` is given.
pub struct Bars {
    bars: Vec<ProgressBar>,
    _multi: MultiProgress,
}

impl Bars {
    /// Bars for `labels` (controller, seed), each `duration` long.
    pub fn new(labels: &[(String, u64)], duration: Duration, visible: bool) -> Self {
        let multi = MultiProgress::with_draw_target(if visible {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        });
        let style = ProgressStyle::with_template(
            "{prefix:>18} [{bar:40.cyan/blue}] {pos:>5}/{len} s sim  {msg}",
        )
        .expect("valid template")
        .progress_chars("=> ");
        let bars = labels
            .iter()
            .map(|(label, seed)| {
                let bar = multi.add(ProgressBar::new(duration.as_secs().max(1)));
                bar.set_style(style.clone());
                bar.set_prefix(format!("{label} seed {seed}"));
                bar.set_message("queued");
                bar
            })
            .collect();
        Self {
            bars,
            _multi: multi,
        }
    }
}

impl Progress for Bars {
    fn started(&self, index: usize, _label: &str, _seed: u64) {
        self.bars[index].set_message("running");
    }

    fn advanced(&self, index: usize, t: Duration) {
        self.bars[index].set_position(t.as_secs());
    }

    fn finished(&self, index: usize) {
        self.bars[index].finish_with_message("done");
    }
}

/// One spinner for a study of many runs: how many finished, and the label of the latest
/// started.
pub struct RunCounter(pub ProgressBar);

impl RunCounter {
    /// A spinner on stderr if it is a terminal (hidden otherwise).
    pub fn on_stderr() -> RunCounter {
        let bar = ProgressBar::with_draw_target(
            None,
            if std::io::stderr().is_terminal() {
                ProgressDrawTarget::stderr()
            } else {
                ProgressDrawTarget::hidden()
            },
        );
        bar.set_style(
            ProgressStyle::with_template("{spinner} {pos} runs done  {elapsed}  {msg}")
                .expect("valid template"),
        );
        RunCounter(bar)
    }
}

/// A flag that the first Ctrl-C sets, so that the runs stop cleanly and what finished is
/// written; a second Ctrl-C while finishing up kills the process the usual way (status 130).
pub fn cancel_on_ctrl_c() -> Arc<AtomicBool> {
    let cancel = Arc::new(AtomicBool::new(false));
    let flag = cancel.clone();
    let _ = ctrlc::set_handler(move || {
        if flag.swap(true, Ordering::SeqCst) {
            std::process::exit(130);
        }
    });
    cancel
}

/// The worker threads: `--threads` if given (at least 1), else one per core.
pub fn threads(flag: Option<usize>) -> anyhow::Result<usize> {
    if flag == Some(0) {
        anyhow::bail!("--threads: must be at least 1");
    }
    Ok(flag.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())))
}

impl Progress for RunCounter {
    fn started(&self, _: usize, label: &str, _: u64) {
        self.0.set_message(label.to_owned());
    }
    fn advanced(&self, _: usize, _: Duration) {
        self.0.tick();
    }
    fn finished(&self, _: usize) {
        self.0.inc(1);
    }
}
