//! Entity group transactions on the wire (`docs/rules.md` §8.2): the `multipart/mixed` request read into its
//! operations, one change set of `application/http` sub-requests, as the SDK (`table-model`'s `batch`) and
//! `azure-data-tables` write it, CRLF or LF; and the answer written as the service writes it: `202 Accepted`,
//! a batch response holding one change-set response with one part per operation, or only the failed
//! operation's part, its message prefixed with the operation's index.
//!
//! Layer: base.

/// One operation of a change set: the sub-request's method, target (a URL or a path), headers and body.
#[derive(Debug)]
pub(crate) struct Operation<'a> {
    pub(crate) method: &'a str,
    pub(crate) target: &'a str,
    pub(crate) headers: Vec<(&'a str, &'a str)>,
    pub(crate) body: &'a str,
}

impl Operation<'_> {
    /// The value of the header `name`.
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        header(&self.headers, name)
    }
}

/// One sub-response: status, headers, body.
#[derive(Debug)]
pub(crate) struct Part {
    pub(crate) status: u16,
    pub(crate) headers: Vec<(&'static str, String)>,
    pub(crate) body: String,
}

fn header<'a>(headers: &[(&'a str, &'a str)], name: &str) -> Option<&'a str> {
    headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| *v)
}

/// The `boundary` parameter of a `multipart/mixed` content type.
pub(crate) fn boundary(content_type: &str) -> Option<&str> {
    let (mime, params) = content_type.split_once(';')?;
    if !mime.trim().eq_ignore_ascii_case("multipart/mixed") {
        return None;
    }
    params.split(';').find_map(|p| {
        let (k, v) = p.split_once('=')?;
        k.trim().eq_ignore_ascii_case("boundary").then(|| v.trim().trim_matches('"'))
    })
}

/// The parts between `--boundary` lines, up to `--boundary--`, each without the line ends around it.
fn parts<'a>(body: &'a str, boundary: &str) -> Result<Vec<&'a str>, String> {
    let delimiter = format!("--{boundary}");
    let mut pieces = body.split(delimiter.as_str());
    pieces.next().ok_or("no multipart delimiter")?;
    let mut parts = Vec::new();
    for piece in pieces {
        if piece.starts_with("--") {
            return Ok(parts);
        }
        let piece = piece.strip_prefix("\r\n").or_else(|| piece.strip_prefix('\n')).unwrap_or(piece);
        parts.push(piece.strip_suffix("\r\n").or_else(|| piece.strip_suffix('\n')).unwrap_or(piece));
    }
    Err(format!("no closing `{delimiter}--`"))
}

/// Splits a head from what follows its empty line, the head's lines as `name: value` after the first line.
fn head(text: &str) -> (Vec<&str>, &str) {
    // The first empty line, CRLF or LF: an LF one is looked for only before the first CRLF one (a part's
    // content after its head can be long).
    let crlf = text.find("\r\n\r\n");
    let (end, skip) = match (crlf, text[..crlf.unwrap_or(text.len())].find("\n\n")) {
        (_, Some(b)) => (b, 2),
        (Some(a), None) => (a, 4),
        (None, None) => (text.len(), 0),
    };
    let lines = text[..end].lines().map(|l| l.trim_end_matches('\r')).collect();
    (lines, &text[(end + skip).min(text.len())..])
}

fn fields<'a>(lines: &[&'a str]) -> Vec<(&'a str, &'a str)> {
    lines.iter().filter_map(|l| l.split_once(':')).map(|(k, v)| (k.trim(), v.trim())).collect()
}

/// The operations of a batch's body, whose boundary the request's `content_type` names.
///
/// # Errors
/// A body that is not one change set of HTTP sub-requests, saying what is wrong.
pub(crate) fn read<'a>(content_type: &str, body: &'a str) -> Result<Vec<Operation<'a>>, String> {
    let batch = boundary(content_type).ok_or("the batch's content type is not multipart/mixed with a boundary")?;
    let mut operations = Vec::new();
    for part in parts(body, batch)? {
        let (lines, content) = head(part);
        let changeset = header(&fields(&lines), "content-type")
            .and_then(boundary)
            .ok_or("a batch part is not a change set (multipart/mixed with a boundary)")?;
        for sub in parts(content, changeset)? {
            let (_, http) = head(sub);
            let (lines, body) = head(http);
            let mut request_line = lines.first().ok_or("an operation has no request line")?.split(' ');
            let (Some(method), Some(target)) = (request_line.next(), request_line.next()) else {
                return Err(format!("operation {}: the request line is not `METHOD URL HTTP/1.1`", operations.len()));
            };
            let body = body.strip_suffix("\r\n").or_else(|| body.strip_suffix('\n')).unwrap_or(body);
            operations.push(Operation { method, target, headers: fields(&lines[1..]), body });
        }
    }
    Ok(operations)
}

/// A reason phrase for the statuses the service answers with.
pub(crate) fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        204 => "No Content",
        400 => "Bad Request",
        404 => "Not Found",
        409 => "Conflict",
        412 => "Precondition Failed",
        413 => "Request Entity Too Large",
        503 => "Server Unavailable",
        _ => "Unknown",
    }
}

/// The answer's body and its content type: one change-set response holding `parts` (every operation's, or the
/// failed one's), with boundaries made of `id`.
pub(crate) fn write(parts: &[Part], id: &str) -> (String, String) {
    let batch = format!("batchresponse_{id}");
    let changeset = format!("changesetresponse_{id}");
    let mut out = format!("--{batch}\r\nContent-Type: multipart/mixed; boundary={changeset}\r\n\r\n");
    for part in parts {
        out.push_str(&format!(
            "--{changeset}\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\nHTTP/1.1 {} {}\r\n",
            part.status,
            reason(part.status)
        ));
        out.push_str("X-Content-Type-Options: nosniff\r\nCache-Control: no-cache\r\nDataServiceVersion: 3.0;\r\n");
        for (name, value) in &part.headers {
            out.push_str(&format!("{name}: {value}\r\n"));
        }
        out.push_str("\r\n");
        out.push_str(&part.body);
        if !part.body.is_empty() {
            out.push_str("\r\n");
        }
    }
    out.push_str(&format!("--{changeset}--\r\n--{batch}--\r\n"));
    (out, format!("multipart/mixed; boundary={batch}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_set_reads_into_its_operations() {
        let body = "--batch_1\r\nContent-Type: multipart/mixed; boundary=changeset_1\r\n\r\n\
            --changeset_1\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n\
            POST http://127.0.0.1:1/acct/T HTTP/1.1\r\nContent-Type: application/json\r\nPrefer: return-no-content\r\n\r\n\
            {\"PartitionKey\":\"p\",\"RowKey\":\"--x\"}\r\n\
            --changeset_1\nContent-Type: application/http\n\n\
            DELETE /acct/T(PartitionKey='p',RowKey='r') HTTP/1.1\nIf-Match: *\n\n\n\
            --changeset_1--\r\n--batch_1--\r\n";
        let ops = read("multipart/mixed; boundary=batch_1", body).unwrap();
        assert_eq!(ops.len(), 2);
        assert_eq!((ops[0].method, ops[0].target), ("POST", "http://127.0.0.1:1/acct/T"));
        assert_eq!(ops[0].header("prefer"), Some("return-no-content"));
        assert_eq!(ops[0].body, "{\"PartitionKey\":\"p\",\"RowKey\":\"--x\"}");
        assert_eq!((ops[1].method, ops[1].header("If-Match"), ops[1].body), ("DELETE", Some("*"), ""));
        assert!(read("application/json", body).unwrap_err().contains("not multipart/mixed"));
        assert!(read("multipart/mixed; boundary=batch_1", "--batch_1\r\n").unwrap_err().contains("no closing"));
    }
}
