//! Progress on stderr for every long operation, with indicatif: entities, bytes, rate, and an ETA when the total
//! is known. Hidden when stderr is not a terminal, so logs and pipes get none of it.

use indicatif::{HumanBytes, ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::time::Duration;

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
        let style = ProgressStyle::with_template("{spinner} {prefix} {human_pos} entities{msg} ({per_sec}, {elapsed})")
            .expect("a valid template");
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
