//! The digest of a written file: [`Hashing`] counts the bytes and lines written through it and hashes them with
//! SHA-256, as the manifest records them; [`digest`] reads a file through one.
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

/// A writer that counts the bytes and lines written through it and hashes them with SHA-256.
///
/// ```
/// use std::io::Write as _;
/// let mut out = table_model_transfer::digest::Hashing::new(Vec::new());
/// out.write_all(b"abc")?;
/// assert_eq!((out.bytes, out.lines), (3, 0));
/// assert_eq!(out.hex(), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
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
}

impl<W: Write> Hashing<W> {
    /// Wraps a writer.
    pub fn new(inner: W) -> Self {
        Hashing { inner, hasher: Sha256::new(), bytes: 0, lines: 0 }
    }

    /// The SHA-256 of what was written so far, in lowercase hexadecimal.
    pub fn hex(&self) -> String {
        lowercase_hex(&self.hasher.clone().finalize())
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
        self.lines += memchr::memchr_iter(b'\n', &buf[..n]).count() as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}
