//! Progress on stderr for every long operation, with indicatif: entities, bytes, rate, and an ETA when the total
//! is known. Hidden when stderr is not a terminal, so logs and pipes get none of it. [`Rendered`] shows the
//! events of the transfer engine's operations ([`table_model_transfer::progress`]), and says on stderr what a
//! script should see in its log too (a resumed run, a notice).
//!
//! Layer: parts.

use indicatif::{HumanBytes, HumanCount, ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
use std::sync::Mutex;
use std::time::Duration;
use table_model_transfer::progress::{Event, Operation};

/// The rate as people read it: whole entities or bytes per second, with thousands separators (`4,942/s`), not
/// indicatif's four decimals.
fn whole_rate(state: &ProgressState, out: &mut dyn std::fmt::Write) {
    let _ = write!(out, "{}/s", HumanCount(state.per_sec().round() as u64));
}

/// A progress line on stderr.
#[derive(Debug, Clone)]
pub struct Progress {
    bar: ProgressBar,
    /// Whether the position counts bytes of a known total (else entities).
    bytes: bool,
}

impl Progress {
    /// Entities as they come, with the bytes they made: `⠋ export 12,345 entities, 3.2 MiB (4,000/s, 3s)`.
    pub fn entities(label: &'static str) -> Progress {
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        let style = ProgressStyle::with_template("{spinner} {prefix} {human_pos} entities{msg} ({rate}, {elapsed})")
            .expect("a valid template")
            .with_key("rate", whole_rate);
        bar.set_style(style);
        bar.set_prefix(label);
        bar.enable_steady_tick(Duration::from_millis(120));
        Progress { bar, bytes: false }
    }

    /// Bytes of an input of known size, with an ETA: `import [=====>    ] 1.2 MiB/4 MiB (2 MiB/s, eta 2s) 5,000
    /// entities`.
    pub fn bytes(label: &'static str, total: u64) -> Progress {
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
        let style = ProgressStyle::with_template(
            "{prefix} [{bar:30}] {binary_bytes}/{binary_total_bytes} ({binary_bytes_per_sec}, eta {eta}){msg}",
        )
        .expect("a valid template")
        .progress_chars("=> ");
        bar.set_style(style);
        bar.set_prefix(label);
        Progress { bar, bytes: true }
    }

    /// Sets the number of entities done.
    pub fn set_entities(&self, entities: u64) {
        if self.bytes {
            self.bar.set_message(format!(" {entities} entities"));
        } else {
            self.bar.set_position(entities);
        }
    }

    /// Sets the number of bytes done.
    pub fn set_bytes(&self, bytes: u64) {
        if self.bytes {
            self.bar.set_position(bytes);
        } else {
            self.bar.set_message(format!(", {}", HumanBytes(bytes)));
        }
    }

    /// Removes the line.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// For the resume tests only: the binary aborts (as a kill would: nothing flushed, nothing cleaned up) once a
/// run has done this many entities. Read by `src/main.rs`, never by a library.
pub const ABORT_AFTER_VAR: &str = "TABLECTL_TEST_ABORT_AFTER";

/// Renders the events of an engine operation: its progress line ([`Progress`]), and on stderr the run it resumes
/// and its notices. For the resume tests only, it can abort the process (as a kill would: nothing flushed, nothing
/// cleaned up) once the operation has done a number of entities: the binary reads that number from
/// [`ABORT_AFTER_VAR`].
#[derive(Debug)]
pub struct Rendered {
    operation: Operation,
    line: Mutex<Option<Progress>>,
    abort_after: Option<u64>,
}

impl Rendered {
    /// Renders `operation` on stderr; aborts after `abort_after` entities when given (tests only).
    pub fn new(operation: Operation, abort_after: Option<u64>) -> Self {
        Rendered { operation, line: Mutex::new(None), abort_after }
    }

    fn with_line(&self, f: impl FnOnce(&Progress)) {
        if let Some(line) = self.line.lock().ok().as_deref().and_then(Option::as_ref) {
            f(line);
        }
    }
}

impl table_model_transfer::progress::Progress for Rendered {
    fn event(&self, event: Event<'_>) {
        match event {
            Event::Started { operation, total_bytes } => {
                let label = operation.name();
                let line = match total_bytes {
                    Some(total) if operation != Operation::Export => Progress::bytes(label, total),
                    _ => Progress::entities(label),
                };
                if let Ok(mut slot) = self.line.lock() {
                    *slot = Some(line);
                }
            }
            Event::Entities(n) => {
                self.with_line(|line| line.set_entities(n));
                if self.abort_after.is_some_and(|after| n >= after) {
                    eprintln!("tablectl: {}: aborting after {n} entities", ABORT_AFTER_VAR);
                    std::process::abort();
                }
            }
            Event::Bytes(n) => self.with_line(|line| line.set_bytes(n)),
            Event::Resuming { checkpoint, settled, ranges } => {
                // An export's checkpoint is its directory's.
                let place = match (self.operation, checkpoint.parent()) {
                    (Operation::Export, Some(dir)) => format!("in `{}`", dir.display()),
                    _ => format!("of `{}`", checkpoint.display()),
                };
                let ranges = ranges.map(|(done, all)| format!("{done} of {all} key ranges done, ")).unwrap_or_default();
                let operation = self.operation.name();
                eprintln!("tablectl: resuming the unfinished {operation} {place} ({ranges}{settled} entities settled)");
            }
            Event::Notice(text) => eprintln!("tablectl: note: {text}"),
            Event::Finished => {
                if let Ok(mut slot) = self.line.lock()
                    && let Some(line) = slot.take()
                {
                    line.finish();
                }
            }
            _ => {}
        }
    }
}
