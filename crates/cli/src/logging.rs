//! Where the libraries' log lines go: satquic's own crates (`emu`, `quinn_satellite`) log
//! through `tracing`, as quinn does, and leave the output to the program. This prints their
//! events from info level, and everyone else's (quinn's) from warning level, to stderr, in the
//! `warning: …` form the rest of the command line uses. No spans, no timestamps: the lines
//! sit between a command's own messages.

use std::fmt::Write as _;

use tracing::field::{Field, Visit};
use tracing::level_filters::LevelFilter;
use tracing::subscriber::Interest;
use tracing::{Event, Level, Metadata, Subscriber, span};

/// Sends the events described above to stderr, for the whole process.
pub fn init() {
    // Fails only if a subscriber is already set, which then keeps its place.
    let _ = tracing::subscriber::set_global_default(Stderr);
}

/// The most verbose level shown for events of `target`.
fn threshold(target: &str) -> Level {
    let ours = ["emu", "quinn_satellite", "satquic"]
        .iter()
        .any(|crate_name| target == *crate_name || target.starts_with(&format!("{crate_name}::")));
    if ours { Level::INFO } else { Level::WARN }
}

struct Stderr;

/// An event's message, then its other fields as `name=value`.
#[derive(Default)]
struct Line {
    message: String,
    fields: String,
}

impl Visit for Line {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let _ = write!(self.message, "{value:?}");
        } else {
            let _ = write!(self.fields, " {}={value:?}", field.name());
        }
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.message.push_str(value);
        } else {
            let _ = write!(self.fields, " {}={value}", field.name());
        }
    }
}

impl Subscriber for Stderr {
    fn register_callsite(&self, metadata: &'static Metadata<'static>) -> Interest {
        if self.enabled(metadata) {
            Interest::always()
        } else {
            Interest::never()
        }
    }

    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        metadata.is_event() && *metadata.level() <= threshold(metadata.target())
    }

    fn max_level_hint(&self) -> Option<LevelFilter> {
        Some(LevelFilter::INFO)
    }

    fn new_span(&self, _: &span::Attributes<'_>) -> span::Id {
        // Never called: spans are not enabled.
        span::Id::from_u64(1)
    }

    fn record(&self, _: &span::Id, _: &span::Record<'_>) {}

    fn record_follows_from(&self, _: &span::Id, _: &span::Id) {}

    fn event(&self, event: &Event<'_>) {
        let mut line = Line::default();
        event.record(&mut line);
        let level = match *event.metadata().level() {
            Level::ERROR => "error",
            Level::WARN => "warning",
            Level::INFO => "info",
            Level::DEBUG => "debug",
            Level::TRACE => "trace",
        };
        errln!("{level}: {}{}", line.message, line.fields);
    }

    fn enter(&self, _: &span::Id) {}

    fn exit(&self, _: &span::Id) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn our_crates_speak_from_info_and_others_from_warning() {
        assert_eq!(threshold("emu::resume"), Level::INFO);
        assert_eq!(threshold("quinn_satellite::resume"), Level::INFO);
        assert_eq!(threshold("quinn_proto::connection"), Level::WARN);
        // A crate whose name only starts like ours is not ours.
        assert_eq!(threshold("emulator"), Level::WARN);
    }
}
