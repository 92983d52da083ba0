//! What the commands print, through `outln!` / `out!` (stdout) and `errln!` (stderr)
//! instead of `println!` and `eprintln!`, which panic when the stream is closed:
//! `satquic run … | head -3` closes stdout after three lines. A closed stdout is not an error
//! here: the command carries on (its results go to files, never only to the terminal), prints
//! nothing more, and exits as it would have. Any other failure to write stdout (a full disk
//! under `> file`) is kept and reported when the command ends ([`finish`]), failing it.
//! Failing to write stderr is ignored: there is nowhere left to say so.

use std::io::{self, Write as _};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set at the first failed write to stdout: nothing more is written to it.
static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);

/// The first failure to write stdout other than a closed pipe.
static STDOUT_ERROR: Mutex<Option<io::Error>> = Mutex::new(None);

/// `println!` that survives a closed stdout (see the module).
macro_rules! outln {
    () => {
        $crate::console::stdout(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::console::stdout(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `print!` that survives a closed stdout (see the module).
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::console::stdout(format_args!($($arg)*))
    };
}

/// `eprintln!` that survives a closed stderr (see the module).
macro_rules! errln {
    ($($arg:tt)*) => {
        $crate::console::stderr(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// Writes to stdout unless it failed before; remembers a failure.
pub fn stdout(args: std::fmt::Arguments<'_>) {
    if STDOUT_CLOSED.load(Ordering::Relaxed) {
        return;
    }
    let result = io::stdout().lock().write_fmt(args);
    if let Err(error) = result {
        failed(error);
    }
}

/// Writes to stderr; a failure is ignored.
pub fn stderr(args: std::fmt::Arguments<'_>) {
    let _ = io::stderr().lock().write_fmt(args);
}

fn failed(error: io::Error) {
    STDOUT_CLOSED.store(true, Ordering::Relaxed);
    if error.kind() != io::ErrorKind::BrokenPipe {
        STDOUT_ERROR
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get_or_insert(error);
    }
}

/// Flushes stdout; the first failure to write it, unless it was only closed by its reader.
pub fn finish() -> Option<io::Error> {
    if !STDOUT_CLOSED.load(Ordering::Relaxed)
        && let Err(error) = io::stdout().lock().flush()
    {
        failed(error);
    }
    STDOUT_ERROR
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .take()
}
