//! The digest of a written file: [`Hashing`] counts the bytes and lines written through it (and finds the longest
//! line) and hashes them with SHA-256, as the manifest records them; [`digest`] reads a file through one.
//!
//! Layer: base.

use crate::error::TransferError;
use sha2::{Digest, Sha256};
use std::io::{self, Read, Write};
use std::path::Path;

/// Reads the file at `path` once through a [`Hashing`]: its size, lines and SHA-256.
///
/// # Errors
/// [`TransferError`] naming the file when it cannot be read.
pub fn digest(path: &Path) -> Result<Hashing<io::Sink>, TransferError> {
    let reader = std::fs::File::open(path).map_err(|e| TransferError::io("read", path, e))?;
    let mut hashing = Hashing::new(io::sink());
    let mut buf = vec![0; 64 * 1024];
    let mut reader = io::BufReader::new(reader);
    loop {
        let n = reader.read(&mut buf).map_err(|e| TransferError::io("read", path, e))?;
        if n == 0 {
            return Ok(hashing);
        }
        hashing.write_all(&buf[..n]).expect("a sink takes everything");
    }
}

/// The SHA-256 of `bytes`, in lowercase hexadecimal (as [`Hashing::hex`] writes it).
///
/// ```
/// assert_eq!(&table_model_transfer::digest::sha256_hex(b"")[..8], "e3b0c442");
/// ```
pub fn sha256_hex(bytes: &[u8]) -> String {
    lowercase_hex(&Sha256::digest(bytes))
}

fn lowercase_hex(digest: &[u8]) -> String {
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// A writer that counts the bytes and lines written through it, finds the longest line, and hashes them with
/// SHA-256.
///
/// ```
/// use std::io::Write as _;
/// let mut out = table_model_transfer::digest::Hashing::new(Vec::new());
/// out.write_all(b"abc")?;
/// assert_eq!((out.bytes, out.lines, out.longest_line()), (3, 0, 3));
/// assert_eq!(out.hex(), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
/// out.write_all(b"d\nef\n")?;
/// assert_eq!((out.lines, out.longest_line()), (2, 5));
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug)]
pub struct Hashing<W> {
    inner: W,
    hasher: Sha256,
    /// Bytes written.
    pub bytes: u64,
    /// `\n`s written.
    pub lines: u64,
    /// The longest line ended so far, with its `\n`.
    longest: u64,
    /// Bytes written since the last `\n`.
    open_line: u64,
}

impl<W: Write> Hashing<W> {
    /// Wraps a writer.
    pub fn new(inner: W) -> Self {
        Hashing { inner, hasher: Sha256::new(), bytes: 0, lines: 0, longest: 0, open_line: 0 }
    }

    /// The SHA-256 of what was written so far, in lowercase hexadecimal.
    pub fn hex(&self) -> String {
        lowercase_hex(&self.hasher.clone().finalize())
    }

    /// The longest line written, in bytes with its `\n` (a last line without one counts as it stands).
    pub fn longest_line(&self) -> u64 {
        self.longest.max(self.open_line)
    }

    /// The wrapped writer.
    pub fn get_ref(&self) -> &W {
        &self.inner
    }

    /// The wrapped writer, to write around the count and hash (a compressor's own frame ends, say, go through
    /// [`Write`] instead).
    pub fn get_mut(&mut self) -> &mut W {
        &mut self.inner
    }

    /// The wrapped writer.
    pub fn into_inner(self) -> W {
        self.inner
    }
}

impl<W: Write> Write for Hashing<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        self.bytes += n as u64;
        let mut start = 0;
        for end in memchr::memchr_iter(b'\n', &buf[..n]) {
            self.lines += 1;
            self.longest = self.longest.max(self.open_line + (end + 1 - start) as u64);
            (self.open_line, start) = (0, end + 1);
        }
        self.open_line += (n - start) as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::Hashing;
    use proptest::prelude::*;
    use std::io::Write as _;

    proptest! {
        /// However the bytes are cut into writes, the longest line and the count are those of the whole.
        #[test]
        fn the_longest_line_does_not_depend_on_the_writes(
            text in proptest::collection::vec(prop_oneof![Just(b'\n'), Just(b'a')], 0..200),
            cuts in proptest::collection::vec(0usize..200, 0..6),
        ) {
            let mut hashing = Hashing::new(std::io::sink());
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(text.len())).collect();
            cuts.sort_unstable();
            let mut start = 0;
            for cut in cuts.into_iter().chain([text.len()]) {
                hashing.write_all(&text[start..cut]).unwrap();
                start = cut;
            }
            let lines: Vec<&[u8]> = text.split_inclusive(|&b| b == b'\n').collect();
            let longest = lines.iter().map(|line| line.len() as u64).max().unwrap_or(0);
            prop_assert_eq!(hashing.longest_line(), longest);
            prop_assert_eq!(hashing.lines, text.iter().filter(|&&b| b == b'\n').count() as u64);
        }
    }
}
