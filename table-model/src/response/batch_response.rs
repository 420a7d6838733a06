//! Reading the answer to a batch: the `multipart/mixed` response, one sub-response per operation, or the
//! error of the one that failed (`docs/rules.md` §8.2).

use super::errors::{ResponseError, ResponseErrorKind, ServiceError};
use crate::batch::multipart::{self, skip_line_end};
use crate::entity::ETag;
use http::header::HeaderValue;
use http::Response;

/// What a successful batch did to each operation, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct BatchOutcome {
    /// The new ETag of each operation's entity; `None` for a delete.
    pub etags: Vec<Option<ETag>>,
}

/// One `application/http` response inside a batch response.
#[derive(Debug)]
struct SubResponse<'a> {
    status: u16,
    /// Its header lines, read only where needed ([`headers`]): an ETag, or the headers of the one that failed.
    head: &'a str,
    body: &'a [u8],
}

/// Reads the answer to a batch of `operations` operations: `202 Accepted` with one sub-response per
/// operation when all succeeded (their ETags in order), or the failed operation's error, whose
/// [`operation_index`](ServiceError::operation_index) says which one failed; then none was applied.
///
/// The index comes from the `N:` prefix of the error's message (`docs/rules.md` §8.2) and is always inside
/// the batch: an `N` of `operations` or more is refused. A message without the prefix gives no index, except
/// in a batch of one operation, where it can only be operation 0.
///
/// ```
/// use table_model::response;
/// use table_model::ResponseErrorKind;
/// let reply = |message: &str| {
///     let body = format!(r#"{{"odata.error":{{"code":"InvalidInput","message":{{"value":"{message}"}}}}}}"#);
///     http::Response::builder().status(400).body(body.into_bytes()).unwrap()
/// };
/// let err = response::batch(&reply("1:Bad Request"), 2).unwrap_err();
/// assert_eq!(err.service().unwrap().operation_index(), Some(1));
///
/// let err = response::batch(&reply("999:Bad Request"), 2).unwrap_err();
/// assert!(matches!(err.kind(), ResponseErrorKind::OperationIndexOutOfRange { operations: 2, .. }));
/// assert_eq!(
///     err.to_string(),
///     "invalid batch response: the error names operation 999, but the batch has 2 operations \
///      (the service refused the request: 400 InvalidInput: 999:Bad Request)"
/// );
/// ```
///
/// # Errors
/// The failed operation's [`ServiceError`], a service error for the whole request,
/// [`ResponseErrorKind::OperationIndexOutOfRange`] for an error that names an operation outside the batch,
/// or a body that is not a batch response.
pub fn read_batch<B: AsRef<[u8]>>(response: &Response<B>, operations: usize) -> Result<BatchOutcome, ResponseError> {
    if let Some(e) = crate::response::error(response) {
        return Err(in_batch(e, operations, false));
    }
    let malformed = |reason: &str| ResponseError::new(ResponseErrorKind::Malformed { reason: reason.to_owned() });
    if response.status().as_u16() != 202 {
        return Err(ResponseError::new(ResponseErrorKind::UnexpectedStatus {
            status: response.status().as_u16(),
            expected: "202",
        }));
    }
    let content_type = crate::response::header(response.headers(), "content-type").unwrap_or("");
    let boundary = boundary_of(content_type).ok_or_else(|| malformed("no multipart boundary"))?;
    let mut subs = Vec::new();
    for part in multipart::split(response.body().as_ref(), boundary.as_bytes()) {
        let (head, content) = split_head(part).ok_or_else(|| malformed("a part has no header end"))?;
        let inner = header_value(head, "content-type").and_then(boundary_of);
        match inner {
            Some(changeset) => {
                for sub in multipart::split(content, changeset.as_bytes()) {
                    let (_, http) = split_head(sub).ok_or_else(|| malformed("a changeset part has no header end"))?;
                    subs.push(parse_sub_response(http).ok_or_else(|| malformed("a sub-response is not HTTP"))?);
                }
            }
            None => subs.push(parse_sub_response(content).ok_or_else(|| malformed("a part is not HTTP"))?),
        }
    }
    if let Some(failed) = subs.iter().find(|s| s.status >= 300) {
        let mut map = http::HeaderMap::new();
        for (k, v) in headers(failed.head) {
            if let (Ok(k), Ok(v)) = (http::HeaderName::from_bytes(k.as_bytes()), HeaderValue::from_str(v)) {
                map.append(k, v);
            }
        }
        let error = crate::response::service_error(failed.status, &map, failed.body);
        return Err(in_batch(error, operations, true));
    }
    if subs.len() != operations {
        return Err(malformed(&format!("{} sub-responses for {operations} operations", subs.len())));
    }
    let etags = subs.iter().map(|s| header_value(s.head, "etag").map(ETag::new)).collect();
    Ok(BatchOutcome { etags })
}

/// The error of a batch of `operations` operations, with the operation its message names checked against the
/// batch (`docs/rules.md` §8.2). The error of a failed sub-response (`operation`) that names none is operation
/// 0's in a batch of one; an error for the whole request stays without an index.
fn in_batch(mut error: ServiceError, operations: usize, operation: bool) -> ResponseError {
    error.operation_index = match crate::response::named_operation(&error.message) {
        Some(digits) => match digits.parse::<usize>() {
            Ok(index) if index < operations => Some(index),
            _ => {
                let index = digits.to_owned();
                error.operation_index = None;
                let error = Box::new(error);
                return ResponseError::new(ResponseErrorKind::OperationIndexOutOfRange { index, operations, error });
            }
        },
        None if operation && operations == 1 => Some(0),
        None => None,
    };
    error.into()
}

/// The longest boundary RFC 2046 (§5.1.1) allows.
pub(crate) const MAX_BOUNDARY: usize = 70;

/// The `boundary` parameter of a `multipart/mixed` content type: 1 to 70 characters (RFC 2046 §5.1.1), which
/// also keeps the search for it linear in the body's length.
fn boundary_of(content_type: &str) -> Option<String> {
    let (mime, params) = content_type.split_once(';')?;
    if !mime.trim().eq_ignore_ascii_case("multipart/mixed") {
        return None;
    }
    let boundary = params.split(';').find_map(|p| {
        let (k, v) = p.split_once('=')?;
        k.trim().eq_ignore_ascii_case("boundary").then(|| v.trim().trim_matches('"').to_owned())
    })?;
    (1..=MAX_BOUNDARY).contains(&boundary.len()).then_some(boundary)
}

/// Splits the header lines from the content at the first empty line; the lines are read by [`headers`] where
/// needed (a successful operation's answer is read for its ETag alone).
fn split_head(part: &[u8]) -> Option<(&str, &[u8])> {
    let (end, skip) = empty_line(part).unwrap_or((part.len(), 0));
    let head = std::str::from_utf8(&part[..end]).ok()?;
    Some((head, &part[(end + skip).min(part.len())..]))
}

/// Header lines as `(name, value)`, each trimmed; a line without `:` is skipped.
fn headers(head: &str) -> impl Iterator<Item = (&str, &str)> {
    head.lines().filter_map(|l| l.split_once(':').map(|(k, v)| (k.trim(), v.trim())))
}

/// Where the first empty line of `part` is: the offset of its `\r\n\r\n` (4 bytes) or `\n\n` (2 bytes), whichever
/// comes first. One pass over the head, line end by line end: a head is short, and the part after it (a change
/// set of 100 sub-responses) is not searched, where looking for each form apart read the whole part for the
/// form it does not hold, with a memmem searcher built for each search (under `perf`, about 2% of an import's
/// client CPU).
fn empty_line(part: &[u8]) -> Option<(usize, usize)> {
    let mut from = 0;
    while let Some(offset) = memchr::memchr(b'\n', &part[from..]) {
        let at = from + offset;
        let rest = &part[at + 1..];
        if rest.starts_with(b"\n") {
            return Some((at, 2));
        }
        if at > 0 && part[at - 1] == b'\r' && rest.starts_with(b"\r\n") {
            return Some((at - 1, 4));
        }
        from = at + 1;
    }
    None
}

/// The value of the first header line named `name` (any case).
fn header_value<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    headers(head).find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v)
}

/// `HTTP/1.1 204 No Content`, headers, an empty line, the body.
fn parse_sub_response(http: &[u8]) -> Option<SubResponse<'_>> {
    let line_end = memchr::memchr(b'\n', http)?;
    let status_line = std::str::from_utf8(&http[..line_end]).ok()?.trim_end_matches('\r');
    let mut words = status_line.split(' ');
    if !words.next()?.starts_with("HTTP/") {
        return None;
    }
    let status = words.next()?.parse().ok()?;
    let rest = &http[line_end + 1..];
    let (head, body) = if rest.starts_with(b"\r\n") || rest.starts_with(b"\n") {
        ("", skip_line_end(rest))
    } else {
        split_head(rest)?
    };
    Some(SubResponse { status, head, body })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The empty line as two searches find it: the first `\r\n\r\n` or `\n\n`, whichever starts first.
    fn empty_line_by_two_searches(part: &[u8]) -> Option<(usize, usize)> {
        match (memchr::memmem::find(part, b"\r\n\r\n"), memchr::memmem::find(part, b"\n\n")) {
            (Some(a), Some(b)) if b < a => Some((b, 2)),
            (Some(a), _) => Some((a, 4)),
            (None, Some(b)) => Some((b, 2)),
            (None, None) => None,
        }
    }

    #[test]
    fn the_empty_line_ends_a_head_in_either_form() {
        assert_eq!(empty_line(b"A: 1\r\nB: 2\r\n\r\nbody\n\n"), Some((10, 4)));
        assert_eq!(empty_line(b"A: 1\nB: 2\n\nbody\r\n\r\n"), Some((9, 2)));
        assert_eq!(empty_line(b"A: 1\r\n\nbody"), Some((5, 2)));
        assert_eq!(empty_line(b"\n\r\n"), None);
        assert_eq!(empty_line(b"A: 1\r\n"), None);
    }

    proptest! {
        #[test]
        fn one_pass_finds_what_two_searches_find(part in proptest::collection::vec(
            prop_oneof![Just(b'\r'), Just(b'\n'), Just(b'a'), Just(b':')], 0..40,
        )) {
            prop_assert_eq!(empty_line(&part), empty_line_by_two_searches(&part));
        }
    }
}
