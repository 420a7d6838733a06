//! gzip and zstd for the `jsonl` and `csv` formats, both ways.
//!
//! Writing, [`Output`] sits between a format's writer and its [`Sink`]: it compresses, and counts and hashes the
//! bytes that reach the file (the compressed ones: they are the file's). A checkpoint ends the gzip member or
//! zstd frame in progress, so that the file cut at the checkpoint's length is a complete stream; what is written
//! after it (in this run, or in a resumed one through [`Sink::resume`]) goes into a new member or frame. Readers
//! read the members or frames one after the other, as `gzip -d` and `zstd -d` do.

use super::{Compression, Sink};
use crate::digest::Hashing;
use crate::error::TransferError;
use std::io::{self, BufRead, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The zstd level: zstd's default, fast with a good ratio.
const ZSTD_LEVEL: i32 = zstd::DEFAULT_COMPRESSION_LEVEL;

/// Where a format writes its bytes: compressed (or not) into a [`Sink`], counted and hashed as they reach it.
///
/// ```
/// use std::io::Write as _;
/// use table_model_transfer::format::{compress::Output, Compression, Sink};
/// let mut file = Vec::new();
/// let mut out = Output::new(Sink::stream("test", &mut file), Compression::Gzip);
/// out.write_all(b"first\n")?;
/// let cut = out.checkpoint()?;
/// out.write_all(b"second\n")?;
/// let (bytes, _sha256) = out.finish()?;
/// assert!(cut < bytes);
/// # drop(out);
/// // Two gzip members, read as one text.
/// let mut text = String::new();
/// std::io::Read::read_to_string(&mut flate2::read::MultiGzDecoder::new(&file[..]), &mut text)?;
/// assert_eq!(text, "first\nsecond\n");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Output<'a> {
    compression: Compression,
    state: State<'a>,
    /// Whether a member or frame was ever ended into the file (an empty compressed file gets an empty one).
    ended_any: bool,
}

enum State<'a> {
    /// Between members or frames (always, without compression).
    Idle(Hashing<Sink<'a>>),
    Gzip(flate2::write::GzEncoder<Hashing<Sink<'a>>>),
    Zstd(zstd::stream::write::Encoder<'static, Hashing<Sink<'a>>>),
    /// Only while a member or frame is being ended.
    Poisoned,
}

impl std::fmt::Debug for Output<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Output").field("compression", &self.compression).field("bytes", &self.bytes()).finish()
    }
}

impl<'a> Output<'a> {
    /// Bytes written into `sink`, compressed with `compression`.
    pub fn new(sink: Sink<'a>, compression: Compression) -> Self {
        Output { compression, state: State::Idle(Hashing::new(sink)), ended_any: false }
    }

    /// The counting and hashing layer; `None` only after a member or frame failed to end.
    fn hashing(&self) -> Option<&Hashing<Sink<'a>>> {
        match &self.state {
            State::Idle(h) => Some(h),
            State::Gzip(e) => Some(e.get_ref()),
            State::Zstd(e) => Some(e.get_ref()),
            State::Poisoned => None,
        }
    }

    /// Bytes that reached the file so far (a compressor holds back what it has not compressed yet).
    pub fn bytes(&self) -> u64 {
        self.hashing().map_or(0, |h| h.bytes)
    }

    /// An error writing into the sink, naming it.
    pub fn error(&self, error: io::Error) -> TransferError {
        match self.hashing() {
            Some(h) => h.get_ref().error("write", error),
            None => TransferError::failed(format!("cannot write the compressed file: {error}")),
        }
    }

    /// Ends the member or frame in progress, if any. Ending is tried in place first, so that a failure (a full
    /// disk) leaves the writer as it was.
    fn end_stream(&mut self) -> io::Result<()> {
        if let State::Gzip(e) = &mut self.state {
            e.try_finish()?;
        }
        let hashing = match std::mem::replace(&mut self.state, State::Poisoned) {
            State::Idle(h) => h,
            State::Gzip(e) => e.finish()?,
            State::Zstd(e) => match e.try_finish() {
                Ok(h) => h,
                Err((e, error)) => {
                    self.state = State::Zstd(e);
                    return Err(error);
                }
            },
            State::Poisoned => return Err(io::Error::other("the file failed to be written before")),
        };
        if self.compression != Compression::None {
            self.ended_any = true;
        }
        self.state = State::Idle(hashing);
        Ok(())
    }

    fn sync(&mut self) -> io::Result<()> {
        match &mut self.state {
            State::Idle(h) => h.get_mut().sync(),
            State::Gzip(e) => e.get_mut().get_mut().sync(),
            State::Zstd(e) => e.get_mut().get_mut().sync(),
            State::Poisoned => Err(io::Error::other("the file failed to be written before")),
        }
    }

    /// Ends the member or frame in progress and makes everything durable; the file's length then, a complete
    /// stream, is returned.
    ///
    /// # Errors
    /// [`TransferError`] naming the file when it cannot be written.
    pub fn checkpoint(&mut self) -> Result<u64, TransferError> {
        self.end_stream().and_then(|()| self.sync()).map_err(|e| self.error(e))?;
        Ok(self.bytes())
    }

    /// Ends the file and makes it durable: its size and SHA-256 (lowercase hexadecimal). A compressed file with
    /// nothing in it still gets one empty member or frame, so that it reads as an empty stream.
    ///
    /// # Errors
    /// [`TransferError`] naming the file when it cannot be written.
    pub fn finish(&mut self) -> Result<(u64, String), TransferError> {
        let ended = self.finish_unsynced()?;
        self.sync().map_err(|e| self.error(e))?;
        Ok(ended)
    }

    /// Ends the file as [`finish`](Self::finish) does and hands what is buffered to the system, without waiting
    /// for it to reach the disk: for a file whose caller syncs it beside other work. Its size and SHA-256.
    ///
    /// # Errors
    /// [`TransferError`] naming the file when it cannot be written.
    pub fn finish_unsynced(&mut self) -> Result<(u64, String), TransferError> {
        if !self.ended_any && matches!(self.state, State::Idle(_)) {
            self.start().map_err(|e| self.error(e))?;
        }
        self.end_stream().and_then(|()| self.flush()).map_err(|e| self.error(e))?;
        let sha256 = self.hashing().map(Hashing::hex).unwrap_or_default();
        Ok((self.bytes(), sha256))
    }

    /// Starts a member or frame when compressing and none is in progress.
    fn start(&mut self) -> io::Result<()> {
        if self.compression == Compression::None {
            return Ok(());
        }
        let hashing = match std::mem::replace(&mut self.state, State::Poisoned) {
            State::Idle(hashing) => hashing,
            started => {
                self.state = started;
                return Ok(());
            }
        };
        self.state = match self.compression {
            Compression::Gzip => State::Gzip(flate2::write::GzEncoder::new(hashing, flate2::Compression::default())),
            Compression::Zstd => State::Zstd(zstd::stream::write::Encoder::new(hashing, ZSTD_LEVEL)?),
            Compression::None => State::Idle(hashing),
        };
        Ok(())
    }
}

impl Write for Output<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.start()?;
        match &mut self.state {
            State::Idle(h) => h.write(buf),
            State::Gzip(e) => e.write(buf),
            State::Zstd(e) => e.write(buf),
            State::Poisoned => Err(io::Error::other("the file failed to be written before")),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.state {
            State::Idle(h) => h.flush(),
            State::Gzip(e) => e.flush(),
            State::Zstd(e) => e.flush(),
            State::Poisoned => Ok(()),
        }
    }
}

/// A [`BufRead`] that counts the bytes consumed from it, for the progress of a compressed input (whose
/// decompressed bytes are not the file's).
pub(crate) struct Counting<R> {
    inner: R,
    count: Arc<AtomicU64>,
}

impl<R: BufRead> io::Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Counting<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.inner.fill_buf()
    }

    fn consume(&mut self, amt: usize) {
        self.count.fetch_add(amt as u64, Ordering::Relaxed);
        self.inner.consume(amt);
    }
}

/// An input, read on its own thread.
pub(crate) type Input = Box<dyn BufRead + Send>;

/// The decompressed bytes of `input`, and the count of its bytes read; `input` itself without compression.
pub(crate) fn decompressed(input: Input, compression: Compression) -> io::Result<(Input, Option<Arc<AtomicU64>>)> {
    if compression == Compression::None {
        return Ok((input, None));
    }
    let count = Arc::new(AtomicU64::new(0));
    let counting = Counting { inner: input, count: count.clone() };
    let decoded: Input = match compression {
        Compression::Gzip => {
            Box::new(io::BufReader::with_capacity(64 * 1024, flate2::bufread::MultiGzDecoder::new(counting)))
        }
        Compression::Zstd => {
            Box::new(io::BufReader::with_capacity(64 * 1024, zstd::stream::read::Decoder::with_buffer(counting)?))
        }
        Compression::None => unreachable!("returned above"),
    };
    Ok((decoded, Some(count)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read as _;

    fn read_all(bytes: &[u8], compression: Compression) -> io::Result<Vec<u8>> {
        let (mut reader, _) = decompressed(Box::new(io::Cursor::new(bytes.to_vec())), compression)?;
        let mut out = Vec::new();
        reader.read_to_end(&mut out)?;
        Ok(out)
    }

    /// A file cut at a checkpoint is a complete stream; a resumed run appends a new member or frame, and the
    /// file reads back as everything once.
    #[test]
    fn a_file_cut_at_a_checkpoint_and_resumed_reads_back_everything_once() {
        for compression in [Compression::None, Compression::Gzip, Compression::Zstd] {
            let dir = std::env::temp_dir().join(format!("tablectl-compress-{compression:?}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            let path = dir.join("f");
            let mut out = Output::new(Sink::create(&path, false).unwrap(), compression);
            out.write_all(b"one\ntwo\n").unwrap();
            let cut = out.checkpoint().unwrap();
            assert_eq!(cut, std::fs::metadata(&path).unwrap().len(), "{compression:?}: durable at the checkpoint");
            // Written after the checkpoint, then lost: the run is killed.
            out.write_all(b"lost\n").unwrap();
            out.flush().unwrap();
            drop(out);
            let cut_file = std::fs::read(&path).unwrap()[..cut as usize].to_vec();
            assert_eq!(read_all(&cut_file, compression).unwrap(), b"one\ntwo\n", "{compression:?}");

            let mut out = Output::new(Sink::resume(&path, cut).unwrap(), compression);
            out.write_all(b"three\n").unwrap();
            let second = out.checkpoint().unwrap();
            out.write_all(b"four\n").unwrap();
            let (bytes, sha256) = out.finish().unwrap();
            assert!(second > 0 && bytes > second);
            let file = std::fs::read(&path).unwrap();
            assert_eq!(file.len() as u64 - cut, bytes, "{compression:?}: the resumed part's bytes are counted");
            assert_eq!(sha256.len(), 64);
            assert_eq!(read_all(&file, compression).unwrap(), b"one\ntwo\nthree\nfour\n", "{compression:?}");
            std::fs::remove_dir_all(&dir).unwrap();
        }
    }

    /// A file ended without waiting for the disk has everything written handed to the system (read back while
    /// its writer still holds it), with the size and digest `finish` gives, for every compression (an empty
    /// compressed file gets its empty stream).
    #[test]
    fn a_file_finished_unsynced_is_whole() {
        use sha2::Digest as _;
        let dir = std::env::temp_dir().join(format!("compress-unsynced-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (unsynced, synced) = (dir.join("unsynced"), dir.join("synced"));
        for compression in [Compression::None, Compression::Gzip, Compression::Zstd] {
            for data in [Vec::new(), b"a line of text\n".repeat(100_000)] {
                let mut out = Output::new(Sink::create(&synced, true).unwrap(), compression);
                out.write_all(&data).unwrap();
                let expected = out.finish().unwrap();
                drop(out);
                let mut out = Output::new(Sink::create(&unsynced, true).unwrap(), compression);
                out.write_all(&data).unwrap();
                let ended = out.finish_unsynced().unwrap();
                let file = std::fs::read(&unsynced).unwrap();
                drop(out);
                assert_eq!(file, std::fs::read(&synced).unwrap(), "{compression:?}");
                assert_eq!(ended, expected, "{compression:?}");
                let sha256: String = sha2::Sha256::digest(&file).iter().map(|b| format!("{b:02x}")).collect();
                assert_eq!(ended, (file.len() as u64, sha256), "{compression:?}");
                assert_eq!(file.is_empty(), compression == Compression::None && data.is_empty(), "{compression:?}");
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn bytes_and_hash_are_the_compressed_files() {
        use sha2::Digest as _;
        for compression in [Compression::Gzip, Compression::Zstd] {
            let mut file = Vec::new();
            let mut out = Output::new(Sink::stream("test", &mut file), compression);
            out.write_all(&b"abc".repeat(10_000)).unwrap();
            let (bytes, sha256) = out.finish().unwrap();
            drop(out);
            assert_eq!(bytes, file.len() as u64);
            assert!(bytes < 1000, "{compression:?} compresses: {bytes}");
            let expected: String = sha2::Sha256::digest(&file).iter().map(|b| format!("{b:02x}")).collect();
            assert_eq!(sha256, expected);
        }
    }

    #[test]
    fn an_empty_compressed_file_is_an_empty_stream() {
        for compression in [Compression::Gzip, Compression::Zstd] {
            let mut file = Vec::new();
            let mut out = Output::new(Sink::stream("test", &mut file), compression);
            let (bytes, _) = out.finish().unwrap();
            drop(out);
            assert!(bytes > 0, "{compression:?}");
            assert_eq!(read_all(&file, compression).unwrap(), b"");
        }
    }

    #[test]
    fn a_corrupt_or_truncated_stream_is_an_error_not_a_panic() {
        for compression in [Compression::Gzip, Compression::Zstd] {
            let mut file = Vec::new();
            let mut out = Output::new(Sink::stream("test", &mut file), compression);
            out.write_all(&(0..20_000).map(|i| format!("line {i}\n")).collect::<String>().into_bytes()).unwrap();
            out.finish().unwrap();
            drop(out);
            let truncated = &file[..file.len() / 2];
            assert!(read_all(truncated, compression).is_err(), "{compression:?}: truncated");
            let mut flipped = file.clone();
            let middle = flipped.len() / 2;
            flipped[middle] ^= 0xff;
            flipped[middle + 1] ^= 0x55;
            assert!(read_all(&flipped, compression).is_err(), "{compression:?}: a changed byte");
            assert!(read_all(b"not compressed at all", compression).is_err(), "{compression:?}: not a stream");
        }
    }
}
