//! Pages read ahead: [`RawPages::read_ahead`] requests each next page on a task of its own as soon as a page is
//! handed out, so that a reader's work on a page and the round trip of the next go side by side.

use super::error::{Error, ErrorKind};
use super::location::Location;
use super::pager::RawPages;
use crate::response::{Continuation, RawPage};
use futures::{Stream, StreamExt as _};
use std::fmt;
use std::future::Future as _;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::task::JoinHandle;

/// What a request task hands back: the pages (to request the next from) and the page, if any.
type Fetched<B> = (RawPages<B>, Option<Result<RawPage<B>, Error>>);

/// The pages of [`RawPages`], each next one requested on a task of its own (`tokio::spawn`) as soon as a page is
/// handed out: a [`Stream`] of `Result<RawPage<B>, Error>`, made by [`RawPages::read_ahead`]. The pages, their
/// order, their continuations and their errors are those of the [`RawPages`] it reads; it holds at most two pages
/// (the one handed out and the next) and has at most one request in flight. Dropped, it aborts the request under
/// way.
///
/// Under the service's latency, a reader that decodes each page before asking for the next pays the decoding on
/// every round trip; read ahead, it pays it beside the next round trip.
///
/// # Panics
/// Polled outside a Tokio runtime (its requests are spawned on the current one).
pub struct ReadAhead<B> {
    /// The pages, while no request is under way.
    pages: Option<RawPages<B>>,
    /// The request under way.
    fetching: Option<Fetching<B>>,
    /// A page handed out on the next poll: the task that asks for the page after it gets a turn first.
    ready: Option<Result<RawPage<B>, Error>>,
    /// Where the page after those handed out starts; `None` after the last.
    next: Option<Continuation>,
    /// Which location served the last page handed out.
    location: Option<Location>,
    ended: bool,
}

/// A request task, aborted when dropped.
struct Fetching<B>(JoinHandle<Fetched<B>>);

// No field is pinned: the pages held are moved in and out, never polled in place.
impl<B> Unpin for ReadAhead<B> {}

impl<B> Drop for Fetching<B> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl<B: Send + 'static> RawPages<B> {
    /// These pages, each next one requested on a task of its own as soon as a page is handed out
    /// ([`ReadAhead`]): for a reader whose work on each page (decoding it, say) would otherwise wait on every
    /// round trip. The next page is requested whether or not the reader wants it: a reader that may stop
    /// before the last page (a limit) costs one request more.
    ///
    /// ```no_run
    /// use futures::TryStreamExt as _;
    /// use table_model::client::TableServiceClient;
    /// use table_model::json::decode_query;
    /// use table_model::{Query, TableName};
    /// # async fn run(service: TableServiceClient) -> Result<(), Box<dyn std::error::Error>> {
    /// let orders = service.table_client(TableName::new("orders")?);
    /// let mut pages = orders.query_raw(&Query::new(), None)?.read_ahead();
    /// while let Some(page) = pages.try_next().await? {
    ///     // The next page is on its way meanwhile.
    ///     println!("{} entities", decode_query(&page.body, None)?.len());
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub fn read_ahead(self) -> ReadAhead<B> {
        let next = self.continuation().cloned();
        ReadAhead { pages: Some(self), fetching: None, ready: None, next, location: None, ended: false }
    }
}

impl<B> ReadAhead<B> {
    /// Where the page after those handed out starts, as [`RawPages::continuation`] (the request of that page may
    /// be under way): a reader stopped here resumes from it.
    pub fn continuation(&self) -> Option<&Continuation> {
        self.next.as_ref()
    }

    /// Which location served the last page handed out, as [`RawPages::location`].
    pub fn location(&self) -> Option<Location> {
        self.location
    }
}

impl<B: Send + 'static> ReadAhead<B> {
    /// Spawns the request of the next page.
    fn request(&mut self, mut pages: RawPages<B>) {
        self.fetching = Some(Fetching(tokio::spawn(async move {
            let page = pages.next().await;
            (pages, page)
        })));
    }
}

impl<B: Send + 'static> Stream for ReadAhead<B> {
    type Item = Result<RawPage<B>, Error>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        if let Some(page) = this.ready.take() {
            return Poll::Ready(Some(page));
        }
        loop {
            if let Some(fetching) = &mut this.fetching {
                let (pages, page) = match std::task::ready!(Pin::new(&mut fetching.0).poll(cx)) {
                    Ok(fetched) => fetched,
                    Err(ended) if ended.is_panic() => std::panic::resume_unwind(ended.into_panic()),
                    // Only a runtime shutting down cancels the task (this stream aborts it only when dropped):
                    // the page got no answer, and the pages end there.
                    Err(_) => {
                        this.fetching = None;
                        this.ended = true;
                        let cancelled = azure_core::Error::with_message(
                            azure_core::error::ErrorKind::Other,
                            "the request of the page was cancelled: its runtime shut down",
                        );
                        return Poll::Ready(Some(Err(Error::new(ErrorKind::Transport(cancelled)))));
                    }
                };
                this.fetching = None;
                this.next = pages.continuation().cloned();
                this.location = pages.location();
                let Some(Ok(page)) = page else {
                    // The end, or a failed page: nothing more is asked for.
                    this.ended = true;
                    return Poll::Ready(page);
                };
                if page.continuation.is_none() {
                    this.ended = true;
                    return Poll::Ready(Some(Ok(page)));
                }
                this.request(pages);
                // A task spawned from a worker waits in that worker's slot for the next task to run, which the
                // other workers do not take: the page is handed out after a turn, so that its next is on its way
                // before the reader works on it.
                this.ready = Some(Ok(page));
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            if this.ended {
                return Poll::Ready(None);
            }
            let pages = this.pages.take().expect("the pages are here when no request is under way");
            this.request(pages);
        }
    }
}

impl<B> fmt::Debug for ReadAhead<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReadAhead").field("continuation", &self.next).finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use crate::client::table::tests::{client, Answer};
    use crate::Query;
    use futures::TryStreamExt as _;

    /// A page of one entity in partition `p<n>`, and the continuation's NextPartitionKey if any.
    fn page(n: usize, next: Option<&str>) -> Answer {
        let mut headers = vec![("content-type", "application/json;odata=minimalmetadata".to_owned())];
        headers.extend(next.map(|pk| ("x-ms-continuation-nextpartitionkey", pk.to_owned())));
        Answer::Status(200, headers, format!(r#"{{"value":[{{"PartitionKey":"p{n}","RowKey":"r"}}]}}"#))
    }

    /// Each page's next is asked for before the page is handed out; the pages, their continuations and the end
    /// are those of the pages read one by one.
    #[tokio::test]
    async fn the_next_page_is_requested_before_a_page_is_handed_out() {
        let (table, transport) = client(vec![page(1, Some("p2")), page(2, Some("p3")), page(3, None)]);
        let mut pages = table.query_raw(&Query::new(), None).unwrap().read_ahead();
        let sent = || transport.urls.lock().unwrap().len();
        let mut bodies = Vec::new();
        while let Some(page) = pages.try_next().await.unwrap() {
            let handed = bodies.len() + 1;
            // The page after this one, if any, is asked for already.
            assert_eq!(sent(), (handed + 1).min(3), "page {handed}");
            assert_eq!(pages.continuation(), page.continuation.as_ref(), "page {handed}");
            bodies.push(String::from_utf8(page.body.to_vec()).unwrap());
        }
        assert_eq!(bodies.len(), 3);
        assert!(bodies.iter().enumerate().all(|(i, body)| body.contains(&format!("\"p{}\"", i + 1))), "{bodies:?}");
        let urls = transport.urls.lock().unwrap();
        assert!(urls[1].query().unwrap().contains("NextPartitionKey=p2"), "{}", urls[1]);
        assert!(urls[2].query().unwrap().contains("NextPartitionKey=p3"), "{}", urls[2]);
    }

    /// A failed page ends the pages, its error as [`RawPages`](crate::client::RawPages) gives it, and nothing
    /// more is asked for.
    #[tokio::test]
    async fn a_failed_page_ends_them() {
        let missing = Answer::Status(
            404,
            vec![("x-ms-error-code", "ResourceNotFound".to_owned())],
            r#"{"odata.error":{"code":"ResourceNotFound","message":{"lang":"en-US","value":"gone"}}}"#.to_owned(),
        );
        let (table, transport) = client(vec![page(1, Some("p2")), missing]);
        let mut pages = table.query_raw(&Query::new(), None).unwrap().read_ahead();
        assert!(pages.try_next().await.unwrap().is_some());
        let error = pages.try_next().await.unwrap_err();
        assert!(error.is_not_found(), "{error}");
        assert!(error.to_string().starts_with("table `Readings`: "), "{error}");
        assert!(pages.try_next().await.unwrap().is_none());
        assert_eq!(transport.urls.lock().unwrap().len(), 2);
    }

    /// A request whose runtime shut down is the page's error, not a panic, and the pages end there.
    #[test]
    fn a_request_cancelled_by_its_runtime_is_an_error() {
        let (table, transport) = client(vec![page(1, None)]);
        let runtime = || tokio::runtime::Builder::new_current_thread().build().unwrap();
        let mut pages = table.query_raw(&Query::new(), None).unwrap().read_ahead();
        // The first poll spawns the request on the first runtime, which shuts down before running it.
        let first = runtime().block_on(async { futures::poll!(pages.try_next()) });
        assert!(first.is_pending());
        let error = runtime().block_on(pages.try_next()).unwrap_err();
        assert!(error.to_string().contains("the request of the page was cancelled: its runtime shut down"), "{error}");
        assert!(runtime().block_on(pages.try_next()).unwrap().is_none());
        assert!(transport.urls.lock().unwrap().is_empty());
    }
}
