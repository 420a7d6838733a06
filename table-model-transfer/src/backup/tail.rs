//! A file read while it is still written ([`Tail`]): at the end of what is there, the reader waits for the rest
//! until the writer says it has finished ([`Writing::finish`]), or stops with an error where the writer failed; it
//! may remove the file once it has read it whole ([`Tail::removing_at_end`]). A restore imports its merged file
//! this way while the merge writes it (`restore`), where no entity of the backup can be refused.
//!
//! Layer: files (of the `backup` operations).

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// How long a reader at the end of what is written waits before it looks again, unless the writer finishes first.
const POLL: Duration = Duration::from_millis(2);

/// Where the writer of a file is: still writing, finished (every byte in the file), or failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Status {
    Writing,
    Finished,
    Failed,
}

/// The writer's side: tells the readers of the file when it has finished or failed.
#[derive(Debug)]
pub(crate) struct Writing {
    status: Mutex<Status>,
    changed: Condvar,
}

impl Writing {
    /// A writer that has started.
    pub(crate) fn new() -> Arc<Writing> {
        Arc::new(Writing { status: Mutex::new(Status::Writing), changed: Condvar::new() })
    }

    /// The writer has ended: `ok`, every byte is in the file (written through to the system); otherwise it failed,
    /// and a reader at the end of what is there gets an error rather than an end.
    pub(crate) fn finish(&self, ok: bool) {
        *self.status.lock().unwrap_or_else(std::sync::PoisonError::into_inner) =
            if ok { Status::Finished } else { Status::Failed };
        self.changed.notify_all();
    }

    fn status(&self) -> Status {
        *self.status.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Waits up to [`POLL`] while the writer is still writing.
    fn wait(&self) {
        let status = self.status.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if *status == Status::Writing {
            drop(self.changed.wait_timeout(status, POLL));
        }
    }
}

/// A reader of a file that [`Writing`] writes: its bytes as they come, its end once the writer has finished.
#[derive(Debug)]
pub(crate) struct Tail {
    file: File,
    writing: Arc<Writing>,
    /// The file's path, to remove once it is read whole.
    remove_at_end: Option<PathBuf>,
}

impl Tail {
    /// Reads `file` from its start.
    pub(crate) fn new(file: File, writing: Arc<Writing>) -> Tail {
        Tail { file, writing, remove_at_end: None }
    }

    /// Removes the file at `path` (this reader's) once it is read to its end, the writer finished: its pages are
    /// then freed when the reader closes it, on the reading thread. A file that cannot be removed is left.
    pub(crate) fn removing_at_end(self, path: &Path) -> Tail {
        Tail { remove_at_end: Some(path.to_owned()), ..self }
    }
}

impl Read for Tail {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            // The status is taken before the read: bytes written before `finish` are in the file by then, so a
            // read that finds none after it has seen the end.
            let status = self.writing.status();
            let n = self.file.read(buf)?;
            if n > 0 || buf.is_empty() {
                return Ok(n);
            }
            match status {
                Status::Finished => {
                    if let Some(path) = self.remove_at_end.take() {
                        let _ = std::fs::remove_file(path);
                    }
                    return Ok(0);
                }
                Status::Failed => return Err(io::Error::other("the merge writing this file stopped before its end")),
                Status::Writing => self.writing.wait(),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Tail, Writing};
    use std::io::{Read as _, Write as _};

    fn temp_file(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("table-model-tail-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir.join(name)
    }

    #[test]
    fn a_reader_gets_every_byte_written_while_it_reads_then_the_end() {
        let path = temp_file("written.txt");
        let mut out = std::fs::File::create(&path).unwrap();
        let writing = Writing::new();
        let mut tail = Tail::new(std::fs::File::open(&path).unwrap(), writing.clone()).removing_at_end(&path);
        let reader = std::thread::spawn(move || {
            let mut text = Vec::new();
            tail.read_to_end(&mut text).map(|_| text)
        });
        let mut expected = Vec::new();
        for i in 0..50 {
            let line = format!("line {i}\n");
            out.write_all(line.as_bytes()).unwrap();
            expected.extend_from_slice(line.as_bytes());
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        assert!(path.exists(), "not removed before its end");
        writing.finish(true);
        assert_eq!(reader.join().unwrap().unwrap(), expected);
        assert!(!path.exists(), "removed once read whole");
    }

    #[test]
    fn a_reader_at_the_end_of_a_failed_writer_gets_an_error_not_an_end() {
        let path = temp_file("failed.txt");
        std::fs::write(&path, b"half a li").unwrap();
        let writing = Writing::new();
        let mut tail = Tail::new(std::fs::File::open(&path).unwrap(), writing.clone()).removing_at_end(&path);
        let mut first = [0; 64];
        assert_eq!(tail.read(&mut first).unwrap(), 9);
        writing.finish(false);
        let error = tail.read(&mut first).unwrap_err();
        assert_eq!(error.to_string(), "the merge writing this file stopped before its end");
        assert!(path.exists(), "a file its writer did not finish is left");
    }
}
