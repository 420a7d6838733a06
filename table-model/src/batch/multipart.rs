//! The parts of a `multipart/mixed` body (RFC 2046 §5.1), found with one linear substring search per
//! delimiter: `memchr::memmem`, O(body + boundary) for any boundary, where comparing the boundary at every byte
//! costs O(body × boundary).
//!
//! Self-contained (bytes in, slices out), so that the batch benchmark measures this very code at sizes the
//! reader refuses (a boundary over 70 characters).

use memchr::memmem::Finder;

/// The parts of a multipart body: what lies between `--boundary` lines, up to `--boundary--`, each without
/// the line end after its delimiter and the one before the next.
pub(crate) fn split<'a>(body: &'a [u8], boundary: &[u8]) -> Vec<&'a [u8]> {
    let mut delimiter = Vec::with_capacity(boundary.len() + 2);
    delimiter.extend_from_slice(b"--");
    delimiter.extend_from_slice(boundary);
    let finder = Finder::new(&delimiter);
    let mut parts = Vec::new();
    let Some(first) = finder.find(body) else { return parts };
    let mut rest = &body[first + delimiter.len()..];
    loop {
        if rest.starts_with(b"--") {
            break;
        }
        let Some(next) = finder.find(rest) else { break };
        parts.push(trim_line_end(skip_line_end(&rest[..next])));
        rest = &rest[next + delimiter.len()..];
    }
    parts
}

/// `s` without the line end (CRLF or LF) it starts with.
pub(crate) fn skip_line_end(s: &[u8]) -> &[u8] {
    s.strip_prefix(b"\r\n").or_else(|| s.strip_prefix(b"\n")).unwrap_or(s)
}

/// `s` without the line end (CRLF or LF) it ends with.
fn trim_line_end(s: &[u8]) -> &[u8] {
    s.strip_suffix(b"\r\n").or_else(|| s.strip_suffix(b"\n")).unwrap_or(s)
}
